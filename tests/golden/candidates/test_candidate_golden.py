"""Golden files pin ``toolgold.candidate/1``: the valid file round-trips byte for byte and is exactly what the
transformations make of the demo with its seed (so a change in any transformation's output is seen here),
and invalid candidates are refused with exactly these messages."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from scorer.errors import InvalidRecord, UnknownFormat
from scorer.synthesize.saved import dumps_candidate, read_candidates
from tests.conftest import REPO
from tests.golden.candidates.make_golden import golden_candidates

HERE = Path(__file__).resolve().parent
VALID = HERE / "valid" / "candidate-v1.jsonl"
INVALID = {
    "candidate-unknown-version.jsonl": "unknown format 'toolgold.candidate/2' (a newer version than this toolgold "
                                       "reads: upgrade toolgold); candidates are toolgold.candidate/1",
    "candidate-missing-format.jsonl": "missing 'format' (toolgold.candidate/1)",
    "candidate-is-a-gold-case.jsonl": "unknown format 'toolgold.gold/1'; candidates are toolgold.candidate/1",
    "candidate-id-not-its-parent-and-transform.jsonl":
        "id must be 'bfcl/live_simple_0-0-0~toolkit_growth+5' (parent, transformation and variant)",
    "candidate-case-not-synthetic.jsonl": "case.provenance.source must be 'synthetic'",
    "candidate-unknown-transform.jsonl":
        "synthesis.transform: Input should be 'near_duplicate_tool', 'missing_information', 'toolkit_growth', "
        "'negative_branch', 'stale_context', 'paraphrase' or 'tool_shaped_no_intent'",
    "candidate-without-seed.jsonl": "synthesis.seed: Field required",
}


def test_valid_candidates_round_trip_byte_for_byte() -> None:
    lines = VALID.read_text(encoding="utf-8").splitlines()
    parsed = list(read_candidates(VALID.read_bytes().splitlines(), str(VALID)))
    assert [c.synthesis.transform for c in parsed] == [
        "near_duplicate_tool", "missing_information", "toolkit_growth", "negative_branch", "stale_context"]
    assert [dumps_candidate(c) for c in parsed] == lines


def test_the_transformations_still_make_exactly_the_golden_candidates() -> None:
    assert golden_candidates() == VALID.read_text(encoding="utf-8").splitlines()


def test_every_invalid_file_has_its_expected_error() -> None:
    assert sorted(p.name for p in (HERE / "invalid").glob("*.jsonl")) == sorted(INVALID)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_candidates_are_refused_with_the_exact_error(name: str) -> None:
    path = HERE / "invalid" / name
    with pytest.raises(InvalidRecord) as caught:
        list(read_candidates(path.read_bytes().splitlines(), str(path)))
    assert str(caught.value) == f"{path}:1: {INVALID[name]}"
    assert isinstance(caught.value, UnknownFormat) == ("unknown format" in INVALID[name])


def test_valid_candidates_validate_against_the_published_json_schema() -> None:
    schema = json.loads((REPO / "docs" / "schema" / "candidate-v1.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    for line in VALID.read_text(encoding="utf-8").splitlines():
        assert [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(json.loads(line))] == []
