"""One decision point has one gold case with one id, whatever produced it (SQLite and PostgreSQL): imported gold
is a candidate a new label agrees with or disputes; a dispute goes to review; freezing refuses two golds for one
decision point."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from labeler.store import Store, StoreError
from labeler.store import tables as t
from tests.review.kit import gold, people, put, transcript
from tests.review.test_review_store import lookup, submit

T = "support-9"
IMPORTED = "support-9/turn-2"  # how an importer names the decision point at message 2


@pytest.fixture
def imported(any_store: Store) -> Store:
    people(any_store)
    put(any_store, transcript(T), gold(f"{T}#x", id=IMPORTED, annotators=(), reviewer=None))
    return any_store


def _golds_at_turn(store: Store) -> list[str]:
    with store.read() as conn:
        return sorted(conn.scalars(select(t.GoldCaseRow.id).where(t.GoldCaseRow.conversation_id == T,
                                                                  t.GoldCaseRow.turn == 2)))


def test_a_label_that_disputes_imported_gold_goes_to_review_not_into_a_second_case(imported: Store) -> None:
    before = imported.get_gold(IMPORTED)
    submit(imported, "ann", lookup("C-1024"), tid=T)
    assert _golds_at_turn(imported) == [IMPORTED]  # no `support-9#t2` beside it
    assert imported.get_gold(IMPORTED) == before
    [item] = imported.review_queue(actor="rita")
    assert (item.kind, item.ref, item.payload["annotators"]) == ("disputes_import", IMPORTED, ["ann"])
    detail = imported.review_detail(item.id, actor="rita")
    assert {"gold", "label:ann"} <= {c.key for c in detail.candidates}
    assert (detail.transcript_id, detail.message_index) == (T, 2)
    case = imported.accept_review(item.id, "label:ann", actor="rita", comment="the user said C-1024")
    assert case.id == IMPORTED and case.expected.calls[0].arguments == {"customer": "C-1024"}
    assert (case.provenance.status, case.provenance.reviewer, case.provenance.annotators) == (
        "approved", "rita", ("ann",))
    assert _golds_at_turn(imported) == [IMPORTED]
    assert imported.review_queue(actor="rita") == []


def test_a_label_that_agrees_with_imported_gold_changes_nothing(imported: Store) -> None:
    before = imported.get_gold(IMPORTED)
    submit(imported, "ann", lookup(), tid=T)
    assert _golds_at_turn(imported) == [IMPORTED]
    assert imported.get_gold(IMPORTED) == before
    assert imported.review_queue(actor="rita") == []


def test_reopening_a_disputing_label_withdraws_the_dispute(imported: Store) -> None:
    submit(imported, "ann", lookup("C-1024"), tid=T)
    label = imported.get_label(T, 2, "ann")
    assert label is not None
    imported.save_label(T, 2, "ann", lookup(), version=label.version)  # back to a draft
    assert imported.review_queue(actor="rita") == []


def test_freezing_refuses_two_golds_for_one_decision_point(any_store: Store) -> None:
    people(any_store)
    put(any_store, transcript(T), gold(f"{T}#x", id=IMPORTED), gold(f"{T}#t2", customer="C-1024"))
    with pytest.raises(StoreError) as refused:
        any_store.freeze("regression", actor="rita")
    assert IMPORTED in str(refused.value) and f"{T}#t2" in str(refused.value)
    assert any_store.list_versions() == []
