"""Every transformation over whole real datasets: each case gives a candidate or a reason, never another error,
and every candidate is a valid toolgold.candidate/1 record that round-trips byte for byte."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scorer.importers import convert
from scorer.model import GoldCase
from scorer.synthesize import TRANSFORMS, Proposal, propose
from scorer.synthesize.saved import dumps_candidate, parse_candidate
from tests.conftest import TEST_DATA
from tests.synthesize.kit import DATA, TAU2_RETAIL_TASKS, needs_data


def gold_of(paths: list[Path]) -> list[GoldCase]:
    return [i.record for p in paths for i in convert(p) if isinstance(i.record, GoldCase)]


def assert_sound(proposal: Proposal, cases: list[GoldCase]) -> None:
    for candidate in proposal.candidates:
        line = dumps_candidate(candidate)
        assert dumps_candidate(parse_candidate(json.loads(line))) == line
    assert all(s.reason.startswith(f"{s.parent}: ") for s in proposal.skipped)
    assert len(proposal.candidates) + len(proposal.skipped) == len(cases) * (len(TRANSFORMS) + 2)


def test_the_repositorys_bfcl_and_tooltalk_slices() -> None:
    paths = sorted((TEST_DATA / "real" / "bfcl").glob("BFCL_v4_*.json"))
    paths += [p for d in ("easy", "tooltalk") for p in sorted((TEST_DATA / "real" / "tooltalk" / d).glob("*.json"))]
    cases = gold_of(paths)
    assert len(cases) >= 15
    proposal = propose(cases, seed=11)
    assert_sound(proposal, cases)
    made = Counter(c.synthesis.transform for c in proposal.candidates)
    assert {"near_duplicate_tool", "missing_information", "stale_context"} <= set(made)


@needs_data
def test_tau2_bench_retail_and_airline_tasks() -> None:
    cases = gold_of([TAU2_RETAIL_TASKS, DATA / "tau2-bench" / "domains" / "airline" / "tasks.json"])
    proposal = propose(cases, seed=11)
    assert_sound(proposal, cases)
    negative = [c for c in proposal.candidates if c.synthesis.transform == "negative_branch"]
    assert len(negative) >= 60  # most retail tasks look an order up before changing it
