"""The bad-input corpus (tests/data/bad/): every file gives one clear `FILE:LINE: what` error, exit 2,
and leaves the database exactly as it was; --skip-invalid imports the rest and lists the rejects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store

DATA = Path(__file__).resolve().parents[1] / "data"
BAD = DATA / "bad"

# file -> (line the error names, or None for a whole-file error; words the message must contain)
EXPECTED: dict[str, tuple[int | None, str]] = {
    "blank_lines_only.jsonl": (None, "no records in this file"),
    "bom_mid_file.jsonl": (2, "Unexpected UTF-8 BOM"),
    "content_wrong_type.jsonl": (1, "messages.0.content: Input should be a valid string"),
    "crlf_with_bad_line.jsonl": (2, "id: Input should be a valid string"),
    "deeply_nested.jsonl": (1, "nested deeper than 200 levels"),
    "duplicate_ids_different_content.jsonl": (2, "transcript 'dup' is already in the store with different content"),
    "duplicate_tool_call_ids.jsonl": (1, "duplicate tool_call id 'c1'"),
    "empty.jsonl": (None, "no records in this file (it is empty)"),
    "gold_after_out_of_range.jsonl": (1, "after: step 3 does not exist"),
    "gold_arguments_not_json.jsonl": (1, "expected.calls.0.arguments: Input should be a valid dictionary"),
    "gold_call_without_calls.jsonl": (1, "behavior 'call' needs at least one call"),
    "gold_naive_reference_time.jsonl": (1, "reference_time: needs a timezone"),
    "gold_no_call_with_calls.jsonl": (1, "behavior 'no_call' takes no calls"),
    "gold_order_on_turn_case.jsonl": (1, "order / after / forbidden belong to trajectory cases"),
    "gold_regex_invalid.jsonl": (1, "pattern is not a valid regular expression"),
    "gold_semantic_without_intent.jsonl": (1, "match 'semantic' needs an intent sentence"),
    "gold_unknown_behavior.jsonl": (1, "expected.behavior: Input should be 'call', 'no_call' or 'clarify'"),
    "gold_unknown_match_kind.jsonl": (1, "arg_rules.f.a.match: Input should be 'exact'"),
    "id_wrong_type.jsonl": (1, "id: Input should be a valid string"),
    "invalid_utf8.jsonl": (2, "not valid UTF-8"),
    "line_is_array.jsonl": (2, "expected a JSON object, got an array"),
    "line_is_null.jsonl": (1, "expected a JSON object, got null"),
    "line_is_number.jsonl": (1, "expected a JSON object, got a number"),
    "line_is_string.jsonl": (1, "expected a JSON object, got a string"),
    "messages_empty.jsonl": (1, "messages: Tuple should have at least 1 item"),
    "messages_wrong_type.jsonl": (1, "messages: Input should be a valid tuple"),
    "missing_format.jsonl": (1, "missing 'format'"),
    "run_record_not_importable.jsonl": (1, "toolgold.run/1 records are scored, not imported"),
    "tool_call_id_unresolved.jsonl": (1, "tool result answers 'nope', which no earlier assistant message called"),
    "tool_calls_on_user_message.jsonl": (1, "only assistant messages carry tool_calls"),
    "tool_result_before_call.jsonl": (1, "tool result answers 'c1', which no earlier assistant message called"),
    "tool_schema_invalid.jsonl": (1, "parameters is not a valid JSON Schema"),
    "tool_schema_not_object.jsonl": (1, "tools.0.parameters: Input should be a valid dictionary"),
    "tools_duplicate_names.jsonl": (1, "tools are listed twice: f"),
    "truncated_json.jsonl": (2, "not valid JSON: Unterminated string"),
    "unknown_field_typo.jsonl": (1, "mesages: Extra inputs are not permitted"),
    "unknown_format_family.jsonl": (1, "unknown format 'acme.log/1'"),
    "unknown_format_version.jsonl": (1, "unknown format 'toolgold.transcript/2' (a newer version"),
    "number_nan.jsonl": (2, "NaN/Infinity is not JSON (found NaN)"),
    "number_infinity.jsonl": (2, "NaN/Infinity is not JSON (found Infinity)"),
    "number_negative_infinity.jsonl": (1, "NaN/Infinity is not JSON (found -Infinity)"),
    "number_overflow.jsonl": (2, "NaN/Infinity is not JSON (found 1e400)"),
    "tool_schema_maximum_nan.jsonl": (1, "NaN/Infinity is not JSON (found NaN)"),
    "lone_surrogate_content.jsonl": (2, "lone UTF-16 surrogate (\\ud800 at character 4)"),
    "lone_surrogate_key.jsonl": (1, "lone UTF-16 surrogate (\\udfff at character 1)"),
    "lone_surrogate_arguments.jsonl": (2, "arguments: a string holds a lone UTF-16 surrogate"),
    "arguments_nested_deep.jsonl": (1, "arguments: nested deeper than 200 levels"),
    "unknown_role.jsonl": (1, "messages.0.role: Input should be 'system', 'user', 'assistant' or 'tool'"),
}


def import_(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import", *args], catch_exceptions=False)
    return result.exit_code, result.stderr


@pytest.fixture
def seeded(isolated_db: Path) -> Store:
    """A store that already holds one transcript, so 'unchanged' is checked against real content."""
    seed = isolated_db.parent / "seed.jsonl"
    seed.write_text(json.dumps({"format": "toolgold.transcript/1", "id": "dup",
                                "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert import_(str(seed))[0] == 0
    return Store(isolated_db)


def test_the_corpus_is_complete() -> None:
    assert sorted(p.name for p in BAD.iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file_is_refused_with_file_and_line_and_nothing_changes(name: str, seeded: Store) -> None:
    before = seeded.dump()
    path = BAD / name
    code, err = import_("--from", "toolgold", str(path))
    line, words = EXPECTED[name]
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert code == 2
    assert err.startswith(f"error: {where}"), err
    assert words in err
    assert err.count("\n") == 1  # one clear line, no traceback
    assert seeded.dump() == before


def test_skip_invalid_imports_what_is_good_and_lists_the_rest(seeded: Store, tmp_path: Path) -> None:
    files = [str(BAD / n) for n in ("truncated_json.jsonl", "line_is_array.jsonl", "invalid_utf8.jsonl",
                                    "bom_mid_file.jsonl", "empty.jsonl")]
    rejects = tmp_path / "rejects.txt"
    result = CliRunner().invoke(cli, ["import", "--from", "toolgold", "--skip-invalid", "--rejects", str(rejects),
                                      *files], catch_exceptions=False)
    assert result.exit_code == 0
    # Each of the first four files starts with the same good transcript; it lands once.
    assert seeded.stats()["transcripts"] == 2
    assert [line.split(": ", 1)[0] for line in rejects.read_text().splitlines()] == [
        f"{files[0]}:2", f"{files[1]}:2", f"{files[2]}:2", f"{files[3]}:2", f"{files[4]}"]


def test_a_50_mb_argument_is_refused_before_parsing(seeded: Store, tmp_path: Path) -> None:
    huge = tmp_path / "huge.jsonl"
    args = json.dumps({"blob": "x" * 50_000_000})
    huge.write_text(json.dumps({"format": "toolgold.transcript/1", "id": "big", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "f", "arguments": args}}]}]}) + "\n")
    before = seeded.dump()
    code, err = import_(str(huge))
    assert code == 2
    assert err.startswith(f"error: {huge}:1: record is 50.0 MB; the limit is 16 MB per line")
    assert seeded.dump() == before


@pytest.mark.parametrize("name,ids", [("bom_first_line.jsonl", ["bom-1"]),
                                      ("crlf_line_ends.jsonl", ["crlf-1", "crlf-2"])])
def test_benign_quirks_import_cleanly(name: str, ids: list[str], store: Store) -> None:
    code, err = import_(str(DATA / "quirks" / name))
    assert (code, err) == (0, "")
    assert [t.id for t in store.list_transcripts()] == ids
