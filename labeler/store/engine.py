"""The engine: connections, transactions, migrations and what differs between SQLite and PostgreSQL.

One ``Database`` per database URL. It creates the SQLAlchemy engine once and brings the schema to the
newest Alembic revision when it is constructed. Every unit of work is one transaction: ``write()`` or
``read()``. The aggregate modules get a ``Database`` (or the ``Connection`` of a transaction already open)
and never create engines or transactions of their own kind.

SQLite is the default (WAL, ``busy_timeout``, foreign keys on; write transactions take the lock up front
with ``BEGIN IMMEDIATE`` so two writers queue instead of failing half-way). On PostgreSQL, writers that
must not interleave take row locks (``FOR UPDATE``, ``SKIP LOCKED`` for queues), and migrations run under
an advisory lock so several servers starting on one fresh database apply them once.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from sqlalchemy import Connection, Engine, create_engine, event, make_url, select, text
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from labeler.store.base import BUSY_TIMEOUT_MS, CHUNK, StoreError
from labeler.store.tables import Base, iso, parse_iso

if TYPE_CHECKING:  # Alembic is imported only when a database is not at the newest revision (a tenth of a second)
    from alembic.runtime.migration import MigrationContext, MigrationInfo
    from alembic.script import ScriptDirectory
    from sqlalchemy.dialects import postgresql, sqlite

DEFAULT_DB = "data/toolgold.db"
CHECKPOINT_BYTES = 4 << 20
"""WAL bytes past which ``Database.flushing`` checkpoints (about SQLite's own ``wal_autocheckpoint``, 1,000 pages)."""
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
MIGRATION_LOCK = 0x746F6F6C676F6C64  # "toolgold": the PostgreSQL advisory lock key migrations run under
IMPORT_LOCK = MIGRATION_LOCK + 1  # the one imports run under
METADATA = Base.metadata


class DatabaseUnavailable(StoreError):
    """The database cannot be opened or used (missing, not a database, unreachable, locked, read-only, full).

    One line naming the database (password hidden) and why; never the SQL, its parameters or stored content."""


class DatabaseBusy(DatabaseUnavailable):
    """A write could not be done *now*: another writer held the lock past the busy timeout, or the disk
    failed or is full. Nothing was written; the same write can be tried again later (the label page keeps
    the annotator's work on screen, marked unsaved, and retries until it lands)."""


def transient_write_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a database failure that a later retry of the same write can get past."""
    if not isinstance(exc, DBAPIError):
        return False
    reason = str(exc.orig).lower()
    return any(word in reason for word in ("locked", "lock timeout", "disk i/o", "disk is full", "no space left",
                                           "database or disk is full"))


def database_url(value: str | os.PathLike[str] | None = None) -> str:
    """A SQLAlchemy URL from an explicit value, ``TOOLGOLD_DB``, or the default file."""
    raw = str(value) if value is not None else os.environ.get("TOOLGOLD_DB") or DEFAULT_DB
    if "://" in raw:
        return raw
    path = Path(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def shown_url(url: str) -> str:
    """The database as a person named it: the file path, or the URL with its password hidden."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not even a URL: show the scheme only
        return url.split("://", 1)[0] + "://…"


def read_only_message(url: str) -> str:
    return f"the database {shown_url(url)} is read-only: this command needs to write to it"


def describe_database_error(exc: BaseException, url: str, *, opening: bool = False) -> str | None:
    """One line for a database failure, or None when ``exc`` is not one. Only the driver's first line is
    kept (a PostgreSQL error's DETAIL can quote row values), never the statement or its parameters."""
    shown = shown_url(url)
    if isinstance(exc, DatabaseUnavailable):
        return str(exc)
    if isinstance(exc, NoSuchModuleError):
        scheme = url.split("://", 1)[0]
        return (f"cannot open the database {shown}: unknown database type {scheme!r} (use a file path, "
                "sqlite:///FILE or postgresql+psycopg://USER@HOST/DB)")
    if isinstance(exc, ArgumentError):
        return f"cannot open the database {shown}: not a database URL"
    if isinstance(exc, OSError):
        return f"cannot open the database {shown}: {exc.strerror or type(exc).__name__}"
    if not isinstance(exc, DBAPIError):
        return None
    reason = (str(exc.orig).strip().splitlines() or [type(exc.orig).__name__])[0]
    lowered = reason.lower()
    if "locked" in lowered or "lock timeout" in lowered:
        return (f"the database {shown} is locked by another writer (waited {BUSY_TIMEOUT_MS / 1000:g} s); "
                "nothing was written: try again")
    if "readonly" in lowered or "read-only" in lowered:
        return read_only_message(url)
    if "disk is full" in lowered or "no space left" in lowered or ("disk i/o error" in lowered and _disk_full(url)):
        return f"the database {shown}: the disk is full; nothing was written"
    if "disk i/o" in lowered:
        return f"the database {shown}: a disk I/O error; nothing was written: try again"
    if opening:
        path = _sqlite_path(url) if url.startswith("sqlite") else None
        if path is not None and Path(path).is_dir():
            reason = "it is a folder"
        return f"cannot open the database {shown}: {reason[:300]}"
    return f"database error on {shown}: {reason[:300]}"


def _disk_full(url: str) -> bool:
    """Whether the SQLite file's disk has (next to) no room left: SQLite reports a -wal or -shm file it
    cannot create there as a "disk I/O error"."""
    if not url.startswith("sqlite"):
        return False
    try:
        fs = os.statvfs(Path(_sqlite_path(url)).parent)
    except OSError:
        return False
    return fs.f_bavail * fs.f_frsize < 64 * 1024


def _sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite:///")


def _read_only_file(url: str) -> bool:
    """Whether the SQLite file exists and cannot be written (a read-only mount, or no permission)."""
    path = _sqlite_path(url)
    if path.startswith("file:") or path in ("", ":memory:") or not os.path.isfile(path):
        return False
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY) or not os.access(path, os.W_OK)
    except OSError:
        return False


# -- timestamps -------------------------------------------------------------------------------------


def now_iso() -> str:
    return iso(datetime.now(UTC))


# -- migrations -------------------------------------------------------------------------------------


def migration_script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS_DIR))


def head_revision() -> str:
    """The newest revision, as Alembic reads it from ``migrations/versions``."""
    head = migration_script().get_current_head()
    assert head is not None, "labeler/store/migrations/versions has no revision"
    return head


_REVISION_LINE = re.compile(r"^(down_revision|revision)\s*(?::[^=\n]*)?=\s*(.*?)\s*(?:#.*)?$", re.MULTILINE)
_QUOTED = re.compile(r"""^(['"])([^'"]+)\1$""")


@functools.cache
def known_head(directory: Path = MIGRATIONS_DIR) -> str | None:
    """The newest revision without importing Alembic: each revision file's ``revision = "ID"`` and
    ``down_revision = "ID" | None`` lines, when they form one chain with a single head (the head is the
    revision no other one revises). None when they do not (a merge, a tuple, a computed value): then
    Alembic decides (``Database`` runs it whenever this gives no answer)."""
    revisions: dict[str, str | None] = {}
    for path in sorted(directory.glob("versions/*.py")):
        lines = [(m[1], m[2]) for m in _REVISION_LINE.finditer(path.read_text(encoding="utf-8"))]
        found: dict[str, str] = dict(lines)
        if len(lines) != 2 or set(found) != {"revision", "down_revision"}:
            return None
        quoted = _QUOTED.match(found["revision"])
        down = found["down_revision"]
        down_quoted = _QUOTED.match(down)
        if quoted is None or (down != "None" and down_quoted is None) or quoted[2] in revisions:
            return None
        revisions[quoted[2]] = down_quoted[2] if down_quoted else None
    heads = set(revisions) - set(revisions.values())
    roots = [rev for rev, down in revisions.items() if down is None]
    if len(heads) != 1 or len(roots) != 1 or not set(revisions.values()) - {None} <= set(revisions):
        return None
    return heads.pop()


def upgrade(conn: Connection, destination: str = "head") -> list[str]:
    """Apply the Alembic revisions up to ``destination`` inside the caller's transaction; return the
    revisions applied now, oldest first."""
    from alembic.config import Config
    from alembic.runtime.environment import EnvironmentContext

    script = migration_script()
    applied: list[str] = []

    def steps(revision: Any, _context: MigrationContext) -> Any:
        return script._upgrade_revs(destination, revision)

    def note(ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any], run_args: Mapping[str, Any]) -> None:
        applied.extend(step.up_revision_ids)

    with EnvironmentContext(Config(), script, fn=steps, destination_rev=destination) as env:
        env.configure(connection=conn, target_metadata=METADATA, on_version_apply=note)
        with env.begin_transaction():
            env.run_migrations()
    return applied


SQLITE_HEAD = MIGRATIONS_DIR / "sqlite_head.json"
"""What the revisions leave in a new SQLite file, read back (``sqlite_head``): each ``sqlite_master`` entry in
order and each table's rows (the tag vocabulary, ``alembic_version``). A new file is made from it when its last
revision is ``known_head()``, without importing Alembic (0.02 CPU s instead of 0.3). Written by
``write_sqlite_head()``: after adding a revision, run
``python -c 'from labeler.store.engine import write_sqlite_head; write_sqlite_head()'``
(tests/labeler/test_migrations.py fails until it is)."""


def sqlite_head(raw: Any) -> dict[str, Any]:
    """The schema and rows of the SQLite database behind the DB-API connection ``raw`` (``SQLITE_HEAD``'s form)."""
    entries = raw.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").fetchall()
    rows = {}
    for kind, name, _, _ in entries:
        if kind == "table":
            found = raw.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall()
            if found:
                rows[name] = [list(row) for row in found]
    return {"user_version": raw.execute("PRAGMA user_version").fetchone()[0],
            "schema": [list(entry) for entry in entries], "rows": rows}


def _create_from_head(raw: Any) -> list[str] | None:
    """Make the empty SQLite database behind ``raw`` (in the caller's transaction) what the revisions would, from
    ``SQLITE_HEAD``; the revisions it stands for. None, doing nothing, when the file is not empty or the
    snapshot is not of the newest revision (then Alembic runs them)."""
    if raw.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        return None
    try:
        head = json.loads(SQLITE_HEAD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    revisions = head.get("revisions") or []
    if not revisions or revisions[-1] != known_head():
        return None
    for _, name, _, sql in head["schema"]:
        if sql is not None and name != "sqlite_sequence":  # made by SQLite with the first AUTOINCREMENT table
            raw.execute(sql)
    for table, rows in head["rows"].items():
        raw.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(rows[0]))})', rows)
    raw.execute(f"PRAGMA user_version = {int(head['user_version'])}")
    return list(revisions)


def write_sqlite_head() -> Path:
    """Run the revisions on a new SQLite file and write what they leave to ``SQLITE_HEAD``."""
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        engine = create_engine(f"sqlite:///{tmp}/head.db")
        with engine.begin() as conn:
            revisions = upgrade(conn)
        engine.dispose()
        with contextlib.closing(sqlite3.connect(f"{tmp}/head.db")) as raw:
            head = {"revisions": revisions, **sqlite_head(raw)}
    SQLITE_HEAD.write_text(json.dumps(head, indent=1) + "\n", encoding="utf-8")
    return SQLITE_HEAD


def current_revision(conn: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


# -- backend differences ----------------------------------------------------------------------------


def dialect_insert(conn: Connection, table: type[Base]) -> postgresql.Insert | sqlite.Insert:
    """An INSERT with the backend's ON CONFLICT clauses (both SQLite and PostgreSQL have them). Each
    dialect's module is imported by the first statement for it: a SQLite command never loads PostgreSQL's."""
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects import sqlite

        return sqlite.insert(table)
    from sqlalchemy.dialects import postgresql

    return postgresql.insert(table)


def insert_missing(conn: Connection, table: type[Base], rows: Sequence[dict[str, Any]]) -> None:
    """Insert rows whose primary key is not there yet (a concurrent writer's row wins, quietly)."""
    if rows:
        conn.execute(dialect_insert(conn, table).on_conflict_do_nothing(), list(rows))


def one_at_a_time(conn: Connection, key: int) -> None:
    """Make transactions that take ``key`` run one after another. PostgreSQL: an advisory lock held to the
    end of the transaction (a second one waits, then sees what the first committed). SQLite: nothing to do,
    BEGIN IMMEDIATE already serializes writers."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def upsert(conn: Connection, table: type[Base], row: dict[str, Any], *, key: Sequence[str]) -> None:
    """Insert the row, or update the one with the same ``key`` columns (atomic on both backends)."""
    stmt = dialect_insert(conn, table).values(**row)
    conn.execute(stmt.on_conflict_do_update(index_elements=list(key),
                                            set_={k: v for k, v in row.items() if k not in key}))


# -- the database -----------------------------------------------------------------------------------


BEFORE_COMMIT = "toolgold_before_commit"
"""``Connection.info`` key of the statements a write transaction owes at its end (``before_commit``)."""


def before_commit(conn: Connection, name: str, statement: Callable[[Connection], None]) -> None:
    """Run ``statement`` last in ``conn``'s write transaction, once however often it is asked for under ``name``
    (``common.gold_changed``: a row every writer of the gold updates, locked only while the transaction commits)."""
    conn.info.setdefault(BEFORE_COMMIT, {})[name] = statement


@contextmanager
def _finishing(conn: Connection) -> Iterator[None]:
    """Around the body of a write transaction: what it owes (``before_commit``) runs once the body is done, just
    before the commit; a body that raises owes nothing. ``Connection.info`` outlives the transaction (it is the
    pooled connection's), so it is left empty either way."""
    try:
        yield
        owed = conn.info.pop(BEFORE_COMMIT, None)
        for statement in (owed or {}).values():
            statement(conn)
    finally:
        conn.info.pop(BEFORE_COMMIT, None)


_OPENED: weakref.WeakSet[Database] = weakref.WeakSet()
"""Every ``Database`` of this process still referenced (``close_every_database``)."""


def close_every_database() -> None:
    """Close the connections of every ``Database`` this process opened: a command line's last step, so that
    each SQLite file's last connection closes cleanly (its WAL copied in and removed) without waiting for the
    interpreter's final collection to find the engines (``labeler.cli.main``). A ``Database`` used after this
    opens new connections as needed."""
    for database in list(_OPENED):
        database.close()


class Database:
    """The engine and its transactions for one database URL; migrates on construction."""

    def __init__(self, url: str | os.PathLike[str] | None = None) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self.read_only = self.is_sqlite and _read_only_file(self.url)
        try:
            self.engine = self._create_engine()
            _OPENED.add(self)
            self._in_transaction = threading.local()
            if self.read_only:  # nothing can be migrated there: read it if it is current
                self._require_current()
            elif not self.at_head():
                self.migrate()
        except Exception as exc:
            problem = describe_database_error(exc, self.url, opening=True)
            if problem is None:
                raise
            raise DatabaseUnavailable(problem) from None

    def at_head(self) -> bool:
        """Whether the schema is at the newest revision, from one query of ``alembic_version`` against
        ``known_head()``: a database already current opens without importing Alembic. False whenever it
        cannot tell (no such table: an empty or pre-Alembic database; no known head; any error): then
        ``migrate()`` decides with Alembic, as it did for every start before."""
        head = known_head()
        if head is None:
            return False
        try:
            with self.read() as conn:
                stored = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalars().all()
        except DBAPIError:
            return False
        return list(stored) == [head]

    def _require_current(self) -> None:
        if not self.at_head() and self.schema_version() != head_revision():
            raise DatabaseUnavailable(f"the database {shown_url(self.url)} is read-only and needs migrating: "
                                      "open it once where it can be written (toolgold init)")

    def _create_engine(self) -> Engine:
        if not self.is_sqlite:
            # A lock another session holds is waited for as long as SQLite's busy_timeout, then the statement
            # fails ("lock timeout": one line, nothing written) instead of hanging the command for ever.
            return create_engine(self.url, pool_pre_ping=True,
                                 connect_args={"options": f"-c lock_timeout={BUSY_TIMEOUT_MS}"})
        url = self.url
        if self.read_only:
            # immutable: SQLite must not try to create the -wal/-shm files a read-only folder cannot hold.
            url = f"sqlite:///file:{quote(_sqlite_path(self.url))}?mode=ro&immutable=1&uri=true"
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
        )
        read_only = self.read_only

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # Take transaction control from the driver so BEGIN IMMEDIATE below is ours to emit.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            if not read_only:
                cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            immediate = conn.get_execution_options().get("toolgold_write", False)
            if immediate and read_only:
                raise DatabaseUnavailable(read_only_message(self.url))
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (SQLite: the write lock is taken at BEGIN). A lock held past the busy
        timeout or a disk failure raises ``DatabaseBusy`` (one line; nothing was written)."""
        try:
            with self._one_at_a_time(), self.engine.connect().execution_options(toolgold_write=True) as conn, \
                    conn.begin(), _finishing(conn):
                yield conn
        except DBAPIError as exc:
            if not transient_write_error(exc):
                raise
            raise DatabaseBusy(describe_database_error(exc, self.url) or "the database is busy") from None

    def sqlite_file(self) -> Path | None:
        """The SQLite database's file when the URL names a plain file (not ``:memory:``, not a ``file:`` URI)."""
        if not self.is_sqlite:
            return None
        path = _sqlite_path(self.url)
        if path.startswith("file:") or path in ("", ":memory:"):
            return None
        return Path(path)

    @contextmanager
    def write_attached(self, alias: str, path: Path) -> Iterator[Connection]:
        """A write transaction (SQLite) with the database file ``path`` attached as ``alias`` (read from it
        in SQL; SQLite cannot attach inside a transaction, so it is attached first and detached after)."""
        if not alias.isidentifier():
            raise ValueError(f"not a schema name: {alias!r}")
        with self._one_at_a_time(), self.engine.connect().execution_options(toolgold_write=True) as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            raw.execute(f"ATTACH DATABASE ? AS {alias}", (str(path),))
            try:
                with conn.begin(), _finishing(conn):
                    yield conn
            finally:
                raw.execute(f"DETACH DATABASE {alias}")

    @contextmanager
    def flushing(self, every: float = 0.05, *, checkpoints: bool = False) -> Iterator[None]:
        """Around a large write transaction (an import's publish): keep the database file flushed to disk while
        it runs and once more after, from a thread of the writer that made the WAL large, and copy into the file
        what the WAL still holds at the end. SQLite syncs the database file only when a checkpoint reaches the
        end of the WAL: the importer's own checkpoint (run in its COMMIT, after the lock) copies hundreds of MB
        into the file, and when a save commits meanwhile that checkpoint stops short of the end, so the next
        small writer's commit ran the checkpoint that synced them all (a third of a second inside an
        annotator's save: ``bench_import_saves --trace``). Flushed as they are copied, what is left for anyone
        else's sync is what the last ``every`` seconds wrote. Best effort: what was committed stays committed,
        and SQLite syncs at its next full checkpoint anyway. With ``checkpoints``, the thread also checkpoints
        the WAL once it holds more than ``CHECKPOINT_BYTES``: for writers that run none of their own (an
        import's worker processes)."""
        path = self.sqlite_file()
        if path is None or self.read_only:
            yield
            return
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield
            return
        sync = getattr(os, "fdatasync", os.fsync)
        done = threading.Event()
        wal = Path(f"{path}-wal")

        def keep_flushed() -> None:
            # Also the checkpoints of what the import's worker processes write into the store: they do not run
            # their own (``StageWriter``: a worker would wait on its syncs holding the lock the other one needs).
            checkpointer: sqlite3.Connection | None = None
            try:
                while not done.wait(every):
                    with contextlib.suppress(OSError, sqlite3.Error):
                        if checkpoints and wal.stat().st_size > CHECKPOINT_BYTES:
                            if checkpointer is None:
                                checkpointer = sqlite3.connect(path, isolation_level=None,
                                                               timeout=BUSY_TIMEOUT_MS / 1000)
                            checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    with contextlib.suppress(OSError):
                        sync(fd)
            finally:
                if checkpointer is not None:
                    checkpointer.close()

        flusher = threading.Thread(target=keep_flushed, name="toolgold-flush", daemon=True)
        flusher.start()
        try:
            yield
        finally:
            done.set()
            flusher.join()
            with contextlib.suppress(DBAPIError, sqlite3.Error, OSError):
                with self._one_at_a_time(), self.engine.connect() as conn:
                    raw = conn.connection.dbapi_connection
                    assert raw is not None
                    raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()  # outside a transaction
                sync(fd)
            os.close(fd)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._one_at_a_time(), self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def _one_at_a_time(self) -> Iterator[None]:
        """Refuse a transaction opened inside another on the same thread: it would hold two pool connections
        at once, and enough threads doing that at the same moment exhaust the pool and wait on each other."""
        if getattr(self._in_transaction, "open", False):
            raise StoreError("a store transaction was opened inside another on the same thread (it would hold "
                             "two connections at once); pass the open connection down instead")
        self._in_transaction.open = True
        try:
            yield
        finally:
            self._in_transaction.open = False

    def migrate(self) -> list[str]:
        """Bring the schema to the newest revision in one transaction; return the revisions applied now.

        PostgreSQL: the transaction first takes an advisory lock, so a second server starting at the same
        moment waits, then finds the schema current. SQLite: BEGIN IMMEDIATE serializes the same way, and the
        connection runs it with foreign keys off: a revision that rebuilds a table (``batch_alter_table``
        drops the old one) must not cascade that drop into the rows referring to it. The keys are checked
        before the transaction commits, and switched back on after it."""
        if not self.is_sqlite:
            with self.write() as conn:
                one_at_a_time(conn, MIGRATION_LOCK)
                return upgrade(conn)
        with self._one_at_a_time(), self.engine.connect().execution_options(toolgold_write=True) as conn:
            raw = conn.connection.dbapi_connection
            assert raw is not None
            raw.execute("PRAGMA foreign_keys=OFF")  # outside a transaction: SQLite ignores it inside one
            try:
                with conn.begin():
                    applied = _create_from_head(raw)  # a new file: without Alembic
                    if applied is None:
                        applied = upgrade(conn)
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").first() if applied else None
                    if broken is not None:
                        raise StoreError(f"migrating left a row of {broken[0]} pointing at a missing row of "
                                         f"{broken[2]}; nothing was changed")
                return applied
            finally:
                raw.execute("PRAGMA foreign_keys=ON")

    def schema_version(self) -> str:
        """The Alembic revision the database is at."""
        with self.read() as conn:
            return current_revision(conn) or ""

    def close(self) -> None:
        self.engine.dispose()

    # -- inspection -------------------------------------------------------------------------------

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted: tests compare dumps to prove nothing changed."""
        out = {}
        with self.read() as conn:
            for table in sorted(METADATA.sorted_tables, key=lambda x: x.name):
                rows = conn.execute(select(table)).all()
                out[table.name] = sorted((tuple(r) for r in rows), key=repr)
        return out



__all__ = ["BUSY_TIMEOUT_MS", "CHUNK", "DEFAULT_DB", "Database", "DatabaseBusy", "DatabaseUnavailable", "StoreError",
           "current_revision", "database_url", "describe_database_error", "dialect_insert", "head_revision",
           "insert_missing", "iso", "known_head", "now_iso", "one_at_a_time", "parse_iso", "read_only_message", "shown_url",
           "transient_write_error", "upgrade", "upsert"]
