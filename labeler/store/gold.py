"""The live gold set as read: counting it, the export's permission check and audit event, its canonical lines
streamed in id order (``toolgold export``), one case or all of them as domain types.

Its own aggregate so an export loads only this, the engine and the tables: no importer, no pydantic until a
case is asked for as a ``GoldCase``. The live gold is written by ``common.put_gold`` (labels, review, drift)
and by ``transcripts.import_items``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import Connection, LargeBinary, and_, case, cast, func, literal, select, type_coerce
from sqlalchemy.types import NullType

from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, REVIEWER_ROLES, PermissionDenied, audit, gold_state, require_role
from labeler.store.engine import Database, StoreError, now_iso

if TYPE_CHECKING:
    from scorer.hygiene_problems import HygieneProblem
    from scorer.model import GoldCase


def _gold_filter(q: Any, split: str | None, status: str | None, tag: str | None) -> Any:
    if split:
        q = q.where(t.GoldCaseRow.split == split)
    if status:
        q = q.where(t.GoldCaseRow.status == status)
    if tag:
        q = q.where(t.GoldCaseRow.id.in_(
            select(t.GoldCaseTagRow.case_id).where(t.GoldCaseTagRow.tag == tag)))
    return q


def _gold_query(split: str | None, status: str | None, tag: str | None, body: Any = None) -> Any:
    """The bodies of the selection (``gold_bodies``, revision 0005), in id order; ``body``: what of the body."""
    q = (select(t.GoldBodyRow.body if body is None else body)
         .join_from(t.GoldCaseRow, t.GoldBodyRow, t.GoldBodyRow.id == t.GoldCaseRow.body_id).order_by(t.GoldCaseRow.id))
    return _gold_filter(q, split, status, tag)


def _gold_counts(conn: Connection, split: str | None, status: str | None, tag: str | None) -> tuple[int, int]:
    """How many cases the selection holds, and how many of them are approved regression cases (the held-out
    set): one pass over the (split, status) index, never over the bodies."""
    held_out = func.coalesce(func.sum(case((and_(t.GoldCaseRow.split == "regression",
                                                 t.GoldCaseRow.status == "approved"), 1), else_=0)), 0)
    total, held = conn.execute(_gold_filter(select(func.count(), held_out).select_from(t.GoldCaseRow),
                                            split, status, tag)).one()
    return int(total), int(held)


def count_gold(db: Database, *, split: str | None = None, status: str | None = None, tag: str | None = None) -> int:
    with db.read() as conn:
        return _gold_counts(conn, split, status, tag)[0]


def authorize_gold_export(db: Database, *, split: str | None = None, status: str | None = None,
                          tag: str | None = None, actor: str | None, target: str, record: bool = True) -> int:
    """Check that ``actor`` may export this selection, record the export (unless ``record`` is false: the
    caller records it once the file is written), and return its size.

    Approved regression cases are the held-out set: only a reviewer or admin exports them, and each such
    export is an audit event (as exporting a frozen version is). Other selections need no user."""
    # A read-only database (a snapshot on a read-only volume) can still be exported by someone with the
    # right role; it cannot take the audit event, and whoever has the file can read it anyway.
    with (db.read() if db.read_only or not record else db.write()) as conn:
        total, held_out = _gold_counts(conn, split, status, tag)
        if held_out:
            if not actor:
                raise PermissionDenied(f"the selection holds {held_out} approved regression cases (the held-out "
                                       "set): exporting them needs --user NAME (a reviewer or admin), or "
                                       "TOOLGOLD_USER")
            require_role(conn, actor, REVIEWER_ROLES, "export approved regression cases")
            if record and not db.read_only:
                audit(conn, actor=actor, action="gold.export", entity="gold", entity_id=split or "all",
                      after={"split": split, "status": status, "tag": tag, "cases": total, "held_out": held_out,
                             "target": target})
    return total


def iter_gold_lines(db: Database, *, split: str | None = None, status: str | None = None,
                    tag: str | None = None, batch: int = 2000) -> Iterator[str]:
    """Canonical JSON lines of the gold cases, ordered by id, streamed (memory stays flat)."""
    q = _gold_query(split, status, tag)
    with db.engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch).execute(q)
        for (body,) in result:
            yield body


EXPORT_BLOCK_BYTES = 1 << 20
"""About how many bytes of lines ``iter_gold_blocks`` joins into one block (a few hundred cases)."""


def iter_gold_blocks(db: Database, *, split: str | None = None, status: str | None = None,
                     tag: str | None = None, rows: int = 500) -> Iterator[tuple[int, bytes]]:
    """The lines of ``iter_gold_lines`` as UTF-8 bytes, each ending in ``\n``, joined into blocks of about
    ``EXPORT_BLOCK_BYTES``: ``(cases in the block, its bytes)``. One read transaction (one snapshot), memory
    flat. The database hands over the stored UTF-8 as it is (no text decoded and encoded again): SQLite's
    ``CAST(body AS BLOB)`` when the file's text encoding is UTF-8 (else the text, encoded here),
    PostgreSQL's ``convert_to(body, 'UTF8')``. Byte for byte the lines of ``iter_gold_lines``."""
    with db.read() as conn:
        yield from _gold_blocks(conn, split, status, tag, rows)


def _gold_blocks(conn: Connection, split: str | None, status: str | None, tag: str | None, rows: int,
                 ) -> Iterator[tuple[int, bytes]]:
    if conn.dialect.name == "postgresql":
        column: Any = type_coerce(func.convert_to(t.GoldBodyRow.body, literal("UTF8")), NullType())
    elif conn.dialect.name == "sqlite" and conn.exec_driver_sql("PRAGMA encoding").scalar() == "UTF-8":
        column = type_coerce(cast(t.GoldBodyRow.body, LargeBinary), NullType())
    else:
        column = None
    q = _gold_query(split, status, tag, column)
    result = conn.execution_options(stream_results=True, yield_per=rows).execute(q).scalars()
    block: list[bytes] = []
    size = 0
    for body in result:
        block.append(body if isinstance(body, bytes) else
                     bytes(body) if isinstance(body, memoryview) else body.encode("utf-8"))
        size += len(block[-1])
        if size >= EXPORT_BLOCK_BYTES:
            block.append(b"")
            yield len(block) - 1, b"\n".join(block)
            block, size = [], 0
    if block:
        block.append(b"")
        yield len(block) - 1, b"\n".join(block)


def get_gold(db: Database, case_id: str) -> GoldCase:
    from scorer.model import GoldCase

    with db.read() as conn:
        body = conn.scalar(select(GOLD_BODY).where(t.GoldCaseRow.id == case_id))
    if body is None:
        raise StoreError(f"no gold case with id {case_id!r}")
    return GoldCase.model_validate_json(body)


def iter_gold_cases(db: Database, *, split: str | None = None, status: str | None = None) -> Iterator[GoldCase]:
    """The live gold cases, ordered by id, as domain types: read a block at a time in one read transaction
    (``iter_gold_blocks``), through the import's reader (``formats.fast_record``: cases that offer the same
    tools share them), so memory stays flat however many there are."""
    with db.read() as conn:
        yield from _cases_of(_gold_blocks(conn, split, status, None, 500))


def _cases_of(blocks: Iterator[tuple[int, bytes]]) -> Iterator[GoldCase]:
    from scorer.formats import fast_record
    from scorer.model import GoldCase

    for _, block in blocks:
        for raw in block.split(b"\n")[:-1]:
            fast = fast_record(2, raw)  # (not line 1: a stored body never starts with a byte-order mark)
            yield fast if isinstance(fast, GoldCase) else GoldCase.model_validate_json(raw)


def gold_cases(db: Database, *, split: str | None = None, status: str | None = None) -> list[GoldCase]:
    """The live gold cases, ordered by id."""
    return list(iter_gold_cases(db, split=split, status=status))


class GoldHygiene(NamedTuple):
    problems: list[HygieneProblem]
    cases: int
    """How many gold cases were checked."""


class KeptHygiene(NamedTuple):
    """The last lint of a selection in this process (``gold_hygiene``), and where the gold has gone since."""

    hygiene: GoldHygiene
    state: tuple[int, str]
    """The gold set's ``(revision, token)`` the lint read (``common.gold_state``)."""
    current: tuple[int, str] | None
    """The gold set's ``(revision, token)`` now."""
    seconds: float
    """What the lint took."""
    checked_at: str

    @property
    def fresh(self) -> bool:
        return self.state == self.current

    @property
    def changes(self) -> int | None:
        """Writes to the gold since the lint (None when the count is not comparable: the store was replaced)."""
        if self.current is None or self.current[0] < self.state[0]:
            return None
        return self.current[0] - self.state[0]

    @property
    def recheck_on_view(self) -> bool:
        """Whether a view should lint again now: the gold moved and the lint is quick (``recheck_on_view_seconds``).
        A slow one (a large gold set: ~73 s at 1,000,000 cases) waits for the reviewer to ask, the kept problems
        shown meanwhile."""
        return not self.fresh and self.seconds <= recheck_on_view_seconds()


HYGIENE_RECHECK_ON_VIEW_SECONDS = 3.0
RECHECK_ENV = "TOOLGOLD_HYGIENE_RECHECK_SECONDS"


def recheck_on_view_seconds() -> float:
    """How long a lint may have taken for a view of gold that moved on to lint again by itself:
    ``TOOLGOLD_HYGIENE_RECHECK_SECONDS`` (0: always wait for the reviewer), else 3 s."""
    raw = os.environ.get(RECHECK_ENV, "").strip()
    if not raw:
        return HYGIENE_RECHECK_ON_VIEW_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise StoreError(f"{RECHECK_ENV} must be a number of seconds, 0 or more; it is {raw!r}")
    return value


_HYGIENE_LOCK = threading.Lock()
_HYGIENE: dict[tuple[str, str | None, str | None], tuple[tuple[int, str], GoldHygiene, float, str]] = {}
"""The last lint of each selection in this process (by database URL, split and status), with the gold set's
``(revision, token)`` it was read at (``common.gold_state``), what it took and when."""
HYGIENE_KEPT = 16
"""Selections kept (a page offers 3 splits × 3 statuses); the oldest goes first."""
HYGIENE_KEPT_PROBLEMS = 150_000
"""Problems kept over all selections (~2 KB each: ~300 MB), the oldest selection going first; the newest is kept
whatever its size (a store of 1,000,000 cases: ~140,000 problems, the selection whose lint takes 73 s)."""


def gold_revision(db: Database) -> int | None:
    """How many times the live gold set has changed since revision 0007 (None without its row)."""
    with db.read() as conn:
        state = gold_state(conn)
    return None if state is None else state[0]


def gold_hygiene(db: Database, *, split: str | None = None, status: str | None = None) -> GoldHygiene:
    """``scorer.hygiene.lint`` of the live gold cases of ``split`` and ``status``, read as checked (memory flat:
    the cases are not kept). The result is kept with the gold set's revision and given again, without reading a
    case, while no write to the gold has moved it: the Gold hygiene page asks on every view and every click."""
    from scorer.hygiene import lint

    key = (db.url, split or None, status or None)
    with db.read() as conn:
        state = gold_state(conn)  # read before the cases: a write after it makes the next call lint again
        kept = _HYGIENE.get(key)
        if kept is not None and state is not None and kept[0] == state:
            return GoldHygiene(list(kept[1].problems), kept[1].cases)
        started = time.perf_counter()
        count = [0]

        def counted() -> Iterator[GoldCase]:
            for gold in _cases_of(_gold_blocks(conn, split, status, None, 500)):
                count[0] += 1
                yield gold

        found = GoldHygiene(lint(counted()), count[0])
    if state is not None:
        took = time.perf_counter() - started
        with _HYGIENE_LOCK:  # the app's sessions run on threads of one process
            newer = _HYGIENE.get(key)
            if newer is not None and newer[0][0] > state[0]:  # another session kept a later lint meanwhile
                return GoldHygiene(list(found.problems), found.cases)
            _HYGIENE.pop(key, None)
            while _HYGIENE and (len(_HYGIENE) >= HYGIENE_KEPT or len(found.problems) + sum(
                    len(other[1].problems) for other in _HYGIENE.values()) > HYGIENE_KEPT_PROBLEMS):
                del _HYGIENE[next(iter(_HYGIENE))]
            _HYGIENE[key] = (state, found, took, now_iso())
    return GoldHygiene(list(found.problems), found.cases)


def kept_gold_hygiene(db: Database, *, split: str | None = None, status: str | None = None) -> KeptHygiene | None:
    """The last lint of ``split`` and ``status`` in this process, fresh or not, without linting; None if none."""
    kept = _HYGIENE.get((db.url, split or None, status or None))
    if kept is None:
        return None
    with db.read() as conn:
        current = gold_state(conn)
    state, found, seconds, checked_at = kept
    return KeptHygiene(GoldHygiene(list(found.problems), found.cases), state, current, seconds, checked_at)


def forget_hygiene() -> None:
    """Drop every kept lint (tests; a process that rewrote the database behind the store's back)."""
    with _HYGIENE_LOCK:
        _HYGIENE.clear()


__all__ = ["EXPORT_BLOCK_BYTES", "HYGIENE_KEPT", "HYGIENE_KEPT_PROBLEMS", "HYGIENE_RECHECK_ON_VIEW_SECONDS", "RECHECK_ENV",
           "GoldHygiene", "KeptHygiene", "authorize_gold_export", "count_gold", "forget_hygiene", "get_gold",
           "gold_cases", "gold_hygiene", "gold_revision", "iter_gold_blocks", "iter_gold_cases", "iter_gold_lines",
           "kept_gold_hygiene", "recheck_on_view_seconds"]
