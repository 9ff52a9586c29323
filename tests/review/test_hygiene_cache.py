"""The Gold hygiene page linted the whole gold set on every view and on every click of its filters (issue 15:
~2 s at 20,000 cases, 7.7 s at 100,000, ~73 s at 1,000,000). The store now numbers the states of the live gold
(``gold_revision``, bumped in the transaction of every write to it) and keeps the last lint of each selection with
the revision it was read at: a view of gold that has not changed since is not linted again, and any change is."""

from __future__ import annotations

from unittest.mock import ANY

import pytest

from labeler.labels import LabelBody
from labeler.store import Store
from labeler.store import hygiene as store_hygiene
from labeler.store.common import gold_state, put_gold, withdraw_gold
from scorer.model import Answer, Call
from tests.review.kit import gold, people, put, transcript

CLARIFY = Answer(behavior="clarify")


@pytest.fixture(autouse=True)
def _forget_earlier_lints() -> None:
    store_hygiene.forget_hygiene()


def test_a_view_of_unchanged_gold_is_not_linted_again(any_store: Store, lints: list[int]) -> None:
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY), gold("c#t2", customer="C-9", split="rolling"))
    first = any_store.gold_hygiene()
    assert [p.case_id for p in first.problems if p.code == "conflicting_duplicate"] == ["a#t2"]
    assert any_store.gold_hygiene() == first  # the page's next rerun (a click on a filter): the same answer
    assert lints == [3]
    rolling = any_store.gold_hygiene(split="rolling")
    assert rolling.cases == 1 and any_store.gold_hygiene(split="rolling") == rolling
    assert any_store.gold_hygiene() == first  # each selection keeps its own
    assert lints == [3, 1]


def test_every_writer_of_live_gold_makes_the_next_view_lint_again(any_store: Store, lints: list[int]) -> None:
    people(any_store)
    put(any_store, gold("a#t2"), gold("s#t2", customer="C-5", status="submitted"))
    revisions = [any_store.gold_revision()]
    assert any_store.gold_hygiene().problems == []

    put(any_store, gold("b#t2", expected=CLARIFY))  # an import: a conflicting duplicate of a#t2
    revisions.append(any_store.gold_revision())
    assert [p.related for p in any_store.gold_hygiene().problems] == [("b#t2",)]

    assert any_store.approve_cases(["s#t2"], actor="rita") == 1  # a review writes the case through put_gold
    revisions.append(any_store.gold_revision())
    assert any_store.gold_hygiene(status="approved").cases == 3

    with any_store.write() as conn:
        withdraw_gold(conn, "b#t2", actor="rita", note="test")
    revisions.append(any_store.gold_revision())
    assert any_store.gold_hygiene().problems == []

    with any_store.write() as conn:
        put_gold(conn, gold("b#t2", expected=CLARIFY), actor="rita", action="test")
    revisions.append(any_store.gold_revision())
    assert [p.related for p in any_store.gold_hygiene().problems] == [("b#t2",)]

    counted = [r for r in revisions if r is not None]
    assert counted == revisions and counted == sorted(set(counted))  # each write a new revision
    assert lints == [2, 3, 3, 2, 3]


def test_writes_that_leave_the_gold_as_it_is_keep_the_lint(any_store: Store, lints: list[int]) -> None:
    people(any_store)
    put(any_store, transcript("t1"), gold("a#t2"))
    any_store.gold_hygiene()
    before = any_store.gold_revision()
    put(any_store, transcript("t1"), gold("a#t2"), transcript("t9"))  # the same gold again, and a transcript
    with any_store.write() as conn:
        put_gold(conn, gold("a#t2"), actor="rita", action="test")  # writing what is stored changes nothing
    any_store.save_label("t1", 2, "ann", LabelBody(decision="same", calls=(
        Call(name="search_orders", arguments={"customer": "C-1042"}),)), version=0)  # a draft: no gold
    assert any_store.gold_revision() == before
    any_store.gold_hygiene()
    assert lints == [1]


def test_a_label_submitted_becomes_gold_and_a_new_revision(any_store: Store, lints: list[int]) -> None:
    people(any_store)
    put(any_store, transcript("t1"))
    assert any_store.gold_hygiene().cases == 0
    any_store.submit_label("t1", 2, "ann", LabelBody(decision="same", calls=(
        Call(name="search_orders", arguments={"customer": "C-1042"}),)), version=0)
    assert any_store.gold_hygiene().cases == 1
    assert lints == [0, 1]


def test_a_new_store_starts_at_revision_zero(any_store: Store) -> None:
    assert any_store.gold_revision() == 0


def test_the_hygiene_page_lints_once_until_the_gold_changes(store: Store, lints: list[int]) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP_MAIN
    from tests.review.test_review_pages import open_page, texts

    people(store)
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    app = open_page(AppTest.from_file(str(APP_MAIN), default_timeout=30), "rita", "pages_/hygiene.py")
    assert "1 problems in 2 gold cases (1 cases affected)" in texts(app)
    app.selectbox(key="hy-split").select("regression").run()  # another selection: linted once
    app.selectbox(key="hy-split").select("").run()  # back to both splits: kept
    app.pills(key="hy-codes").set_value([]).run()  # what the table shows: kept
    assert not app.exception and lints == [2, 2]
    put(store, gold("c#t2", customer="C-9"))
    app.run()
    assert "1 problems in 3 gold cases (1 cases affected)" in texts(app)
    assert lints == [2, 2, 3]


def test_the_revision_moves_once_a_transaction_as_it_commits(any_store: Store) -> None:
    # Taken last, the revision's row lock (PostgreSQL) is held only while the transaction commits: a transaction
    # that writes several cases (an approval) never waits for a case's row while holding it, so two writers of
    # gold cannot wait on each other in a cycle.
    people(any_store)
    put(any_store, gold("a#t2"))
    before = any_store.gold_revision()
    with any_store.write() as conn:
        put_gold(conn, gold("b#t2", customer="C-5"), actor="rita", action="test")
        put_gold(conn, gold("c#t2", customer="C-6"), actor="rita", action="test")
        withdraw_gold(conn, "a#t2", actor="rita", note="test")
        assert gold_state(conn) == (before, ANY)  # not yet: it is written as the transaction commits
    assert any_store.gold_revision() == (before or 0) + 1
    with pytest.raises(RuntimeError), any_store.write() as conn:
        put_gold(conn, gold("d#t2", customer="C-7"), actor="rita", action="test")
        raise RuntimeError("rolled back")
    assert any_store.gold_revision() == (before or 0) + 1
    with any_store.write() as conn:  # the next transaction on that connection owes no bump
        pass
    assert any_store.gold_revision() == (before or 0) + 1


def test_two_writers_of_the_same_cases_do_not_deadlock_on_the_revision(any_store: Store) -> None:
    # A label writes y and holds it; an approval writes x, then waits for y. With the revision counted up as each
    # case was written, the label held the revision's row from its first case to its end, so the approval could
    # not even write x (this test failed: it waited out the label); and a writer holding the revision's row while
    # waiting for a case another writer holds, that one waiting for the revision, is a deadlock PostgreSQL ends by
    # aborting one. SQLite's writers take the whole file at BEGIN: no such interleaving.
    import threading

    if any_store.is_sqlite:
        pytest.skip("SQLite serializes writers at BEGIN IMMEDIATE: no row locks to interleave")
    people(any_store)
    put(any_store, gold("x#t2", customer="C-1"), gold("y#t2", customer="C-2"))
    before = any_store.gold_revision() or 0
    label_holds_y, approval_started = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def label() -> None:
        try:
            with any_store.write() as conn:
                put_gold(conn, gold("y#t2", customer="C-3"), actor="ann", action="test")
                label_holds_y.set()
                assert approval_started.wait(10)
        except BaseException as exc:  # reported by the test below
            failures.append(exc)

    def approval() -> None:
        try:
            assert label_holds_y.wait(10)
            with any_store.write() as conn:
                put_gold(conn, gold("x#t2", customer="C-4"), actor="rita", action="test")
                approval_started.set()
                put_gold(conn, gold("y#t2", customer="C-5"), actor="rita", action="test")  # waits for the label
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=label), threading.Thread(target=approval)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == [] and not any(thread.is_alive() for thread in threads)
    assert any_store.gold_revision() == before + 2
    assert any_store.get_gold("y#t2").expected.calls[0].arguments == {"customer": "C-5"}


def test_the_kept_lint_says_how_far_the_gold_has_moved(any_store: Store, lints: list[int]) -> None:
    people(any_store)
    assert any_store.kept_gold_hygiene() is None
    put(any_store, gold("a#t2"))
    first = any_store.gold_hygiene()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.hygiene == first and kept.fresh and kept.changes == 0
    assert not kept.recheck_on_view  # fresh: nothing to check
    put(any_store, gold("b#t2", expected=CLARIFY))
    with any_store.write() as conn:
        withdraw_gold(conn, "a#t2", actor="rita", note="test")
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.hygiene == first and not kept.fresh and kept.changes == 2
    assert kept.recheck_on_view  # a lint of one case is quick: the next view lints again
    assert any_store.kept_gold_hygiene(split="rolling") is None
    assert lints == [1]


def test_a_slow_lint_of_moved_gold_waits_for_the_reviewer(store: Store, lints: list[int],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP_MAIN
    from tests.review.test_review_pages import open_page, texts

    monkeypatch.setattr(store_hygiene, "HYGIENE_RECHECK_ON_VIEW_SECONDS", 0.0)  # every lint counts as slow
    people(store)
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    app = open_page(AppTest.from_file(str(APP_MAIN), default_timeout=30), "rita", "pages_/hygiene.py")
    assert "1 problems in 2 gold cases (1 cases affected)" in texts(app) and not app.info
    put(store, gold("c#t2", customer="C-9"))
    app.run()  # the gold moved on: the kept problems, said to be older than the gold
    assert "1 problems in 2 gold cases (1 cases affected)" in texts(app)
    [notice] = [i.value for i in app.info]
    assert notice.startswith("The gold has changed since this check (1 write since ")
    assert lints == [2]
    app.button(key="hy-recheck").click().run()
    assert "1 problems in 3 gold cases (1 cases affected)" in texts(app) and not app.info
    assert lints == [2, 3] and not app.exception


def test_kept_lints_are_bounded_by_the_problems_they_hold(any_store: Store, lints: list[int],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # ~2 KB a problem: a store of 1,000,000 cases reports ~140,000, so a few selections kept would be gigabytes.
    monkeypatch.setattr(store_hygiene, "HYGIENE_KEPT_PROBLEMS", 2)
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY), gold("c#t2", customer="C-9", split="rolling"),
        gold("d#t2", customer="C-9", split="rolling", expected=CLARIFY))
    held = store_hygiene._HYGIENE  # what this process holds (the database keeps every selection's lint)
    assert len(any_store.gold_hygiene(split="regression").problems) == 1
    assert len(any_store.gold_hygiene(split="rolling").problems) == 1  # 2 problems kept in all: both stay
    assert len(held) == 2
    assert len(any_store.gold_hygiene().problems) == 2  # the newest stays, whatever its size; the others go
    assert [key[1:] for key in held] == [(None, None)]
    kept = any_store.kept_gold_hygiene(split="regression")  # read back from the database, not linted
    assert kept is not None and kept.fresh and len(kept.hygiene.problems) == 1
    assert lints == [2, 2, 4]


@pytest.mark.parametrize(("value", "seconds"), [("", 3.0), ("0", 0.0), (" 12.5 ", 12.5)])
def test_how_slow_a_lint_may_be_to_run_again_by_itself_is_a_setting(monkeypatch: pytest.MonkeyPatch, value: str,
                                                                     seconds: float) -> None:
    monkeypatch.setenv(store_hygiene.RECHECK_ENV, value)
    assert store_hygiene.recheck_on_view_seconds() == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_setting_that_is_not_seconds_is_said_on_the_page(store: Store, monkeypatch: pytest.MonkeyPatch,
                                                           value: str) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP_MAIN
    from tests.review.test_review_pages import open_page

    monkeypatch.setenv(store_hygiene.RECHECK_ENV, value)
    people(store)
    put(store, gold("a#t2"))
    app = open_page(AppTest.from_file(str(APP_MAIN), default_timeout=30), "rita", "pages_/hygiene.py")
    put(store, gold("b#t2", customer="C-9"))
    app.run()
    assert [e.value for e in app.error] == [
        f"TOOLGOLD_HYGIENE_RECHECK_SECONDS must be a number of seconds, 0 or more; it is {value!r}"]
    assert not app.exception


def test_sessions_linting_at_once_each_get_their_selection(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # The app's sessions are threads of one process sharing the kept lints; two selections kept at most, so the
    # threads evict each other's while they read and write.
    import threading

    monkeypatch.setattr(store_hygiene, "HYGIENE_KEPT", 2)
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY), gold("c#t2", customer="C-9", split="rolling"),
        gold("d#t2", customer="C-8", status="submitted"))
    selections = [(None, None), ("regression", None), ("rolling", None), (None, "submitted")]
    expected = {s: store.gold_hygiene(split=s[0], status=s[1]).cases for s in selections}
    failures: list[BaseException] = []
    seen: list[tuple[tuple[str | None, str | None], int]] = []

    def views(offset: int) -> None:
        try:
            for n in range(12):
                split, status = selections[(n + offset) % len(selections)]
                seen.append(((split, status), store.gold_hygiene(split=split, status=status).cases))
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=views, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and len(seen) == 72
    assert all(cases == expected[selection] for selection, cases in seen)
    assert expected == {(None, None): 4, ("regression", None): 3, ("rolling", None): 1, (None, "submitted"): 1}
