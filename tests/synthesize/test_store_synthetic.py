"""The store's side of synthesis, on SQLite and PostgreSQL: candidates as transcripts with one turn to label,
reviewers and admins only, the same id with other content refused whole, what waits counted in SQL."""

from __future__ import annotations

import pytest

from labeler.candidates import proposed_label
from labeler.labels import gold_case_id
from labeler.store import ImportItem, PermissionDenied, Store
from scorer.errors import InvalidRecord
from scorer.synthesize import missing_information, near_duplicate_tool, stale_context
from tests.synthesize.kit import demo, needs_data, tau2_retail

PARENT = "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4"  # two earlier decision points in its context


@pytest.fixture
def people(any_store: Store) -> Store:
    any_store.add_user("root", "admin")
    any_store.add_user("rita", "reviewer", actor="root")
    any_store.add_user("ann", "annotator", actor="root")
    any_store.import_items([ImportItem(demo(PARENT), source="tooltalk")])
    return any_store


def test_a_candidate_is_one_turn_to_label_and_counts_as_waiting_until_submitted(people: Store) -> None:
    candidates = [near_duplicate_tool(demo(PARENT), seed=0), missing_information(demo(PARENT), seed=0),
                  stale_context(demo(PARENT), seed=0)]
    assert people.propose_candidates(candidates, actor="rita") == 3
    assert people.synthetic_ids() == {c.id for c in candidates}
    for candidate in candidates:
        detail = people.get_transcript(candidate.id)
        end = len(detail.transcript.messages)
        assert [t.message_index for t in detail.turns] == [end]  # not the parent's earlier turns
    state = people.synthetic_candidates()
    assert (state.candidates, state.waiting) == (3, 3)
    assert state.by_transform == {"missing_information": 1, "near_duplicate_tool": 1, "stale_context": 1}
    assert [(p.parent, p.labeled) for p in state.proposed] == [(PARENT, False)] * 3

    missing = candidates[1]
    transcript = people.get_transcript(missing.id).transcript
    body = proposed_label(transcript)
    assert body is not None
    people.submit_label(missing.id, len(transcript.messages), "ann", body, version=0)
    assert people.get_gold(gold_case_id(missing.id, len(transcript.messages))).provenance.source == "synthetic"
    state = people.synthetic_candidates()
    assert (state.candidates, state.waiting, state.by_transform) == (
        3, 2, {"near_duplicate_tool": 1, "stale_context": 1})
    assert [p.labeled for p in state.proposed] == [False, True, False]
    assert people.synthetic_candidates(limit=1).proposed == state.proposed[:1]


def test_only_reviewers_and_admins_propose(people: Store) -> None:
    with pytest.raises(PermissionDenied, match=r"only a reviewer or admin can propose synthetic cases \('ann' is "
                                               r"annotator\)"):
        people.propose_candidates([near_duplicate_tool(demo(PARENT), seed=0)], actor="ann")
    assert people.synthetic_ids() == set()


def test_the_same_candidate_again_is_left_alone_and_other_content_under_its_id_is_refused_whole(
        people: Store) -> None:
    first = near_duplicate_tool(demo(PARENT), seed=0)
    assert people.propose_candidates([first], actor="rita") == 1
    assert people.propose_candidates([first], actor="rita") == 0
    other_seed = next(c for s in range(1, 20) if (c := near_duplicate_tool(demo(PARENT), seed=s)) != first)
    with pytest.raises(InvalidRecord, match="already in the store with different content"):
        people.propose_candidates([stale_context(demo(PARENT), seed=0), other_seed], actor="rita")
    assert people.synthetic_ids() == {first.id}  # the stale one was not written either


def test_a_candidate_becomes_approved_gold_only_through_submit_and_review(people: Store) -> None:
    from labeler.synthesis import synthesize

    candidate = stale_context(demo(PARENT), seed=0)
    people.propose_candidates([candidate], actor="rita")
    assert people.count_gold(status="approved") == 1  # the parent only
    transcript = people.get_transcript(candidate.id).transcript
    body = proposed_label(transcript)
    assert body is not None
    people.submit_label(candidate.id, len(transcript.messages), "ann", body, version=0)
    case_id = gold_case_id(candidate.id, len(transcript.messages))
    assert people.get_gold(case_id).provenance.status == "submitted"
    assert case_id in people.approvable_cases()
    assert people.approve_cases([case_id], actor="rita") == 1
    approved = people.get_gold(case_id)
    assert (approved.provenance.status, approved.provenance.source, approved.provenance.reviewer) == (
        "approved", "synthetic", "rita")
    # approved synthetic gold is never a parent: only the real parent's other transformations are proposed
    done = synthesize(people, actor="rita", transforms=["stale_context", "near_duplicate_tool"])
    assert sorted(c.id for c in done.proposal.candidates) == [f"{PARENT}~near_duplicate_tool"]
    assert done.proposal.already_proposed == 1


@needs_data
def test_a_trajectory_parent_gives_the_queue_only_its_negative_branch(people: Store) -> None:
    from labeler.synthesis import synthesize
    from scorer.model import Message

    task = tau2_retail()["tau2-bench/retail/task-0"]
    talked = task.model_copy(update={"messages": (
        Message(role="system", content="You are a retail support agent."),
        Message(role="user", content="Hi, I'd like to exchange two items from order #W2378156."))})
    people.import_items([ImportItem(talked, source="tau2-bench")])
    done = synthesize(people, actor="rita")
    mine = sorted(c.id for c in done.proposal.candidates if c.synthesis.parent == task.id)
    assert mine == [f"{task.id}~negative_branch"]
    transcript = people.get_transcript(mine[0]).transcript
    assert transcript.messages[-1].content == "Error: get_order_details found no matching record"
    label = proposed_label(transcript)
    assert label is not None and label.decision == "no_call"
    assert "exchange_delivered_order_items must not be called" in label.rationale
