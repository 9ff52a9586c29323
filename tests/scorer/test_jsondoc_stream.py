"""A file's top-level JSON array read a block at a time (``jsondoc.array_items``): the items, with their lines,
that ``JsonDocument`` gives for the whole file, and for a bad file the same one-line error after the items before
it, whatever the block size, while holding about a block and the item being read, not the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer.errors import InvalidRecord
from scorer.importers.jsondoc import ArrayStream, JsonDocument, MemberStream, array_items, member_items

DATA = Path(__file__).resolve().parents[1] / "data"


def _whole(path: Path) -> tuple[list[tuple[int, Any]], tuple[str, int | None] | None]:
    """What ``JsonDocument`` gives for the file's array: its items, then the error that stopped it (or None)."""
    got: list[tuple[int, Any]] = []
    try:
        doc = JsonDocument.read(path)
        got.extend((line, value) for line, _, value in doc.items(doc.root()))
    except InvalidRecord as err:
        return got, (err.message, err.line)
    return got, None


def _streamed(path: Path, block: int) -> tuple[list[tuple[int, Any]], tuple[str, int | None] | None]:
    got: list[tuple[int, Any]] = []
    try:
        got.extend(array_items(path, block=block))
    except InvalidRecord as err:
        return got, (err.message, err.line)
    return got, None


BLOCKS = [1, 2, 7, 64, 4096, 1 << 20]


def _array_files() -> list[Path]:
    return [path for path in sorted(DATA.rglob("*.json"))
            if path.read_bytes().lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")]


def test_the_real_json_array_files_are_there() -> None:
    assert len(_array_files()) >= 5


@pytest.mark.parametrize("path", _array_files(), ids=lambda p: str(p.relative_to(DATA)))
def test_a_real_file_reads_as_the_whole_document_reads_it(path: Path) -> None:
    whole = _whole(path)
    for block in (7, 4096, 1 << 20):
        assert _streamed(path, block) == whole


GOOD = [
    b'[]', b'[ ]\n', b'\xef\xbb\xbf[1, 2]', b'[\r\n  {"a": 1},\r\n  {"b": [2, 3]}\r\n]\r\n',
    b'[1,2,3,12345678901234567890123,-0.5e-3,true,false,null,"x"]',
    '["é😀\u2028", {"k\\u00e9": "\\ud83d\\ude00"}, "\\"\\\\/"]\n'.encode(),
    b'[\n' + b',\n'.join(json.dumps({"id": n, "text": "x" * (n % 97), "n": [n] * (n % 5)}).encode()
                        for n in range(300)) + b'\n]\n',
    json.dumps([{"id": n, "v": "é" * n} for n in range(60)], ensure_ascii=False).encode(),  # one long line
    b'[[[[[[1]]]]], {"a": {"b": {"c": []}}}]',
]
BAD = [
    b'', b'   \n ', b'{"a": 1}', b'[1, 2', b'[1, 2,]', b'[1 2]', b'[1, 2]]', b'[1, 2] x', b'[1, 2]\n\n{"a": 1}',
    b'[1, NaN]', b'[1, {"x": Infinity}]', b'[1, 1e400]', b'[1, "\\ud800"]', b'[1, "ok",\n "\xff"]',
    b'[1, "\xe2\x82"]', b'[1, "unterminated]', b'[\n1,\n' + b'[' * 250 + b']' * 250 + b']',
    b'[1, 2]\xef\xbb\xbf', b'[\n"a",\n\n  tru]', b'[1, 2\x00]', b'[01]', b'[1, -]',
]


@pytest.mark.parametrize("data", GOOD + BAD, ids=range(len(GOOD + BAD)))
@pytest.mark.parametrize("block", BLOCKS)
def test_a_file_reads_as_the_whole_document_reads_it_at_any_block_size(data: bytes, block: int,
                                                                          tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_bytes(data)
    whole = _whole(path)
    got = _streamed(path, block)
    if whole[1] is not None and whole[1][0].startswith("not valid UTF-8"):
        # The whole document is refused before its first item; read a block at a time, the items before the
        # bad bytes come first (the import stops at the error all the same, or sets the rest aside).
        assert got[1] == whole[1]
        fixed = tmp_path / "fixed.json"
        fixed.write_bytes(data.replace(b"\xff", b"?").replace(b"\xe2\x82", b"??"))
        assert got[0] == _whole(fixed)[0][:len(got[0])]
    else:
        assert got == whole
    if data in GOOD:
        assert whole[1] is None


def test_the_stream_holds_about_a_block_and_an_item_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    items = [{"id": n, "text": "é" * 700, "calls": [{"name": "f", "arguments": {"n": n}}] * 3} for n in range(3000)]
    path.write_text(json.dumps(items, indent=2, ensure_ascii=False), encoding="utf-8")
    assert path.stat().st_size > 4 << 20
    stream = ArrayStream(path, block=64 << 10)
    got = list(stream)
    assert [value for _, value in got] == items
    assert stream.peak_chars < 256 << 10  # the file is ~4 MB of text
    whole = JsonDocument.read(path)
    assert [line for line, _ in got] == [line for line, _, _ in whole.items(whole.root())]


def test_a_huge_item_is_read_whole_in_few_reads(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    items = [{"blob": "x" * 300_000}, 1, {"blob": "y" * 700_000}]
    path.write_text(json.dumps(items), encoding="utf-8")
    stream = ArrayStream(path, block=1024)
    assert [value for _, value in stream] == items
    assert stream.reads < 40  # the unread rest doubles each time an item runs past the buffer


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(JSON_VALUES, max_size=12), indent=st.sampled_from([None, 0, 1, 2, "\t", "\r\n"]),
       ascii_only=st.booleans(), block=st.sampled_from([1, 3, 16, 100, 4096]))
def test_generated_arrays_read_as_the_whole_document_reads_them(items: list[Any], indent: Any, ascii_only: bool,
                                                               block: int, tmp_path: Path) -> None:
    path = tmp_path / "gen.json"
    path.write_text(json.dumps(items, indent=indent, ensure_ascii=ascii_only), encoding="utf-8")
    whole = _whole(path)
    assert whole[1] is None
    assert _streamed(path, block) == whole


# -- one member's array of a top-level object (tau2-bench results: info, tasks, then simulations) -------------

def _whole_members(path: Path) -> tuple[Any, list[tuple[int, Any]], tuple[str, int | None] | None]:
    """What ``JsonDocument`` gives: ``head`` (info, and tasks with their lines), the simulations, the error."""
    got: list[tuple[int, Any]] = []
    head: Any = None
    try:
        doc = JsonDocument.read(path)
        members = {key: (pos, value) for key, pos, value in doc.members(doc.root())}
        head = {"info": members["info"][1],
                "tasks": [(line, value) for line, _, value in doc.items(members["tasks"][0])]}
        got.extend((line, value) for line, _, value in doc.items(members["simulations"][0]))
    except InvalidRecord as err:
        return head, got, (err.message, err.line)
    except KeyError as missing:  # (the importer names it)
        return head, got, (f"no {missing}", None)
    return head, got, None


def _streamed_members(path: Path, block: int) -> tuple[Any, list[tuple[int, Any]], tuple[str, int | None] | None]:
    found = member_items(path, "simulations", ("info", "tasks"), listed=("tasks",), block=block)
    if found is None:
        return _whole_members(path)
    head, items = found
    got: list[tuple[int, Any]] = []
    try:
        got.extend(items)
    except InvalidRecord as err:
        return head, got, (err.message, err.line)
    return head, got, None


RESULTS = {"timestamp": "2025-08-01T16:20:43", "info": {"environment_info": {"domain_name": "airline"}, "n": 1.5},
           "tasks": [{"id": "1", "x": [1, 2]}, {"id": "2", "ticket": "é😀"}],
           "simulations": [{"id": f"s{n}", "task_id": str(n % 2 + 1), "messages": [{"role": "user", "content": "x" * n}]}
                           for n in range(40)]}
GOOD_RESULTS = [json.dumps(RESULTS, indent=2).encode(), json.dumps(RESULTS).encode(),
                json.dumps({**RESULTS, "simulations": []}).encode(),
                json.dumps({**RESULTS, "after": {"k": [1, 2, {"z": None}]}}, indent=1).encode()]
LATE = json.dumps(RESULTS, indent=2)
BAD_RESULTS = [
    LATE.replace('"s30"', 'NaN').encode(),  # a simulation refused: the items before it, then the same error
    LATE.replace('"s30"', '"s30",').encode(),  # a syntax error among the simulations
    LATE.rstrip("}") .encode(),  # the object never closes
    (LATE + "\n[1]").encode(),  # data after it
    json.dumps({"simulations": RESULTS["simulations"], "info": RESULTS["info"], "tasks": RESULTS["tasks"]}).encode(),
    json.dumps({k: v for k, v in RESULTS.items() if k != "simulations"}).encode(),  # no simulations
    json.dumps({"info": 1, "tasks": [], "simulations": {"not": "a list"}}).encode(),
    json.dumps({"info": {}, "tasks": {"a": 1}, "simulations": []}).encode(),  # tasks not a list
    json.dumps({"info": [1], "tasks": 7, "simulations": [1]}).encode(),
    LATE.replace('"timestamp"', '"tasks": [], "timestamp"', 1).encode(),  # tasks twice, before the simulations
]


@pytest.mark.parametrize("data", GOOD_RESULTS + BAD_RESULTS, ids=range(len(GOOD_RESULTS + BAD_RESULTS)))
@pytest.mark.parametrize("block", [1, 7, 64, 4096, 1 << 20])
def test_a_results_object_reads_as_the_whole_document_reads_it(data: bytes, block: int, tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(data)
    whole = _whole_members(path)
    got = _streamed_members(path, block)
    streamed = member_items(path, "simulations", ("info", "tasks"), listed=("tasks",), block=block) is not None
    if whole[2] is None or not streamed:
        assert got == whole
    else:
        # The whole document is refused before its first simulation; streamed, the info, the tasks and the
        # simulations before the error come first (the import stops at the error all the same, or sets the rest
        # aside), then the very error.
        assert got[2] == whole[2]
        fine = tmp_path / "fine.json"  # every bad file that streams is LATE with a flaw
        fine.write_text(LATE, encoding="utf-8")
        head, items, _ = _whole_members(fine)
        assert got[0] == head and got[1] == items[:len(got[1])]
    if data in GOOD_RESULTS:
        assert whole[2] is None and len(whole[1]) == len(json.loads(data)["simulations"])


def test_a_member_given_again_after_the_streamed_items_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    text = json.dumps(RESULTS, indent=2)
    path.write_text(text[:text.rindex("}")] + ',\n  "info": {}\n}', encoding="utf-8")
    _, got, error = _streamed_members(path, 64)
    assert len(got) == 40  # the whole document would have taken the second info, silently
    assert error == ("'info' is given twice in the document", text.count("\n") + 2)  # the line of its value


def test_the_member_stream_holds_about_a_block_and_an_item(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    sims = [{"id": f"s{n}", "messages": [{"role": "user", "content": "é" * 900}] * 3} for n in range(1500)]
    path.write_text(json.dumps({**RESULTS, "simulations": sims}, indent=2, ensure_ascii=False), encoding="utf-8")
    assert path.stat().st_size > 4 << 20
    stream = MemberStream(path, "simulations", ("info", "tasks"), listed=("tasks",), block=64 << 10)
    assert [value for _, value in stream] == sims
    assert stream.peak_chars < 256 << 10
