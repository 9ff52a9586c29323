"""Hostile JSON through every reader: NaN/Infinity and overflowing numbers, lone surrogates and deep nesting
are refused at parse time with one `FILE:LINE: what` line, exit 2, and nothing written (the shared
reader is scorer.strict_json; the import corpus in tests/data/bad covers the import path line by line)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.model import RunRecord, ToolSpec
from tests.conftest import TEST_DATA

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 400 + ".0"]
GOOD_TRANSCRIPT = {"format": "toolgold.transcript/1", "id": "good", "messages": [{"role": "user", "content": "hi"}]}


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


def assert_one_line(err: str, starts: str, words: str) -> None:
    assert err.startswith(starts), err
    assert words in err, err
    assert err.count("\n") == 1, err  # one line, no traceback


@pytest.mark.parametrize("token", NON_FINITE)
def test_non_finite_numbers_are_not_json(token: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        strict_json.loads('{"a": [1, ' + token + "]}", source="f.jsonl", line=7)
    assert str(caught.value).startswith("f.jsonl:7: NaN/Infinity is not JSON (found ")


@pytest.mark.parametrize("text,words", [
    ('"\\ud800"', "lone UTF-16 surrogate (\\ud800 at character 1)"),
    ('{"k": "ab\\udc00"}', "lone UTF-16 surrogate (\\udc00 at character 3)"),
    ('{"\\ud83d": 1}', "lone UTF-16 surrogate (\\ud83d at character 1)"),
    ("[" * 202 + "]" * 202, "nested deeper than 200 levels"),
    ("[" * 5000 + "]" * 5000, "nested deeper than 200 levels"),  # past the interpreter's recursion limit
    ('{"a": ' * 3000, "nested deeper than 200 levels"),  # unterminated and deep
])
def test_surrogates_and_depth_are_refused(text: str, words: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        strict_json.loads(text, source="f.jsonl", line=3)
    assert str(caught.value).startswith("f.jsonl:3: ")
    assert words in str(caught.value)


@pytest.mark.parametrize("text,value", [
    ('"\\ud83d\\ude00"', "\U0001F600"),  # a proper pair is one character
    ("[" * 201 + "]" * 201, json.loads("[" * 201 + "]" * 201)),
    ('{"n": 1e308, "m": -0.0, "i": 123456789012345678901234567890}',
     {"n": 1e308, "m": -0.0, "i": 123456789012345678901234567890}),
])
def test_strict_json_still_reads_plain_json(text: str, value: object) -> None:
    assert strict_json.loads(text) == value


@pytest.mark.parametrize("value,words", [
    ({"a": float("nan")}, "NaN/Infinity is not JSON"),
    ([float("-inf")], "NaN/Infinity is not JSON"),
    ({"k": "\udfff"}, "lone UTF-16 surrogate"),
    ({"\ud800": 1}, "lone UTF-16 surrogate"),
])
def test_check_applies_the_same_rules_to_decoded_values(value: object, words: str) -> None:
    with pytest.raises(InvalidRecord, match=words):
        strict_json.check(value, source="reply", line=None)


def test_a_tool_schema_with_a_nan_bound_built_in_python_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN/Infinity is not JSON"):
        ToolSpec(name="f", parameters={"type": "object", "properties": {"n": {"type": "number",
                                                                            "maximum": float("nan")}}})


def test_a_run_whose_argument_string_holds_nan_is_malformed_not_nan() -> None:
    run = RunRecord.model_validate({"format": "toolgold.run/1", "case_id": "c",
                                    "calls": [{"name": "f", "arguments": '{"x": NaN}'}]})
    assert run.calls is not None and run.calls[0].malformed


# --- through the CLI ---------------------------------------------------------------------------------------

@pytest.fixture
def seeded(isolated_db: Path, tmp_path: Path) -> Store:
    seed = tmp_path / "seed.jsonl"
    seed.write_text(json.dumps(GOOD_TRANSCRIPT) + "\n")
    assert invoke("import", str(seed))[0] == 0
    return Store(isolated_db)


@pytest.mark.parametrize("token", NON_FINITE[:4])
def test_a_nan_in_a_whole_file_document_names_its_line(token: str, seeded: Store, tmp_path: Path) -> None:
    root = tmp_path / "tooltalk"
    shutil.copytree(TEST_DATA / "real" / "tooltalk", root)
    conversation = root / "data" / "easy" / "AddAlarm-easy.json"
    text = conversation.read_text()
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.strip() == '"time": "18:30:00"')
    conversation.write_text(text.replace('"time": "18:30:00"', f'"time": {token}'))
    before = seeded.dump()
    code, err = invoke("import", str(conversation))
    assert code == 2
    assert_one_line(err, f"error: {conversation}:{line}: ", f"NaN/Infinity is not JSON (found {token})")
    assert seeded.dump() == before


@pytest.mark.parametrize("mutation,line,words", [
    (lambda t: t.replace('"type": "object",', '"type": "object", "maximum": NaN,', 1), 8,
     "NaN/Infinity is not JSON (found NaN)"),
    (lambda t: t.replace('"type": "object",', '"type": "object", "x": ' + "[" * 1200 + "]" * 1200 + ",", 1), None,
     "nested deeper than 200 levels"),
    (lambda t: t.replace('"name": "book_reservation"', '"name": "book_\\udc00"', 1), None,
     "lone UTF-16 surrogate"),
    (lambda t: t.replace('"type": "object",', '"type": "objekt",', 1), None,
     "parameters: parameters is not a valid JSON Schema"),
    (lambda t: t.replace('"name": "book_reservation",', '', 1), None, "tool 0.name should be a non-empty string"),
    (lambda t: t[:-20], None, "not valid JSON: "),
])
def test_tools_file_errors_are_one_line(mutation, line: int | None, words: str,  # type: ignore[no-untyped-def]
                                        seeded: Store, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(mutation((TEST_DATA / "real" / "tau-bench" / "converted" / "airline_tools.json").read_text()))
    data = tmp_path / "t.jsonl"
    data.write_text(json.dumps({**GOOD_TRANSCRIPT, "id": "other"}) + "\n")
    before = seeded.dump()
    code, err = invoke("import", "--tools", str(tools), str(data))
    assert code == 2
    where = f"{tools}:{line}: " if line is not None else f"{tools}"
    assert_one_line(err, f"error: {where}", words)
    assert seeded.dump() == before


def test_skip_invalid_skips_and_lists_a_surrogate_line(seeded: Store, tmp_path: Path) -> None:
    bad = TEST_DATA / "bad"
    rejects = tmp_path / "rejects.txt"
    files = [str(bad / n) for n in ("lone_surrogate_content.jsonl", "lone_surrogate_arguments.jsonl",
                                    "number_nan.jsonl", "number_overflow.jsonl")]
    code, err = invoke("import", "--skip-invalid", "--rejects", str(rejects), *files)
    assert code == 0, err
    assert sorted(t.id for t in seeded.list_transcripts()) == ["good"]
    assert [line.split(": ", 1)[0] for line in rejects.read_text().splitlines()] == [f"{f}:2" for f in files]


def _gold_and_runs(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.jsonl"
    case = {"format": "toolgold.gold/1", "id": "c1", "conversation_id": "t", "turn": 1, "kind": "turn",
            "split": "regression", "messages": [{"role": "user", "content": "hi"}],
            "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"x": 1}}]}}
    gold.write_text(json.dumps(case) + "\n" + json.dumps({**case, "id": "c2"}) + "\n")
    runs = tmp_path / "runs.jsonl"
    run = {"format": "toolgold.run/1", "case_id": "c1", "calls": [{"name": "f", "arguments": {"x": 1}}]}
    runs.write_text(json.dumps(run) + "\n" + json.dumps({**run, "case_id": "c2"}) + "\n")
    return gold, runs


@pytest.mark.parametrize("which", ["gold", "runs"])
@pytest.mark.parametrize("hostile,words", [
    ("NaN", "NaN/Infinity is not JSON (found NaN)"),
    ("1e400", "NaN/Infinity is not JSON (found 1e400)"),
    ('"\\ud800"', "lone UTF-16 surrogate"),
    ("[" * 900 + "]" * 900, "nested deeper than 200 levels"),
])
def test_score_refuses_hostile_gold_and_runs(which: str, hostile: str, words: str, tmp_path: Path) -> None:
    gold, runs = _gold_and_runs(tmp_path)
    assert invoke("score", str(gold), str(runs))[0] == 0
    target = gold if which == "gold" else runs
    first, second = target.read_text().splitlines()
    target.write_text(first + "\n" + second.replace('{"x": 1}', '{"x": ' + hostile + "}") + "\n")
    code, err = invoke("score", str(gold), str(runs), "--format", "json")
    assert code == 2
    assert_one_line(err, f"error: {target}:2: ", words)


DEEP_TEXT = "[" * 5000 + "]" * 5000


def test_a_deep_tool_result_is_just_text_to_the_trajectory_scorer() -> None:
    from scorer.trajectory import failed_result

    assert failed_result(DEEP_TEXT) is False
    assert failed_result('{"status": "error", "x": NaN}') is False  # not JSON: judged as text
    assert failed_result('{"status": "error"}') is True


def test_the_app_shows_a_deep_tool_result_as_text() -> None:
    from labeler.app.render import _pretty_content

    assert _pretty_content(DEEP_TEXT) == (DEEP_TEXT, None)
    assert _pretty_content('{"a": 1}') == ('{\n  "a": 1\n}', "json")
