"""Transcripts and turns, and gold cases coming in: importing, listing, loading, coverage (the live gold set as
read and exported: ``labeler.store.gold``).

An import adds transcripts (their tools stored once per schema hash, their decision points as turns) and
gold cases in one transaction; content already present is left alone, and an id that exists with other
content is refused naming the file and line. One exception: a transcript that comes again with the same
conversation and other tools is that conversation's tool set changing, so its tools are replaced (audited
as ``transcript.tools``); a gold case that comes again differing only in its tools is kept as labeled.
Schema drift (``labeler.store.drift``) then compares each case with its own transcript's tools.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import pickle
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypedDict

from sqlalchemy import Connection, delete, func, insert, select, update

from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, audit, gold_changed, stored_transcript, tool_bodies
from labeler.store.engine import (
    BUSY_TIMEOUT_MS,
    CHUNK,
    IMPORT_LOCK,
    Database,
    DatabaseBusy,
    DatabaseUnavailable,
    StoreError,
    now_iso,
    one_at_a_time,
    read_only_message,
    shown_url,
)
from labeler.store.staging import (
    BODY_BYTES,
    CHILD_BITS,
    GOLD_BODY_TABLES,
    GOLD_COLUMNS,
    MAIN_CHUNKS,
    STAGE_PAGE_SIZE,
    STAGE_PRAGMAS,
    STAGE_SCHEMA,
    STAGE_WAIT_SECONDS,
    TRANSCRIPT_BODY_TABLES,
    TRANSCRIPT_COLUMNS,
    TURN_COLUMNS,
    BodyTables,
    BodyWriteFailed,
    ImportItem,
    PreparedItem,
    Staged,
    StagedItem,
    StageFailed,
    StageWriter,
    observed_calls,
    prepare_item,
    stage_transaction,
)
from scorer.errors import InvalidRecord
from scorer.model import Transcript

try:
    import fcntl
except ImportError:  # Windows: no flock; importing into a SQLite file says so (``_import_staged``)
    fcntl = None  # type: ignore[assignment]


class DriftScope(TypedDict, total=False):
    cases: set[str]
    conversations: set[str]


DRIFT_SCOPE_MAX = 100_000
"""The most ids an import keeps to scope its drift check (~10 MB): beyond, the check reads every gold case. The
check reads them ``drift.SCOPE_CHUNK`` at a time (a query's parameters stay under SQLite's 32,766)."""


@dataclass
class ImportResult:
    transcripts_added: int = 0
    transcripts_unchanged: int = 0
    gold_added: int = 0
    gold_unchanged: int = 0
    turns_added: int = 0
    transcripts_retooled: int = 0
    """Transcripts already stored with the same conversation that came with other tools: their tools now
    are the new ones (schema drift checks the gold labeled on them)."""
    gold_retooled: int = 0
    """Gold cases already stored that came again differing only in their tools: kept as labeled."""
    rejects: list[InvalidRecord] = field(default_factory=list)
    changed_conversations: set[str] | None = field(default_factory=set, repr=False)
    """The transcripts added or given other tools (their conversation ids): the gold labeled on them, and the
    gold of their sources whose conversations are not stored, is what a drift check after this import needs to
    read. None once more than ``DRIFT_SCOPE_MAX`` (with ``changed_gold``): then every case is checked."""
    changed_gold: set[str] | None = field(default_factory=set, repr=False)
    """The gold cases added (their ids), likewise."""

    def changed(self, conversations: Iterable[str] = (), gold: Iterable[str] = ()) -> None:
        """Note records this import adds or retools (a superset is harmless: an unchanged case checks clean)."""
        if self.changed_conversations is None or self.changed_gold is None:
            return
        self.changed_conversations.update(conversations)
        self.changed_gold.update(gold)
        if len(self.changed_conversations) + len(self.changed_gold) > DRIFT_SCOPE_MAX:
            self.changed_conversations = self.changed_gold = None

    def drift_scope(self) -> DriftScope:
        """``check_schema_drift``'s keywords for the gold this import could have changed (empty: all of it)."""
        if self.changed_conversations is None or self.changed_gold is None:
            return {}
        return {"cases": self.changed_gold, "conversations": self.changed_conversations}

    @property
    def summary(self) -> str:
        parts = [
            f"{self.transcripts_added} transcripts added ({self.turns_added} decision points)",
            f"{self.gold_added} gold cases added",
        ]
        same = self.transcripts_unchanged + self.gold_unchanged
        if same:
            parts.append(f"{same} already present")
        if self.transcripts_retooled:
            parts.append(f"{self.transcripts_retooled} transcripts' tools changed")
        if self.gold_retooled:
            parts.append(f"{self.gold_retooled} gold cases kept as labeled under their earlier tools")
        if self.rejects:
            parts.append(f"{len(self.rejects)} rejected")
        return ", ".join(parts)


@dataclass(frozen=True)
class TranscriptSummary:
    id: str
    source: str
    title: str
    n_messages: int
    n_turns: int
    n_tool_calls: int
    n_gold: int
    started_at: str | None

    @property
    def n_unlabeled(self) -> int:
        return max(self.n_turns - self.n_gold, 0)


@dataclass(frozen=True)
class TurnSummary:
    ordinal: int
    message_index: int
    observed_behavior: str
    n_calls: int
    gold_case_ids: tuple[str, ...]


@dataclass(frozen=True)
class TranscriptDetail:
    transcript: Transcript
    source: str
    turns: tuple[TurnSummary, ...]


# -- labeling read models ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """The gold set at a glance."""

    total: int
    by_behavior: dict[str, int]
    by_tool: dict[str, int]
    by_tag: dict[str, int]
    happy_path: int
    adversarial: int

    @property
    def adversarial_ratio(self) -> float | None:
        """Adversarial cases per happy-path case (the team's target is at least 2)."""
        return self.adversarial / self.happy_path if self.happy_path else None


def import_items(db: Database, items: Iterable[ImportItem | PreparedItem | StagedItem], *, actor: str = "import",
                 skip_invalid: bool = False, on_stage: Callable[[Path, Path], None] | None = None,
                 on_fail: Callable[[], None] | None = None) -> ImportResult:
    """Add transcripts and gold cases all or nothing; content already present is left alone.

    An id that exists with different content is a conflict: the whole import is refused (nothing
    written) and the error names the file and line, unless ``skip_invalid`` sets it aside as a reject.

    ``items`` is consumed before anything is written to the store: each record is turned into the rows it
    becomes (plain strings and numbers) a chunk at a time, so memory stays flat however large the import, and
    converting the input (the slow part) never holds the write lock that annotators' saves wait for.

    SQLite: the rows are staged in a SQLite file beside the database (``FILE-import-*.stage``), checked
    against the store chunk by chunk, then published by one short transaction of a few set-based
    ``INSERT ... SELECT`` statements, so the write lock is held for the copy alone (not for Python building
    rows). The transcripts' bodies, most of the bytes, are not in that copy: each accepted chunk's are written
    into the store ahead, in a short transaction of their own, where nothing reaches them until the publish
    commits the transcripts that refer to them (``_write_bodies``). Readers see the whole import or none of it;
    a killed import leaves only its stage file and the bodies it wrote ahead, which the next import removes. Imports do not wait for each other while they stage: the publish re-checks, under
    the write lock, the ids that another writer may have added meanwhile. ``items`` may come already
    prepared (``prepare_item``, in another process): they are written as they are. ``on_stage`` is told the
    stage file's path and the database file's before the first item is taken: worker processes converting the
    items may then write their rows into the stage and their bodies into the store themselves (``StageWriter``)
    and yield ``StagedItem``s, so neither passes through this process; ``on_fail`` is called when the import
    fails, before it deletes the bodies written ahead (so stop those workers there: none writes after). PostgreSQL (no database-wide write lock: saves do not wait on an import; ``on_stage`` is never
    called): the rows are spooled to a temporary file and replayed in one transaction.
    """
    stage_dir = db.sqlite_file()
    if stage_dir is not None:
        return _import_staged(db, stage_dir, items, actor=actor, skip_invalid=skip_invalid, on_stage=on_stage,
                              on_fail=on_fail)
    result = ImportResult()
    with tempfile.TemporaryFile() as transcripts, tempfile.TemporaryFile() as gold:
        sources = _spool(items, transcripts, gold)
        with db.write() as conn:
            # Imports run one at a time: two imports of the same content (or of files sharing a tool schema
            # new to the store) would otherwise both find it missing and both insert it (PostgreSQL:
            # IntegrityError).
            one_at_a_time(conn, IMPORT_LOCK)
            for batch in _replayed(transcripts):
                _import_transcripts(conn, batch, result, skip_invalid, actor)
            for batch in _replayed(gold):
                _import_gold(conn, batch, result, skip_invalid)
            _audit_import(conn, actor, result, sources)
    return result


def _audit_import(conn: Connection, actor: str, result: ImportResult, sources: set[str]) -> None:
    if result.transcripts_added or result.gold_added or result.transcripts_retooled:
        audit(conn, actor=actor, action="import", entity="batch", entity_id=now_iso(),
              after={"transcripts": result.transcripts_added, "gold_cases": result.gold_added,
                     "transcripts_retooled": result.transcripts_retooled, "sources": sorted(sources)})


# -- SQLite: stage, then publish in one short transaction -------------------------------------------

class _Stage:
    """The staging file: the import's rows, numbered and checked, not yet in the store."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path = path
        # Held while this import lives (the kernel drops it if the process dies): a stage file whose lock
        # can be taken belongs to no running import.
        self.lock = lock
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=STAGE_WAIT_SECONDS)
        self.conn.executescript(STAGE_PAGE_SIZE + STAGE_PRAGMAS + STAGE_SCHEMA)
        # Workers write into this file too (their own transactions), so this process holds no transaction
        # open between its writes.
        self.writer = StageWriter(path)
        self.next_id = 1
        self.next_chunk = MAIN_CHUNKS
        # Stored transcripts that came again with the same conversation and other tools (rare: kept in memory),
        # their tools replaced when the import publishes.
        self.retools: list[Staged] = []
        self.lists: dict[str, int] = {}
        """``tool_lists`` by their text (space-joined schema hashes)."""

    def known(self, table: str, key: str, ids: Sequence[str]) -> dict[str, str]:
        marks = ", ".join("?" * len(ids))
        return dict(self.conn.execute(f"SELECT {key}, content_hash FROM {table} WHERE {key} IN ({marks})", ids))

    def commit(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def write(self, prepared: Sequence[PreparedItem]) -> list[StagedItem]:
        """Write records this process converted itself into the stage."""
        self.next_chunk += 1
        return self.writer.write(self.next_chunk, prepared)

    def accept(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        """Record the accepted records of one chunk (the key tables), in one transaction."""
        if not rows:
            return
        with stage_transaction(self.conn):
            self.conn.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)

    def body(self, staged: StagedItem) -> str:
        table = "rows_transcript_bodies" if staged.transcript else "rows_gold_bodies"
        return str(self.conn.execute(f"SELECT body FROM {table} WHERE seq = ?", (staged.seq,)).fetchone()[0])

    def tools(self, staged: StagedItem) -> list[tuple[str, str, str]]:
        """A staged transcript's tools (hash, name, canonical JSON), in order."""
        (hashes,) = self.conn.execute("SELECT tools FROM rows_transcripts WHERE seq = ?", (staged.seq,)).fetchone()
        found = []
        for digest in hashes.split():
            name, text = self.conn.execute("SELECT name, body FROM rows_tool_schemas WHERE hash = ?",
                                           (digest,)).fetchone()
            found.append((digest, name, text))
        return found

    def tool_lists(self, seqs: Sequence[int]) -> list[int | None]:
        """The number (``tool_lists``) of each staged transcript's list of tools, made when new; None for none."""
        marks = ", ".join("?" * len(seqs))
        listed = dict(self.conn.execute(f"SELECT seq, tools FROM rows_transcripts WHERE seq IN ({marks})", seqs))
        new = [hashes for hashes in dict.fromkeys(listed.values()) if hashes and hashes not in self.lists]
        fresh = list(enumerate(new, start=len(self.lists) + 1))
        if fresh:
            with stage_transaction(self.conn):
                self.conn.executemany("INSERT INTO tool_lists (id, hashes) VALUES (?, ?)", fresh)
            self.lists.update((hashes, n) for n, hashes in fresh)
        return [self.lists.get(listed[seq]) if listed[seq] else None for seq in seqs]

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # failing already (a full disk): the file is deleted next
            self.commit()
        self.writer.close()
        self.conn.close()
        os.close(self.lock)

    def drop(self, clashes: Sequence[_Clash], result: ImportResult, skip: bool) -> tuple[list[int], list[int]]:
        """Take out of the stage the records another writer added to the store since they were staged: the
        same content is counted unchanged, other content is a conflict (raised, or a reject with ``skip``).
        Returns the ids of the bodies written ahead for the transcripts and for the gold cases taken out (to
        delete: ``_delete_bodies``)."""
        for clash in clashes:
            if clash.same:
                if clash.table == "transcripts":
                    result.transcripts_unchanged += 1
                else:
                    result.gold_unchanged += 1
            else:
                what = "transcript" if clash.table == "transcripts" else "gold case"
                _reject_or_raise(InvalidRecord(f"{what} {clash.id!r} is already in the store with different "
                                               "content (it was added while this import ran)",
                                               source=clash.source, line=clash.line), result, skip)
        run = self.conn.execute
        bodies: list[int] = []
        gold_bodies: list[int] = []
        run("BEGIN IMMEDIATE")
        for clash in clashes:  # out of the accepted records: their rows are then never published
            if clash.table == "transcripts":
                turns, body_id = run("SELECT n_turns, body_id FROM transcripts WHERE external_id = ?",
                                     (clash.id,)).fetchone()
                bodies.append(body_id)
                result.turns_added -= turns
                run("DELETE FROM transcripts WHERE external_id = ?", (clash.id,))
                result.transcripts_added -= 1
            else:
                (body_id,) = run("SELECT body_id FROM gold_cases WHERE id = ?", (clash.id,)).fetchone()
                gold_bodies.append(body_id)
                run("DELETE FROM gold_cases WHERE id = ?", (clash.id,))
                result.gold_added -= 1
        self.commit()
        return bodies, gold_bodies


@dataclass(frozen=True)
class _Clash:
    table: str
    id: str
    same: bool
    source: str
    line: int | None


class _Clashed(Exception):
    def __init__(self, clashes: list[_Clash]) -> None:
        super().__init__(f"{len(clashes)} staged records were added to the store meanwhile")
        self.clashes = clashes


NO_FLOCK_MESSAGE = ("importing into a SQLite database needs fcntl file locks (Linux, macOS), which this platform "
                    "lacks; nothing was written: import on Linux or macOS, or use a PostgreSQL database")


def _remove_stale_stages(db_file: Path) -> None:
    """Delete the stage files of imports that died (killed, power cut): nothing of them reached the store."""
    for path in db_file.parent.glob(glob.escape(db_file.name) + "-import-*.stage"):
        if path.exists() and not _stage_alive(path):
            path.unlink(missing_ok=True)


def _import_staged(db: Database, db_file: Path, items: Iterable[ImportItem | PreparedItem | StagedItem], *,
                   actor: str, skip_invalid: bool, on_stage: Callable[[Path, Path], None] | None,
                   on_fail: Callable[[], None] | None) -> ImportResult:
    result = ImportResult()
    if db.read_only:
        raise DatabaseUnavailable(read_only_message(db.url))
    if fcntl is None:
        raise DatabaseUnavailable(NO_FLOCK_MESSAGE)
    try:
        _remove_stale_stages(db_file)
        _sweep_dead_bodies(db, db_file)
        # Locked before it is named like a stage file, so no other import takes it for a dead one's.
        fd, name = tempfile.mkstemp(prefix=db_file.name + "-import-", suffix=".new", dir=db_file.parent)
        fcntl.flock(fd, fcntl.LOCK_EX)
        path = Path(name).with_suffix(".stage")
        os.replace(name, path)
    except OSError as exc:
        raise _stage_failed(db, exc) from None
    try:
        try:
            stage = _Stage(path, fd)
        except sqlite3.Error as exc:
            os.close(fd)
            raise _stage_failed(db, exc) from None
        try:
            # The checkpoints' sync of what the body writes and the publish copied: here, not in a later save.
            with db.flushing(checkpoints=on_stage is not None):
                try:
                    if on_stage is not None:
                        on_stage(path, db_file)
                    sources = _fill_stage(db, stage, items, result, skip_invalid)
                    stage.commit()
                except BodyWriteFailed as exc:  # a worker writing bodies into the store
                    raise _body_write_failed(db, exc) from None
                except (sqlite3.Error, StageFailed) as exc:  # the stage file's own database (a full disk, say)
                    raise _stage_failed(db, exc) from None
                for _ in range(5):
                    if not (result.transcripts_added or result.gold_added or stage.retools):
                        break
                    try:
                        _publish(db, stage, actor, result, sources)
                        break
                    except _Clashed as clashed:
                        bodies, gold_bodies = stage.drop(clashed.clashes, result, skip_invalid)
                        _delete_bodies(db, bodies, TRANSCRIPT_BODIES)
                        _delete_bodies(db, gold_bodies, GOLD_BODIES)
                else:
                    raise StoreError("other writers kept adding the records this import holds; nothing was "
                                     "imported: run it again")
        except BaseException:
            # The bodies written ahead are unreachable; delete them now (best effort: else the next import does),
            # once nobody writes more (the workers writing bodies stopped).
            with contextlib.suppress(Exception):
                if on_fail is not None:
                    on_fail()
                _discard_pending(db, path.name)
            raise
        finally:
            stage.close()
    finally:
        path.unlink(missing_ok=True)
    return result


@dataclass(frozen=True)
class _Bodies:
    """Where one kind of record keeps the bodies an import writes ahead: the store's table of bodies, the rows
    of it that refer to them, the table noting those not yet published, and the stage's table of them."""

    row: Any
    """``tables.TranscriptBodyRow`` or ``tables.GoldBodyRow``."""
    owner: Any
    """The records referring to their bodies: ``tables.TranscriptRow`` or ``tables.GoldCaseRow``."""
    pending: Any
    """``tables.PendingBodiesRow`` or ``tables.PendingGoldBodiesRow``."""
    tables: BodyTables
    """The same by name, with the stage file's table of them (what a worker writes through ``sqlite3``)."""

    @property
    def not_published(self) -> Any:
        """A body no record refers to (yet)."""
        return ~select(self.owner.id).where(self.owner.body_id == self.row.id).exists()


TRANSCRIPT_BODIES = _Bodies(t.TranscriptBodyRow, t.TranscriptRow, t.PendingBodiesRow, TRANSCRIPT_BODY_TABLES)
"""Transcripts' bodies (revision 0003)."""
GOLD_BODIES = _Bodies(t.GoldBodyRow, t.GoldCaseRow, t.PendingGoldBodiesRow, GOLD_BODY_TABLES)
"""Gold cases' bodies (revision 0005)."""


def _write_bodies(db: Database, stage: _Stage, seqs: Sequence[int], kind: _Bodies = TRANSCRIPT_BODIES) -> list[int]:
    """Copy the staged bodies of ``seqs`` (accepted transcripts, or gold cases) into the store's table of them
    (``transcript_bodies``, ``gold_bodies``) under new ids, in short transactions of their own (``BODY_BYTES``
    each), and note them as this import's (``pending_bodies``, ``pending_gold_bodies``); return each one's id.
    Nothing refers to them until the publish commits the records that do, so no reader sees them, and the publish
    copies no body while it holds the write lock. The stage is read before the store's write lock is taken (as
    bytes: stored as the same text, never decoded), so no transaction holds that lock while it waits for a
    worker writing the stage."""
    marks = ", ".join("?" * len(seqs))
    found = dict(stage.conn.execute(f"SELECT seq, CAST(body AS BLOB) FROM {kind.tables.staged} WHERE seq IN ({marks})",
                                    seqs))
    table, pending = kind.row.__tablename__, kind.pending.__tablename__
    ids: list[int] = []
    start = 0
    while start < len(seqs):
        end, size = start, 0
        while end < len(seqs) and (end == start or size + len(found[seqs[end]]) <= BODY_BYTES):
            size += len(found[seqs[end]])
            end += 1
        with db.write() as conn:
            run = conn.exec_driver_sql
            first = (run(f"SELECT coalesce(max(id), 0) FROM {table}").scalar() or 0) + 1
            run(f"INSERT INTO {table} (id, body) VALUES (?, CAST(? AS TEXT))",
                [(first + n, found[seq]) for n, seq in enumerate(seqs[start:end])])
            run(f"INSERT INTO {pending} (first_id, last_id, stage) VALUES (?, ?, ?)",
                (first, first + end - start - 1, stage.path.name))
        ids += range(first, first + end - start)
        start = end
    return ids


_STORED_BODY = (select(t.TranscriptBodyRow.body).where(t.TranscriptBodyRow.id == t.TranscriptRow.body_id)
                .scalar_subquery().label("body"))
"""A stored transcript's body, beside its other columns in a query of ``transcripts``."""


def _delete_bodies(db: Database, ids: Sequence[int], kind: _Bodies) -> None:
    """Delete bodies written ahead for records that will not be published (another writer added them)."""
    for start in range(0, len(ids), CHUNK):
        with db.write() as conn:
            conn.execute(delete(kind.row).where(kind.row.id.in_(ids[start:start + CHUNK]), kind.not_published))


def _discard_pending(db: Database, stage_name: str) -> None:
    """Delete the bodies (transcripts' and gold cases') the import staged in ``stage_name`` wrote ahead and did
    not publish, one of its writes (a chunk's bodies) per transaction, so saves get the lock in between."""
    for kind in (TRANSCRIPT_BODIES, GOLD_BODIES):
        while True:
            with db.write() as conn:
                span = conn.execute(select(kind.pending.first_id, kind.pending.last_id)
                                    .where(kind.pending.stage == stage_name).limit(1)).first()
                if span is None:
                    break
                conn.execute(delete(kind.row).where(kind.row.id.between(*span), kind.not_published))
                conn.execute(delete(kind.pending).where(kind.pending.first_id == span[0]))


def _sweep_dead_bodies(db: Database, db_file: Path) -> None:
    """Delete the bodies that imports which died (killed, power cut) wrote ahead: those noted under a stage file
    that is gone or that no running import holds locked. A running import's are kept."""
    with db.read() as conn:
        stages = set(conn.scalars(select(t.PendingBodiesRow.stage).distinct()))
        stages.update(conn.scalars(select(t.PendingGoldBodiesRow.stage).distinct()))
    for name in sorted(stages):
        if Path(name).name != name or not _stage_alive(db_file.parent / name):
            _discard_pending(db, name)


def _stage_alive(path: Path) -> bool:
    """Whether a running import holds the stage file ``path`` (its lock cannot be taken)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def _stage_failed(db: Database, exc: BaseException) -> DatabaseUnavailable:
    """One line for a stage file that could not be made or written: nothing reached the store."""
    reason = getattr(exc, "strerror", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    if "full" in reason.lower() or "no space" in reason.lower():
        return DatabaseUnavailable(f"the database {shown_url(db.url)}: the disk is full; nothing was written")
    return DatabaseUnavailable(f"cannot stage the import beside the database {shown_url(db.url)}: "
                               f"{reason[:200]}; nothing was written")


def _body_write_failed(db: Database, exc: BodyWriteFailed) -> DatabaseUnavailable:
    """One line for bodies a worker could not write into the store: as the store's own writes say it."""
    reason = str(exc)
    if "locked" in reason.lower() or "busy" in reason.lower():
        return DatabaseBusy(f"the database {shown_url(db.url)} is locked by another writer (waited "
                            f"{BUSY_TIMEOUT_MS / 1000:g} s); nothing was written: try again")
    if "full" in reason.lower() or "no space" in reason.lower():
        return _stage_failed(db, exc)
    return DatabaseUnavailable(f"the database {shown_url(db.url)}: {reason[:200]}; nothing was written")


def _fill_stage(db: Database, stage: _Stage, items: Iterable[ImportItem | PreparedItem | StagedItem],
                result: ImportResult, skip: bool) -> set[str]:
    sources: set[str] = set()
    batches: dict[bool, list[StagedItem]] = {True: [], False: []}
    mine: dict[bool, list[PreparedItem]] = {True: [], False: []}  # converted here: written by this process

    def flush(transcript: bool) -> None:
        batch = batches[transcript]
        if mine[transcript]:  # in input order with the rest: what this process converted is written first
            written = iter(stage.write(mine[transcript]))
            batch[:] = [next(written) if item is None else item for item in batch]
            mine[transcript].clear()
        (_stage_transcripts if transcript else _stage_gold_cases)(db, stage, batch, result, skip)
        batch.clear()

    for item in items:
        if isinstance(item, StagedItem):
            staged = item
        else:
            try:
                prepared = item if isinstance(item, PreparedItem) else prepare_item(item)
            except InvalidRecord as exc:  # more children than a stage key numbers
                _reject_or_raise(exc, result, skip)
                continue
            mine[prepared.transcript].append(prepared)
            staged = None
        kind = staged.transcript if staged is not None else prepared.transcript
        sources.add(staged.source if staged is not None else prepared.staged.source)
        batches[kind].append(staged)  # type: ignore[arg-type]  # None: written at the flush
        if len(batches[kind]) >= CHUNK:
            flush(kind)
    for kind in (True, False):
        if batches[kind]:
            flush(kind)
    return sources


def _new_in(batch: Sequence[StagedItem], existing: dict[str, str], result: ImportResult, skip: bool,
            what: str, hint: str) -> list[StagedItem]:
    """The records of ``batch`` not yet in the store nor staged; the same content is counted unchanged, other
    content under a known id is a conflict (raised, or a reject with ``skip``)."""
    new = []
    for staged in batch:
        prior = existing.get(staged.id)
        if prior == staged.digest:
            if what == "transcript":
                result.transcripts_unchanged += 1
            else:
                result.gold_unchanged += 1
            continue
        if prior is not None:
            _reject_or_raise(InvalidRecord(f"{what} {staged.id!r} is already in the store with different content"
                                           + hint, source=staged.source, line=staged.line), result, skip)
            continue
        existing[staged.id] = staged.digest
        new.append(staged)
    return new


def _retooled(batch: Sequence[StagedItem], stored: dict[str, tuple[str, str]], existing: dict[str, str],
              same_but_tools: Callable[[str, StagedItem], bool]) -> tuple[list[StagedItem], list[StagedItem]]:
    """Split ``batch`` into the records to stage as usual and those already stored that differ only in their
    tools (``same_but_tools(stored body, record)``), the first time each comes in this import; ``existing``
    then holds the new digest, so a later copy of it is unchanged and other content a conflict."""
    kept, retooled = [], []
    for staged in batch:
        hit = stored.get(staged.id)
        if hit is not None and existing.get(staged.id) == hit[0] != staged.digest and same_but_tools(hit[1], staged):
            existing[staged.id] = staged.digest
            retooled.append(staged)
        else:
            kept.append(staged)
    return kept, retooled


def _stored_and_staged(db: Database, stage: _Stage, batch: Sequence[StagedItem], key: Any, digest: Any, body: Any,
                       table: str) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """For the ids of ``batch``: the store's (content hash, body) by id, and the content hash by id of what the
    store or this import's stage already holds (the stage's key column is named as the store's)."""
    ids = list(dict.fromkeys(s.id for s in batch))
    with db.read() as conn:
        stored = {k: (d, b) for k, d, b in conn.execute(select(key, digest, body).where(key.in_(ids))).all()}
    existing = {k: d for k, (d, _) in stored.items()}
    existing.update(stage.known(table, key.key, ids))
    return stored, existing


def _stage_transcripts(db: Database, stage: _Stage, batch: Sequence[StagedItem], result: ImportResult,
                       skip: bool) -> None:
    stored, existing = _stored_and_staged(db, stage, batch, t.TranscriptRow.external_id, t.TranscriptRow.content_hash,
                                          _STORED_BODY, "transcripts")
    # The same conversation with other tools: the conversation's tool set changed (replaced at the publish).
    kept, retooled = _retooled(batch, stored, existing,
                               lambda body, staged: body == _staged_body(db, stage, staged, TRANSCRIPT_BODIES))
    stage.retools += [Staged(s.id, s.digest, s.source, s.line, {}, stage.tools(s)) for s in retooled]
    result.transcripts_retooled += len(retooled)
    new = _new_in(kept, existing, result, skip, "transcript", " (give it a new id to keep both)")
    result.changed(conversations=[s.id for s in (*retooled, *new)])
    bodies = _bodies_of(db, stage, batch, new, TRANSCRIPT_BODIES)
    lists = stage.tool_lists([s.seq for s in new]) if new else []
    rows = []
    for n, staged in enumerate(new):
        rows.append((stage.next_id, staged.id, staged.digest, staged.source, staged.line, staged.seq,
                     staged.n_children, bodies[n], lists[n]))
        stage.next_id += 1
    stage.accept("transcripts", rows)
    result.transcripts_added += len(rows)
    result.turns_added += sum(s.n_children for s in new)


def _stage_gold_cases(db: Database, stage: _Stage, batch: Sequence[StagedItem], result: ImportResult,
                      skip: bool) -> None:
    stored, existing = _stored_and_staged(db, stage, batch, t.GoldCaseRow.id, t.GoldCaseRow.content_hash,
                                          GOLD_BODY, "gold_cases")
    # Labeled under other tools: the stored gold stays; schema drift says whether it still fits.
    kept, retooled = _retooled(batch, stored, existing, lambda body, staged: _but_tools(body) == _but_tools(
        _staged_body(db, stage, staged, GOLD_BODIES)))
    result.gold_retooled += len(retooled)
    new = _new_in(kept, existing, result, skip, "gold case", "")
    result.changed(gold=[s.id for s in new])
    # Their bodies (most of a gold case's bytes: its tools) go into the store now, unreachable until the publish.
    bodies = _bodies_of(db, stage, batch, new, GOLD_BODIES)
    stage.accept("gold_cases", [(s.id, s.digest, s.source, s.line, s.seq, body_id)
                                for s, body_id in zip(new, bodies, strict=True)])
    result.gold_added += len(new)


def _staged_body(db: Database, stage: _Stage, staged: StagedItem, kind: _Bodies) -> str:
    """A staged record's body: where its worker wrote it in the store, or in the stage."""
    if staged.body_id is None:
        return stage.body(staged)
    with db.read() as conn:
        return str(conn.scalar(select(kind.row.body).where(kind.row.id == staged.body_id)))


def _bodies_of(db: Database, stage: _Stage, batch: Sequence[StagedItem], new: Sequence[StagedItem],
               kind: _Bodies) -> list[int]:
    """The store ids of the bodies of ``new`` (the records of ``batch`` accepted): those a worker wrote into the
    store already, the rest copied there from the stage now (``_write_bodies``). The bodies a worker wrote for
    the records of ``batch`` not accepted (a duplicate, a conflict set aside, a retooled transcript) are deleted."""
    accepted = {id(s) for s in new}
    unwanted = [s.body_id for s in batch if s.body_id is not None and id(s) not in accepted]
    if unwanted:
        _delete_bodies(db, unwanted, kind)
    copied = iter(_write_bodies(db, stage, [s.seq for s in new if s.body_id is None], kind)
                  if any(s.body_id is None for s in new) else [])
    return [s.body_id if s.body_id is not None else next(copied) for s in new]


def _clashes(conn: Connection, table: str, key: str) -> list[_Clash]:
    """Staged records of ``table`` whose id the store holds now. The smaller side drives the lookup (SQLite's
    CROSS JOIN keeps the order written), so a large import into an empty store costs nothing here."""
    run = conn.exec_driver_sql
    staged = run(f"SELECT count(*) FROM stage.{table}").scalar() or 0
    stored = run(f"SELECT max(rowid) FROM main.{table}").scalar() or 0
    if not staged or not stored:
        return []
    pair = ("main", "stage") if stored < staged else ("stage", "main")
    rows = run(f"SELECT s.{key}, s.content_hash = m.content_hash, s.src, s.line FROM {pair[0]}.{table} AS "
               f"{pair[0][0]} CROSS JOIN {pair[1]}.{table} AS {pair[1][0]} ON m.{key} = s.{key}").all()
    return [_Clash(table, str(k), bool(same), str(src), line) for k, same, src, line in rows]


def _publish(db: Database, stage: _Stage, actor: str, result: ImportResult, sources: set[str]) -> None:
    """Copy the staged rows into the store in one transaction: a handful of statements, whatever the size."""
    cols = ", ".join(TRANSCRIPT_COLUMNS)
    turn_cols = ", ".join(TURN_COLUMNS)
    gold_cols = ", ".join(GOLD_COLUMNS)
    with db.write_attached("stage", stage.path) as conn:
        stamp = _stored_now(conn)
        run = conn.exec_driver_sql
        clashes = _clashes(conn, "transcripts", "external_id") + _clashes(conn, "gold_cases", "id")
        if clashes:  # added by another import (or, for gold, by labeling) since they were staged
            raise _Clashed(clashes)
        base = run("SELECT coalesce(max(id), 0) FROM main.transcripts").scalar() or 0
        # The accepted records (key tables, in input order) joined to their rows; a child's key range is
        # its record's seq shifted (see STAGE_SCHEMA). CROSS JOIN keeps the accepted records driving.
        children = f"r.key BETWEEN k.seq << {CHILD_BITS} AND (k.seq << {CHILD_BITS}) + {(1 << CHILD_BITS) - 1}"
        # The accepted transcripts' distinct lists of tools (a few: most transcripts of a source share one),
        # their schemas and tool sets made where new; then each transcript names its set.
        lists = run("SELECT id, hashes FROM stage.tool_lists WHERE id IN "
                    "(SELECT DISTINCT tool_list FROM stage.transcripts)").all()
        needed = sorted({digest for _, hashes in lists for digest in hashes.split()})
        run("INSERT INTO main.tool_schemas (hash, name, body, first_seen) SELECT hash, name, body, ? "
            "FROM stage.rows_tool_schemas WHERE hash IN (SELECT value FROM json_each(?)) "
            "AND hash NOT IN (SELECT hash FROM main.tool_schemas)", (stamp, json.dumps(needed)))
        sets = _ensure_tool_sets(conn, [hashes.split() for _, hashes in lists])
        run("DROP TABLE IF EXISTS temp.publish_tool_sets")
        run("CREATE TEMP TABLE publish_tool_sets (list INTEGER PRIMARY KEY, tool_set INTEGER NOT NULL)")
        if lists:
            run("INSERT INTO temp.publish_tool_sets VALUES (?, ?)",
                [(number, tool_set) for (number, _), tool_set in zip(lists, sets, strict=True)])
        # Their bodies are in the store already (``_write_bodies``): no longer this import's to delete.
        run(f"INSERT INTO main.transcripts (id, body_id, tool_set_id, {cols}, imported_at) "
            f"SELECT k.id + ?, k.body_id, s.tool_set, {', '.join('r.' + c for c in TRANSCRIPT_COLUMNS)}, ? "
            "FROM stage.transcripts AS k CROSS JOIN stage.rows_transcripts AS r ON r.seq = k.seq "
            "LEFT JOIN temp.publish_tool_sets AS s ON s.list = k.tool_list ORDER BY k.id", (base, stamp))
        run("DROP TABLE temp.publish_tool_sets")
        run("DELETE FROM main.pending_bodies WHERE stage = ?", (stage.path.name,))
        run(f"INSERT INTO main.turns (transcript_id, {turn_cols}) SELECT k.id + ?, "
            f"{', '.join('r.' + c for c in TURN_COLUMNS)} FROM stage.transcripts AS k "
            f"CROSS JOIN stage.rows_turns AS r ON {children} ORDER BY k.id, r.key", (base,))
        published = run(f"INSERT INTO main.gold_cases ({gold_cols}, body_id, created_at, updated_at) "
                        f"SELECT {', '.join('r.' + c for c in GOLD_COLUMNS)}, k.body_id, ?, ? "
                        "FROM stage.gold_cases AS k CROSS JOIN stage.rows_gold_cases AS r ON r.seq = k.seq "
                        "ORDER BY k.rowid", (stamp, stamp)).rowcount
        if published:
            gold_changed(conn)
        run("DELETE FROM main.pending_gold_bodies WHERE stage = ?", (stage.path.name,))
        run("INSERT INTO main.gold_case_tags (case_id, tag) SELECT r.case_id, r.tag FROM stage.gold_cases AS k "
            f"CROSS JOIN stage.rows_gold_case_tags AS r ON {children} ORDER BY k.rowid, r.key")
        for staged in stage.retools:
            pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == staged.id))
            if pk is not None:
                _retool(conn, pk, staged, actor)
        _audit_import(conn, actor, result, sources)


def _stored_now(conn: Connection) -> Any:
    """Now, in the form the ``Timestamp`` columns store (the publish's raw SQL bypasses the column type)."""
    process = t.Timestamp().bind_processor(conn.dialect)
    return process(now_iso()) if process is not None else now_iso()


def _spool(items: Iterable[ImportItem | PreparedItem | StagedItem], transcripts: IO[bytes], gold: IO[bytes]
           ) -> set[str]:
    """Stage ``items`` into the two spools in chunks of ``CHUNK``; return their sources."""
    sources: set[str] = set()
    pending: dict[IO[bytes], list[Staged]] = {transcripts: [], gold: []}
    for item in items:
        if isinstance(item, StagedItem):  # only an import with a stage file (SQLite) has workers write there
            raise TypeError("a staged item reached an import without a stage file")
        prepared = item if isinstance(item, PreparedItem) else prepare_item(item)
        sources.add(prepared.staged.source)
        spool = transcripts if prepared.transcript else gold
        batch = pending[spool]
        batch.append(prepared.staged)
        if len(batch) >= CHUNK:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
            batch.clear()
    for spool, batch in pending.items():
        if batch:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
        spool.seek(0)
    return sources


def _replayed(spool: IO[bytes]) -> Iterator[list[Staged]]:
    while True:
        try:
            yield pickle.load(spool)
        except EOFError:
            return


def _reject_or_raise(err: InvalidRecord, result: ImportResult, skip: bool) -> None:
    if not skip:
        raise err
    result.rejects.append(err)


def _import_transcripts(conn: Connection, batch: Sequence[Staged], result: ImportResult, skip: bool,
                        actor: str) -> None:
    existing = {ext: (pk, digest, body) for ext, pk, digest, body in conn.execute(
        select(t.TranscriptRow.external_id, t.TranscriptRow.id, t.TranscriptRow.content_hash, _STORED_BODY)
        .where(t.TranscriptRow.external_id.in_([s.id for s in batch]))
    ).all()}
    seen_in_batch: dict[str, str] = {}
    rows, new = [], []
    stamp = now_iso()
    for staged in batch:
        stored = existing.get(staged.id)
        prior = seen_in_batch.get(staged.id) or (stored[1] if stored else None)
        if prior == staged.digest:
            result.transcripts_unchanged += 1
            continue
        if stored is not None and staged.id not in seen_in_batch and stored[2] == staged.row["body"]:
            # The same conversation with other tools: the conversation's tool set changed.
            _retool(conn, stored[0], staged, actor)
            seen_in_batch[staged.id] = staged.digest
            result.transcripts_retooled += 1
            result.changed(conversations=(staged.id,))
            continue
        if prior is not None:
            _reject_or_raise(InvalidRecord(
                f"transcript {staged.id!r} is already in the store with different content "
                "(give it a new id to keep both)", source=staged.source, line=staged.line), result, skip)
            continue
        seen_in_batch[staged.id] = staged.digest
        new.append(staged)
        rows.append({**staged.row, "imported_at": stamp})
    if not rows:
        return
    body_ids = conn.scalars(insert(t.TranscriptBodyRow).returning(t.TranscriptBodyRow.id, sort_by_parameter_order=True),
                            [{"body": row.pop("body")} for row in rows]).all()
    _ensure_tool_schemas(conn, [tool for staged in new for tool in staged.tools])
    sets = _ensure_tool_sets(conn, [[digest for digest, _, _ in staged.tools] for staged in new])
    for row, body_id, tool_set in zip(rows, body_ids, sets, strict=True):
        row["body_id"], row["tool_set_id"] = body_id, tool_set
    id_of = {ext: pk for pk, ext in conn.execute(
        insert(t.TranscriptRow).returning(t.TranscriptRow.id, t.TranscriptRow.external_id),
        rows)}
    turn_rows = []
    for staged in new:
        turn_rows += [{**turn, "transcript_id": id_of[staged.id]} for turn in staged.children]
    if turn_rows:
        conn.execute(insert(t.TurnRow), turn_rows)
    result.transcripts_added += len(rows)
    result.turns_added += len(turn_rows)
    result.changed(conversations=[staged.id for staged in new])


def _retool(conn: Connection, pk: int, staged: Staged, actor: str) -> None:
    """Replace the stored transcript ``pk``'s tools with ``staged``'s (its conversation is the same)."""
    before = list(conn.scalars(select(t.ToolSetToolRow.schema_hash)
                               .join(t.TranscriptRow, t.TranscriptRow.tool_set_id == t.ToolSetToolRow.tool_set_id)
                               .where(t.TranscriptRow.id == pk).order_by(t.ToolSetToolRow.position)))
    _ensure_tool_schemas(conn, staged.tools)
    (tool_set,) = _ensure_tool_sets(conn, [[digest for digest, _, _ in staged.tools]])
    conn.execute(update(t.TranscriptRow).where(t.TranscriptRow.id == pk)
                 .values(content_hash=staged.digest, tool_set_id=tool_set))
    audit(conn, actor=actor, action="transcript.tools", entity="transcript", entity_id=staged.id,
          before={"tools": before}, after={"tools": [digest for digest, _, _ in staged.tools]},
          note=f"re-imported from {staged.source}" + (f":{staged.line}" if staged.line else "")
               + " with other tools")


def _ensure_tool_sets(conn: Connection, lists: Sequence[Sequence[str]]) -> list[int | None]:
    """The tool set of each list of schema hashes (the schemas stored already), made where new; None for an
    empty list. A fixed handful of statements however many lists."""
    by_hash = {_tool_set_hash(hashes): hashes for hashes in lists if hashes}

    def ids(hashes: list[str]) -> dict[str, int]:  # in chunks: SQLite binds at most 32,766 values a statement
        return {h: pk for start in range(0, len(hashes), CHUNK) for h, pk in conn.execute(
            select(t.ToolSetRow.hash, t.ToolSetRow.id).where(t.ToolSetRow.hash.in_(hashes[start:start + CHUNK])))}

    known = ids(list(by_hash))
    fresh = [h for h in by_hash if h not in known]
    if fresh:
        conn.execute(insert(t.ToolSetRow), [{"hash": h} for h in fresh])
        made = ids(fresh)
        conn.execute(insert(t.ToolSetToolRow), [{"tool_set_id": made[h], "position": n, "schema_hash": digest}
                                                for h in fresh for n, digest in enumerate(by_hash[h])])
        known.update(made)
    return [known[_tool_set_hash(hashes)] if hashes else None for hashes in lists]


def _tool_set_hash(hashes: Sequence[str]) -> str:
    """``tool_sets.hash`` of the schema hashes in order."""
    return hashlib.sha256(" ".join(hashes).encode("ascii")).hexdigest()


def _ensure_tool_schemas(conn: Connection, tools: list[tuple[str, str, str]]) -> None:
    by_hash = {digest: (name, text) for digest, name, text in tools}
    if not by_hash:
        return
    known = set(conn.scalars(select(t.ToolSchemaRow.hash).where(
        t.ToolSchemaRow.hash.in_(list(by_hash)))))
    fresh = [{"hash": h, "name": name, "body": text, "first_seen": now_iso()}
             for h, (name, text) in by_hash.items() if h not in known]
    if fresh:
        conn.execute(insert(t.ToolSchemaRow), fresh)


def _import_gold(conn: Connection, batch: Sequence[Staged], result: ImportResult, skip: bool) -> None:
    existing = {cid: (digest, body) for cid, digest, body in conn.execute(
        select(t.GoldCaseRow.id, t.GoldCaseRow.content_hash, GOLD_BODY)
        .where(t.GoldCaseRow.id.in_([s.id for s in batch]))
    ).all()}
    seen: dict[str, str] = {}
    rows, tag_rows = [], []
    stamp = now_iso()
    for staged in batch:
        stored = existing.get(staged.id)
        prior = seen.get(staged.id) or (stored[0] if stored else None)
        if prior == staged.digest:
            result.gold_unchanged += 1
            continue
        if stored is not None and staged.id not in seen and _but_tools(stored[1]) == _but_tools(
                str(staged.row["body"])):
            # Labeled under other tools: the stored gold stays; schema drift says whether it still fits.
            seen[staged.id] = staged.digest
            result.gold_retooled += 1
            continue
        if prior is not None:
            _reject_or_raise(InvalidRecord(
                f"gold case {staged.id!r} is already in the store with different content",
                source=staged.source, line=staged.line), result, skip)
            continue
        seen[staged.id] = staged.digest
        rows.append({**staged.row, "created_at": stamp, "updated_at": stamp})
        tag_rows += staged.children
    if rows:
        body_ids = conn.scalars(insert(t.GoldBodyRow).returning(t.GoldBodyRow.id, sort_by_parameter_order=True),
                                [{"body": row.pop("body")} for row in rows]).all()
        for row, body_id in zip(rows, body_ids, strict=True):
            row["body_id"] = body_id
        conn.execute(insert(t.GoldCaseRow), rows)
        gold_changed(conn)
        result.gold_added += len(rows)
        result.changed(gold=[row["id"] for row in rows])
    if tag_rows:
        conn.execute(insert(t.GoldCaseTagRow), tag_rows)


def _but_tools(body: str) -> Any:
    record = json.loads(body)
    if isinstance(record, dict):
        record.pop("tools", None)
    return record


# -- transcripts ------------------------------------------------------------------------------


def list_transcripts(db: Database, *, source: str | None = None, search: str | None = None,
                     limit: int = 1000, offset: int = 0) -> list[TranscriptSummary]:
    gold_count = (select(func.count()).select_from(t.GoldCaseRow)
                  .where(t.GoldCaseRow.conversation_id == t.TranscriptRow.external_id)
                  .where(t.GoldCaseRow.kind == "turn")
                  .correlate(t.TranscriptRow).scalar_subquery())
    q = select(
        t.TranscriptRow.external_id, t.TranscriptRow.source, t.TranscriptRow.title,
        t.TranscriptRow.n_messages, t.TranscriptRow.n_turns, t.TranscriptRow.n_tool_calls,
        gold_count, t.TranscriptRow.started_at,
    ).order_by(t.TranscriptRow.id).limit(limit).offset(offset)
    if source:
        q = q.where(t.TranscriptRow.source == source)
    if search:
        like = f"%{search}%"
        q = q.where(t.TranscriptRow.external_id.like(like) | t.TranscriptRow.title.like(like))
    with db.read() as conn:
        return [TranscriptSummary(*row) for row in conn.execute(q)]


def sources(db: Database) -> list[str]:
    with db.read() as conn:
        return list(conn.scalars(select(t.TranscriptRow.source).distinct().order_by(t.TranscriptRow.source)))


def count_transcripts(db: Database) -> int:
    with db.read() as conn:
        return conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0


def get_transcript(db: Database, external_id: str) -> TranscriptDetail:
    with db.read() as conn:
        row = conn.execute(select(t.TranscriptRow, t.TranscriptBodyRow.body)
                           .join(t.TranscriptBodyRow, t.TranscriptBodyRow.id == t.TranscriptRow.body_id)
                           .where(t.TranscriptRow.external_id == external_id)).first()
        if row is None:
            raise StoreError(f"no transcript with id {external_id!r}")
        pk = row.id
        tools = tool_bodies(conn, row.tool_set_id)
        turns = conn.execute(
            select(t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior,
                   t.TurnRow.n_calls)
            .where(t.TurnRow.transcript_id == pk).order_by(t.TurnRow.ordinal)).all()
        gold = conn.execute(
            select(t.GoldCaseRow.turn, t.GoldCaseRow.id)
            .where(t.GoldCaseRow.conversation_id == external_id)
            .order_by(t.GoldCaseRow.id)).all()
    transcript = stored_transcript(external_id, row.body, tools)
    by_turn: dict[int | None, list[str]] = {}
    for turn, case_id in gold:
        by_turn.setdefault(turn, []).append(case_id)
    return TranscriptDetail(
        transcript=transcript, source=row.source,
        turns=tuple(TurnSummary(o, mi, b, n, tuple(by_turn.get(mi, ()))) for o, mi, b, n in turns),
    )

# -- vocabulary and coverage ------------------------------------------------------------------------


def tool_names(db: Database) -> list[str]:
    """Names of every tool offered in some transcript (for filters)."""
    with db.read() as conn:
        return list(conn.scalars(select(t.ToolSchemaRow.name).distinct().order_by(t.ToolSchemaRow.name)))


def coverage(db: Database, *, status: str | None = None) -> Coverage:
    """Turn gold cases by decision kind, by expected tool and by tag, and the adversarial : happy-path
    balance (a case is adversarial when it carries a tag the vocabulary marks adversarial)."""
    cases = select(t.GoldCaseRow.id).where(t.GoldCaseRow.kind == "turn")
    if status:
        cases = cases.where(t.GoldCaseRow.status == status)
    in_cases = t.GoldCaseTagRow.case_id.in_(cases)
    adversarial_tags = select(t.TagRow.tag).where(t.TagRow.adversarial == True)  # noqa: E712
    with db.read() as conn:
        by_behavior = dict(conn.execute(
            select(t.GoldCaseRow.behavior, func.count()).where(t.GoldCaseRow.id.in_(cases))
            .group_by(t.GoldCaseRow.behavior)).all())
        by_tag = dict(conn.execute(select(t.GoldCaseTagRow.tag, func.count()).where(in_cases)
                                   .group_by(t.GoldCaseTagRow.tag)).all())
        happy = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                            .where(in_cases, t.GoldCaseTagRow.tag == "happy_path")) or 0
        adversarial = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                                  .where(in_cases, t.GoldCaseTagRow.tag.in_(adversarial_tags))) or 0
        by_tool: dict[str, int] = {}
        bodies = conn.execution_options(yield_per=2000).execute(
            select(GOLD_BODY).where(t.GoldCaseRow.id.in_(cases), t.GoldCaseRow.behavior == "call"))
        for (body,) in bodies:
            for name in {c["name"] for c in json.loads(body)["expected"]["calls"]}:
                by_tool[name] = by_tool.get(name, 0) + 1
    return Coverage(total=sum(by_behavior.values()), by_behavior=by_behavior,
                    by_tool=dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))),
                    by_tag=dict(sorted(by_tag.items(), key=lambda kv: (-kv[1], kv[0]))),
                    happy_path=happy, adversarial=adversarial)


def stats(db: Database) -> dict[str, int]:
    with db.read() as conn:
        return {
            "transcripts": conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0,
            "turns": conn.scalar(select(func.count()).select_from(t.TurnRow)) or 0,
            "gold_cases": conn.scalar(select(func.count()).select_from(t.GoldCaseRow)) or 0,
            "tool_schemas": conn.scalar(select(func.count()).select_from(t.ToolSchemaRow)) or 0,
        }


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


# -- labeling helpers


__all__ = ["Coverage", "ImportItem", "ImportResult", "PreparedItem", "StageFailed", "StageWriter", "StagedItem",
           "TranscriptDetail", "TranscriptSummary", "TurnSummary",
           "count_transcripts", "coverage", "get_transcript",
           "import_items", "list_transcripts", "observed_calls", "prepare_item", "sources", "stats",
           "tool_names"]
