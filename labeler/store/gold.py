"""The live gold set as read: counting it, the export's permission check and audit event, its canonical lines
streamed in id order (``toolgold export``), one case or all of them as domain types.

Its own aggregate so an export loads only this, the engine and the tables: no importer, no pydantic until a
case is asked for as a ``GoldCase``. The live gold is written by ``common.put_gold`` (labels, review, drift)
and by ``transcripts.import_items``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, LargeBinary, and_, case, cast, func, literal, select, type_coerce
from sqlalchemy.types import NullType

from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, REVIEWER_ROLES, PermissionDenied, audit, gold_state, require_role
from labeler.store.engine import Database, StoreError

if TYPE_CHECKING:
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
        yield from gold_cases_in(conn, split, status)


def gold_cases_in(conn: Connection, split: str | None, status: str | None) -> Iterator[GoldCase]:
    """``iter_gold_cases`` inside the caller's read transaction (the hygiene lint reads the gold's state and its
    cases in one snapshot)."""
    return _cases_of(_gold_blocks(conn, split, status, None, 500))


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


def gold_revision(db: Database) -> int | None:
    """How many times the live gold set has changed since revision 0007 (None without its row)."""
    with db.read() as conn:
        state = gold_state(conn)
    return None if state is None else state[0]


__all__ = ["EXPORT_BLOCK_BYTES", "authorize_gold_export", "count_gold", "get_gold", "gold_cases", "gold_cases_in",
           "gold_revision", "iter_gold_blocks", "iter_gold_cases", "iter_gold_lines"]
