"""Trajectory labels go through review like turn labels (SQLite and PostgreSQL): disagreeing or unsure trajectory
labels open items, a reviewer sees each version and decides, approval refuses them until then, and agreement
statistics count them."""

from __future__ import annotations

import pytest

from labeler.labels import TrajectoryBody
from labeler.store import Store
from scorer.model import Call, ForbiddenCall
from tests.review.kit import people, put, transcript

T = "t-traj"
CASE = f"{T}#trajectory"
LOOKUP = Call(name="search_orders", arguments={"customer": "C-1042"})
REFUND = Call(name="refund_order", arguments={"order_id": "O-7"})


def lookup_then_refund(**changes: object) -> TrajectoryBody:
    return TrajectoryBody(**{"calls": (LOOKUP, REFUND), "order": "strict", **changes})  # type: ignore[arg-type]


def submit(store: Store, annotator: str, body: TrajectoryBody) -> None:
    label = store.get_trajectory_label(T, annotator)
    store.save_trajectory_label(T, annotator, body, version=label.version if label else 0, submit=True)


@pytest.fixture
def ts(any_store: Store) -> Store:
    people(any_store)
    put(any_store, transcript(T))
    return any_store


def test_disagreeing_trajectory_labels_are_reviewed_and_decided(ts: Store) -> None:
    submit(ts, "ann", lookup_then_refund())
    submit(ts, "bob", lookup_then_refund(forbidden=(ForbiddenCall(name="refund_order"),), calls=(LOOKUP,),
                                         no_action=False))
    assert CASE not in ts.approvable_cases()
    [item] = ts.review_queue(actor="rita")
    assert (item.kind, item.ref) == ("disagreement", CASE)
    assert set(item.payload["annotators"]) == {"ann", "bob"} and item.payload["fields"]
    detail = ts.review_detail(item.id, actor="rita")
    assert {"label:ann", "label:bob"} <= {c.key for c in detail.candidates}
    ann = detail.candidate("label:ann")
    assert ann is not None and ann.case is not None and ann.case.kind == "trajectory"
    case = ts.accept_review(item.id, "label:bob", actor="rita", comment="no refund was asked for")
    assert (case.id, case.kind, case.provenance.status, case.provenance.annotators) == (
        CASE, "trajectory", "approved", ("bob",))
    assert ts.get_gold(CASE).forbidden == (ForbiddenCall(name="refund_order"),)
    assert ts.review_queue(actor="rita") == []


def test_agreeing_trajectory_labels_need_no_decision(ts: Store) -> None:
    submit(ts, "ann", lookup_then_refund())
    submit(ts, "bob", lookup_then_refund(rationale="look it up, then refund"))
    assert ts.review_queue(actor="rita") == []
    assert ts.approvable_cases() == [CASE]


def test_an_unsure_trajectory_label_waits_for_a_reviewer(ts: Store) -> None:
    submit(ts, "ann", lookup_then_refund(unsure=True))
    [item] = ts.review_queue(actor="rita")
    assert (item.kind, item.ref, item.payload) == ("unsure", CASE, {"annotators": ["ann"]})
    assert ts.approvable_cases() == []
    # lifting the flag withdraws it
    submit(ts, "ann", lookup_then_refund())
    assert ts.review_queue(actor="rita") == []


def test_trajectory_labels_count_in_agreement(ts: Store) -> None:
    submit(ts, "ann", lookup_then_refund())
    submit(ts, "bob", lookup_then_refund(order="unordered"))
    labels = ts.agreement_labels(actor="rita")
    assert set(labels[CASE]) == {"ann", "bob"}
    [item] = ts.review_queue(actor="rita")
    assert item.payload["fields"] == ["order"]
