"""Golden files pin toolgold's three formats: valid records round-trip byte for byte, invalid ones are
refused with exactly these messages, and the published JSON Schemas match the models and accept the
valid records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from labeler.cli import cli
from scorer.errors import InvalidRecord, UnknownFormat
from scorer.formats import dumps_record, iter_json_lines, parse_record
from scorer.model import GoldCase, RunRecord, Transcript
from tests.conftest import REPO

GOLDEN = Path(__file__).resolve().parent
VALID = {"transcript-v1.jsonl": Transcript, "gold-v1.jsonl": GoldCase, "run-v1.jsonl": RunRecord}
SCHEMA_FILES = {"toolgold.transcript/1": "transcript-v1.schema.json", "toolgold.gold/1": "gold-v1.schema.json",
                "toolgold.run/1": "run-v1.schema.json"}
READS = "this toolgold reads toolgold.transcript/1, toolgold.gold/1, toolgold.run/1"
INVALID = {
    "gold-unknown-version.jsonl":
        f"unknown format 'toolgold.gold/2' (a newer version than this toolgold reads: upgrade toolgold); {READS}",
    "transcript-unknown-version.jsonl":
        f"unknown format 'toolgold.transcript/2' (a newer version than this toolgold reads: upgrade toolgold); {READS}",
    "unknown-family.jsonl": f"unknown format 'toolgold.report/1'; {READS}",
    "missing-format.jsonl": "missing 'format' (one of: toolgold.transcript/1, toolgold.gold/1, toolgold.run/1)",
    "not-json.jsonl": "not valid JSON: Expecting ',' delimiter (column 96)",
    "transcript-missing-fields.jsonl": "id: Field required; messages: Field required",
    "transcript-tool-result-unknown-id.jsonl":
        "messages[2]: tool result answers 'c2', which no earlier assistant message called",
    "transcript-duplicate-tools.jsonl": "tools are listed twice: f",
    "gold-missing-expected.jsonl": "expected: Field required",
    "gold-call-without-calls.jsonl": "expected: behavior 'call' needs at least one call",
    "gold-no-call-with-calls.jsonl": "expected: behavior 'no_call' takes no calls",
    "gold-tool-result-unknown-id.jsonl":
        "messages[0]: tool result answers 'x', which no earlier assistant message called",
    "gold-naive-reference-time.jsonl":
        "reference_time: needs a timezone (e.g. 2024-05-15T15:00:00-05:00 or ...Z)",
    "gold-unknown-time-zone.jsonl": "tz: unknown time zone 'EST5EDT-ish' (an IANA name such as America/New_York)",
    "gold-order-on-turn-case.jsonl": "order / after / forbidden belong to trajectory cases (kind: trajectory)",
    "gold-unknown-match-kind.jsonl":
        "arg_rules.f.x.match: Input should be 'exact', 'one_of', 'any', 'ci', 'normalized', 'number', 'date', "
        "'datetime', 'currency', 'phone', 'regex', 'semantic' or 'from_call'",
    "gold-unknown-field.jsonl": "expected_tool: Extra inputs are not permitted",
    "run-calls-and-messages.jsonl":
        "a run record has either calls (turn case) or messages (trajectory), not both",
    "run-missing-case-id.jsonl": "case_id: Field required",
}


def records(path: Path) -> list[tuple[int, Any]]:
    return list(iter_json_lines(path.read_bytes().splitlines(keepends=True), str(path)))


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_records_parse_and_round_trip_byte_for_byte(name: str) -> None:
    path = GOLDEN / "valid" / name
    lines = path.read_text(encoding="utf-8").splitlines()
    parsed = [parse_record(value, expect=VALID[name], source=str(path), line=n) for n, value in records(path)]
    assert len(parsed) == len(lines) >= 2
    assert [dumps_record(record) for record in parsed] == lines


def test_every_invalid_file_has_its_expected_error() -> None:
    assert sorted(p.name for p in (GOLDEN / "invalid").glob("*.jsonl")) == sorted(INVALID)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_records_are_refused_with_the_exact_error(name: str) -> None:
    path = GOLDEN / "invalid" / name
    with pytest.raises(InvalidRecord) as caught:
        for n, value in records(path):
            parse_record(value, source=str(path), line=n)
    assert str(caught.value) == f"{path}:1: {INVALID[name]}"
    assert isinstance(caught.value, UnknownFormat) == name.startswith(("gold-unknown-version", "transcript-unknown",
                                                                       "unknown-family"))


def test_the_published_schemas_are_what_toolgold_schema_writes_now(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["schema", "--write", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0
    published = REPO / "docs" / "schema"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in published.glob("*.json"))
    for generated in tmp_path.iterdir():
        assert (published / generated.name).read_text() == generated.read_text(), (
            f"docs/schema/{generated.name} is stale: run `make schema`")


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_records_validate_against_the_published_json_schema(name: str) -> None:
    path = GOLDEN / "valid" / name
    for _, value in records(path):
        schema = json.loads((REPO / "docs" / "schema" / SCHEMA_FILES[value["format"]]).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(value)]
        assert errors == []


def test_the_published_schema_refuses_what_the_models_refuse() -> None:
    schema = json.loads((REPO / "docs" / "schema" / "gold-v1.schema.json").read_text())
    for name in ("gold-unknown-version.jsonl", "gold-missing-expected.jsonl", "gold-unknown-field.jsonl",
                 "gold-unknown-match-kind.jsonl"):
        (_, value), = records(GOLDEN / "invalid" / name)
        assert not jsonschema.Draft202012Validator(schema).is_valid(value), name
