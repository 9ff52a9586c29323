"""NaN and ±Infinity are not JSON: every canonical writer refuses them, naming where they sit, instead of
writing ``null`` (orjson, pydantic) or the invalid text ``NaN`` (the stdlib ``json``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from labeler.labels import LabelBody, TrajectoryBody
from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record, to_json
from scorer.model import Call, GoldCase

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "valid" / "gold-v1.jsonl"
BAD = [float("nan"), float("inf"), float("-inf")]
NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _name(x: float) -> str:
    return NAMES[repr(x)]


@pytest.mark.parametrize("bad", BAD, ids=repr)
@pytest.mark.parametrize("writer", [canonical.dumps_stored, canonical.dumps_json_values],
                         ids=["dumps_stored", "dumps_json_values"])
def test_each_writer_refuses_a_non_finite_number_and_names_its_key_path(writer, bad):
    value = {"calls": [{"name": "refund", "arguments": {"amount": bad, "note": None}}], "n": 1}
    with pytest.raises(canonical.NonFiniteNumber) as caught:
        writer(value)
    assert caught.value.path == "calls[0].arguments.amount"
    assert str(caught.value) == f"calls[0].arguments.amount: {_name(bad)} is not a JSON number"
    assert isinstance(caught.value, InvalidRecord) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize("writer", [canonical.dumps_stored, canonical.dumps_json_values])
def test_a_non_finite_number_at_the_top_or_in_a_list_is_named_too(writer):
    with pytest.raises(canonical.NonFiniteNumber, match=r"^\(the value\): NaN"):
        writer(float("nan"))
    with pytest.raises(canonical.NonFiniteNumber, match=r"^\[2\]\[0\]: Infinity"):
        writer([1, 2.5, [math.inf]])
    with pytest.raises(canonical.NonFiniteNumber, match=r'^\["a b"\]: NaN'):
        writer({"a b": math.nan})


@pytest.mark.parametrize("writer", [canonical.dumps_stored, canonical.dumps_json_values])
def test_finite_values_are_written_as_before(writer):
    value = {"b": [1.5, 2.0, None, 1e16, 1.5e-7, -0.0], "a": {"x": "NaN", "y": True}}
    assert writer(value) == canonical.dumps(value) == '{"a":{"x":"NaN","y":true},"b":[1.5,2,null,10000000000000000,1.5e-07,0]}'


def test_the_comparison_key_still_takes_what_an_agent_sent():
    """``dumps`` keys comparisons and sorting in the scorer (an agent's NaN argument is scored, not a crash)."""
    assert canonical.dumps({"a": math.nan}) == '{"a":NaN}'
    assert canonical.content_hash([math.inf]) == canonical.content_hash([math.inf])


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_record_holding_a_non_finite_argument_cannot_be_written(bad):
    """pydantic writes NaN as null in ``model_dump_json`` and ``model_dump(mode="json")``: the record
    writers must not go through that silently."""
    call = Call(name="refund", arguments={"amount": bad})
    with pytest.raises(canonical.NonFiniteNumber, match=r"^arguments\.amount: "):
        to_json(call)
    with pytest.raises(canonical.NonFiniteNumber, match=r"^arguments\.amount: "):
        dumps_record(call)
    line = next(x for x in GOLDEN.read_text().splitlines() if '"toolgold.gold/1"' in x and '"kind":"turn"' in x)
    record = json.loads(line)
    record["expected"]["calls"][0]["arguments"]["amount"] = bad
    case = GoldCase.model_validate(record)
    with pytest.raises(canonical.NonFiniteNumber, match=r"^expected\.calls\[0\]\.arguments\.amount: "):
        dumps_record(case)


@pytest.mark.parametrize("body_type", [LabelBody, TrajectoryBody])
def test_a_label_body_holding_a_non_finite_argument_cannot_be_written(body_type):
    body = body_type(calls=(Call(name="refund", arguments={"amount": [1, math.nan]}),))
    with pytest.raises(canonical.NonFiniteNumber, match=r"^calls\[0\]\.arguments\.amount\[1\]: NaN"):
        body.canonical()
    with pytest.raises(canonical.NonFiniteNumber, match=r"^calls\[0\]\.arguments\.amount\[1\]: NaN"):
        body.to_json()


def test_a_finite_label_body_is_written_as_before():
    body = LabelBody(decision="different", calls=(Call(name="refund", arguments={"amount": 5.0, "x": None}),))
    assert body.canonical() == '{"calls":[{"arguments":{"amount":5,"x":null},"name":"refund"}],"decision":"different"}'
