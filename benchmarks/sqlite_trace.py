"""Diagnostics for SQLite waits, for the benchmarks only (never imported by toolgold itself).

``trace_engine(engine, log)`` times, on every connection of a SQLAlchemy SQLite engine: each statement
(``BEGIN IMMEDIATE`` included: the time a writer waited for the lock), each commit, and the WAL hook SQLite runs
right after a commit. The hook replaces SQLite's own auto-checkpoint hook with one that does the same thing
(a PASSIVE checkpoint once the WAL holds ``wal_autocheckpoint`` frames, 1,000 by default) and records how long
that checkpoint took and how many frames it copied, so a commit's own time and the checkpoint run inside it
can be told apart. Times are ``time.monotonic()``: one clock for every process on the machine.
"""

from __future__ import annotations

import ctypes
import sqlite3
import time
from collections.abc import Callable
from typing import Any

_LIB = ctypes.CDLL("libsqlite3.so.0")  # the library Python's _sqlite3 is linked against (one copy per process)
_HOOK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int)
_LIB.sqlite3_wal_hook.argtypes = [ctypes.c_void_p, _HOOK, ctypes.c_void_p]
_LIB.sqlite3_wal_hook.restype = ctypes.c_void_p
_LIB.sqlite3_wal_checkpoint_v2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
_KEEP: list[Any] = []  # the ctypes callbacks must outlive the connections


def sqlite_handle(conn: sqlite3.Connection) -> int:
    """The ``sqlite3 *`` of a Python sqlite3 connection (CPython 3.11+: the first field after the object head)."""
    return ctypes.c_void_p.from_address(id(conn) + 2 * ctypes.sizeof(ctypes.c_void_p)).value or 0


Log = Callable[..., None]


def install_wal_hook(conn: sqlite3.Connection, log: Log, autocheckpoint: int = 1000) -> None:
    """Replace the connection's auto-checkpoint hook by a timed one doing the same (PASSIVE checkpoint at
    ``autocheckpoint`` frames); ``log("wal_hook", ...)`` after each commit."""

    def hook(_arg: Any, db: int, schema: bytes, frames: int) -> int:
        started, cpu = time.monotonic(), time.process_time()
        if autocheckpoint <= 0 or frames < autocheckpoint:
            log("wal_hook", at=started, cpu=cpu, frames=frames, checkpoint_s=0.0)
            return 0
        n_log, n_ckpt = ctypes.c_int(-1), ctypes.c_int(-1)
        rc = _LIB.sqlite3_wal_checkpoint_v2(db, schema, 0, ctypes.byref(n_log), ctypes.byref(n_ckpt))
        log("wal_hook", at=started, cpu=cpu, frames=frames, checkpoint_s=time.monotonic() - started, rc=rc,
            wal_frames=n_log.value, copied=n_ckpt.value, schema=schema.decode())
        return 0

    callback = _HOOK(hook)
    _KEEP.append(callback)
    _LIB.sqlite3_wal_hook(sqlite_handle(conn), callback, None)


def trace_engine(engine: Any, log: Log, *, hook: bool = True) -> None:
    """Time statements, commits and (``hook``) the post-commit WAL hook of every connection ``engine`` opens."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: sqlite3.Connection, _record: Any) -> None:
        if hook:
            (autocheckpoint,) = dbapi_conn.execute("PRAGMA wal_autocheckpoint").fetchone()
            install_wal_hook(dbapi_conn, log, autocheckpoint)

    @event.listens_for(engine, "before_cursor_execute")
    def _before(conn: Any, _cursor: Any, statement: str, *_a: Any) -> None:
        conn.info["toolgold_trace_t"] = time.monotonic()

    @event.listens_for(engine, "after_cursor_execute")
    def _after(conn: Any, _cursor: Any, statement: str, *_a: Any) -> None:
        started = conn.info.pop("toolgold_trace_t", None)
        if started is not None:
            log("sql", at=started, cpu=time.process_time(), s=time.monotonic() - started, sql=" ".join(statement.split())[:60])

    @event.listens_for(engine, "commit")
    def _commit(conn: Any) -> None:
        log("commit_start", at=time.monotonic(), cpu=time.process_time())
