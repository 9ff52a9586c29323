"""The review workflow in the store (SQLite and PostgreSQL): the queue holds only what needs a decision,
decisions write gold with the reviewer in its provenance, roles are checked on every write, all is audited."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from labeler.labels import LabelBody, RuleDraft
from labeler.store import Overlap, PermissionDenied, ReviewItem, Store, StoreError
from scorer.model import Answer, Call
from tests.review.kit import people, put, transcript
from tests.store_reads import audit_events

T1, T2, T3 = "t1", "t2", "t3"
CASE1 = "t1#t2"  # the decision point at message 2: the agent looked up orders


def lookup(customer: str = "C-1042", **changes: Any) -> LabelBody:
    return LabelBody(decision="same" if customer == "C-1042" else "different",
                     calls=(Call(name="search_orders", arguments={"customer": customer}),),
                     tags=("happy_path",), **changes)


def submit(store: Store, annotator: str, body: LabelBody, tid: str = T1, turn: int = 2) -> None:
    label = store.get_label(tid, turn, annotator)
    store.submit_label(tid, turn, annotator, body, version=label.version if label else 0)


@pytest.fixture
def rs(any_store: Store) -> Store:
    people(any_store)
    put(any_store, transcript(T1), transcript(T2, "Orders for C-77 please", observed={"customer": "C-77"}),
        transcript(T3, "Hi"))
    return any_store


@pytest.fixture
def disagreement(rs: Store) -> ReviewItem:
    submit(rs, "ann", lookup())
    submit(rs, "bob", lookup("C-1024", rationale="the id in the message"))
    rs.sync_review_queue()
    [item] = rs.review_queue(actor="rita")
    return item


# -- what goes into the queue ----------------------------------------------------------------------------


def test_only_disagreements_and_unsure_flags_need_a_decision(rs: Store) -> None:
    submit(rs, "ann", lookup())
    submit(rs, "bob", lookup())  # agrees: nothing to decide
    submit(rs, "ann", lookup("C-77"), tid=T2)  # a single confident label: nothing to decide
    submit(rs, "cat", LabelBody(decision="clarify", unsure=True, rationale="which order?"), tid=T3, turn=2)
    assert rs.sync_review_queue() == 1
    [item] = rs.review_queue(actor="rita")
    assert (item.kind, item.ref, item.status, item.payload, item.created_by) == (
        "unsure", "t3#t2", "open", {"annotators": ["cat"]}, "review")
    assert rs.review_counts() == {"unsure": 1}


def test_disagreement_names_the_fields_and_goes_away_when_the_labels_agree(rs: Store,
                                                                           disagreement: ReviewItem) -> None:
    assert (disagreement.kind, disagreement.ref, disagreement.payload) == (
        "disagreement", CASE1, {"annotators": ["ann", "bob"], "fields": ["arg:search_orders.customer"]})
    # Bob reopens his label and fixes it: the disagreement is withdrawn, not left for a reviewer.
    label = rs.get_label(T1, 2, "bob")
    assert label is not None
    rs.save_label(T1, 2, "bob", lookup(), version=label.version)
    submit(rs, "bob", lookup())
    assert rs.sync_review_queue() == 0
    [closed] = rs.review_queue(actor="rita", include_resolved=True)
    assert (closed.status, closed.decision, closed.decided_by) == ("resolved", "withdrawn", "review")


def test_arguments_that_agree_under_their_match_rule_are_no_disagreement(rs: Store) -> None:
    ci = {"search_orders": {"customer": RuleDraft(match="ci")}}
    submit(rs, "ann", lookup(arg_rules=ci))
    submit(rs, "bob", lookup("c-1042", arg_rules=ci))
    assert rs.sync_review_queue() == 0


# -- the versions side by side ---------------------------------------------------------------------------


def test_the_detail_shows_each_label_and_the_agent_with_the_majority_preselected(rs: Store) -> None:
    submit(rs, "ann", lookup("C-1024"))
    submit(rs, "bob", lookup())
    submit(rs, "cat", lookup())
    rs.sync_review_queue()
    [item] = rs.review_queue(actor="rita")
    detail = rs.review_detail(item.id, actor="rita")
    assert [(c.key, c.title, c.annotators) for c in detail.candidates] == [
        ("label:ann", "ann", ("ann",)), ("label:bob", "bob", ("bob", "cat")), ("label:cat", "cat", ("cat", "bob")),
        ("observed", "Observed agent call", ())]
    assert detail.preselected == "label:bob"
    assert detail.disagreeing == ("arg:search_orders.customer",)
    observed = detail.candidate("observed")
    assert observed is not None and observed.case is not None
    assert observed.case.expected == Answer(behavior="call", calls=(
        Call(name="search_orders", arguments={"customer": "C-1042"}),))
    assert (detail.transcript_id, detail.message_index) == (T1, 2)


# -- decisions -----------------------------------------------------------------------------------------------


def test_accepting_a_version_approves_it_with_the_reviewer_in_its_provenance(rs: Store,
                                                                             disagreement: ReviewItem) -> None:
    case = rs.accept_review(disagreement.id, "label:bob", actor="rita", comment="bob read the id right")
    assert (case.provenance.status, case.provenance.reviewer, case.provenance.annotators) == (
        "approved", "rita", ("bob",))
    assert rs.get_gold(CASE1) == case
    assert case.expected.calls[0].arguments == {"customer": "C-1024"}
    [item] = rs.review_queue(actor="rita", include_resolved=True)
    assert (item.status, item.decision, item.decided_by, item.comment) == (
        "resolved", "accept", "rita", "bob read the id right")
    # Decided cases stay decided: a later sync does not reopen them.
    assert rs.sync_review_queue() == 0
    with pytest.raises(StoreError, match="already decided by rita"):
        rs.accept_review(disagreement.id, "label:ann", actor="root")


def test_edit_and_accept_approves_the_reviewers_own_version(rs: Store, disagreement: ReviewItem) -> None:
    detail = rs.review_detail(disagreement.id, actor="rita")
    base = detail.candidate("label:ann")
    assert base is not None and base.case is not None
    edited = base.case.model_copy(update={"expected": Answer(behavior="clarify"), "rationale": "ask which id"})
    with pytest.raises(StoreError, match="is about 't1#t2'"):
        rs.edit_and_accept(disagreement.id, edited.model_copy(update={"id": "other"}), actor="rita")
    case = rs.edit_and_accept(disagreement.id, edited, actor="rita", comment="two ids in play")
    assert (case.expected.behavior, case.rationale, case.provenance.reviewer) == ("clarify", "ask which id", "rita")


def test_edit_and_accept_cannot_name_someone_who_did_not_label(rs: Store, disagreement: ReviewItem) -> None:
    base = rs.review_detail(disagreement.id, actor="rita").candidate("label:ann")
    assert base is not None and base.case is not None
    forged = base.case.model_copy(update={"provenance": base.case.provenance.model_copy(update={
        "annotators": ("ann", "rita")})})
    with pytest.raises(StoreError, match=r"provenance.annotators cannot be edited: rita did not label t1#t2 "
                                         r"\(its labels are by ann, bob\)"):
        rs.edit_and_accept(disagreement.id, forged, actor="rita")
    assert rs.review_queue(actor="rita") != []  # nothing approved


def test_reject_and_requeue_needs_a_comment_and_sends_the_labels_back(rs: Store, disagreement: ReviewItem) -> None:
    with pytest.raises(StoreError, match="say why"):
        rs.reject_review(disagreement.id, actor="rita", comment="  ")
    assert rs.reject_review(disagreement.id, actor="rita", comment="check the id in message 1") == ["ann", "bob"]
    assert [(r.annotator, r.status, r.version) for r in rs.labels_for_turn(T1, 2)] == [
        ("ann", "draft", 2), ("bob", "draft", 2)]
    with pytest.raises(StoreError, match="no gold case"):
        rs.get_gold(CASE1)
    [back] = rs.returned_to("bob")
    assert (back.ref, back.comment, back.decided_by) == (CASE1, "check the id in message 1", "rita")
    # They resubmit in agreement: the gold is back, and there is nothing left to decide.
    submit(rs, "ann", lookup())
    submit(rs, "bob", lookup())
    assert rs.sync_review_queue() == 0
    assert rs.approvable_cases() == [CASE1]


def test_escalated_items_are_for_admins(rs: Store, disagreement: ReviewItem) -> None:
    with pytest.raises(StoreError, match="say why you escalate"):
        rs.escalate_review(disagreement.id, actor="rita", comment="")
    item = rs.escalate_review(disagreement.id, actor="rita", comment="policy question")
    assert item.status == "escalated" and item.payload["escalation"]["comment"] == "policy question"
    with pytest.raises(PermissionDenied, match="escalated: only an admin can decide it"):
        rs.accept_review(disagreement.id, "label:ann", actor="rita")
    assert rs.accept_review(disagreement.id, "label:ann", actor="root").provenance.reviewer == "root"


def test_one_decision_settles_every_label_item_of_the_turn(rs: Store) -> None:
    submit(rs, "ann", lookup(unsure=True))
    submit(rs, "bob", lookup("C-1024"))
    rs.sync_review_queue()
    items = rs.review_queue(actor="rita")
    assert sorted(i.kind for i in items) == ["disagreement", "unsure"]
    rs.accept_review(items[0].id, "label:ann", actor="rita")
    assert rs.review_queue(actor="rita") == []
    assert sorted((i.kind, i.decision) for i in rs.review_queue(actor="rita", include_resolved=True)) == [
        ("disagreement", "accept" if items[0].kind == "disagreement" else "settled"),
        ("unsure", "settled" if items[0].kind == "disagreement" else "accept")]


def test_a_judge_mismatch_offers_the_gold_and_the_agents_answer(rs: Store) -> None:
    submit(rs, "ann", lookup())
    rs.approve_cases([CASE1], actor="rita")
    rs.freeze("regression", actor="rita")
    item = rs.enqueue_review("judge_mismatch", CASE1, {
        "version": "regression-v1", "verdict": "gold_wrong",
        "actual": [{"name": "search_orders", "arguments": {"customer": "C-1042", "status": "shipped"}}]})
    detail = rs.review_detail(item.id, actor="rita")
    assert [c.key for c in detail.candidates] == ["gold", "label:ann", "observed", "agent", "alternative"]
    assert detail.preselected == "gold"
    alternative = detail.candidate("alternative")
    assert alternative is not None and alternative.case is not None
    assert alternative.case.alternatives == (Answer(behavior="call", calls=(
        Call(name="search_orders", arguments={"customer": "C-1042", "status": "shipped"}),)),)
    # Deciding it is the Adjudication page's job (one workflow, one recorded decision).
    with pytest.raises(StoreError, match="Adjudication page"):
        rs.accept_review(item.id, "alternative", actor="rita", comment="status filter is fine")


def test_uncontested_cases_are_approved_in_one_go(rs: Store) -> None:
    submit(rs, "ann", lookup())
    submit(rs, "ann", lookup("C-77"), tid=T2)
    submit(rs, "cat", LabelBody(decision="clarify", unsure=True), tid=T3)
    assert rs.approvable_cases() == ["t1#t2", "t2#t2"]
    assert rs.approve_cases(rs.approvable_cases(), actor="rita") == 2
    assert rs.get_gold("t2#t2").provenance.reviewer == "rita"
    assert rs.count_gold(status="approved") == 2


# -- overlap and blind labeling -----------------------------------------------------------------------------


def test_overlap_hands_a_turn_to_n_different_annotators(rs: Store) -> None:
    with pytest.raises(PermissionDenied, match="only a admin can set the overlap"):
        rs.set_overlap(2, 100, actor="rita")
    assert rs.set_overlap(2, 100, actor="root") == Overlap(2, 100.0)
    for turn in (2, 4):
        submit(rs, "ann", lookup() if turn == 2 else LabelBody(decision="no_call"), turn=turn)
    # ann is done with t1, but it still needs a second annotator: bob's queue offers it, with both turns open.
    assert rs.claim_next("bob") == T1
    assert [s.done for s in rs.turn_states(T1, "bob")] == [False, False]
    assert [s.done for s in rs.turn_states(T1, "ann")] == [True, True]
    assert CASE1 not in rs.approvable_cases()  # waits for the second label
    rs.release_leases("bob")
    for turn in (2, 4):
        submit(rs, "bob", lookup() if turn == 2 else LabelBody(decision="no_call"), turn=turn)
    assert rs.claim_next("cat") == T2  # t1 has its two labels
    assert CASE1 in rs.approvable_cases()


def test_the_overlap_sample_is_the_asked_share_of_turns() -> None:
    half = Overlap(2, 50)
    assert sum(half.covers(pk) for pk in range(1, 10_001)) == 5_000
    assert sum(Overlap(3, 12.5).covers(pk) for pk in range(1, 10_001)) == 1_250
    assert not Overlap(1, 100).covers(1)


# -- roles, on every write path -------------------------------------------------------------------------------

WRITES: dict[str, Callable[[Store, int, str], object]] = {
    "accept": lambda s, i, who: s.accept_review(i, "label:ann", actor=who),
    "edit": lambda s, i, who: s.edit_and_accept(i, s.get_gold(CASE1), actor=who),
    "reject": lambda s, i, who: s.reject_review(i, actor=who, comment="no"),
    "escalate": lambda s, i, who: s.escalate_review(i, actor=who, comment="no"),
    "approve": lambda s, i, who: s.approve_cases([CASE1], actor=who),
    "freeze": lambda s, i, who: s.freeze("regression", actor=who),
    "overlap": lambda s, i, who: s.set_overlap(3, 10, actor=who),
    "queue": lambda s, i, who: s.review_queue(actor=who),
    "detail": lambda s, i, who: s.review_detail(i, actor=who),
}


@pytest.mark.parametrize("action", sorted(WRITES))
@pytest.mark.parametrize("who", ["ann", "ghost"])
def test_an_annotator_can_neither_decide_nor_edit_another_persons_label(rs: Store, disagreement: ReviewItem,
                                                                        action: str, who: str) -> None:
    before = rs.dump()
    message = "not an active user" if who == "ghost" else r"\('ann' is annotator\)"
    with pytest.raises(PermissionDenied, match=message):
        WRITES[action](rs, disagreement.id, who)
    assert rs.dump() == before


def test_every_decision_is_in_the_audit_log_with_who_when_and_why(rs: Store, disagreement: ReviewItem) -> None:
    rs.escalate_review(disagreement.id, actor="rita", comment="policy question")
    rs.accept_review(disagreement.id, "label:bob", actor="root", comment="policy says the id as typed")
    submit(rs, "ann", lookup("C-77"), tid=T2)
    rs.approve_cases(["t2#t2"], actor="rita")
    rs.set_overlap(2, 10, actor="root")
    events = [(e["actor"], e["action"], e["entity_id"], e["note"]) for e in audit_events(rs)
              if e["action"].startswith(("review.", "gold.approve", "overlap."))]
    assert events == [
        ("review", "review.enqueue", CASE1, None),
        ("rita", "review.escalate", CASE1, "policy question"),
        ("root", "gold.approve", CASE1, "policy says the id as typed"),
        ("root", "review.accept", CASE1, "policy says the id as typed"),
        ("rita", "gold.approve", "t2#t2", "uncontested"),
        ("root", "overlap.set", "overlap", None),
    ]
    assert all(e["at"] for e in audit_events(rs))
    approve = next(e for e in audit_events(rs, CASE1) if e["action"] == "gold.approve")
    assert json.loads(approve["after"])["reviewer"] == "root"


def test_a_rejection_is_audited_label_by_label_with_the_reason(rs: Store, disagreement: ReviewItem) -> None:
    rs.reject_review(disagreement.id, actor="rita", comment="check the id in message 1")
    events = [(e["actor"], e["action"], e["entity_id"], e["note"]) for e in audit_events(rs)
              if e["action"] in ("label.requeue", "gold.withdraw", "review.reject")]
    assert events == [
        ("rita", "label.requeue", "t1#t2@ann", "check the id in message 1"),
        ("rita", "label.requeue", "t1#t2@bob", "check the id in message 1"),
        ("rita", "gold.withdraw", CASE1, "check the id in message 1"),
        ("rita", "review.reject", CASE1, "check the id in message 1"),
    ]
    after = json.loads(next(e for e in audit_events(rs, CASE1) if e["action"] == "review.reject")["after"])
    assert after == {"item": disagreement.id, "status": "resolved", "decision": "reject", "requeued": ["ann", "bob"]}
