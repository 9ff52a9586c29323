"""The store: the only module that talks SQL.

One ``Store`` per database: it creates the engine once, applies outstanding migrations when it is
constructed, and runs every action in its own transaction. What goes in and comes out are domain types
from ``scorer.model`` or the small read models below; table rows never leave this module.

SQLite is the default (WAL, ``busy_timeout``, foreign keys on; write transactions take the lock up
front with ``BEGIN IMMEDIATE`` so two writers queue instead of failing half-way).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, case, delete, event, exists, func, insert, select, update
from sqlmodel import SQLModel, create_engine

from labeler import tables as t
from labeler.labels import (
    LabelBody,
    TrajectoryBody,
    gold_case,
    gold_case_id,
    trajectory_case,
    trajectory_case_id,
)
from labeler.store_judge import JudgeStore, migrate_judge
from labeler.store_review import ReviewStore, migrate_review
from labeler.store_runs import RunsStore, migrate_run_history
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


# -- labeling read models ---------------------------------------------------------------------------

ROLES = ("annotator", "reviewer", "admin")
LEASE_SECONDS = 30 * 60


@dataclass(frozen=True)
class User:
    name: str
    role: str
    active: bool = True


@dataclass(frozen=True)
class LabelRecord:
    """One annotator's label of one decision point, as stored."""

    transcript_id: str
    message_index: int
    annotator: str
    status: str  # draft | submitted
    body: LabelBody
    version: int
    updated_at: str
    submitted_at: str | None = None

    @property
    def key(self) -> str:
        return label_key(self.transcript_id, self.message_index, self.annotator)


@dataclass(frozen=True)
class TrajectoryRecord:
    """One annotator's label of a whole transcript, as stored."""

    transcript_id: str
    annotator: str
    status: str  # draft | submitted
    body: TrajectoryBody
    version: int
    updated_at: str
    submitted_at: str | None = None

    @property
    def key(self) -> str:
        return f"{self.transcript_id}#trajectory@{self.annotator}"


@dataclass(frozen=True)
class Lease:
    transcript_id: str
    holder: str
    expires_at: str


@dataclass(frozen=True)
class TurnState:
    """A decision point with what the agent did and where labeling stands (for one annotator)."""

    ordinal: int
    message_index: int
    observed_behavior: str
    observed: list[dict[str, Any]]
    label_status: str | None  # this annotator's label: None, draft or submitted
    has_gold: bool

    @property
    def done(self) -> bool:
        return self.label_status == "submitted" or self.has_gold


@dataclass(frozen=True)
class QueueFilter:
    """Which transcripts an annotator wants to work on. ``status``: unlabeled (some turn has no gold yet),
    draft / submitted (the annotator has a label in that state)."""

    source: str | None = None
    tag: str | None = None
    tool: str | None = None
    status: str | None = None
    search: str | None = None


@dataclass(frozen=True)
class QueueItem:
    transcript_id: str
    source: str
    title: str
    n_turns: int
    n_done: int  # turns with a gold case or this annotator's submitted label
    n_drafts: int
    leased_by: str | None


@dataclass(frozen=True)
class AnnotatorTotals:
    annotator: str
    drafts: int
    submitted: int
    unsure: int


@dataclass(frozen=True)
class Tag:
    tag: str
    adversarial: bool
    description: str = ""


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


class ConflictError(StoreError):
    """A label save started from an older version than the stored one: refused, nothing overwritten.

    ``mine`` is the body that was being saved, ``theirs`` the stored label that is newer.
    """

    def __init__(self, mine: LabelBody | TrajectoryBody, theirs: LabelRecord | TrajectoryRecord,
                 based_on: int) -> None:
        self.mine = mine
        self.theirs = theirs
        self.based_on = based_on
        super().__init__(
            f"{theirs.key} was changed elsewhere: the stored version {theirs.version} ({theirs.status}, saved "
            f"{theirs.updated_at}) is newer than version {based_on} this change started from; nothing was "
            "overwritten")


class PermissionDenied(StoreError):
    """The acting user's role does not allow this action."""


def label_key(transcript_id: str, message_index: int, annotator: str) -> str:
    """How audit events name a label: ``<transcript>#t<message index>@<annotator>``."""
    return f"{transcript_id}#t{message_index}@{annotator}"


# --------------------------------------------------------------------------------------------------
# Migrations: a tiny ordered registry; each runs once, in its own transaction, recorded by version.
# --------------------------------------------------------------------------------------------------

INITIAL_TABLES = [
    t.TranscriptRow, t.ToolSchemaRow, t.TranscriptToolRow, t.TurnRow, t.GoldCaseRow, t.GoldCaseTagRow,
    t.AuditRow,
]


def _m001_initial(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn, tables=[m.__table__ for m in INITIAL_TABLES])  # type: ignore[attr-defined]


LABELING_TABLES = [t.UserRow, t.LabelRow, t.LeaseRow, t.TagRow]

DEFAULT_TAGS = [
    ("happy_path", False, "A clear request: the obvious tool with values stated in the conversation."),
    ("near_duplicate_tools", True, "Several offered tools look right; only one is."),
    ("underspecified", True, "A needed value is vague or missing: asking the user may be right."),
    ("missing_info", True, "The information the call needs is nowhere in the context."),
    ("tool_shaped_language", True, "Words that sound like a tool (\"cancel\", \"book\") where no call is wanted."),
    ("ordered_multi_step", True, "Calls must come in order; a later one needs an earlier result."),
    ("stale_context", True, "A value stated earlier was superseded later in the conversation."),
    ("relative_date", True, "Dates such as \"next Friday\" that resolve against the reference time."),
    ("parallel_calls", True, "Several independent calls belong in the same turn."),
    ("policy_refusal", True, "The policy forbids what the user asks; the right move is to decline or transfer."),
    ("distractor_values", True, "Plausible but wrong values sit in the context."),
]


def _m002_labeling(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn, tables=[m.__table__ for m in LABELING_TABLES])  # type: ignore[attr-defined]
    conn.execute(insert(t.TagRow), [{"tag": tag, "adversarial": adv, "description": text}
                                    for tag, adv, text in DEFAULT_TAGS])


def _m004_trajectory_labels(conn: Connection) -> None:
    SQLModel.metadata.create_all(conn, tables=[t.TrajectoryLabelRow.__table__])  # type: ignore[attr-defined]


MIGRATIONS: list[tuple[int, str, Callable[[Connection], None]]] = [
    (1, "initial tables", _m001_initial),
    (2, "labeling: users, labels, leases, tag vocabulary", _m002_labeling),
    (3, "review and gold versions: versions, review queue, settings, re-labeling queue", migrate_review),
    (4, "trajectory labels", _m004_trajectory_labels),
    (5, "judge verdicts and queue: verdict cache, where questions came from, adjudications", migrate_judge),
    (6, "run history: saved runs, their numbers and per-case outcomes", migrate_run_history),
]


# --------------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------------


class Store(ReviewStore, RunsStore, JudgeStore):
    """All persistence for toolgold. Construct once per process (the app caches it)."""

    def __init__(self, url: str | os.PathLike[str] | None = None) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        self.engine = self._create_engine()
        self._tool_memo: dict[str, tuple[str, str, str]] = {}
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
            tools = [self._tool_canonical(tool) for tool in body.pop("tools")]
            text = canonical.dumps(body)
            # The content hash covers the body and the tools' hashes, so nothing is serialized twice.
            digest = hashlib.sha256("\n".join([text, *(h for h, _, _ in tools)]).encode("utf-8")).hexdigest()
            prepared.append((item, tr, text, tools, digest))
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
            tool_links += [{"transcript_id": pk, "position": i, "schema_hash": digest}
                           for i, (digest, _, _) in enumerate(tools)]
            turn_rows += _turn_rows(pk, tr)
        if tool_links:
            conn.execute(insert(t.TranscriptToolRow), tool_links)
        if turn_rows:
            conn.execute(insert(t.TurnRow), turn_rows)
        result.transcripts_added += len(rows)
        result.turns_added += len(turn_rows)

    def _tool_canonical(self, tool: dict[str, Any]) -> tuple[str, str, str]:
        """(hash, name, canonical JSON) of a tool schema, memoized: the same tools recur in every transcript."""
        key = json.dumps(tool)
        hit = self._tool_memo.get(key)
        if hit is None:
            text = canonical.dumps(tool)
            hit = (hashlib.sha256(text.encode("utf-8")).hexdigest(), str(tool["name"]), text)
            if len(self._tool_memo) < 10_000:
                self._tool_memo[key] = hit
        return hit

    def _ensure_tool_schemas(self, conn: Connection, tools: list[tuple[str, str, str]]) -> None:
        by_hash = {digest: (name, text) for digest, name, text in tools}
        if not by_hash:
            return
        known = set(conn.scalars(select(t.ToolSchemaRow.hash).where(
            t.ToolSchemaRow.hash.in_(list(by_hash)))))  # type: ignore[attr-defined]
        fresh = [{"hash": h, "name": name, "body": text, "first_seen": now_iso()}
                 for h, (name, text) in by_hash.items() if h not in known]
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

    # -- labeling: users, labels, leases, tags, coverage ----------------------------------------------
    # A label is one row per (decision point, annotator). Every save names the version the editor started
    # from and is refused with ConflictError when the stored one is newer (optimistic concurrency); every
    # change writes an audit event with the state before and after. Submitting materializes the turn's
    # gold case, so `toolgold export` carries it.

    def add_user(self, name: str, role: str = "annotator", *, actor: str | None = None) -> User:
        """Add a user. The first user may add themselves; after that only an admin adds users."""
        name = name.strip()
        if not name:
            raise StoreError("a user needs a name")
        _check_role(role)
        with self.write() as conn:
            if conn.scalar(select(func.count()).select_from(t.UserRow)):
                _require_admin(conn, actor, "add users")
            if conn.scalar(select(t.UserRow.name).where(t.UserRow.name == name)) is not None:
                raise StoreError(f"there is already a user named {name!r}")
            conn.execute(insert(t.UserRow).values(name=name, role=role, active=True, created_at=now_iso()))
            self._audit(conn, actor=actor or name, action="user.add", entity="user", entity_id=name,
                        after={"role": role, "active": True})
        return User(name, role)

    def set_user(self, name: str, *, role: str | None = None, active: bool | None = None, actor: str) -> User:
        """Change a user's role or active flag (admins only; an admin cannot demote or disable themselves)."""
        if role is not None:
            _check_role(role)
        with self.write() as conn:
            _require_admin(conn, actor, "change users")
            row = conn.execute(select(t.UserRow).where(t.UserRow.name == name)).first()
            if row is None:
                raise StoreError(f"no user named {name!r}")
            if name == actor and (role not in (None, "admin") or active is False):
                raise PermissionDenied("an admin cannot demote or disable themselves (ask another admin)")
            after = {"role": role or row.role, "active": row.active if active is None else active}
            conn.execute(update(t.UserRow).where(t.UserRow.name == name).values(**after))
            self._audit(conn, actor=actor, action="user.change", entity="user", entity_id=name,
                        before={"role": row.role, "active": row.active}, after=after)
        return User(name, after["role"], after["active"])

    def users(self, *, include_inactive: bool = False) -> list[User]:
        q = select(t.UserRow.name, t.UserRow.role, t.UserRow.active).order_by(t.UserRow.name)
        if not include_inactive:
            q = q.where(t.UserRow.active == True)  # noqa: E712 (SQL expression)
        with self.read() as conn:
            return [User(*row) for row in conn.execute(q)]

    def get_user(self, name: str) -> User | None:
        with self.read() as conn:
            row = conn.execute(select(t.UserRow.name, t.UserRow.role, t.UserRow.active)
                               .where(t.UserRow.name == name)).first()
        return User(*row) if row else None

    def _turn_keys(self, conn: Connection, transcript_id: str, message_index: int, *,
                   lock: bool = False) -> tuple[int, int]:
        """The turn's and its transcript's keys. ``lock`` takes the turn row for the transaction, so saves
        of one turn queue up on PostgreSQL (SQLite's BEGIN IMMEDIATE already serializes writers)."""
        q = (select(t.TurnRow.id, t.TurnRow.transcript_id)
             .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)  # type: ignore[arg-type]
             .where(t.TranscriptRow.external_id == transcript_id, t.TurnRow.message_index == message_index))
        row = conn.execute(q.with_for_update(of=t.TurnRow) if lock else q).first()
        if row is None:
            raise StoreError(f"transcript {transcript_id!r} has no decision point at message {message_index}")
        return row[0], row[1]

    @staticmethod
    def _label_row(conn: Connection, turn_pk: int, annotator: str) -> Any:
        return conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn_pk,
                                                     t.LabelRow.annotator == annotator)).first()

    @staticmethod
    def _label_record(transcript_id: str, message_index: int, row: Any) -> LabelRecord:
        return LabelRecord(transcript_id, message_index, row.annotator, row.status,
                           LabelBody.model_validate_json(row.body), row.version, row.updated_at, row.submitted_at)

    def get_label(self, transcript_id: str, message_index: int, annotator: str) -> LabelRecord | None:
        with self.read() as conn:
            turn_pk, _ = self._turn_keys(conn, transcript_id, message_index)
            row = self._label_row(conn, turn_pk, annotator)
        return self._label_record(transcript_id, message_index, row) if row else None

    def labels_for_turn(self, transcript_id: str, message_index: int) -> list[LabelRecord]:
        """Every annotator's label of one decision point, oldest first."""
        with self.read() as conn:
            turn_pk, _ = self._turn_keys(conn, transcript_id, message_index)
            rows = conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn_pk)
                                .order_by(t.LabelRow.id)).all()  # type: ignore[arg-type]
        return [self._label_record(transcript_id, message_index, r) for r in rows]

    def _check_version(self, row: Any, body: LabelBody, version: int, transcript_id: str,
                       message_index: int) -> int:
        current = row.version if row is not None else 0
        if current != version:
            if row is None:
                raise StoreError(f"{transcript_id!r} message {message_index}: there is no saved label "
                                 f"(version {version} was expected); reload the page")
            raise ConflictError(body, self._label_record(transcript_id, message_index, row), version)
        return current

    @contextmanager
    def _auditing_refusals(self, annotator: str, entity: str) -> Iterator[None]:
        """A refused (stale) save is recorded too, after its own transaction rolled back: who tried, from
        which version, with what."""
        try:
            yield
        except ConflictError as exc:
            with self.write() as conn:
                self._audit(conn, actor=annotator, action=f"{entity.split('_')[0]}.conflict", entity=entity,
                            entity_id=exc.theirs.key,
                            before={"status": exc.theirs.status, "version": exc.theirs.version,
                                    "body": exc.theirs.body.to_json()},
                            after={"based_on": exc.based_on, "body": exc.mine.to_json()},
                            note="refused: a newer version is stored")
            raise

    def save_label(self, transcript_id: str, message_index: int, annotator: str, body: LabelBody, *,
                   version: int) -> LabelRecord:
        """Save a draft. ``version`` is the version the edit started from (0 for a new label); a newer
        stored version raises ``ConflictError``. Saving a submitted label reopens it as a draft."""
        with self._auditing_refusals(annotator, "label"), self.write() as conn:
            _require_user(conn, annotator)
            turn_pk, tr_pk = self._turn_keys(conn, transcript_id, message_index, lock=True)
            row = self._label_row(conn, turn_pk, annotator)
            current = self._check_version(row, body, version, transcript_id, message_index)
            text = body.canonical()
            if row is not None and row.body == text:
                return self._label_record(transcript_id, message_index, row)  # nothing changed
            stamp = now_iso()
            values = {"status": "draft", "decision": body.decision, "unsure": body.unsure, "body": text,
                      "version": current + 1, "updated_at": stamp, "submitted_at": None}
            self._write_label(conn, row, turn_pk, tr_pk, annotator, values, stamp)
            self._audit(conn, actor=annotator, action="label.save", entity="label",
                        entity_id=label_key(transcript_id, message_index, annotator),
                        before=_label_state(row), after={"status": "draft", "version": current + 1,
                                                         "body": body.to_json()})
            self._renew_lease(conn, tr_pk, annotator)
            if row is not None and row.status == "submitted":
                transcript, source = self._load_transcript(conn, transcript_id)
                self._materialize_gold(conn, transcript, source, message_index, turn_pk, annotator)
            return LabelRecord(transcript_id, message_index, annotator, "draft", body, current + 1, stamp)

    def submit_label(self, transcript_id: str, message_index: int, annotator: str, body: LabelBody, *,
                     version: int) -> LabelRecord:
        """Save ``body`` as submitted and materialize the turn's gold case. Raises ``LabelIncomplete`` (and
        writes nothing) when the label cannot be a gold case yet, ``ConflictError`` like ``save_label``."""
        with self._auditing_refusals(annotator, "label"), self.write() as conn:
            _require_user(conn, annotator)
            turn_pk, tr_pk = self._turn_keys(conn, transcript_id, message_index, lock=True)
            row = self._label_row(conn, turn_pk, annotator)
            current = self._check_version(row, body, version, transcript_id, message_index)
            text = body.canonical()
            if row is not None and row.body == text and row.status == "submitted":
                return self._label_record(transcript_id, message_index, row)
            transcript, source = self._load_transcript(conn, transcript_id)
            stamp = now_iso()
            gold_case(body, transcript=transcript, message_index=message_index, annotators=(annotator,),
                      labeled_at=_parse_iso(stamp), source=source)  # raises LabelIncomplete
            values = {"status": "submitted", "decision": body.decision, "unsure": body.unsure, "body": text,
                      "version": current + 1, "updated_at": stamp, "submitted_at": stamp}
            self._write_label(conn, row, turn_pk, tr_pk, annotator, values, stamp)
            self._audit(conn, actor=annotator, action="label.submit", entity="label",
                        entity_id=label_key(transcript_id, message_index, annotator),
                        before=_label_state(row), after={"status": "submitted", "version": current + 1,
                                                         "body": body.to_json()})
            self._renew_lease(conn, tr_pk, annotator)
            self._materialize_gold(conn, transcript, source, message_index, turn_pk, annotator)
            return LabelRecord(transcript_id, message_index, annotator, "submitted", body, current + 1, stamp,
                               stamp)

    @staticmethod
    def _write_label(conn: Connection, row: Any, turn_pk: int, tr_pk: int, annotator: str,
                     values: dict[str, Any], stamp: str) -> None:
        if row is None:
            conn.execute(insert(t.LabelRow).values(turn_id=turn_pk, transcript_id=tr_pk, annotator=annotator,
                                                   created_at=stamp, **values))
        else:
            conn.execute(update(t.LabelRow).where(t.LabelRow.id == row.id).values(**values))

    def _load_transcript(self, conn: Connection, external_id: str) -> tuple[Transcript, str]:
        row = conn.execute(select(t.TranscriptRow.id, t.TranscriptRow.body, t.TranscriptRow.source)
                           .where(t.TranscriptRow.external_id == external_id)).first()
        if row is None:
            raise StoreError(f"no transcript with id {external_id!r}")
        tools = [json.loads(b) for b in conn.scalars(
            select(t.ToolSchemaRow.body)
            .join(t.TranscriptToolRow, t.TranscriptToolRow.schema_hash == t.ToolSchemaRow.hash)  # type: ignore[arg-type]
            .where(t.TranscriptToolRow.transcript_id == row.id)
            .order_by(t.TranscriptToolRow.position))]  # type: ignore[arg-type]
        return Transcript.model_validate({**json.loads(row.body), "tools": tools}), row.source

    def _materialize_gold(self, conn: Connection, transcript: Transcript, source: str, message_index: int,
                          turn_pk: int, actor: str) -> None:
        """Make the turn's gold case agree with its submitted labels.

        The first submitter's label is the case; annotators whose labels say the same are listed with them
        (a disagreeing label stays in the labels table for review). With no submitted label left the case
        is withdrawn. A case a reviewer already approved or rejected is left alone.
        """
        case_id = gold_case_id(transcript.id, message_index)
        existing = conn.execute(select(t.GoldCaseRow.status, t.GoldCaseRow.body)
                                .where(t.GoldCaseRow.id == case_id)).first()
        if existing is not None and existing.status != "submitted":
            return
        rows = conn.execute(
            select(t.LabelRow.annotator, t.LabelRow.body, t.LabelRow.submitted_at)
            .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
            .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all()  # type: ignore[arg-type]
        if not rows:
            if existing is not None:
                self._withdraw_label_gold(conn, case_id, existing, actor)
            return
        bodies = {r.annotator: (LabelBody.model_validate_json(r.body), r.submitted_at) for r in rows}
        first = json.loads(existing.body)["provenance"]["annotators"] if existing is not None else []
        primary = first[0] if first and first[0] in bodies else rows[0].annotator

        def case_of(annotator: str) -> GoldCase:
            body, at = bodies[annotator]
            return gold_case(body, transcript=transcript, message_index=message_index, annotators=(annotator,),
                             labeled_at=_parse_iso(at), source=source)

        def essence(case: GoldCase) -> str:
            return canonical.dumps({k: v for k, v in to_json(case).items() if k != "provenance"})

        case = case_of(primary)
        agreeing = tuple(a for a in bodies if a != primary and essence(case_of(a)) == essence(case))
        self._put_label_gold(conn, case, (primary, *agreeing), existing, source, actor)

    def _put_label_gold(self, conn: Connection, case: GoldCase, annotators: tuple[str, ...], existing: Any,
                        source: str, actor: str) -> None:
        """Insert or update a gold case made from labels (with these annotators), and its tags."""
        case_id = case.id
        case = case.model_copy(update={"provenance": case.provenance.model_copy(
            update={"annotators": annotators})})
        body = dumps_record(case)
        if existing is not None and existing.body == body:
            return
        stamp = now_iso()
        values = {"conversation_id": case.conversation_id, "turn": case.turn, "split": case.split,
                  "kind": case.kind, "status": "submitted", "behavior": case.expected.behavior,
                  "tags": canonical.dumps(list(case.tags)), "source": source, "body": body,
                  "content_hash": canonical.content_hash(to_json(case)), "updated_at": stamp}
        if existing is None:
            conn.execute(insert(t.GoldCaseRow).values(id=case_id, created_at=stamp, **values))
        else:
            conn.execute(update(t.GoldCaseRow).where(t.GoldCaseRow.id == case_id).values(**values))
            conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == case_id))
        if case.tags:
            conn.execute(insert(t.GoldCaseTagRow), [{"case_id": case_id, "tag": tag} for tag in case.tags])
        summary = {"annotators": list(case.provenance.annotators), "expected": to_json(case)["expected"],
                   "tags": list(case.tags)}
        self._audit(conn, actor=actor, action="gold.materialize", entity="gold_case", entity_id=case_id,
                    before=None if existing is None else {"content_hash": canonical.content_hash(
                        json.loads(existing.body))}, after=summary)

    def _withdraw_label_gold(self, conn: Connection, case_id: str, existing: Any, actor: str) -> None:
        conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == case_id))
        conn.execute(delete(t.GoldCaseRow).where(t.GoldCaseRow.id == case_id))
        self._audit(conn, actor=actor, action="gold.withdraw", entity="gold_case", entity_id=case_id,
                    before={"status": existing.status}, note="its only submitted label was reopened")

    # -- trajectory labels: one per (transcript, annotator), same versioning and audit as turn labels

    def _transcript_pk(self, conn: Connection, transcript_id: str, *, lock: bool = False) -> int:
        q = select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id)
        pk = conn.scalar(q.with_for_update() if lock else q)
        if pk is None:
            raise StoreError(f"no transcript with id {transcript_id!r}")
        return int(pk)

    @staticmethod
    def _trajectory_row(conn: Connection, pk: int, annotator: str) -> Any:
        return conn.execute(select(t.TrajectoryLabelRow).where(t.TrajectoryLabelRow.transcript_id == pk,
                                                               t.TrajectoryLabelRow.annotator == annotator)).first()

    @staticmethod
    def _trajectory_record(transcript_id: str, row: Any) -> TrajectoryRecord:
        return TrajectoryRecord(transcript_id, row.annotator, row.status, TrajectoryBody.model_validate_json(row.body),
                                row.version, row.updated_at, row.submitted_at)

    def get_trajectory_label(self, transcript_id: str, annotator: str) -> TrajectoryRecord | None:
        with self.read() as conn:
            row = self._trajectory_row(conn, self._transcript_pk(conn, transcript_id), annotator)
        return self._trajectory_record(transcript_id, row) if row else None

    def save_trajectory_label(self, transcript_id: str, annotator: str, body: TrajectoryBody, *,
                              version: int, submit: bool = False) -> TrajectoryRecord:
        """Save (or with ``submit``, submit) a trajectory label; the same rules as ``save_label`` and
        ``submit_label``: a stale ``version`` raises ``ConflictError``, an incomplete submit ``LabelIncomplete``."""
        with self._auditing_refusals(annotator, "trajectory_label"), self.write() as conn:
            _require_user(conn, annotator)
            pk = self._transcript_pk(conn, transcript_id, lock=True)
            row = self._trajectory_row(conn, pk, annotator)
            current = row.version if row is not None else 0
            if current != version:
                if row is None:
                    raise StoreError(f"{transcript_id!r}: there is no saved trajectory label; reload the page")
                raise ConflictError(body, self._trajectory_record(transcript_id, row), version)
            text = body.canonical()
            status = "submitted" if submit else "draft"
            if row is not None and row.body == text and (row.status == status or not submit):
                return self._trajectory_record(transcript_id, row)
            stamp = now_iso()
            transcript, source = self._load_transcript(conn, transcript_id)
            if submit:
                trajectory_case(body, transcript=transcript, annotators=(annotator,), labeled_at=_parse_iso(stamp),
                                source=source)  # raises LabelIncomplete
            values = {"status": status, "body": text, "version": current + 1, "updated_at": stamp,
                      "submitted_at": stamp if submit else None}
            if row is None:
                conn.execute(insert(t.TrajectoryLabelRow).values(transcript_id=pk, annotator=annotator,
                                                                 created_at=stamp, **values))
            else:
                conn.execute(update(t.TrajectoryLabelRow).where(t.TrajectoryLabelRow.id == row.id).values(**values))
            self._audit(conn, actor=annotator, action="trajectory.submit" if submit else "trajectory.save",
                        entity="trajectory_label", entity_id=f"{transcript_id}#trajectory@{annotator}",
                        before=_label_state(row), after={"status": status, "version": current + 1,
                                                         "body": body.to_json()})
            self._renew_lease(conn, pk, annotator)
            if submit or (row is not None and row.status == "submitted"):
                self._materialize_trajectory(conn, transcript, source, pk, annotator)
            return TrajectoryRecord(transcript_id, annotator, status, body, current + 1, stamp,
                                    stamp if submit else None)

    def _materialize_trajectory(self, conn: Connection, transcript: Transcript, source: str, pk: int,
                                actor: str) -> None:
        """The transcript's trajectory gold case from its submitted trajectory labels (as for turns)."""
        case_id = trajectory_case_id(transcript.id)
        existing = conn.execute(select(t.GoldCaseRow.status, t.GoldCaseRow.body)
                                .where(t.GoldCaseRow.id == case_id)).first()
        if existing is not None and existing.status != "submitted":
            return
        rows = conn.execute(
            select(t.TrajectoryLabelRow.annotator, t.TrajectoryLabelRow.body, t.TrajectoryLabelRow.submitted_at)
            .where(t.TrajectoryLabelRow.transcript_id == pk, t.TrajectoryLabelRow.status == "submitted")
            .order_by(t.TrajectoryLabelRow.submitted_at, t.TrajectoryLabelRow.annotator)).all()  # type: ignore[arg-type]
        if not rows:
            if existing is not None:
                self._withdraw_label_gold(conn, case_id, existing, actor)
            return
        cases = {r.annotator: trajectory_case(TrajectoryBody.model_validate_json(r.body), transcript=transcript,
                                              annotators=(r.annotator,), labeled_at=_parse_iso(r.submitted_at),
                                              source=source) for r in rows}
        first = json.loads(existing.body)["provenance"]["annotators"] if existing is not None else []
        primary = first[0] if first and first[0] in cases else rows[0].annotator

        def essence(case: GoldCase) -> str:
            return canonical.dumps({k: v for k, v in to_json(case).items() if k != "provenance"})

        agreeing = tuple(a for a in cases if a != primary and essence(cases[a]) == essence(cases[primary]))
        self._put_label_gold(conn, cases[primary], (primary, *agreeing), existing, source, actor)

    def turn_states(self, transcript_id: str, annotator: str | None = None) -> list[TurnState]:
        """The transcript's decision points in order, with the agent's calls and where labeling stands."""
        with self.read() as conn:
            pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id))
            if pk is None:
                raise StoreError(f"no transcript with id {transcript_id!r}")
            turns = conn.execute(
                select(t.TurnRow.id, t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior,
                       t.TurnRow.observed)
                .where(t.TurnRow.transcript_id == pk).order_by(t.TurnRow.ordinal)).all()  # type: ignore[arg-type]
            mine = dict(conn.execute(
                select(t.LabelRow.turn_id, t.LabelRow.status)
                .where(t.LabelRow.transcript_id == pk, t.LabelRow.annotator == annotator)).all()) if annotator else {}
            gold_turns = set(conn.scalars(select(t.GoldCaseRow.turn).where(
                t.GoldCaseRow.conversation_id == transcript_id, t.GoldCaseRow.kind == "turn")))
            gold_turns -= self._overlap_pending_turns(conn, pk, annotator)  # overlap: still needs this label
        return [TurnState(o, mi, b, json.loads(obs), mine.get(tid), mi in gold_turns)
                for tid, o, mi, b, obs in turns]

    # -- queue and leases

    def _queue_query(self, annotator: str, f: QueueFilter) -> Any:
        tr = t.TranscriptRow
        q = select(tr.id, tr.external_id, tr.source, tr.title, tr.n_turns).order_by(tr.id)  # type: ignore[arg-type]
        if f.source:
            q = q.where(tr.source == f.source)
        if f.search:
            like = f"%{f.search}%"
            q = q.where(tr.external_id.like(like) | tr.title.like(like))  # type: ignore[attr-defined]
        if f.tool:
            q = q.where(tr.id.in_(  # type: ignore[union-attr]
                select(t.TranscriptToolRow.transcript_id)
                .join(t.ToolSchemaRow, t.ToolSchemaRow.hash == t.TranscriptToolRow.schema_hash)  # type: ignore[arg-type]
                .where(t.ToolSchemaRow.name == f.tool)))
        if f.tag:
            q = q.where(tr.external_id.in_(  # type: ignore[attr-defined]
                select(t.GoldCaseRow.conversation_id)
                .join(t.GoldCaseTagRow, t.GoldCaseTagRow.case_id == t.GoldCaseRow.id)  # type: ignore[arg-type]
                .where(t.GoldCaseTagRow.tag == f.tag)))
        if f.status == "unlabeled":
            gold_at_turn = (select(t.GoldCaseRow.id)
                            .where(t.GoldCaseRow.conversation_id == tr.external_id,
                                   t.GoldCaseRow.turn == t.TurnRow.message_index)
                            .correlate_except(t.GoldCaseRow))  # both outer queries, not only the nearest
            q = q.where(exists(select(t.TurnRow.id).where(
                t.TurnRow.transcript_id == tr.id,
                ~exists(gold_at_turn) | self._overlap_pending(annotator))))  # overlap: N annotators per turn
        elif f.status in ("draft", "submitted"):
            q = q.where(exists(select(t.LabelRow.id).where(
                t.LabelRow.transcript_id == tr.id, t.LabelRow.annotator == annotator, t.LabelRow.status == f.status)))
        elif f.status is not None:
            raise StoreError(f"unknown status filter {f.status!r}; use unlabeled, draft or submitted")
        return q

    def queue(self, annotator: str, f: QueueFilter = QueueFilter(), *, limit: int = 50) -> list[QueueItem]:
        """Transcripts matching ``f`` with this annotator's progress and who holds them."""
        stamp = now_iso()
        with self.read() as conn:
            rows = conn.execute(self._queue_query(annotator, f).limit(limit)).all()
            pks = [r.id for r in rows]
            ext = [r.external_id for r in rows]
            done = dict(conn.execute(
                select(t.GoldCaseRow.conversation_id, func.count(func.distinct(t.GoldCaseRow.turn)))
                .where(t.GoldCaseRow.conversation_id.in_(ext), t.GoldCaseRow.kind == "turn")  # type: ignore[union-attr]
                .group_by(t.GoldCaseRow.conversation_id)).all())
            drafts = dict(conn.execute(
                select(t.LabelRow.transcript_id, func.count())
                .where(t.LabelRow.transcript_id.in_(pks), t.LabelRow.annotator == annotator,  # type: ignore[attr-defined]
                       t.LabelRow.status == "draft")
                .group_by(t.LabelRow.transcript_id)).all())
            leases = dict(conn.execute(
                select(t.LeaseRow.transcript_id, t.LeaseRow.holder)
                .where(t.LeaseRow.transcript_id.in_(pks), t.LeaseRow.expires_at > stamp)).all())  # type: ignore[attr-defined]
        return [QueueItem(r.external_id, r.source, r.title, r.n_turns, min(done.get(r.external_id, 0), r.n_turns),
                          drafts.get(r.id, 0), leases.get(r.id)) for r in rows]

    def claim_next(self, annotator: str, f: QueueFilter = QueueFilter(status="unlabeled"), *,
                   skip: str | None = None, ttl_seconds: int = LEASE_SECONDS,
                   now: datetime | None = None) -> str | None:
        """Lease the next transcript matching ``f`` that nobody else holds, and return its id (None when
        there is none). The annotator's own lease is resumed first unless it is ``skip``; one lease per
        annotator. SQLite runs this under BEGIN IMMEDIATE, so two annotators never get the same item."""
        moment = now or datetime.now(UTC)
        stamp, until = _iso(moment), _iso(moment + timedelta(seconds=ttl_seconds))
        with self.write() as conn:
            _require_user(conn, annotator)
            conn.execute(delete(t.LeaseRow).where(t.LeaseRow.expires_at <= stamp))
            others = select(t.LeaseRow.transcript_id).where(t.LeaseRow.holder != annotator)
            mine = select(t.LeaseRow.transcript_id).where(t.LeaseRow.holder == annotator)
            q = self._queue_query(annotator, f).where(t.TranscriptRow.id.not_in(others))  # type: ignore[union-attr]
            if skip:
                q = q.where(t.TranscriptRow.external_id != skip)
            # PostgreSQL: a candidate another claimer is taking right now is skipped, not waited for.
            q = q.with_for_update(of=t.TranscriptRow, skip_locked=True)
            row = (conn.execute(q.where(t.TranscriptRow.id.in_(mine)).limit(1)).first()  # type: ignore[union-attr]
                   or conn.execute(q.limit(1)).first())
            if row is None:
                return None
            conn.execute(delete(t.LeaseRow).where(t.LeaseRow.holder == annotator))
            conn.execute(insert(t.LeaseRow).values(transcript_id=row.id, holder=annotator, claimed_at=stamp,
                                                   expires_at=until))
            return str(row.external_id)

    def take_lease(self, transcript_id: str, annotator: str, *, ttl_seconds: int = LEASE_SECONDS,
                   now: datetime | None = None) -> Lease:
        """Lease this transcript for the annotator when it is free (or already theirs); otherwise return the
        other holder's lease unchanged."""
        moment = now or datetime.now(UTC)
        stamp, until = _iso(moment), _iso(moment + timedelta(seconds=ttl_seconds))
        with self.write() as conn:
            _require_user(conn, annotator)
            pk = self._transcript_pk(conn, transcript_id, lock=True)
            held = conn.execute(select(t.LeaseRow.holder, t.LeaseRow.expires_at)
                                .where(t.LeaseRow.transcript_id == pk)).first()
            if held is not None and held.holder != annotator and held.expires_at > stamp:
                return Lease(transcript_id, held.holder, held.expires_at)
            conn.execute(delete(t.LeaseRow).where((t.LeaseRow.holder == annotator) | (t.LeaseRow.transcript_id == pk)))
            conn.execute(insert(t.LeaseRow).values(transcript_id=pk, holder=annotator, claimed_at=stamp,
                                                   expires_at=until))
            return Lease(transcript_id, annotator, until)

    def lease(self, transcript_id: str, *, now: datetime | None = None) -> Lease | None:
        """The active lease on a transcript, if any."""
        stamp = _iso(now or datetime.now(UTC))
        with self.read() as conn:
            row = conn.execute(
                select(t.LeaseRow.holder, t.LeaseRow.expires_at)
                .join(t.TranscriptRow, t.TranscriptRow.id == t.LeaseRow.transcript_id)  # type: ignore[arg-type]
                .where(t.TranscriptRow.external_id == transcript_id, t.LeaseRow.expires_at > stamp)).first()
        return Lease(transcript_id, row.holder, row.expires_at) if row else None

    def release_leases(self, annotator: str) -> None:
        with self.write() as conn:
            conn.execute(delete(t.LeaseRow).where(t.LeaseRow.holder == annotator))

    @staticmethod
    def _renew_lease(conn: Connection, transcript_pk: int, annotator: str) -> None:
        until = _iso(datetime.now(UTC) + timedelta(seconds=LEASE_SECONDS))
        conn.execute(update(t.LeaseRow).where(t.LeaseRow.transcript_id == transcript_pk,
                                              t.LeaseRow.holder == annotator).values(expires_at=until))

    # -- progress, vocabulary, coverage

    def tool_names(self) -> list[str]:
        """Names of every tool offered in some transcript (for filters)."""
        with self.read() as conn:
            return list(conn.scalars(select(t.ToolSchemaRow.name).distinct().order_by(t.ToolSchemaRow.name)))

    def annotator_totals(self) -> list[AnnotatorTotals]:
        with self.read() as conn:
            rows = conn.execute(
                select(t.LabelRow.annotator, t.LabelRow.status, func.count(),
                       func.sum(case((t.LabelRow.unsure == True, 1), else_=0)))  # noqa: E712
                .group_by(t.LabelRow.annotator, t.LabelRow.status)).all()
        totals: dict[str, dict[str, int]] = {}
        for annotator, status, n, unsure in rows:
            entry = totals.setdefault(annotator, {"draft": 0, "submitted": 0, "unsure": 0})
            entry[status] = n
            entry["unsure"] += int(unsure or 0)
        return [AnnotatorTotals(a, v["draft"], v["submitted"], v["unsure"]) for a, v in sorted(totals.items())]

    def tags(self) -> list[Tag]:
        with self.read() as conn:
            return [Tag(*r) for r in conn.execute(
                select(t.TagRow.tag, t.TagRow.adversarial, t.TagRow.description).order_by(t.TagRow.tag))]

    def set_tag(self, tag: str, *, adversarial: bool, description: str = "", actor: str) -> Tag:
        """Add a tag to the vocabulary or change it (admins only)."""
        tag = tag.strip()
        if not tag or any(c.isspace() for c in tag):
            raise StoreError("a tag is one word (use snake_case)")
        with self.write() as conn:
            _require_admin(conn, actor, "edit the tag vocabulary")
            before = conn.execute(select(t.TagRow.adversarial, t.TagRow.description)
                                  .where(t.TagRow.tag == tag)).first()
            conn.execute(delete(t.TagRow).where(t.TagRow.tag == tag))
            conn.execute(insert(t.TagRow).values(tag=tag, adversarial=adversarial, description=description))
            self._audit(conn, actor=actor, action="tag.set", entity="tag", entity_id=tag,
                        before=dict(before._mapping) if before else None,
                        after={"adversarial": adversarial, "description": description})
        return Tag(tag, adversarial, description)

    def remove_tag(self, tag: str, *, actor: str) -> None:
        with self.write() as conn:
            _require_admin(conn, actor, "edit the tag vocabulary")
            conn.execute(delete(t.TagRow).where(t.TagRow.tag == tag))
            self._audit(conn, actor=actor, action="tag.remove", entity="tag", entity_id=tag)

    def coverage(self, *, status: str | None = None) -> Coverage:
        """Turn gold cases by decision kind, by expected tool and by tag, and the adversarial : happy-path
        balance (a case is adversarial when it carries a tag the vocabulary marks adversarial)."""
        cases = select(t.GoldCaseRow.id).where(t.GoldCaseRow.kind == "turn")
        if status:
            cases = cases.where(t.GoldCaseRow.status == status)
        in_cases = t.GoldCaseTagRow.case_id.in_(cases)  # type: ignore[attr-defined]
        adversarial_tags = select(t.TagRow.tag).where(t.TagRow.adversarial == True)  # noqa: E712
        with self.read() as conn:
            by_behavior = dict(conn.execute(
                select(t.GoldCaseRow.behavior, func.count()).where(t.GoldCaseRow.id.in_(cases))  # type: ignore[attr-defined]
                .group_by(t.GoldCaseRow.behavior)).all())
            by_tag = dict(conn.execute(select(t.GoldCaseTagRow.tag, func.count()).where(in_cases)
                                       .group_by(t.GoldCaseTagRow.tag)).all())
            happy = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                                .where(in_cases, t.GoldCaseTagRow.tag == "happy_path")) or 0
            adversarial = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                                      .where(in_cases, t.GoldCaseTagRow.tag.in_(adversarial_tags))) or 0  # type: ignore[attr-defined]
            by_tool: dict[str, int] = {}
            bodies = conn.execution_options(yield_per=2000).execute(
                select(t.GoldCaseRow.body).where(t.GoldCaseRow.id.in_(cases), t.GoldCaseRow.behavior == "call"))  # type: ignore[attr-defined]
            for (body,) in bodies:
                for name in {c["name"] for c in json.loads(body)["expected"]["calls"]}:
                    by_tool[name] = by_tool.get(name, 0) + 1
        return Coverage(total=sum(by_behavior.values()), by_behavior=by_behavior,
                        by_tool=dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))),
                        by_tag=dict(sorted(by_tag.items(), key=lambda kv: (-kv[1], kv[0]))),
                        happy_path=happy, adversarial=adversarial)

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


# -- labeling helpers


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_iso(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise StoreError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")


def _require_user(conn: Connection, name: str) -> str:
    role = conn.scalar(select(t.UserRow.role).where(t.UserRow.name == name, t.UserRow.active == True))  # noqa: E712
    if role is None:
        raise PermissionDenied(f"{name!r} is not an active user (an admin adds users on the Admin page)")
    return str(role)


def _require_admin(conn: Connection, actor: str | None, what: str) -> None:
    role = _require_user(conn, actor) if actor else None
    if role != "admin":
        raise PermissionDenied(f"only an admin can {what}" + (f" ({actor!r} is {role})" if actor else ""))


def _label_state(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"status": row.status, "version": row.version, "body": json.loads(row.body)}


__all__ = [
    "DEFAULT_DB",
    "LEASE_SECONDS",
    "ROLES",
    "AnnotatorTotals",
    "ConflictError",
    "Coverage",
    "ImportItem",
    "ImportResult",
    "LabelRecord",
    "Lease",
    "PermissionDenied",
    "QueueFilter",
    "QueueItem",
    "Store",
    "StoreError",
    "Tag",
    "TrajectoryRecord",
    "TranscriptDetail",
    "TranscriptSummary",
    "TurnState",
    "TurnSummary",
    "User",
    "database_url",
    "label_key",
    "observed_calls",
]
