"""A large import must not block annotators' saves, and must stay all or nothing (issue 12).

SQLite has one write lock for the whole database: an import stages its rows in a file beside the database
(no lock held), then publishes them in one transaction of a fixed handful of set-based statements, so the
lock is held for the copy alone, however large the import. Readers see all of it or none; a killed import
leaves nothing in the store, and the next import removes the stage file it left.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from labeler.store import ImportItem, Store
from labeler.store.engine import CHUNK
from scorer.errors import InvalidRecord
from tests.labeler.test_store import gold, transcript
from tests.reliability.invariants import assert_invariants
from tests.reliability.test_crash_safety import N, write_source


def _largest_write_transaction(store: Store, items: list[ImportItem]) -> int:
    """The most statements any one write transaction of this import executed (SQLite: how long the write
    lock is held grows with it)."""
    state: dict[str, Any] = {"open": False, "n": 0, "most": 0}

    def begin(conn: Any) -> None:
        state["open"] = bool(conn.get_execution_options().get("toolgold_write"))
        state["n"] = 0

    def statement(conn: Any, *_: Any) -> None:
        if state["open"]:
            state["n"] += 1
            state["most"] = max(state["most"], state["n"])

    event.listen(store.engine, "begin", begin)
    event.listen(store.engine, "before_cursor_execute", statement)
    try:
        store.import_items(iter(items))
    finally:
        event.remove(store.engine, "begin", begin)
        event.remove(store.engine, "before_cursor_execute", statement)
    return int(state["most"])


def test_the_write_lock_is_held_for_the_same_few_statements_however_large_the_import(tmp_path: Path) -> None:
    small, large = Store(tmp_path / "small.db"), Store(tmp_path / "large.db")
    few = _largest_write_transaction(
        small, [ImportItem(transcript(f"t{n}"), "a.jsonl", n) for n in range(3)]
        + [ImportItem(gold(f"g{n}"), "a.jsonl", n) for n in range(3)])
    many = _largest_write_transaction(
        large, [ImportItem(transcript(f"t{n}"), "a.jsonl", n) for n in range(4 * CHUNK + 1)]
        + [ImportItem(gold(f"g{n}"), "a.jsonl", n) for n in range(4 * CHUNK + 1)])
    assert large.stats()["transcripts"] == 4 * CHUNK + 1 and large.stats()["gold_cases"] == 4 * CHUNK + 1
    assert many == few
    small.close()
    large.close()


def test_while_an_import_stages_a_writer_gets_the_lock_at_once_and_readers_see_none_of_it(store: Store,
                                                                                           isolated_db: Path) -> None:
    seen = []

    def items() -> Iterator[ImportItem]:
        for n in range(3 * CHUNK):
            yield ImportItem(transcript(f"big-{n}"), "big.jsonl", n + 1)
            if n == 2 * CHUNK:
                other = sqlite3.connect(isolated_db, timeout=0, isolation_level=None)  # no waiting at all
                other.execute("BEGIN IMMEDIATE")
                other.execute("INSERT INTO tag_vocabulary (tag, adversarial, description) VALUES ('x', 0, '')")
                other.execute("COMMIT")
                seen.append(other.execute("SELECT count(*) FROM transcripts").fetchone()[0])
                seen.append(other.execute("SELECT count(*) FROM turns").fetchone()[0])
                other.close()
    assert store.import_items(items()).transcripts_added == 3 * CHUNK
    assert seen == [0, 0]
    assert store.count_transcripts() == 3 * CHUNK
    assert not list(isolated_db.parent.glob("*.stage"))


def test_a_record_another_import_added_meanwhile_is_counted_as_present(any_store: Store) -> None:
    other = Store(any_store.url)

    def items() -> Iterator[ImportItem]:
        for n in range(2 * CHUNK):
            yield ImportItem(transcript(f"t{n}"), "a.jsonl", n + 1)
            yield ImportItem(gold(f"g{n}"), "a.jsonl", n + 1)
            if n == CHUNK + 1:  # t0 and g0 are staged already: another import adds them now
                other.import_items([ImportItem(transcript("t0"), "b.jsonl", 1), ImportItem(gold("g0"), "b.jsonl", 2)])
    result = any_store.import_items(items())
    assert (result.transcripts_added, result.gold_added) == (2 * CHUNK - 1, 2 * CHUNK - 1)
    assert (result.transcripts_unchanged, result.gold_unchanged) == (1, 1)
    assert result.turns_added == 2 * (2 * CHUNK - 1)
    stats = any_store.stats()
    assert (stats["transcripts"], stats["turns"], stats["gold_cases"]) == (2 * CHUNK, 4 * CHUNK, 2 * CHUNK)
    assert any_store.get_transcript("t0").source == "unit"
    other.close()


@pytest.mark.parametrize("kind", ["transcript", "gold"])
def test_a_conflicting_record_another_writer_added_meanwhile_refuses_the_whole_import(any_store: Store,
                                                                                     kind: str) -> None:
    other = Store(any_store.url)

    def items() -> Iterator[ImportItem]:
        for n in range(2 * CHUNK):
            yield ImportItem(transcript(f"t{n}"), "a.jsonl", n + 1)
            yield ImportItem(gold(f"g{n}"), "a.jsonl", n + 1)
            if n == CHUNK + 1:
                racer = transcript("t3", answer="Other") if kind == "transcript" else gold("g3", tags=("other",))
                other.import_items([ImportItem(racer, "b.jsonl", 1)])
    with pytest.raises(InvalidRecord, match=r"^a\.jsonl:4: .*'[tg]3'"):
        any_store.import_items(items())
    stats = any_store.stats()
    assert (stats["transcripts"], stats["gold_cases"]) == ((1, 0) if kind == "transcript" else (0, 1))
    other.close()


def test_skip_invalid_sets_a_record_another_writer_changed_meanwhile_aside(store: Store) -> None:
    other = Store(store.url)

    def items() -> Iterator[ImportItem]:
        for n in range(CHUNK + 5):
            yield ImportItem(transcript(f"t{n}"), "a.jsonl", n + 1)
            if n == CHUNK + 1:
                other.import_items([ImportItem(transcript("t3", answer="Other"), "b.jsonl", 1)])
    result = store.import_items(items(), skip_invalid=True)
    assert [str(r) for r in result.rejects] == [
        "a.jsonl:4: transcript 't3' is already in the store with different content (it was added while this "
        "import ran)"]
    assert result.transcripts_added == CHUNK + 4
    assert store.count_transcripts() == CHUNK + 5
    other.close()


def test_a_dead_imports_stage_file_is_removed_and_a_live_ones_is_kept(store: Store, isolated_db: Path) -> None:
    dead = isolated_db.parent / f"{isolated_db.name}-import-dead.stage"
    live = isolated_db.parent / f"{isolated_db.name}-import-live.stage"
    dead.write_bytes(b"x" * 100)
    live.write_bytes(b"x" * 100)
    fd = os.open(live, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a running import holds its own
    try:
        store.import_items([ImportItem(transcript("t1"), "a.jsonl", 1)])
        assert not dead.exists()
        assert live.exists()
    finally:
        os.close(fd)
    store.import_items([ImportItem(transcript("t2"), "a.jsonl", 1)])
    assert not live.exists()
    assert store.count_transcripts() == 2


def test_an_import_killed_while_staging_leaves_the_store_untouched_and_the_rerun_cleans_up(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    src = tmp_path / "big.jsonl"
    write_source(src)
    Store(db).close()
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "labeler.cli", "import", str(src)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    staged: list[Path] = []
    while time.monotonic() < deadline and proc.poll() is None:
        staged = [p for p in tmp_path.glob("*.stage") if p.stat().st_size > 256 * 1024]
        if staged:
            break
        time.sleep(0.005)
    killed_mid_way = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed_mid_way and staged, "the import finished before it could be killed while staging; raise N"

    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert con.execute("SELECT count(*) FROM transcripts").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM turns").fetchone() == (0,)
    con.close()
    assert all(p.exists() for p in staged)  # what the killed import left

    for _ in range(2):  # the re-run completes and removes it; running it again adds nothing
        subprocess.run([sys.executable, "-m", "labeler.cli", "import", str(src)], env=env, check=True,
                       capture_output=True)
    assert not list(tmp_path.glob("*.stage"))
    stats = Store(db).stats()
    assert (stats["transcripts"], stats["turns"]) == (N, 2 * N)


def test_a_stage_file_that_cannot_be_made_is_one_line_and_nothing_is_written(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import labeler.store.transcripts as transcripts
    from labeler.store.engine import DatabaseUnavailable

    before = store.dump()

    def no_space(*_: Any, **__: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(transcripts.tempfile, "mkstemp", no_space)
    with pytest.raises(DatabaseUnavailable, match=r"^the database .*toolgold\.db: the disk is full; nothing was "
                                                   r"written$"):
        store.import_items([ImportItem(transcript("t1"), "a.jsonl", 1)])
    assert store.dump() == before


def test_the_import_flushes_the_database_file_it_filled_so_no_later_save_commit_pays_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite syncs the database file only when a checkpoint reaches the end of the WAL. A save committing
    while the import's own checkpoint copies its pages (hundreds of MB for a large import) stops that
    checkpoint short of the end, and the next small writer's commit would then run the checkpoint that
    syncs them all (a third of a second inside an annotator's save, bench_import_saves --trace). The import
    flushes the file itself before it returns."""
    from labeler.store import transcripts as tr

    db_file = tmp_path / "toolgold.db"
    store = Store(db_file)
    synced: list[tuple[str, int]] = []
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def spy(fd: int, real: Any = real, name: str = name) -> None:
            synced.append((name, os.fstat(fd).st_ino))
            real(fd)

        monkeypatch.setattr(os, name, spy)
    publish = tr._publish

    def publish_then_a_save_lands(*args: Any, **kwargs: Any) -> None:
        publish(*args, **kwargs)
        synced.clear()  # only what happens from here on counts
        other = sqlite3.connect(db_file, isolation_level=None)  # another writer commits after the publish
        other.execute("PRAGMA user_version = 7")
        other.close()

    monkeypatch.setattr(tr, "_publish", publish_then_a_save_lands)
    store.import_items([ImportItem(transcript(f"t{n}"), "a.jsonl", n) for n in range(3)])
    assert store.stats()["transcripts"] == 3
    assert os.stat(db_file).st_ino in {inode for _, inode in synced}
    store.close()


BODY = 20_000
"""Characters of a large transcript's body in the tests below (its last answer)."""


def _big(n: int) -> ImportItem:
    return ImportItem(transcript(f"t{n}", answer=f"{n} " + "x" * BODY), "big.jsonl", n + 1)


def _measured_write_transactions(db_file: Path) -> tuple[Store, list[int]]:
    """A store on ``db_file`` whose write transactions each append to the returned list the bytes of WAL they
    wrote (checkpoints off, so the WAL only grows), filled in as they end."""
    store = Store(db_file)
    wal = Path(f"{db_file}-wal")

    @event.listens_for(store.engine, "connect")
    def no_checkpoints(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA wal_autocheckpoint=0")

    store.engine.dispose()
    started: list[int] = []
    written: list[int] = []

    def begin(conn: Any) -> None:
        if conn.get_execution_options().get("toolgold_write"):
            started.append(wal.stat().st_size if wal.exists() else 0)

    def checkin(*_: Any) -> None:
        if started:
            written.append(wal.stat().st_size - started.pop())

    event.listen(store.engine, "begin", begin)
    event.listen(store.engine.pool, "checkin", checkin)
    return store, written


def test_no_write_transaction_of_an_import_copies_more_than_a_chunk_of_transcript_bodies(tmp_path: Path) -> None:
    """The bodies are most of an import's bytes: written ahead in short transactions (one chunk each) that
    nothing can reach until the publish commits, they are not in the publish, the transaction every save
    waits for. Measured as the WAL each write transaction appends (checkpoints off, so it only grows)."""
    db_file = tmp_path / "toolgold.db"
    store, written = _measured_write_transactions(db_file)
    result = store.import_items(_big(n) for n in range(6 * CHUNK + 1))
    assert result.transcripts_added == 6 * CHUNK + 1
    assert sum(written) > 6 * CHUNK * BODY  # every body went through the WAL once
    assert max(written) < 2 * CHUNK * BODY
    assert store.get_transcript(f"t{3 * CHUNK}").transcript.messages[-1].content == f"{3 * CHUNK} " + "x" * BODY
    store.close()


def _bodies(db_file: Path) -> tuple[int, int]:
    """Transcript bodies stored, and pending rows (bodies an import wrote ahead and has not published)."""
    con = sqlite3.connect(db_file)
    try:
        return (con.execute("SELECT count(*) FROM transcript_bodies").fetchone()[0],
                con.execute("SELECT count(*) FROM pending_bodies").fetchone()[0])
    finally:
        con.close()


def _kill_import_once_bodies_are_written(db: Path, src: Path, bodies: str, rows: str) -> None:
    """Run ``toolgold import src`` into ``db`` (which holds one row in ``rows``) and SIGKILL it as soon as it has
    written a body into ``bodies`` ahead of its publish; the file it leaves is checked whole."""
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "labeler.cli", "import", str(src)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    watch = sqlite3.connect(db, timeout=10)
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        written = watch.execute(f"SELECT count(*) FROM {bodies}").fetchone()[0] - 1
        if written > 0:
            break
        time.sleep(0.005)
    killed_mid_way = proc.poll() is None and watch.execute(f"SELECT count(*) FROM {rows}").fetchone() == (1,)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    watch.close()
    assert killed_mid_way and written > 0, "the import finished before it could be killed: import more"

    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    con.close()


def test_an_import_killed_after_writing_bodies_ahead_leaves_nothing_visible_and_the_next_import_deletes_them(
        tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    src = tmp_path / "big.jsonl"
    write_source(src)
    store = Store(db)
    store.import_items([ImportItem(transcript("before"), "a.jsonl", 1)])
    before = store.dump()
    store.close()
    _kill_import_once_bodies_are_written(db, src, "transcript_bodies", "transcripts")
    bodies, pending = _bodies(db)
    assert bodies > 1 and pending > 0  # written ahead, never published
    store = Store(db)
    after = store.dump()
    assert {k: v for k, v in after.items() if k not in ("transcript_bodies", "pending_bodies")} == \
        {k: v for k, v in before.items() if k not in ("transcript_bodies", "pending_bodies")}
    assert [s.id for s in store.list_transcripts()] == ["before"]
    assert_invariants(db)
    store.import_items([ImportItem(transcript("next"), "b.jsonl", 1)])  # the next import removes them
    assert _bodies(db) == (2, 0)
    assert [s.id for s in store.list_transcripts()] == ["before", "next"]
    store.close()


def test_an_import_that_fails_deletes_the_bodies_it_wrote_ahead(store: Store, isolated_db: Path) -> None:
    store.import_items([ImportItem(transcript("t0"), "a.jsonl", 1)])

    def items() -> Iterator[ImportItem]:
        yield from (_big(n) for n in range(1, 2 * CHUNK + 2))
        yield ImportItem(transcript("t0", answer="Other"), "big.jsonl", 2 * CHUNK + 3)  # a conflict, at the end

    with pytest.raises(InvalidRecord, match=r"^big\.jsonl:1003: transcript 't0' is already in the store"):
        store.import_items(items())
    assert _bodies(isolated_db) == (1, 0)
    assert store.count_transcripts() == 1


def test_bodies_a_running_import_wrote_ahead_are_kept_while_another_import_runs(store: Store) -> None:
    other = Store(store.url)

    def items() -> Iterator[ImportItem]:
        for n in range(2 * CHUNK):
            yield _big(n)
            if n == CHUNK + 1:  # the first chunk's bodies are written ahead: another import starts and ends
                other.import_items([ImportItem(transcript("other"), "b.jsonl", 1)])

    assert store.import_items(items()).transcripts_added == 2 * CHUNK
    for n in (0, CHUNK - 1, CHUNK, 2 * CHUNK - 1):
        assert store.get_transcript(f"t{n}").transcript.messages[-1].content == f"{n} " + "x" * BODY
    assert store.get_transcript("other").source == "unit"
    other.close()


def test_an_import_whose_transcripts_each_offer_other_tools_gets_a_tool_set_each(store: Store) -> None:
    """Most transcripts of a source share their tools (one tool set); when each offers its own, each gets its
    own set, read back in order, however many (more than one statement binds)."""
    from scorer.model import ToolSpec

    def own(n: int) -> ImportItem:
        record = transcript(f"t{n}").model_copy(update={"tools": (ToolSpec(name=f"tool_{n}"), ToolSpec(name="b"))})
        return ImportItem(record, "a.jsonl", n + 1)

    assert store.import_items(own(n) for n in range(2 * CHUNK + 1)).transcripts_added == 2 * CHUNK + 1
    for n in (0, CHUNK, 2 * CHUNK):
        assert [tool.name for tool in store.get_transcript(f"t{n}").transcript.tools] == [f"tool_{n}", "b"]
    with store.read() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM tool_sets").scalar() == 2 * CHUNK + 1


# -- gold cases' bodies, written ahead the same way (revision 0005) -----------------------------------


def _big_gold(n: int) -> ImportItem:
    case = gold(f"g{n}")
    messages = (case.messages[0], case.messages[1].model_copy(update={"content": f"{n} " + "x" * BODY}))
    return ImportItem(case.model_copy(update={"messages": messages}), "big.jsonl", n + 1)


def _gold_bodies(db_file: Path) -> tuple[int, int, int]:
    """Gold cases stored, gold bodies stored, and pending rows (gold bodies an import wrote ahead, unpublished)."""
    con = sqlite3.connect(db_file)
    try:
        return tuple(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[return-value]
                     for table in ("gold_cases", "gold_bodies", "pending_gold_bodies"))
    finally:
        con.close()


def test_no_write_transaction_of_an_import_copies_more_than_a_chunk_of_gold_bodies(tmp_path: Path) -> None:
    """A gold case's body (its tools, mostly) is most of its bytes: written ahead in one short transaction per
    chunk, not in the publish (the transaction every save waits for). Measured as the WAL each write transaction
    appends (checkpoints off, so it only grows)."""
    db_file = tmp_path / "toolgold.db"
    store, written = _measured_write_transactions(db_file)
    result = store.import_items(_big_gold(n) for n in range(6 * CHUNK + 1))
    assert result.gold_added == 6 * CHUNK + 1
    assert sum(written) > 6 * CHUNK * BODY  # every body went through the WAL once
    assert max(written) < 2 * CHUNK * BODY
    assert store.get_gold(f"g{3 * CHUNK}").messages[1].content == f"{3 * CHUNK} " + "x" * BODY
    assert _gold_bodies(db_file) == (6 * CHUNK + 1, 6 * CHUNK + 1, 0)
    store.close()


def test_an_import_killed_after_writing_gold_bodies_ahead_leaves_nothing_visible_and_the_next_import_deletes_them(
        tmp_path: Path) -> None:
    from benchmarks.bench_store import write_gold

    db = tmp_path / "crash.db"
    src = tmp_path / "gold.jsonl"
    write_gold(src, 3000)  # ~28 MB: converted by the worker processes, as a large import is
    store = Store(db)
    store.import_items([ImportItem(gold("before"), "a.jsonl", 1)])
    before = store.dump()
    exported = b"".join(block for _, block in store.iter_gold_blocks())
    store.close()
    _kill_import_once_bodies_are_written(db, src, "gold_bodies", "gold_cases")
    cases, bodies, pending = _gold_bodies(db)
    assert cases == 1 and bodies > 1 and pending > 0  # written ahead, never published
    store = Store(db)
    after = store.dump()
    assert {k: v for k, v in after.items() if k not in ("gold_bodies", "pending_gold_bodies")} == \
        {k: v for k, v in before.items() if k not in ("gold_bodies", "pending_gold_bodies")}
    assert b"".join(block for _, block in store.iter_gold_blocks()) == exported
    assert [case.id for case in store.gold_cases()] == ["before"]
    assert_invariants(db)
    store.import_items([ImportItem(gold("next"), "b.jsonl", 1)])  # the next import removes them
    assert _gold_bodies(db) == (2, 2, 0)
    assert [case.id for case in store.gold_cases()] == ["before", "next"]
    store.close()


def test_an_import_that_fails_deletes_the_gold_bodies_it_wrote_ahead(store: Store, isolated_db: Path) -> None:
    store.import_items([ImportItem(gold("g0"), "a.jsonl", 1)])

    def items() -> Iterator[ImportItem]:
        yield from (_big_gold(n) for n in range(1, 2 * CHUNK + 2))
        yield ImportItem(gold("g0", tags=("other",)), "big.jsonl", 2 * CHUNK + 3)  # a conflict, at the end

    with pytest.raises(InvalidRecord, match=r"^big\.jsonl:1003: gold case 'g0' is already in the store"):
        store.import_items(items())
    assert _gold_bodies(isolated_db) == (1, 1, 0)


def test_gold_bodies_written_ahead_for_cases_another_writer_added_meanwhile_are_deleted(store: Store,
                                                                                       isolated_db: Path) -> None:
    other = Store(store.url)

    def items() -> Iterator[ImportItem]:
        for n in range(2 * CHUNK):
            yield _big_gold(n)
            if n == CHUNK + 1:  # g0's body is written ahead already: another import adds g0 now
                other.import_items([_big_gold(0)])

    result = store.import_items(items())
    assert (result.gold_added, result.gold_unchanged) == (2 * CHUNK - 1, 1)
    assert _gold_bodies(isolated_db) == (2 * CHUNK, 2 * CHUNK, 0)  # no body left that no case refers to
    assert store.get_gold("g0").messages[1].content == "0 " + "x" * BODY
    other.close()
