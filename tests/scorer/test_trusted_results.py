"""Results the scorer builds without validating them again (``results.trusted``) are exactly what
validation would build: same values, same types (tuples stay tuples), same JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.importers import Converted, convert
from scorer.model import GoldCase, RunCall, RunRecord
from scorer.results import CaseError, CaseResult, trusted
from tests.conftest import TEST_DATA

BFCL = TEST_DATA / "real" / "bfcl"


def _cases() -> list[GoldCase]:
    found = []
    for name in ("BFCL_v4_simple_python.json", "BFCL_v4_parallel.json", "BFCL_v4_parallel_multiple.json",
                 "BFCL_v4_live_simple.json", "BFCL_v4_live_multiple.json"):
        for item in convert(BFCL / name, "bfcl"):
            if isinstance(item, Converted) and isinstance(item.record, GoldCase):
                found.append(item.record)
    return found


def _outputs(case: GoldCase) -> list[tuple[RunCall, ...]]:
    calls = [(c.name, json.loads(json.dumps(c.arguments))) for c in case.expected.calls]
    name, args = calls[0]
    key = sorted(args)[0] if args else None
    outputs: list[list[tuple[str, Any]]] = [calls, [(name, {**args, "zz_unknown": 1})], [("zz_tool", args)]]
    if key is not None:
        outputs.append([(name, {k: v for k, v in args.items() if k != key})])
        outputs.append([(name, {**args, key: [args[key], "zz"]})])
    outputs.append(calls[::-1] + calls[:1])
    runs = [tuple(RunCall(name=n, arguments=a) for n, a in o) for o in outputs]
    return [*runs, (), (RunCall(name=name, arguments="{not json"),)]


def _same(built: BaseModel, validated: BaseModel) -> None:
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert list(built) == list(validated)  # iterating a model walks its __dict__: fields in field order
    for name in type(built).model_fields:
        a, b = getattr(built, name), getattr(validated, name)
        assert type(a) is type(b), name
        if isinstance(a, tuple):
            for x, y in zip(a, b, strict=True):
                assert type(x) is type(y), name
                if isinstance(x, BaseModel):
                    _same(x, y)
        elif isinstance(a, BaseModel):
            _same(a, b)


def test_scored_results_equal_their_validated_copies() -> None:
    checked = 0
    for case in _cases():
        for calls in _outputs(case):
            result = score_case(case, RunRecord(case_id=case.id, calls=calls))
            _same(result, CaseResult.model_validate(result.model_dump()))
            checked += 1
    assert checked > 50


def test_trusted_refuses_unknown_and_missing_fields() -> None:
    with pytest.raises(TypeError):
        trusted(CaseError, code=ErrorCode.WRONG_TOOL, note="x", colour="red")
    with pytest.raises(TypeError):
        trusted(CaseError, code=ErrorCode.WRONG_TOOL)
    error = trusted(CaseError, code=ErrorCode.WRONG_TOOL, note="x", tool="t")
    validated = CaseError(code=ErrorCode.WRONG_TOOL, note="x", tool="t")
    _same(error, validated)
    assert error.model_fields_set == validated.model_fields_set


def test_results_built_with_every_field_say_every_field_is_set_each_in_a_set_of_its_own() -> None:
    results = [score_case(case, RunRecord(case_id=case.id, calls=calls))
               for case in _cases()[:40] for calls in _outputs(case)]
    first, second = results[0], results[1]
    for result in results:
        assert result.model_fields_set == set(CaseResult.model_fields)
        assert result.verdicts.model_fields_set == set(type(result.verdicts).model_fields)
    # A set handed out twice would let one result's model_fields_set change another's.
    first.model_fields_set.discard("case_id")
    assert second.model_fields_set == set(CaseResult.model_fields)
