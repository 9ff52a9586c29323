"""A lint of the gold outlives the process that ran it (issue 15). Stop 39 kept each selection's last lint in the
app's process: a restart, or a second server, had nothing kept, and its first view of the Gold hygiene page linted
the whole gold set again (7.8 s at 100,000 cases, ~73 s at 1,000,000). The lint is now kept in the database too,
with the gold set's ``(revision, token)`` it read: any process reads it back instead of linting, shown fresh while
the gold has not moved, and under the page's notice (with Check again) once it has."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest
from sqlalchemy import text

from labeler.store import Store
from labeler.store import hygiene as store_hygiene
from labeler.store.common import withdraw_gold
from scorer.model import Answer
from tests.review.kit import gold, people, put

CLARIFY = Answer(behavior="clarify")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget_earlier_lints() -> None:
    store_hygiene.forget_hygiene()


def restart() -> None:
    """What a restarted server (or another one) has of the lints this process kept: nothing."""
    store_hygiene.forget_hygiene()


def test_a_restarted_server_reads_the_kept_lint_instead_of_linting(any_store: Store, lints: list[int]) -> None:
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY), gold("c#t2", customer="C-9", split="rolling"))
    first = any_store.gold_hygiene()
    rolling = any_store.gold_hygiene(split="rolling")
    assert lints == [3, 1]
    restart()
    assert any_store.gold_hygiene() == first
    assert any_store.gold_hygiene(split="rolling") == rolling
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.fresh and kept.hygiene == first
    assert lints == [3, 1]  # neither selection linted again
    restart()
    assert any_store.gold_hygiene(status="approved") == first  # another selection has its own: linted
    assert lints == [3, 1, 3]


def test_after_a_restart_the_kept_lint_of_moved_gold_says_how_far_it_moved(any_store: Store,
                                                                             lints: list[int]) -> None:
    people(any_store)
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    first = any_store.gold_hygiene()
    took = any_store.kept_gold_hygiene()
    assert took is not None
    put(any_store, gold("c#t2", customer="C-9"))
    with any_store.write() as conn:
        withdraw_gold(conn, "c#t2", actor="rita", note="test")
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and not kept.fresh and kept.changes == 2
    assert kept.hygiene == first and kept.seconds == pytest.approx(took.seconds, abs=1e-6)
    assert kept.checked_at == took.checked_at
    assert lints == [2]
    assert any_store.gold_hygiene().cases == 2  # asked for: the gold moved, so it is linted again
    assert lints == [2, 2]
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.fresh  # and that lint is the one kept now


def test_another_process_reads_the_lint_this_one_kept(store: Store, lints: list[int]) -> None:
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    first = store.gold_hygiene()
    probe = textwrap.dedent("""
        import json, sys
        import scorer.hygiene
        linted = []
        real = scorer.hygiene.lint
        scorer.hygiene.lint = lambda cases: linted.append(1) or real(cases)
        from labeler.store import Store
        found = Store(sys.argv[1]).gold_hygiene()
        print(json.dumps({"linted": len(linted), "cases": found.cases,
                          "problems": [p.model_dump(mode="json") for p in found.problems]}))
    """)
    done = subprocess.run([sys.executable, "-c", probe, store.url], capture_output=True, text=True, check=True,
                          cwd=REPO, timeout=120)
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {"linted": 0, "cases": 2, "problems": [p.model_dump(mode="json") for p in first.problems]}


def test_a_server_holding_an_older_lint_takes_the_later_one_another_server_kept(store: Store,
                                                                                 lints: list[int]) -> None:
    # Two servers: this one linted, the gold moved, the other linted it again (Check again there). This one's own
    # copy is older than the database's: it shows the later lint, fresh, without linting.
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    store.gold_hygiene()
    put(store, gold("c#t2", customer="C-9"))
    other = textwrap.dedent("""
        import sys
        from labeler.store import Store
        print(Store(sys.argv[1]).gold_hygiene().cases)
    """)
    done = subprocess.run([sys.executable, "-c", other, store.url], capture_output=True, text=True, check=True,
                          cwd=REPO, timeout=120)
    assert done.stdout.split() == ["3"]
    kept = store.kept_gold_hygiene()
    assert kept is not None and kept.fresh and kept.hygiene.cases == 3
    assert store.gold_hygiene().cases == 3
    assert lints == [2]


def test_a_kept_lint_that_cannot_be_read_is_linted_again(any_store: Store, lints: list[int]) -> None:
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    first = any_store.gold_hygiene()
    with any_store.write() as conn:  # a torn or foreign row: the lint is derived, so it is made again
        conn.execute(text("UPDATE kept_lints SET body = :body"), {"body": zlib.compress(b'{"format": "other"}')})
    restart()
    assert any_store.kept_gold_hygiene() is None
    assert any_store.gold_hygiene() == first
    assert lints == [2, 2]
    restart()
    assert any_store.gold_hygiene() == first  # and written again, readable
    assert lints == [2, 2]


def test_a_lint_of_older_gold_never_replaces_a_newer_one(any_store: Store, lints: list[int]) -> None:
    put(any_store, gold("a#t2"))
    old = any_store.gold_hygiene()
    old_kept = any_store.kept_gold_hygiene()
    assert old_kept is not None
    put(any_store, gold("b#t2", expected=CLARIFY))
    new = any_store.gold_hygiene()  # another server's later lint
    store_hygiene.keep_in_database(any_store, None, None, old_kept)  # this one finishing its older lint late
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.fresh and kept.hygiene == new and kept.hygiene != old


def test_servers_keeping_lints_at_once_leave_the_latest_and_no_error(any_store: Store, lints: list[int],
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    # Two servers finishing lints of the same selection at once, the older and the newer, again and again: each
    # write is one statement (an upsert with a condition), so neither fails on the other's row, and the newer stays.
    import threading

    put(any_store, gold("a#t2"))
    any_store.gold_hygiene()
    old = any_store.kept_gold_hygiene()
    put(any_store, gold("b#t2", expected=CLARIFY))
    any_store.gold_hygiene()
    new = any_store.kept_gold_hygiene()
    assert old is not None and new is not None and new.state[0] > old.state[0]
    with any_store.write() as conn:
        conn.execute(text("DELETE FROM kept_lints"))
    start = threading.Barrier(2)

    def keep(kept: store_hygiene.KeptHygiene) -> None:
        start.wait()
        for _ in range(15):
            store_hygiene.keep_in_database(any_store, None, None, kept)

    threads = [threading.Thread(target=keep, args=(kept,)) for kept in (old, new)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not [r.getMessage() for r in caplog.records if r.name == "labeler.store.hygiene"]
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.fresh and kept.state == new.state


def test_a_lint_kept_in_another_history_of_the_store_is_replaced(any_store: Store, lints: list[int]) -> None:
    # A store restored from a backup counts its revisions up again from an older number: a lint kept at a revision
    # above today's read other gold, whatever its number says, and the next lint replaces it.
    put(any_store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    any_store.gold_hygiene()
    with any_store.write() as conn:
        conn.execute(text("UPDATE kept_lints SET revision = revision + 1000, token = 'another-history'"))
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and not kept.fresh and kept.changes is None  # shown as kept, with no count of writes
    assert any_store.gold_hygiene().cases == 2
    restart()
    kept = any_store.kept_gold_hygiene()
    assert kept is not None and kept.fresh
    any_store.gold_hygiene()
    assert lints == [2, 2]


def test_a_read_only_store_lints_without_keeping(tmp_path: Path, lints: list[int]) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root (root also ignores file permissions)")
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    try:
        db = mount / "gold.db"
        # In a child process: the mount can only turn read-only once no file on it is open.
        subprocess.run([sys.executable, "-c", textwrap.dedent("""
            import sys
            from labeler.store import Store
            from scorer.model import Answer
            from tests.review.kit import gold, put
            put(Store(sys.argv[1]), gold("a#t2"), gold("b#t2", expected=Answer(behavior="clarify")))
        """), str(db)], check=True, capture_output=True, cwd=REPO, timeout=120)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        reader = Store(str(db))
        assert reader.gold_hygiene().cases == 2
        restart()
        assert reader.gold_hygiene().cases == 2
        reader.close()
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)
    assert lints == [2, 2]  # nothing kept where nothing may be written, and no error for it


def test_after_a_restart_the_page_shows_the_slow_kept_lint_without_linting(store: Store, lints: list[int],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.app.conftest import APP_MAIN
    from tests.review.test_review_pages import open_page, texts

    monkeypatch.setenv(store_hygiene.RECHECK_ENV, "0")  # every lint counts as slow
    people(store)
    put(store, gold("a#t2"), gold("b#t2", expected=CLARIFY))
    store.gold_hygiene()
    put(store, gold("c#t2", customer="C-9"))
    restart()
    app = open_page(AppTest.from_file(str(APP_MAIN), default_timeout=30), "rita", "pages_/hygiene.py")
    assert "1 problems in 2 gold cases (1 cases affected)" in texts(app)
    [notice] = [i.value for i in app.info]
    assert notice.startswith("The gold has changed since this check (1 write since ")
    assert lints == [2] and not app.exception
    app.button(key="hy-recheck").click().run()
    assert "1 problems in 3 gold cases (1 cases affected)" in texts(app) and not app.info
    assert lints == [2, 3]
