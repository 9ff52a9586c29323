"""The fast path scores every output the BFCL benchmarks score exactly as the reference path.

The outputs are those ``benchmarks/bench_bfcl.py`` times (every BFCL call item at its first acceptable
values, and perturbed: a changed value, an unknown parameter or a dropped required argument) and those
``benchmarks/bench_bfcl_conformance.py`` builds (first / last values, upper-cased, squeezed, wrong tool, a
dropped required argument, an unknown parameter, a wrong value or type, reversed parallel calls, integral
floats), on the 2,311 call items of the shared BFCL data (the conformance categories add the live parallel
ones). Each is scored as ``toolgold score`` and the benchmark score it (``score_case`` with no facts: the
compiled checks, the lean one-call path, fresh facts per case) and through the reference
(``CaseFacts(compiled=False)``: every call checked by the general ``check_pair``, every answer through
``choose``). The two results must be the same object: every field, every error (code, note, step,
expected and actual values), every review, partial credit, verdicts, the pairing parallel calls got, and
even which fields were set.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from scorer.api import score_case
from scorer.facts import CaseFacts
from scorer.model import GoldCase, RunCall, RunRecord
from tests.conftest import SHARED_DATA

SHARED_BFCL = SHARED_DATA / "bfcl"
needs_bfcl = pytest.mark.skipif(not (SHARED_BFCL / "BFCL_v4_parallel.json").is_file(),
                                reason="the shared BFCL data is not here (TOOLGOLD_SHARED_DATA)")


def _fields_set(value: Any) -> Any:
    """Which fields were set, all the way down (``trusted`` must set what validation would)."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, sorted(value.model_fields_set),
                {k: _fields_set(v) for k, v in value.__dict__.items()})
    if isinstance(value, list | tuple):
        return [_fields_set(v) for v in value]
    return None


def _assert_same(gold: GoldCase, made: tuple[RunCall, ...], label: str) -> str:
    run = RunRecord(case_id=gold.id, calls=made)
    fast = score_case(gold, run)
    reference = score_case(gold, run, facts=CaseFacts(gold, compiled=False))
    where = (label, gold.id, made)
    assert fast == reference, where
    assert fast.model_dump_json() == reference.model_dump_json(), where
    assert _fields_set(fast) == _fields_set(reference), where
    # reusing the facts of the case (as ``score_trials`` does for several trials) changes nothing either
    facts = CaseFacts(gold)
    assert score_case(gold, run, facts=facts).model_dump_json() == score_case(gold, run, facts=facts) \
        .model_dump_json() == reference.model_dump_json(), where
    return fast.status


def _runs(calls: list[tuple[str, dict[str, Any]]], *, as_text: bool) -> tuple[RunCall, ...]:
    return tuple(RunCall(name=n, arguments=json.dumps(a) if as_text else a) for n, a in calls)


@needs_bfcl
def test_every_bench_bfcl_output_scores_as_the_reference_path() -> None:
    from benchmarks.bench_bfcl import load_items

    items = load_items(SHARED_BFCL)
    assert len(items) == 2311
    statuses: dict[str, int] = {}
    for item in items:
        for key in ("correct", "perturbed"):
            status = _assert_same(item["case"], _runs(item[key], as_text=False), key)
            statuses[f"{key} {status}"] = statuses.get(f"{key} {status}", 0) + 1
    # the benchmark's premise: right outputs pass, perturbed ones fail
    assert statuses.get("correct pass", 0) > 2250 and statuses.get("perturbed fail", 0) > 2250, statuses


@needs_bfcl
def test_every_bench_bfcl_conformance_output_scores_as_the_reference_path() -> None:
    from benchmarks.bench_bfcl_conformance import VARIANTS, items

    compared = 0
    for _category, gold, _question, _answer in items(SHARED_BFCL):
        for build in VARIANTS.values():
            calls = build(gold)
            if calls is None:
                continue
            _assert_same(gold, _runs(calls, as_text=True), "conformance")  # as the conformance run gives them
            _assert_same(gold, _runs(calls, as_text=False), "conformance")
            compared += 1
    assert compared > 15_000
