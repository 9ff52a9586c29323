"""Nothing skips review (SQLite and PostgreSQL): an unsure flag or a disagreement reaches the queue however the
commits interleave and whatever the servers' clocks say; approval refuses contested cases whatever the queue
holds; concurrent syncs and settings never collide; a label changed after approval is never dropped silently."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import delete, func, select

from labeler.store import Store, StoreError
from labeler.store import tables as t
from tests.reliability.invariants import assert_invariants
from tests.review.kit import people, put, transcript
from tests.review.test_review_store import CASE1, T1, T2, T3, lookup, submit

UNSURE_CASE = "t3#t2"


@pytest.fixture
def rs(any_store: Store) -> Store:
    people(any_store)
    put(any_store, transcript(T1), transcript(T2, "Orders for C-77 please", observed={"customer": "C-77"}),
        transcript(T3, "Where is my order? I'm C-1042."))
    return any_store


def _together(n: int, action: Callable[[int], Any]) -> list[BaseException]:
    """Run ``action(i)`` in ``n`` threads released at once; return what they raised."""
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            action(i)
        except BaseException as exc:  # collected and asserted on by the caller
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return errors


def test_an_unsure_label_stamped_before_the_last_sync_still_reaches_review(rs: Store,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Two app servers whose clocks are 5 s apart: the slow one's unsure label carries a stamp older than
    what the fast one's sync already swept. It must still be reviewed, never approved as uncontested."""
    submit(rs, "ann", lookup())
    rs.sync_review_queue()  # a reviewer opens Review on the fast server
    slow = Store(rs.url)
    try:
        import labeler.store.engine as engine

        real = engine.now_iso
        monkeypatch.setattr("labeler.store.labels.now_iso",
                            lambda: engine.iso(engine.parse_iso(real()).replace(year=2000)))
        submit(slow, "bob", lookup(unsure=True, rationale="is this the right customer?"), tid=T3)
    finally:
        slow.close()
    monkeypatch.undo()
    rs.sync_review_queue()
    assert [(i.kind, i.ref) for i in rs.review_queue(actor="rita")] == [("unsure", UNSURE_CASE)]
    assert UNSURE_CASE not in rs.approvable_cases()
    assert_invariants(rs.url)


def test_approval_refuses_unsure_and_disagreeing_cases_whatever_the_queue_says(rs: Store) -> None:
    submit(rs, "ann", lookup())
    submit(rs, "bob", lookup("C-1024"))  # disagrees with ann on the customer
    submit(rs, "cat", lookup(unsure=True), tid=T3)
    submit(rs, "ann", lookup("C-77"), tid=T2)  # one confident label: nothing to decide
    with rs.write() as conn:  # the queue lost its items (a bug, a bad restore, a hand edit)
        conn.execute(delete(t.ReviewItemRow))
    assert rs.approvable_cases() == ["t2#t2"]
    for contested in (CASE1, UNSURE_CASE):
        before = rs.get_gold(contested)
        with pytest.raises(StoreError, match=contested):
            rs.approve_cases([contested], actor="rita")
        assert rs.get_gold(contested) == before  # nothing approved
    assert rs.approve_cases(["t2#t2"], actor="rita") == 1
    assert_invariants(rs.url)


def test_concurrent_syncs_create_no_duplicate_open_items(rs: Store) -> None:
    submit(rs, "ann", lookup())
    submit(rs, "bob", lookup("C-1024"))
    submit(rs, "cat", lookup(unsure=True), tid=T3)
    with rs.write() as conn:  # items to (re)create, so every sync below races to insert them
        conn.execute(delete(t.ReviewItemRow))
    stores = [Store(rs.url) for _ in range(6)]
    try:
        errors = _together(len(stores), lambda i: stores[i].sync_review_queue())
    finally:
        for s in stores:
            s.close()
    assert errors == []
    with rs.read() as conn:
        rows = conn.execute(select(t.ReviewItemRow.kind, t.ReviewItemRow.ref, func.count())
                            .where(t.ReviewItemRow.status != "resolved")
                            .group_by(t.ReviewItemRow.kind, t.ReviewItemRow.ref)).all()
    assert sorted((k, r, n) for k, r, n in rows) == [("disagreement", CASE1, 1), ("unsure", UNSURE_CASE, 1)]
    assert_invariants(rs.url)


def test_settings_written_at_once_never_collide(rs: Store) -> None:
    stores = [Store(rs.url) for _ in range(6)]
    try:
        errors = _together(len(stores), lambda i: stores[i].set_overlap(2, 10.0 + i, actor="root"))
    finally:
        for s in stores:
            s.close()
    assert errors == []
    assert rs.overlap().annotators == 2 and 10.0 <= rs.overlap().percent <= 15.0


def test_a_label_changed_after_approval_opens_a_review_item_in_the_same_transaction(rs: Store) -> None:
    submit(rs, "ann", lookup("C-77"), tid=T2)
    assert rs.approve_cases(["t2#t2"], actor="rita") == 1
    approved = rs.get_gold("t2#t2")
    label = rs.get_label(T2, 2, "ann")
    assert label is not None
    rs.save_label(T2, 2, "ann", lookup("C-78"), version=label.version)
    submit(rs, "ann", lookup("C-78"), tid=T2)
    assert rs.get_gold("t2#t2") == approved  # approved gold changes only by a reviewer's decision
    [item] = rs.review_queue(actor="rita")
    assert (item.kind, item.ref, item.payload["annotators"]) == ("changed_after_approval", "t2#t2", ["ann"])
    assert "t2#t2" not in rs.approvable_cases()
    # The reviewer takes the new label: the gold follows, and the item is closed.
    case = rs.accept_review(item.id, "label:ann", actor="rita")
    assert case.expected.calls[0].arguments == {"customer": "C-78"}
    assert rs.review_queue(actor="rita") == []


def test_resubmitting_the_approved_answer_unchanged_opens_nothing(rs: Store) -> None:
    submit(rs, "ann", lookup("C-77"), tid=T2)
    rs.approve_cases(["t2#t2"], actor="rita")
    label = rs.get_label(T2, 2, "ann")
    assert label is not None
    rs.save_label(T2, 2, "ann", lookup("C-77", rationale="same answer, better words"), version=label.version)
    submit(rs, "ann", lookup("C-77", rationale="same answer, better words"), tid=T2)
    assert rs.review_queue(actor="rita") == []
