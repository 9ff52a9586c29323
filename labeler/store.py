"""The store: the only module that talks SQL.

One ``Store`` per database: it creates the engine once, applies outstanding migrations when it is
constructed, and runs every action in its own transaction. What goes in and comes out are domain types
from ``scorer.model`` or the small read models below; table rows never leave this module.

SQLite is the default (WAL, ``busy_timeout``, foreign keys on; write transactions take the lock up
front with ``BEGIN IMMEDIATE`` so two writers queue instead of failing half-way).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, event, func, insert, select
from sqlmodel import SQLModel, create_engine

from labeler import tables as t
from scorer import canonical
from scorer.errors import InvalidRecord, ToolgoldError
from scorer.formats import dumps_record, to_json
from scorer.model import GoldCase, Message, ToolSpec, Transcript

DEFAULT_DB = "data/toolgold.db"
BUSY_TIMEOUT_MS = 10_000
CHUNK = 500


class StoreError(ToolgoldError):
    """A store action could not be done (the message says why)."""


def database_url(value: str | os.PathLike[str] | None = None) -> str:
    """A SQLAlchemy URL from an explicit value, ``TOOLGOLD_DB``, or the default file."""
    raw = str(value) if value is not None else os.environ.get("TOOLGOLD_DB") or DEFAULT_DB
    if "://" in raw:
        return raw
    path = Path(raw)
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------------------------------
# Read models and results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportItem:
    """One converted record with where it came from, so the store can name the line on a conflict."""

    record: Transcript | GoldCase
    source: str
    line: int | None = None


@dataclass
class ImportResult:
    transcripts_added: int = 0
    transcripts_unchanged: int = 0
    gold_added: int = 0
    gold_unchanged: int = 0
    turns_added: int = 0
    rejects: list[InvalidRecord] = field(default_factory=list)

    @property
    def summary(self) -> str:
        parts = [
            f"{self.transcripts_added} transcripts added ({self.turns_added} decision points)",
            f"{self.gold_added} gold cases added",
        ]
        same = self.transcripts_unchanged + self.gold_unchanged
        if same:
            parts.append(f"{same} already present")
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


# --------------------------------------------------------------------------------------------------
# Migrations: a tiny ordered registry; each runs once, in its own transaction, recorded by version.
# --------------------------------------------------------------------------------------------------

INITIAL_TABLES = [
    t.TranscriptRow, t.ToolSchemaRow, t.TranscriptToolRow, t.TurnRow, t.GoldCaseRow, t.GoldCaseTagRow,
    t.AuditRow,
]


def _m001_initial(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn, tables=[m.__table__ for m in INITIAL_TABLES])  # type: ignore[attr-defined]


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial tables", _m001_initial),
]


# --------------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------------


class Store:
    """All persistence for toolgold. Construct once per process (the app caches it)."""

    def __init__(self, url: str | os.PathLike[str] | None = None) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self.engine = self._create_engine()
        self.migrate()

    # -- engine and transactions ------------------------------------------------------------------

    def _create_engine(self) -> Engine:
        if not self.is_sqlite:
            return create_engine(self.url, pool_pre_ping=True)
        engine = create_engine(
            self.url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
        )

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            # Take transaction control from the driver so BEGIN IMMEDIATE below is ours to emit.
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Connection) -> None:
            immediate = conn.get_execution_options().get("toolgold_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (SQLite: the write lock is taken at BEGIN)."""
        with self.engine.connect().execution_options(toolgold_write=True) as conn, conn.begin():
            yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    def migrate(self) -> list[int]:
        """Apply outstanding migrations; return the versions applied now."""
        with self.write() as conn:
            SQLModel.metadata.create_all(conn, tables=[t.MigrationRow.__table__])  # type: ignore[attr-defined]
            done = set(conn.scalars(select(t.MigrationRow.version)))
        applied = []
        for version, name, step in MIGRATIONS:
            if version in done:
                continue
            with self.write() as conn:
                step(conn)
                conn.execute(insert(t.MigrationRow).values(version=version, name=name, applied_at=now_iso()))
            applied.append(version)
        return applied

    def schema_version(self) -> int:
        with self.read() as conn:
            return conn.scalar(select(func.max(t.MigrationRow.version))) or 0

    def close(self) -> None:
        self.engine.dispose()

    # -- audit ------------------------------------------------------------------------------------

    @staticmethod
    def _audit(conn: Connection, *, actor: str, action: str, entity: str, entity_id: str,
               before: Any = None, after: Any = None, note: str | None = None) -> None:
        conn.execute(insert(t.AuditRow).values(
            at=now_iso(), actor=actor, action=action, entity=entity, entity_id=entity_id,
            before=None if before is None else canonical.dumps(before),
            after=None if after is None else canonical.dumps(after),
            note=note,
        ))

    def audit_events(self, entity_id: str | None = None) -> list[dict[str, Any]]:
        q = select(t.AuditRow).order_by(t.AuditRow.id)  # type: ignore[arg-type]
        if entity_id is not None:
            q = q.where(t.AuditRow.entity_id == entity_id)
        with self.read() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    # -- import -----------------------------------------------------------------------------------

    def import_items(self, items: Iterable[ImportItem], *, actor: str = "import",
                     skip_invalid: bool = False) -> ImportResult:
        """Add transcripts and gold cases in one transaction; content already present is left alone.

        An id that exists with different content is a conflict: the whole import is refused (nothing
        written) and the error names the file and line, unless ``skip_invalid`` sets it aside as a reject.
        """
        result = ImportResult()
        items = list(items)
        with self.write() as conn:
            transcripts = [i for i in items if isinstance(i.record, Transcript)]
            gold = [i for i in items if isinstance(i.record, GoldCase)]
            for start in range(0, len(transcripts), CHUNK):
                self._import_transcripts(conn, transcripts[start:start + CHUNK], result, skip_invalid)
            for start in range(0, len(gold), CHUNK):
                self._import_gold(conn, gold[start:start + CHUNK], result, skip_invalid)
            if result.transcripts_added or result.gold_added:
                self._audit(conn, actor=actor, action="import", entity="batch", entity_id=now_iso(),
                            after={"transcripts": result.transcripts_added, "gold_cases": result.gold_added,
                                   "sources": sorted({i.source for i in items})})
        return result

    def _reject_or_raise(self, err: InvalidRecord, result: ImportResult, skip: bool) -> None:
        if not skip:
            raise err
        result.rejects.append(err)

    def _import_transcripts(self, conn: Connection, batch: Sequence[ImportItem], result: ImportResult,
                            skip: bool) -> None:
        prepared = []
        for item in batch:
            tr = item.record
            assert isinstance(tr, Transcript)
            body = to_json(tr)
            tools = body.pop("tools")
            prepared.append((item, tr, canonical.dumps(body), tools, canonical.content_hash(to_json(tr))))
        ids = [p[1].id for p in prepared]
        existing = dict(conn.execute(
            select(t.TranscriptRow.external_id, t.TranscriptRow.content_hash)
            .where(t.TranscriptRow.external_id.in_(ids))  # type: ignore[attr-defined]
        ).all())
        seen_in_batch: dict[str, str] = {}
        rows, tool_links, new = [], [], []
        for item, tr, body, tools, digest in prepared:
            prior = existing.get(tr.id) or seen_in_batch.get(tr.id)
            if prior == digest:
                result.transcripts_unchanged += 1
                continue
            if prior is not None:
                self._reject_or_raise(InvalidRecord(
                    f"transcript {tr.id!r} is already in the store with different content "
                    "(give it a new id to keep both)", source=item.source, line=item.line), result, skip)
                continue
            seen_in_batch[tr.id] = digest
            new.append((tr, tools))
            rows.append({
                "external_id": tr.id, "source": _source_of(tr, item.source), "content_hash": digest,
                "title": _title(tr), "body": body, "n_messages": len(tr.messages),
                "n_turns": len(tr.decision_points()),
                "n_tool_calls": sum(len(m.tool_calls) for m in tr.messages),
                "started_at": _started_at(tr), "imported_at": now_iso(),
            })
        if not rows:
            return
        id_of = {ext: pk for pk, ext in conn.execute(
            insert(t.TranscriptRow).returning(t.TranscriptRow.id, t.TranscriptRow.external_id),  # type: ignore[arg-type]
            rows)}
        self._ensure_tool_schemas(conn, [tool for _, tools in new for tool in tools])
        turn_rows = []
        for tr, tools in new:
            pk = id_of[tr.id]
            tool_links += [{"transcript_id": pk, "position": i, "schema_hash": canonical.content_hash(tool)}
                           for i, tool in enumerate(tools)]
            turn_rows += _turn_rows(pk, tr)
        if tool_links:
            conn.execute(insert(t.TranscriptToolRow), tool_links)
        if turn_rows:
            conn.execute(insert(t.TurnRow), turn_rows)
        result.transcripts_added += len(rows)
        result.turns_added += len(turn_rows)

    def _ensure_tool_schemas(self, conn: Connection, tools: list[dict[str, Any]]) -> None:
        by_hash = {canonical.content_hash(tool): tool for tool in tools}
        if not by_hash:
            return
        known = set(conn.scalars(select(t.ToolSchemaRow.hash).where(
            t.ToolSchemaRow.hash.in_(list(by_hash)))))  # type: ignore[attr-defined]
        fresh = [{"hash": h, "name": tool["name"], "body": canonical.dumps(tool), "first_seen": now_iso()}
                 for h, tool in by_hash.items() if h not in known]
        if fresh:
            conn.execute(insert(t.ToolSchemaRow), fresh)

    def _import_gold(self, conn: Connection, batch: Sequence[ImportItem], result: ImportResult,
                     skip: bool) -> None:
        ids = [i.record.id for i in batch]
        existing = dict(conn.execute(
            select(t.GoldCaseRow.id, t.GoldCaseRow.content_hash)
            .where(t.GoldCaseRow.id.in_(ids))  # type: ignore[attr-defined]
        ).all())
        seen: dict[str, str] = {}
        rows, tag_rows = [], []
        stamp = now_iso()
        for item in batch:
            case = item.record
            assert isinstance(case, GoldCase)
            body = dumps_record(case)
            digest = canonical.content_hash(to_json(case))
            prior = existing.get(case.id) or seen.get(case.id)
            if prior == digest:
                result.gold_unchanged += 1
                continue
            if prior is not None:
                self._reject_or_raise(InvalidRecord(
                    f"gold case {case.id!r} is already in the store with different content",
                    source=item.source, line=item.line), result, skip)
                continue
            seen[case.id] = digest
            rows.append({
                "id": case.id, "conversation_id": case.conversation_id, "turn": case.turn,
                "split": case.split, "kind": case.kind, "status": case.provenance.status,
                "behavior": case.expected.behavior, "tags": canonical.dumps(list(case.tags)),
                "source": case.provenance.source or item.source, "body": body, "content_hash": digest,
                "created_at": stamp, "updated_at": stamp,
            })
            tag_rows += [{"case_id": case.id, "tag": tag} for tag in dict.fromkeys(case.tags)]
        if rows:
            conn.execute(insert(t.GoldCaseRow), rows)
            result.gold_added += len(rows)
        if tag_rows:
            conn.execute(insert(t.GoldCaseTagRow), tag_rows)

    # -- transcripts ------------------------------------------------------------------------------

    def list_transcripts(self, *, source: str | None = None, search: str | None = None,
                         limit: int = 1000, offset: int = 0) -> list[TranscriptSummary]:
        gold_count = (select(func.count()).select_from(t.GoldCaseRow)
                      .where(t.GoldCaseRow.conversation_id == t.TranscriptRow.external_id)
                      .where(t.GoldCaseRow.kind == "turn")
                      .correlate(t.TranscriptRow).scalar_subquery())
        q = select(
            t.TranscriptRow.external_id, t.TranscriptRow.source, t.TranscriptRow.title,
            t.TranscriptRow.n_messages, t.TranscriptRow.n_turns, t.TranscriptRow.n_tool_calls,
            gold_count, t.TranscriptRow.started_at,
        ).order_by(t.TranscriptRow.id).limit(limit).offset(offset)  # type: ignore[arg-type]
        if source:
            q = q.where(t.TranscriptRow.source == source)
        if search:
            like = f"%{search}%"
            q = q.where(t.TranscriptRow.external_id.like(like) | t.TranscriptRow.title.like(like))  # type: ignore[attr-defined]
        with self.read() as conn:
            return [TranscriptSummary(*row) for row in conn.execute(q)]

    def sources(self) -> list[str]:
        with self.read() as conn:
            return list(conn.scalars(select(t.TranscriptRow.source).distinct().order_by(t.TranscriptRow.source)))

    def count_transcripts(self) -> int:
        with self.read() as conn:
            return conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0

    def get_transcript(self, external_id: str) -> TranscriptDetail:
        with self.read() as conn:
            row = conn.execute(select(t.TranscriptRow).where(t.TranscriptRow.external_id == external_id)).first()
            if row is None:
                raise StoreError(f"no transcript with id {external_id!r}")
            pk = row.id
            tools = [ToolSpec.model_validate_json(b) for b in conn.scalars(
                select(t.ToolSchemaRow.body)
                .join(t.TranscriptToolRow, t.TranscriptToolRow.schema_hash == t.ToolSchemaRow.hash)  # type: ignore[arg-type]
                .where(t.TranscriptToolRow.transcript_id == pk)
                .order_by(t.TranscriptToolRow.position))]  # type: ignore[arg-type]
            turns = conn.execute(
                select(t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior,
                       t.TurnRow.n_calls)
                .where(t.TurnRow.transcript_id == pk).order_by(t.TurnRow.ordinal)).all()  # type: ignore[arg-type]
            gold = conn.execute(
                select(t.GoldCaseRow.turn, t.GoldCaseRow.id)
                .where(t.GoldCaseRow.conversation_id == external_id)
                .order_by(t.GoldCaseRow.id)).all()  # type: ignore[arg-type]
        body = json.loads(row.body)
        transcript = Transcript.model_validate({**body, "tools": [to_json(x) for x in tools]})
        by_turn: dict[int | None, list[str]] = {}
        for turn, case_id in gold:
            by_turn.setdefault(turn, []).append(case_id)
        return TranscriptDetail(
            transcript=transcript, source=row.source,
            turns=tuple(TurnSummary(o, mi, b, n, tuple(by_turn.get(mi, ()))) for o, mi, b, n in turns),
        )

    # -- gold cases -------------------------------------------------------------------------------

    def _gold_query(self, split: str | None, status: str | None, tag: str | None) -> Any:
        q = select(t.GoldCaseRow.body).order_by(t.GoldCaseRow.id)  # type: ignore[arg-type]
        if split:
            q = q.where(t.GoldCaseRow.split == split)
        if status:
            q = q.where(t.GoldCaseRow.status == status)
        if tag:
            q = q.where(t.GoldCaseRow.id.in_(  # type: ignore[attr-defined]
                select(t.GoldCaseTagRow.case_id).where(t.GoldCaseTagRow.tag == tag)))
        return q

    def count_gold(self, *, split: str | None = None, status: str | None = None, tag: str | None = None) -> int:
        q = self._gold_query(split, status, tag)
        with self.read() as conn:
            return conn.scalar(select(func.count()).select_from(q.subquery())) or 0

    def iter_gold_lines(self, *, split: str | None = None, status: str | None = None,
                        tag: str | None = None, batch: int = 2000) -> Iterator[str]:
        """Canonical JSON lines of the gold cases, ordered by id, streamed (memory stays flat)."""
        q = self._gold_query(split, status, tag)
        with self.engine.connect() as conn:
            result = conn.execution_options(stream_results=True, yield_per=batch).execute(q)
            for (body,) in result:
                yield body

    def get_gold(self, case_id: str) -> GoldCase:
        with self.read() as conn:
            body = conn.scalar(select(t.GoldCaseRow.body).where(t.GoldCaseRow.id == case_id))
        if body is None:
            raise StoreError(f"no gold case with id {case_id!r}")
        return GoldCase.model_validate_json(body)

    # -- inspection -------------------------------------------------------------------------------

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table, sorted: tests compare dumps to prove nothing changed."""
        out = {}
        with self.read() as conn:
            for table in sorted(SQLModel.metadata.sorted_tables, key=lambda x: x.name):
                if table.name == "toolgold_migrations":
                    continue
                try:
                    rows = conn.execute(select(table)).all()
                except Exception:  # a table from a later migration this DB does not have yet
                    continue
                out[table.name] = sorted((tuple(r) for r in rows), key=repr)
        return out

    def stats(self) -> dict[str, int]:
        with self.read() as conn:
            return {
                "transcripts": conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0,
                "turns": conn.scalar(select(func.count()).select_from(t.TurnRow)) or 0,
                "gold_cases": conn.scalar(select(func.count()).select_from(t.GoldCaseRow)) or 0,
                "tool_schemas": conn.scalar(select(func.count()).select_from(t.ToolSchemaRow)) or 0,
            }


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def _source_of(tr: Transcript, fallback: str) -> str:
    src = tr.metadata.get("source")
    return str(src) if src else Path(fallback).name


def _title(tr: Transcript) -> str:
    for m in tr.messages:
        if m.role == "user" and m.content:
            text = " ".join(m.content.split())
            return text[:120] + ("…" if len(text) > 120 else "")
    return ""


def _started_at(tr: Transcript) -> str | None:
    for key in ("timestamp", "started_at", "created_at"):
        value = tr.metadata.get(key)
        if value:
            return str(value)
    return None


def observed_calls(message: Message | None) -> list[dict[str, Any]]:
    """The agent's calls at a decision point, with arguments parsed where they are JSON objects."""
    if message is None:
        return []
    return [{"name": c.function.name, "arguments": c.parsed_arguments()} for c in message.tool_calls]


def _turn_rows(pk: int, tr: Transcript) -> list[dict[str, Any]]:
    rows = []
    for ordinal, index in enumerate(tr.decision_points()):
        message = tr.messages[index] if index < len(tr.messages) else None
        calls = observed_calls(message)
        behavior = "open" if message is None else ("call" if calls else "text")
        rows.append({"transcript_id": pk, "ordinal": ordinal, "message_index": index,
                     "observed": canonical.dumps(calls), "observed_behavior": behavior, "n_calls": len(calls)})
    return rows


__all__ = [
    "DEFAULT_DB",
    "ImportItem",
    "ImportResult",
    "Store",
    "StoreError",
    "TranscriptDetail",
    "TranscriptSummary",
    "TurnSummary",
    "database_url",
    "observed_calls",
]
