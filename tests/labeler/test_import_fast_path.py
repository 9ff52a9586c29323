"""The import's fast conversion (``scorer.formats.fast_record``: records read straight from the line's bytes,
tool lists seen before shared instead of validated again; ``record_json_text``: canonical JSON written in parts)
makes exactly what the plain path makes: the same records, the same stored rows byte for byte, and for a bad
line the same ``FILE:LINE`` message. The oracle for the rows is ``canonical.dumps``, the reference canonical
form, applied to ``to_json`` of the record the plain path reads."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

import pytest

from labeler.store import ImportItem, prepare_item
from labeler.store.staging import observed_calls
from scorer import canonical, formats, importers
from scorer.errors import InvalidRecord
from scorer.formats import BLANK, dumps_record, fast_record, json_line, parse_record, to_json
from scorer.importers.base import Converted, ImportOptions
from scorer.importers.native import convert_line
from scorer.model import GoldCase, ToolSpec, Transcript
from tests.labeler.import_golden import INPUTS, REPO


def _records() -> list[Transcript | GoldCase]:
    """Every transcript and gold case the parity inputs hold (the demo, the app's data, the real datasets)."""
    options = ImportOptions(tools=(ToolSpec(name="lookup", description="placeholder"),))
    found: list[Transcript | GoldCase] = []
    for path in INPUTS:
        try:
            found += [c.record for c in importers.convert(path, None, options) if isinstance(c, Converted)]
        except Exception:  # a file no importer reads (a task list): not an input
            continue
    return found


def _slow(number: int, raw: bytes) -> Any:
    """What the line becomes without the fast path: the record, or the error's (message, line)."""
    value = json_line(number, raw, "f.jsonl")
    if value is BLANK:
        return BLANK
    if isinstance(value, InvalidRecord):
        return ("error", value.message, value.line)
    try:
        return parse_record(value, source="f.jsonl", line=number)
    except InvalidRecord as err:
        return ("error", err.message, err.line)


def _expected_rows(record: Transcript | GoldCase) -> dict[str, Any]:
    """The rows as the code before the fast path computed them, with the reference canonical form."""
    body = to_json(record)
    if isinstance(record, GoldCase):
        text = canonical.dumps(body)
        return {"body": text, "content_hash": hashlib.sha256(text.encode()).hexdigest(),
                "tags": canonical.dumps(list(record.tags))}
    tools = [(hashlib.sha256(canonical.dumps(t).encode()).hexdigest(), str(t["name"]), canonical.dumps(t))
             for t in body.pop("tools")]
    text = canonical.dumps(body)
    digest = hashlib.sha256("\n".join([text, *(h for h, _, _ in tools)]).encode()).hexdigest()
    observed = [canonical.dumps(observed_calls(record.messages[i] if i < len(record.messages) else None))
                for i in record.decision_points()]
    return {"body": text, "content_hash": digest, "tools": tools, "observed": observed}


def _rows(record: Transcript | GoldCase) -> dict[str, Any]:
    staged = prepare_item(ImportItem(record, "f.jsonl", 1)).staged
    rows = {"body": staged.row["body"], "content_hash": staged.row["content_hash"]}
    if isinstance(record, GoldCase):
        rows["tags"] = staged.row["tags"]
    if isinstance(record, Transcript):
        rows["tools"] = list(staged.tools)
        rows["observed"] = [turn["observed"] for turn in staged.children]
    return rows


def _lines(records: list[Transcript | GoldCase]) -> Iterator[bytes]:
    """Each record as toolgold JSON Lines write it (canonical), and as pydantic writes it (other key order)."""
    for record in records:
        yield dumps_record(record).encode() + b"\n"
        yield record.model_dump_json().encode() + b"\r\n"


@pytest.fixture(autouse=True)
def _fresh_memos() -> Iterator[None]:
    formats._SHARED_TOOLS.clear()
    formats._TOOL_SPANS.clear()
    formats._SPANS_TRIED.clear()
    formats._TOOLS_JSON.clear()
    yield
    formats._SHARED_TOOLS.clear()
    formats._TOOL_SPANS.clear()
    formats._SPANS_TRIED.clear()
    formats._TOOLS_JSON.clear()


def test_every_real_record_reads_and_stores_as_before() -> None:
    records = _records()
    assert len(records) > 200
    fast_reads = 0
    for _ in range(2):  # the second round finds every tool list in the memos
        for number, raw in enumerate(_lines(records), start=2):
            slow = _slow(number, raw)
            fast = fast_record(number, raw)
            assert not isinstance(slow, tuple), slow
            if fast is None:
                continue
            fast_reads += 1
            assert fast == slow
            assert fast.model_fields_set == slow.model_fields_set
            assert dumps_record(fast) == dumps_record(slow)
            assert _rows(fast) == _rows(slow) == _expected_rows(slow), raw[:120]
    assert fast_reads == 4 * len(records)  # none of them needed the plain path
    assert len(formats._SHARED_TOOLS) > 5
    assert sum(map(len, formats._TOOL_SPANS.values())) > 5  # the second round read those tools from their bytes


def _transcript(**extra: Any) -> dict[str, Any]:
    return {"format": "toolgold.transcript/1", "id": "t1",
            "messages": [{"role": "user", "content": "book it"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": "c1", "type": "function",
                              "function": {"name": "book", "arguments": '{"amount": 1.0, "x": 1e-7, "n": -0.0}'}}]},
                         {"role": "tool", "tool_call_id": "c1", "content": "ok"},
                         {"role": "assistant", "content": "done .0, e-5 1e+16"}],
            "tools": [{"name": "book", "description": "Book.", "parameters": {
                "type": "object", "properties": {"amount": {"type": "number", "default": 1.0}}}}],
            **extra}


def _gold(**extra: Any) -> dict[str, Any]:
    return {"format": "toolgold.gold/1", "id": "g1", "tools": _transcript()["tools"],
            "messages": _transcript()["messages"][:1],
            "expected": {"behavior": "call", "calls": [{"name": "book", "arguments": {"amount": 1.0}}]},
            "arg_rules": {"book": {"amount": {"match": "number", "tolerance": 1}}},
            "tags": ["é😀\u2028", "\x00\n\"\\/", "1.0", "a"], **extra}


EDGE_METADATA = [
    {"s": "é😀\u2028 \x00\n\"\\/", "e": "re-book one-way 1.0, 2e-5"},
    {"z": -0.0, "one": 1.0, "big": 1e16, "tiny": 5e-324, "small": 1.5e-05, "f": 0.1, "neg": -2.5e-300},
    {"huge": 2 ** 70, "neg": -(2 ** 64), "edge": 2 ** 64 - 1, "i": -(2 ** 63)},
    {"nest": [[[[{"a": [1.0, 2]}]]]], "empty": [{}, [], ""], "b": [True, False, None]},
    {"keys": {"é": 1, "Z": 2, "a b": 3, "": 4, "\U0001f600": 5, "\uffff": 6}},
    # the digits that stand for a part of the text while it is written (formats._joined), and for known tools
    {"n": 73018452906113527, "m": 73018452906113528, "s": "73018452906113529", "t": "x73018452906113527"},
    {"tools": 73018452906113527, "messages": "73018452906113528"},
    # long digit runs: in a float's fraction and integer part, in strings, and integers at and beyond 64 bits
    {"cost": 0.0035475000000000003, "f": 12345678901234567890.5, "g": 1.2345678901234567e-300,
     "id": "1234567890123456789012", "ts": 1733540000000000000, "neg": -12345678901234567890123, "note": "n: 1234567890123456789"},
]


def _json_line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"


@pytest.mark.parametrize("metadata", EDGE_METADATA, ids=range(len(EDGE_METADATA)))
def test_edge_values_read_and_store_as_before(metadata: dict[str, Any]) -> None:
    values = [_transcript(metadata=metadata), _gold(rationale=json.dumps(metadata, ensure_ascii=False),
                                                     expected={"behavior": "call", "calls": [
                                                         {"name": "book", "arguments": metadata}]})]
    for _ in range(2):
        for value in values:
            raw = _json_line(value)
            slow = _slow(2, raw)
            assert not isinstance(slow, tuple), slow
            fast = convert_line(2, raw, "f.jsonl", ImportOptions())
            assert isinstance(fast, Converted)
            assert fast.record == slow
            assert _rows(fast.record) == _rows(slow) == _expected_rows(slow)


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


BAD = [
    _transcript(messages=[{"role": "robot", "content": "hi"}]),
    _transcript(messages=[{"role": "user", "content": _deep(250)}]),
    _transcript(messages=[{"role": "tool", "content": "x"}]),
    _transcript(metadata={"deep": _deep(197)}),  # 200 levels in all: accepted
    _transcript(metadata={"deep": _deep(198)}),  # 201: refused
    _transcript(metadata={"deep": _deep(300)}),
    _transcript(tools=[*_transcript()["tools"], *_transcript()["tools"]]),
    _transcript(tools=[{"name": "book", "parameters": {"type": "object", "properties": _deep(199)}}]),
    _transcript(tools=[{"name": "book", "parameters": {"type": "nope"}}]),
    _transcript(metadata={"n": 10 ** 30}, id="big"),
    _transcript(extra_field=1),
    _gold(turn=10 ** 25),
    _gold(expected={"behavior": "call", "calls": []}),
    _gold(arg_rules={"book": {"amount": {"match": "from_call", "from_call": 3}}}),
    {"format": "toolgold.run/1", "case_id": "g1", "calls": []},
    {"format": "toolgold.gold/9", "id": "g"},
    {"id": "no format"},
]
BAD_TEXT = [b'{"format": "toolgold.transcript/1", "id": "t", "messages": [{"role": "user", "content": NaN}]}\n',
            b'{"format": "toolgold.transcript/1", "id": "t", "metadata": {"x": Infinity}, "messages": []}\n',
            b'{"format": "toolgold.transcript/1", "id": "t", "messages": [{"role": "user", "content": 1e400}]}\n',
            b'{"format": "toolgold.transcript/1", "id": "t", "messages": [{"role": "user", "content": "\\ud800"}]}\n',
            b'{"format": "toolgold.transcript/1", "id": "t", "messages": [{"role": "user", "content": "\xff"}]}\n',
            b'{"format": "toolgold.transcript/1", "id": "t", "id": "u", "messages": [{"role": "user"}]}\n',
            b'[1, 2]\n', b'"text"\n', b'{"format": ["toolgold.gold/1"]}\n', b'{"a": 1} {"b": 2}\n', b'\n', b'  \r\n',
            b'\xef\xbb\xbf' + _json_line(_transcript())]


@pytest.mark.parametrize("raw", [_json_line(v) for v in BAD] + BAD_TEXT, ids=range(len(BAD) + len(BAD_TEXT)))
@pytest.mark.parametrize("number", [1, 2])
def test_a_line_reads_as_before_with_its_tools_already_seen(raw: bytes, number: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # the good record first, so every tool list that is the same is shared (what a real import meets)
    for value in (_transcript(), _gold()):
        assert isinstance(convert_line(5, _json_line(value), "f.jsonl", ImportOptions()), Converted)
    assert formats._SHARED_TOOLS
    got = convert_line(number, raw, "f.jsonl", ImportOptions())
    with monkeypatch.context() as patch:
        patch.setattr("scorer.importers.native.fast_record", lambda number, raw: None)
        plain = convert_line(number, raw, "f.jsonl", ImportOptions())
    if isinstance(plain, InvalidRecord):
        assert isinstance(got, InvalidRecord)
        assert (got.message, got.source, got.line) == (plain.message, plain.source, plain.line)
    elif plain is None:
        assert got is None
    else:
        assert isinstance(got, Converted) and isinstance(plain, Converted)
        assert got.record == plain.record and got.line == plain.line
        assert _rows(got.record) == _rows(plain.record) == _expected_rows(plain.record)


def test_records_with_the_same_tools_share_them_and_others_do_not() -> None:
    a = fast_record(2, _json_line(_transcript(id="a")))
    b = fast_record(3, _json_line(_gold(id="b")))
    tools = _transcript()["tools"]
    other = [{**tools[0], "parameters": {"type": "object", "properties": {"amount": {"type": "number", "default": 1}}}}]
    c = fast_record(4, _json_line(_transcript(id="c", tools=other)))
    flag = [{**tools[0], "parameters": {"type": "object", "properties": {"amount": {"default": True}}}}]
    d = fast_record(5, _json_line(_transcript(id="d", tools=[{**flag[0]}])))
    e = fast_record(6, _json_line(_transcript(id="e", tools=[{**flag[0], "parameters": {
        "type": "object", "properties": {"amount": {"default": 1}}}}])))
    assert a is not None and b is not None and c is not None and d is not None and e is not None
    assert a.tools[0] is b.tools[0]  # one validation, one object
    assert c.tools[0] is not a.tools[0] and c.tools[0].parameters["properties"]["amount"]["default"] == 1
    assert d.tools[0].parameters["properties"]["amount"]["default"] is True
    assert e.tools[0].parameters["properties"]["amount"]["default"] == 1
    assert _rows(d)["tools"] != _rows(e)["tools"]  # true and 1 are different schemas, as before
    for record in (a, b, c, d, e):
        assert _rows(record) == _expected_rows(record)


def test_a_record_with_nan_built_in_python_is_refused_as_before() -> None:
    # records other importers build (not read by fast_record) still pass through record_json_text
    for _ in range(2):
        tr = Transcript.model_validate(_transcript(metadata={"x": float("nan")}))
        with pytest.raises(canonical.NonFiniteNumber, match=r"metadata\.x: NaN is not a JSON number"):
            prepare_item(ImportItem(tr, "f.jsonl", 1))
        shared = Transcript.model_validate(_transcript())
        sneaky = Transcript.model_validate({**_transcript(), "tools": shared.tools,
                                            "metadata": {"y": float("inf")}})
        prepare_item(ImportItem(shared, "f.jsonl", 1))  # its tools are now known
        with pytest.raises(canonical.NonFiniteNumber, match=r"metadata\.y: Infinity is not a JSON number"):
            prepare_item(ImportItem(sneaky, "f.jsonl", 1))
        case = GoldCase.model_validate(_gold(expected={"behavior": "call", "calls": [
            {"name": "book", "arguments": {"amount": float("-inf")}}]}))
        with pytest.raises(canonical.NonFiniteNumber, match=r"expected\.calls\[0\]\.arguments\.amount: -Infinity"):
            prepare_item(ImportItem(case, "f.jsonl", 1))


def test_a_gold_case_with_known_tools_and_a_non_finite_number_is_refused_as_before() -> None:
    first = GoldCase.model_validate(_gold())
    prepare_item(ImportItem(first, "f.jsonl", 1))  # its tools are now known: the rest is written apart from them
    for bad, name in ((float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity")):
        case = GoldCase.model_validate({**_gold(id="g2"), "tools": first.tools,
                                        "alternatives": [{"behavior": "call", "calls": [
                                            {"name": "book", "arguments": {"amount": [1.0, {"x": bad}]}}]}]})
        assert case.tools[0] is first.tools[0]
        with pytest.raises(canonical.NonFiniteNumber,
                           match=rf"alternatives\[0\]\.calls\[0\]\.arguments\.amount\[1\]\.x: {name} is"):
            prepare_item(ImportItem(case, "f.jsonl", 1))
    huge = GoldCase.model_validate({**_gold(id="g3"), "tools": first.tools, "expected": {"behavior": "call", "calls": [
        {"name": "book", "arguments": {"amount": 2 ** 70, "n": -(2 ** 64), "f": 12345678901234567890.5}}]}})
    assert _rows(huge) == _expected_rows(huge)


def test_the_fields_written_without_a_float_check_hold_no_float() -> None:
    assert formats.numberless_fields(Transcript) == ("messages",)
    assert "messages" in formats.numberless_fields(GoldCase)
    for model in (Transcript, GoldCase):
        for name in ("metadata", "tools", "expected", "alternatives", "arg_rules", "forbidden", "provenance"):
            assert name not in formats.numberless_fields(model)
    assert REPO.is_dir()


def _plain(number: int, raw: bytes, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as patch:
        patch.setattr("scorer.importers.native.fast_record", lambda number, raw: None)
        return convert_line(number, raw, "f.jsonl", ImportOptions())


_T = json.dumps(_transcript()["tools"]).encode()  # the tool list's bytes as the good lines below write them
_OTHER = json.dumps([{"name": "cancel", "parameters": {"type": "object"}}]).encode()
_HEAD = b'{"format": "toolgold.transcript/1", "id": "t9", "messages": [{"role": "user", "content": "hi"}], '
_GOLD_HEAD = (b'{"format": "toolgold.gold/1", "id": "g9", "expected": {"behavior": "no_call"}, '
              b'"messages": [{"role": "user", "content": "hi"}], ')
TOOL_BYTES_LINES = [
    _HEAD + b'"tools": ' + _T + b"}\n",  # the tools as learnt
    _GOLD_HEAD + b'"tools":' + _T + b"}\n",  # no space: still the same bytes for the list
    _HEAD + b'"metadata": {"tools": ' + _T + b'}, "tools": ' + _OTHER + b"}\n",  # nested first: not the record's
    _HEAD + b'"metadata": {"tools": ' + _T + b'}, "tools": 73018452906113527}\n',  # the placeholder itself
    _HEAD + b'"metadata": {"tools": ' + _T + b'}, "tools": 73018452906113527.0}\n',
    _HEAD + b'"metadata": {"n": 73018452906113527}, "tools": ' + _T + b"}\n",
    _HEAD + b'"tools": ' + _T + b', "tools": ' + _OTHER + b"}\n",  # a key given twice
    _HEAD + b'"tools": ' + _OTHER + b', "tools": ' + _T + b"}\n",
    _HEAD + b'"tags": ["tools"], "tools": ' + _T + b"}\n",
    _HEAD + b'"metadata": {"note": "\\"tools\\": ' + _T.replace(b'"', b'\\"') + b'"}, "tools": ' + _OTHER + b"}\n",
    _HEAD + b'"tools": ' + _T + b"5}\n",  # not JSON once the list ends
    _HEAD + b'"tools": ' + _T + b"55}\n",  # digits after the list: with the placeholder, a 19-digit integer
    _HEAD + b'"tools": ' + _T + b"5555}\n",  # ... and one beyond 64 bits
    _HEAD + b'"tools": ' + _T[:-1] + b', {"name": "book"}]}\n',  # the list and more: a longer list
    _HEAD + b'"tools": ' + _T + b', "metadata": {"deep": ' + json.dumps(_deep(198)).encode() + b"}}\n",
    _HEAD + b'"tools": ' + _T + b', "metadata": {"n": 1' + b"0" * 30 + b"}}\n",
    _GOLD_HEAD + b'"tools": ' + _T + b', "expected": {"behavior": "call", "calls": [{"name": "nope"}]}}\n',
    # other runs of 17 digits or more beside the placeholder: an id 64 bits hold, digits in a string, the
    # placeholder's digits in a string, an integer beyond 64 bits after the list and before it
    _HEAD + b'"metadata": {"id": 1234567890123456789, "s": "12345678901234567890"}, "tools": ' + _T + b"}\n",
    _HEAD + b'"metadata": {"s": "x73018452906113527", "t": "73018452906113527"}, "tools": ' + _T + b"}\n",
    _HEAD + b'"tools": ' + _T + b', "metadata": {"n": 99999999999999999999}}\n',
    _HEAD + b'"metadata": {"n": -9999999999999999999}, "tools": ' + _T + b"}\n",
]


@pytest.mark.parametrize("raw", TOOL_BYTES_LINES, ids=range(len(TOOL_BYTES_LINES)))
def test_a_line_whose_tool_bytes_were_seen_reads_as_before(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    # a good line learns the tools' bytes (read from them alone the next time they come, as they come)
    good = _HEAD + b'"tools": ' + _T + b"}\n"
    for number in (5, 6):
        assert isinstance(convert_line(number, good, "f.jsonl", ImportOptions()), Converted)
    assert [span for spans in formats._TOOL_SPANS.values() for span, _ in spans] == [_T]
    got = convert_line(2, raw, "f.jsonl", ImportOptions())
    plain = _plain(2, raw, monkeypatch)
    if isinstance(plain, InvalidRecord):
        assert isinstance(got, InvalidRecord)
        assert (got.message, got.line) == (plain.message, plain.line)
    else:
        assert isinstance(got, Converted) and isinstance(plain, Converted)
        assert got.record == plain.record
        assert got.record.model_fields_set == plain.record.model_fields_set
        assert _rows(got.record) == _rows(plain.record) == _expected_rows(plain.record)


def test_tools_read_from_their_bytes_are_the_objects_first_validated() -> None:
    first = fast_record(2, _HEAD + b'"tools": ' + _T + b"}\n")
    assert not formats._TOOL_SPANS  # seen once: nothing filed (records with tools of their own pay nothing)
    second = fast_record(3, _GOLD_HEAD + b'"tools": ' + _T + b"}\n")
    assert [span for spans in formats._TOOL_SPANS.values() for span, _ in spans] == [_T]
    again = fast_record(4, _GOLD_HEAD + b'"tools": ' + _T + b', "id": "g10"}\n')
    assert first is not None and second is not None and again is not None
    assert again.id == "g10" and again.tools[0] is second.tools[0] is first.tools[0]


def test_records_each_with_tools_of_their_own_file_no_bytes() -> None:
    for n in range(20):
        tools = json.dumps([{"name": f"f{n}", "parameters": {"type": "object"}}]).encode()
        assert fast_record(2 + n, _HEAD + b'"tools": ' + tools + b"}\n") is not None
    assert not formats._TOOL_SPANS and not formats._SPANS_TRIED


JOINED_BODIES = [
    {"a": 1, "z": [True, None, "x"]},
    {"expected": {"arguments": {"tools": 73018452906113527}}, "id": "g"},  # the stand-in itself, nested first
    {"a": "73018452906113527", "zz": {"tools": 73018452906113527}},
    {"a": {"messages": 73018452906113528, "tools": 73018452906113527}},
    {"a": 1.0, "b": 2.5e-5},  # floats orjson writes otherwise
    {"big": 2 ** 70},
    {},
]


@pytest.mark.parametrize("body", JOINED_BODIES, ids=range(len(JOINED_BODIES)))
@pytest.mark.parametrize("texts", [{"tools": '[{"name":"f"}]'}, {"messages": "[]", "tools": "[7]"}, {"m": "{}"}])
def test_a_text_written_in_parts_is_the_one_written_whole(body: dict[str, Any], texts: dict[str, str]) -> None:
    # dumps_finite_with: the reference (each part's text at its key, in key order), checked in tests/scorer
    assert formats._joined(dict(body), texts) == canonical.dumps_finite_with(dict(body), texts)


@pytest.mark.parametrize("metadata", [{"cost": 0.0035475000000000003, "reward": 1.0},
                                      {"message_id": "1234567890123456789", "trace": "t-12345678901234567890"},
                                      {"f": 12345678901234567890.5, "tiny": 1.2345678901234567e-300},
                                      {"user_id": 1234567890123456789, "ts": 1733540000000000000, "low": -(2 ** 63)}])
def test_a_record_with_long_digit_runs_orjson_reads_exactly_takes_the_fast_path(metadata: dict[str, Any]) -> None:
    """A float written to 17 significant digits (as tau-bench's raw trajectories write costs), a snowflake id or a timestamp, in a string or
    as an integer 64 bits hold: none is an integer beyond 64 bits, so the record is read straight from its bytes (before, any 19 digits in a row
    sent it down the plain path, 3-5x slower), and it still reads and stores as the plain path reads it."""
    for value in (_transcript(metadata=metadata), _gold(rationale=json.dumps(metadata))):
        raw = _json_line(value)
        fast = fast_record(2, raw)
        assert fast is not None, raw
        assert fast == _slow(2, raw)
        assert _rows(fast) == _expected_rows(fast)


def _own_tools(n: int) -> list[dict[str, Any]]:
    return [{"name": f"f{n}", "description": "Find.", "parameters": {
        "type": "object", "properties": {"q": {"type": "string", "default": "é"}, "k": {"type": "number",
                                                                                       "default": 1.0}}}},
            {"parameters": {"type": "object", "properties": {}}, "name": f"g{n}", "description": ""}]


def test_tools_a_line_writes_as_the_record_does_are_not_serialized_again() -> None:
    """A BFCL gold case brings tools of its own: most of its bytes. Read from a line that wrote them as the record
    writes them, their JSON is the line's (filed by ``fast_record``), not serialized by pydantic and parsed back."""
    for n, value in enumerate((_gold(id="a", tools=_own_tools(1)), _transcript(id="b", tools=_own_tools(2)))):
        raw = _json_line(value)
        record = fast_record(2 + n, raw)
        assert record is not None
        filed = formats._TOOLS_JSON.get(tuple(map(id, record.tools)))
        assert filed is not None and filed[0] is record.tools
        assert filed[1] == json.loads(raw)["tools"] == to_json(record)["tools"]
        assert _rows(record) == _rows(_slow(2, raw)) == _expected_rows(record)


PARAMETERS = {"type": "object", "properties": {"k": {"type": "number", "default": 2.0}}}
TOOLS_WRITTEN_OTHERWISE = [
    [{"name": "f", "parameters": PARAMETERS}],  # no description: written with ""
    [{"name": "f", "description": "d"}],  # no parameters: written with the default schema
    [{"name": "f", "description": "d", "parameters": PARAMETERS, "annotations": {}}],  # unset: left out
    [{"name": "f", "description": "d", "parameters": PARAMETERS, "annotations": {"readOnlyHint": True}}],
    [{"name": "f", "description": "d", "parameters": PARAMETERS, "output_schema": None}],
    [{"name": "f", "description": "d", "parameters": PARAMETERS}, {"name": "g", "parameters": PARAMETERS}],
]


@pytest.mark.parametrize("tools", TOOLS_WRITTEN_OTHERWISE, ids=range(len(TOOLS_WRITTEN_OTHERWISE)))
def test_tools_the_record_writes_otherwise_are_written_from_the_record(tools: list[dict[str, Any]]) -> None:
    for n, value in enumerate((_gold(id="a", tools=tools), _transcript(id="b", tools=tools))):
        raw = _json_line(value)
        formats._SHARED_TOOLS.clear()  # first seen: validated from the line, not shared with the gold case's
        record = fast_record(2 + n, raw)
        assert record is not None
        assert tuple(map(id, record.tools)) not in formats._TOOLS_JSON
        assert _rows(record) == _rows(_slow(2, raw)) == _expected_rows(record)


def _long_transcript(**message: Any) -> dict[str, Any]:
    """A transcript whose messages are written apart from the rest of its text (SPLIT_ITEMS or more)."""
    turns = [{"role": "user", "content": "book it"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "book", "arguments": '{"n": 1.0}'}}]},
             {"role": "tool", "tool_call_id": "c1", "content": "ok 5.0, 1e-7"},
             {"role": "assistant", "content": "done"}]
    return _transcript(messages=[{"content": None, "name": None, "tool_call_id": None, "tool_calls": [], **m}
                                 for m in turns[:-1]] + [{**turns[-1], **message}])


def test_messages_a_line_writes_as_the_record_does_are_not_serialized_again() -> None:
    """A transcript's messages are most of its bytes. Read from a line that wrote every field of each message (as
    an export does), their JSON is the line's: kept by ``fast_record`` for the record's text, not written by
    pydantic into Python values first."""
    raw = _json_line(_long_transcript(name=None, tool_call_id=None, tool_calls=[]))
    record = fast_record(2, raw)
    assert record is not None
    held, read = formats._READ_MESSAGES[0]
    assert held is record.messages
    assert read == json.loads(raw)["messages"] == to_json(record)["messages"]
    assert _rows(record) == _rows(_slow(2, raw)) == _expected_rows(record)


MESSAGES_WRITTEN_OTHERWISE = [
    {},  # name, tool_call_id and tool_calls left to their defaults
    {"name": None, "tool_call_id": None},
    {"name": None, "tool_call_id": None, "tool_calls": [], "content": "done"},  # ... the last one only
]


@pytest.mark.parametrize("message", MESSAGES_WRITTEN_OTHERWISE, ids=range(len(MESSAGES_WRITTEN_OTHERWISE)))
def test_messages_the_record_writes_otherwise_are_written_from_the_record(message: dict[str, Any]) -> None:
    value = _long_transcript()
    value["messages"][-1] = {"role": "assistant", **message}
    if message.get("content") == "done":  # a tool call without its type: written with "function"
        value["messages"][1]["tool_calls"][0].pop("type")
    raw = _json_line(value)
    record = fast_record(2, raw)
    assert record is not None
    assert formats._READ_MESSAGES[0][0] is not record.messages
    assert _rows(record) == _rows(_slow(2, raw)) == _expected_rows(record)


def _strings_only(annotation: Any) -> bool:
    """Whether a field of this type holds strings, None, string literals and tuples of such models only."""
    import types
    import typing

    from scorer.model import FunctionCall, Message, ToolCallRef

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation in (str, type(None)) or annotation in (Message, ToolCallRef, FunctionCall):
        return True
    if origin is typing.Literal:
        return all(type(a) is str for a in args)
    if origin in (typing.Union, types.UnionType):
        return all(_strings_only(a) for a in args)
    if origin is tuple:
        return args[-1] is Ellipsis and _strings_only(args[0])
    return False


def test_the_message_types_write_every_field_and_hold_only_strings() -> None:
    """What lets a line's messages stand for their JSON when it wrote every field (``_remember_messages_json``):
    these types write every field (none is left out when unset) and hold only strings, None and lists of them, which
    validation keeps as they are. A field that gains a number, an ``Any`` or an addition fails here first."""
    from scorer.model import FunctionCall, Message, ToolCallRef

    for model in (Message, ToolCallRef, FunctionCall):
        for name, info in model.model_fields.items():
            assert info.exclude_if is None, (model.__name__, name)
            assert _strings_only(info.annotation), (model.__name__, name, info.annotation)
    assert formats._MESSAGE_KEYS == set(Message.model_fields)


def test_a_record_read_after_another_does_not_lend_it_its_messages() -> None:
    """The line's messages are kept for the last record read only (a worker writes each record's rows right after
    reading it): a record read before, or in another thread meanwhile, is written from itself, never with another
    record's messages."""
    first_raw = _json_line(_long_transcript(name=None, tool_call_id=None, tool_calls=[]))
    first = fast_record(2, first_raw)
    second_value = _long_transcript(name=None, tool_call_id=None, tool_calls=[], content="other")
    second_value["id"] = "t2"
    second = fast_record(3, _json_line(second_value))
    assert first is not None and second is not None
    assert formats._READ_MESSAGES[0][0] is second.messages
    assert _rows(first) == _rows(_slow(2, first_raw)) == _expected_rows(first)
    assert _rows(second) == _expected_rows(second)
