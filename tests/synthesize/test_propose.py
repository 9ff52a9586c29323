"""``propose`` over the demo's gold: a mix of transformations, deterministic, and never the same candidate twice."""

from __future__ import annotations

from collections import Counter

from scorer.model import Provenance
from scorer.synthesize import TRANSFORMS, propose
from scorer.synthesize.saved import dumps_candidate
from tests.synthesize.kit import demo, demo_gold


def test_the_transformations_take_turns_so_a_small_n_is_a_mix() -> None:
    proposal = propose(demo_gold().values(), seed=4, n=7)
    assert len(proposal.candidates) == 7
    kinds = Counter(c.synthesis.transform for c in proposal.candidates)
    assert set(kinds) == set(TRANSFORMS)
    assert len({c.id for c in proposal.candidates}) == 7


def test_every_applicable_transformation_of_the_demo_is_proposed_once() -> None:
    proposal = propose(demo_gold().values(), seed=4)
    ids = [c.id for c in proposal.candidates]
    assert len(ids) == len(set(ids))
    by_kind = Counter((c.synthesis.transform, c.synthesis.variant) for c in proposal.candidates)
    assert by_kind == {("near_duplicate_tool", ""): 44, ("missing_information", ""): 4, ("stale_context", ""): 4,
                       ("negative_branch", ""): 1, ("toolkit_growth", "+5"): 55, ("toolkit_growth", "+15"): 55,
                       ("toolkit_growth", "+30"): 55}
    assert all(s.reason.startswith(f"{s.parent}: ") for s in proposal.skipped)
    made_or_skipped = len(proposal.candidates) + len(proposal.skipped)
    assert made_or_skipped == len(demo_gold()) * (len(TRANSFORMS) + 2)  # toolkit growth tries three sizes


def test_running_again_proposes_nothing_already_proposed_whatever_the_seed() -> None:
    first = propose(demo_gold().values(), seed=1, n=20)
    again = propose(demo_gold().values(), seed=99, n=20, exclude={c.id for c in first.candidates})
    assert not {c.id for c in first.candidates} & {c.id for c in again.candidates}
    assert len(again.candidates) == 20
    everything = propose(demo_gold().values(), seed=1)
    rerun = propose(demo_gold().values(), seed=2, exclude={c.id for c in everything.candidates})
    assert rerun.candidates == ()
    assert rerun.already_proposed == len(everything.candidates)


def test_the_same_seed_proposes_the_same_bytes() -> None:
    one = propose(demo_gold().values(), seed=8, n=12)
    two = propose(reversed(list(demo_gold().values())), seed=8, n=12)
    assert [dumps_candidate(c) for c in one.candidates] == [dumps_candidate(c) for c in two.candidates]


def test_only_approved_real_cases_are_parents_and_the_split_is_the_one_asked_for() -> None:
    parent = demo("tooltalk/DeleteReminder-easy/turn-2")
    submitted = parent.model_copy(update={"id": "submitted", "provenance": Provenance(status="submitted")})
    synthetic_gold = propose([parent], seed=0, transforms=["stale_context"]).candidates[0].case.model_copy(
        update={"provenance": Provenance(status="approved", source="synthetic")})
    proposal = propose([parent, submitted, synthetic_gold], seed=0, split="rolling",
                       transforms=["near_duplicate_tool", "stale_context"])
    assert sorted(c.id for c in proposal.candidates) == [
        "tooltalk/DeleteReminder-easy/turn-2~near_duplicate_tool", "tooltalk/DeleteReminder-easy/turn-2~stale_context"]
    assert {c.case.split for c in proposal.candidates} == {"rolling"}
    assert parent.split == "regression"
