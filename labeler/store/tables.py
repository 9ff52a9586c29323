"""Table definitions (typed SQLAlchemy declarative). Only the ``labeler.store`` package imports this module:
table rows never leave it.

The schema itself is made by the Alembic revisions in ``labeler/store/migrations/versions/``; a test checks
that those revisions and these classes describe the same schema, on SQLite and on PostgreSQL.

Bodies are canonical JSON text of the domain types (validated with pydantic at the store boundary); the
columns next to them exist to filter and index. The classes are only used through SQLAlchemy Core
(``select``/``insert`` on a ``Connection``), never as ORM objects in a session.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Dialect, Float, ForeignKey, Index, LargeBinary, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def iso(moment: datetime) -> str:
    """A moment as the store hands it out: UTC, milliseconds, ``Z`` (``2026-03-06T15:00:00.000Z``)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(stamp: str) -> datetime:
    """An ISO-8601 moment with its offset (``Z`` or ``+HH:MM``) as an aware datetime; one without an
    offset is refused (it names no moment)."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {stamp!r} has no UTC offset")
    return moment


class Timestamp(TypeDecorator[str]):
    """A moment, stored as one: ``timestamptz`` on PostgreSQL; on SQLite a UTC ``DATETIME`` (SQLAlchemy's
    fixed-width ``YYYY-MM-DD HH:MM:SS.ffffff``, so SQL ordering and comparison are by time).

    Binds an aware ``datetime`` or an ISO-8601 string with any offset (converted to UTC; a naive value is
    refused). Reads back the store's one text form, :func:`iso` (UTC, milliseconds, ``Z``): the pages,
    exports, audit entries and run history keep the strings they showed before, now always in UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        moment = value if isinstance(value, datetime) else parse_iso(str(value))
        if moment.tzinfo is None:
            raise ValueError(f"timestamp {moment.isoformat()} has no UTC offset")
        moment = moment.astimezone(UTC)
        return moment.replace(tzinfo=None) if dialect.name == "sqlite" else moment

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):  # a SQLite value the DATETIME type did not parse (never written by us)
            value = datetime.fromisoformat(value)
        return iso(value if value.tzinfo is not None else value.replace(tzinfo=UTC))


class Base(DeclarativeBase):
    """The store's tables; ``Base.metadata`` is what the Alembic revisions are checked against."""


class TranscriptBodyRow(Base):
    """A transcript's canonical JSON without its tools (those live in tool_schemas): the bulky part, in its own
    table so an import writes it in short transactions before its publish (revision 0003). A body no
    transcript refers to is unreachable: only an import that is still running (``PendingBodiesRow``) or one
    that died leaves one, and the next import deletes a dead one's."""

    __tablename__ = "transcript_bodies"
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column()


class PendingBodiesRow(Base):
    """Transcript bodies ``first_id``..``last_id`` written ahead by the import staged in ``stage`` (the stage
    file's name beside the database): not published yet. The publish deletes its rows in the transaction that
    makes the transcripts visible; a row whose stage file is gone or no longer locked belongs to a dead import,
    and the next import deletes its bodies."""

    __tablename__ = "pending_bodies"
    first_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    last_id: Mapped[int] = mapped_column()
    stage: Mapped[str] = mapped_column(index=True)


class TranscriptRow(Base):
    __tablename__ = "transcripts"
    id: Mapped[int] = mapped_column(primary_key=True)
    external_id: Mapped[str] = mapped_column(unique=True)
    source: Mapped[str] = mapped_column(index=True)
    content_hash: Mapped[str] = mapped_column(unique=True)
    title: Mapped[str] = mapped_column(default="")
    body_id: Mapped[int] = mapped_column(ForeignKey("transcript_bodies.id"), unique=True)
    tool_set_id: Mapped[int | None] = mapped_column(ForeignKey("tool_sets.id"))  # None: it offers no tools
    n_messages: Mapped[int] = mapped_column()
    n_turns: Mapped[int] = mapped_column()
    n_tool_calls: Mapped[int] = mapped_column()
    started_at: Mapped[str | None] = mapped_column()  # the transcript's own timestamp, when it has one
    imported_at: Mapped[str] = mapped_column(Timestamp)


class ToolSchemaRow(Base):
    """A tool's schema, versioned by content hash: a changed schema is a new row with the same name."""

    __tablename__ = "tool_schemas"
    hash: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(index=True)
    body: Mapped[str] = mapped_column()  # canonical JSON of the ToolSpec
    first_seen: Mapped[str] = mapped_column(Timestamp)


class ToolSetRow(Base):
    """An ordered list of tool schemas that transcripts offer (revision 0004): most transcripts of a source
    offer the same one, so a transcript names its set (``transcripts.tool_set_id``) instead of a row per tool,
    and publishing an import writes a row per distinct list. Content-addressed: ``hash`` is the sha256 of the
    schema hashes in order, joined by spaces; never changed once written."""

    __tablename__ = "tool_sets"
    id: Mapped[int] = mapped_column(primary_key=True)
    hash: Mapped[str] = mapped_column(unique=True)


class ToolSetToolRow(Base):
    __tablename__ = "tool_set_tools"
    tool_set_id: Mapped[int] = mapped_column(ForeignKey("tool_sets.id"), primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)
    schema_hash: Mapped[str] = mapped_column(ForeignKey("tool_schemas.hash"), index=True)


class TurnRow(Base):
    """A decision point: the message index in its transcript where the agent chose what to do."""

    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("transcript_id", "message_index"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    # looked up by transcript through the unique index on (transcript_id, message_index) (revision 0003)
    transcript_id: Mapped[int] = mapped_column(ForeignKey("transcripts.id", ondelete="CASCADE"))
    ordinal: Mapped[int] = mapped_column()  # 0-based position among the transcript's decision points
    message_index: Mapped[int] = mapped_column()
    observed: Mapped[str] = mapped_column()  # canonical JSON list of the agent's calls ([{name, arguments}]) at this point
    observed_behavior: Mapped[str] = mapped_column()  # "call" | "text" | "open" (no assistant message: the agent has yet to answer)
    n_calls: Mapped[int] = mapped_column()


class GoldBodyRow(Base):
    """A live gold case's canonical JSON, exactly as exported (~9 KB for a tau-bench turn case, most of it its
    tools): in its own table so an import writes it in short transactions before its publish (revision 0005),
    as ``TranscriptBodyRow``. A body no gold case refers to is unreachable: only an import that is still running
    (``PendingGoldBodiesRow``) or one that died leaves one, and the next import deletes a dead one's."""

    __tablename__ = "gold_bodies"
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column()


class PendingGoldBodiesRow(Base):
    """Gold bodies ``first_id``..``last_id`` written ahead by the import staged in ``stage``, not published yet:
    as ``PendingBodiesRow`` for transcript bodies."""

    __tablename__ = "pending_gold_bodies"
    first_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    last_id: Mapped[int] = mapped_column()
    stage: Mapped[str] = mapped_column(index=True)


class GoldCaseRow(Base):
    __tablename__ = "gold_cases"
    __table_args__ = (Index("ix_gold_cases_split_status", "split", "status"),)
    id: Mapped[str] = mapped_column(primary_key=True)
    conversation_id: Mapped[str | None] = mapped_column(index=True)
    turn: Mapped[int | None] = mapped_column()
    split: Mapped[str] = mapped_column()
    kind: Mapped[str] = mapped_column()
    status: Mapped[str] = mapped_column()
    behavior: Mapped[str] = mapped_column()
    tags: Mapped[str] = mapped_column()  # canonical JSON list, for display; filtering uses gold_case_tags
    source: Mapped[str | None] = mapped_column(index=True)  # the drift check reads a source's cases (0006)
    # the canonical JSON of the GoldCase, exactly as exported (revision 0005: gold_bodies)
    body_id: Mapped[int] = mapped_column(ForeignKey("gold_bodies.id"), unique=True)
    content_hash: Mapped[str] = mapped_column()
    created_at: Mapped[str] = mapped_column(Timestamp)
    updated_at: Mapped[str] = mapped_column(Timestamp)


class GoldRevisionRow(Base):
    """Which state of the live gold set the store holds (revision 0007): one row, its ``revision`` counted up and
    its ``token`` drawn anew in the transaction of every write to ``gold_cases`` (``common.gold_changed``). What
    is derived from the whole gold set (the hygiene lint) is kept with the token it was read at and reused while
    the token stands; the token, not the count, because a store restored from a backup counts up again from an
    older revision to numbers it has held with other gold."""

    __tablename__ = "gold_revision"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    revision: Mapped[int] = mapped_column()
    token: Mapped[str] = mapped_column()


class KeptLintRow(Base):
    """The last lint of the live gold (``scorer.hygiene.lint``) of one selection (revision 0008): ``split`` and
    ``status``, each ``""`` for all. Kept with the gold set's ``(revision, token)`` it read
    (``GoldRevisionRow``), so any process (a restarted server, a second one) shows it without linting while the
    gold has not moved, and says how far the gold has moved once it has. ``body``: the problems, zlib-compressed
    canonical JSON in the format ``hygiene.dump_kept_lint`` writes (with its version). Derived: a row that
    cannot be read is linted again and replaced."""

    __tablename__ = "kept_lints"
    split: Mapped[str] = mapped_column(primary_key=True)
    status: Mapped[str] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column()
    token: Mapped[str] = mapped_column()
    cases: Mapped[int] = mapped_column()
    seconds: Mapped[float] = mapped_column(Float)
    checked_at: Mapped[str] = mapped_column(Timestamp)
    body: Mapped[bytes] = mapped_column(LargeBinary)


class GoldCaseTagRow(Base):
    __tablename__ = "gold_case_tags"
    case_id: Mapped[str] = mapped_column(ForeignKey("gold_cases.id", ondelete="CASCADE"), primary_key=True)
    tag: Mapped[str] = mapped_column(primary_key=True, index=True)


class AuditRow(Base):
    """Append-only: who did what, when, with the before and after state."""

    __tablename__ = "audit_log"
    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[str] = mapped_column(Timestamp, index=True)
    actor: Mapped[str] = mapped_column()
    action: Mapped[str] = mapped_column()
    entity: Mapped[str] = mapped_column()
    entity_id: Mapped[str] = mapped_column(index=True)
    before: Mapped[str | None] = mapped_column()
    after: Mapped[str | None] = mapped_column()
    note: Mapped[str | None] = mapped_column()


# --------------------------------------------------------------------------------------------------
# Labeling (migration 2): users, labels, leases, the tag vocabulary
# --------------------------------------------------------------------------------------------------


class UserRow(Base):
    __tablename__ = "users"
    name: Mapped[str] = mapped_column(primary_key=True)
    role: Mapped[str] = mapped_column()  # annotator | reviewer | admin
    active: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[str] = mapped_column(Timestamp)


class LabelRow(Base):
    """One annotator's label of one decision point; ``version`` grows by one on every save."""

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("turn_id", "annotator"),
        Index("ix_labels_annotator_status", "annotator", "status"),
        Index("ix_labels_transcript_annotator", "transcript_id", "annotator"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"))
    transcript_id: Mapped[int] = mapped_column(ForeignKey("transcripts.id", ondelete="CASCADE"))  # denormalized for progress
    annotator: Mapped[str] = mapped_column(ForeignKey("users.name"))
    status: Mapped[str] = mapped_column()  # draft | submitted
    decision: Mapped[str | None] = mapped_column()  # denormalized from body for filters and coverage
    unsure: Mapped[bool] = mapped_column(default=False)
    body: Mapped[str] = mapped_column()  # canonical JSON of labeler.labels.LabelBody
    version: Mapped[int] = mapped_column()
    created_at: Mapped[str] = mapped_column(Timestamp)
    updated_at: Mapped[str] = mapped_column(Timestamp)
    submitted_at: Mapped[str | None] = mapped_column(Timestamp)


class LeaseRow(Base):
    """Who is working on a transcript until when; an expired lease is free for the next annotator."""

    __tablename__ = "leases"
    transcript_id: Mapped[int] = mapped_column(ForeignKey("transcripts.id", ondelete="CASCADE"), primary_key=True)
    holder: Mapped[str] = mapped_column(ForeignKey("users.name"), index=True)
    claimed_at: Mapped[str] = mapped_column(Timestamp)
    expires_at: Mapped[str] = mapped_column(Timestamp, index=True)


class TagRow(Base):
    """The tag vocabulary annotators choose from (admins edit it)."""

    __tablename__ = "tag_vocabulary"
    tag: Mapped[str] = mapped_column(primary_key=True)
    adversarial: Mapped[bool] = mapped_column()  # counts toward the adversarial side of the adversarial : happy-path ratio
    description: Mapped[str] = mapped_column(default="")


class TrajectoryLabelRow(Base):
    """One annotator's label of a whole transcript (migration 4); versioned like ``labels``."""

    __tablename__ = "trajectory_labels"
    __table_args__ = (UniqueConstraint("transcript_id", "annotator"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    transcript_id: Mapped[int] = mapped_column(ForeignKey("transcripts.id", ondelete="CASCADE"))
    annotator: Mapped[str] = mapped_column(ForeignKey("users.name"), index=True)
    status: Mapped[str] = mapped_column()  # draft | submitted
    body: Mapped[str] = mapped_column()  # canonical JSON of labeler.labels.TrajectoryBody
    version: Mapped[int] = mapped_column()
    created_at: Mapped[str] = mapped_column(Timestamp)
    updated_at: Mapped[str] = mapped_column(Timestamp)
    submitted_at: Mapped[str | None] = mapped_column(Timestamp)


# --------------------------------------------------------------------------------------------------
# Review and gold versions (migration 3): frozen versions, review queue, overlap, schema-drift queue
# --------------------------------------------------------------------------------------------------


class GoldBlobRow(Base):
    """A gold case as frozen, content-addressed: versions that share a case share its row. ``body`` is the
    canonical line with ``provenance.gold_version`` null (the export stamps the version id)."""

    __tablename__ = "gold_blobs"
    hash: Mapped[str] = mapped_column(primary_key=True)  # sha256 of body
    body: Mapped[str] = mapped_column()


class GoldVersionRow(Base):
    """An immutable snapshot of one split: written once, never updated."""

    __tablename__ = "gold_versions"
    __table_args__ = (UniqueConstraint("split", "number"),)
    id: Mapped[str] = mapped_column(primary_key=True)  # "<split>-v<number>"
    split: Mapped[str] = mapped_column()
    number: Mapped[int] = mapped_column()
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("gold_versions.id"))
    content_hash: Mapped[str] = mapped_column()  # sha256 of the exported bytes
    n_cases: Mapped[int] = mapped_column()
    created_at: Mapped[str] = mapped_column(Timestamp)
    created_by: Mapped[str] = mapped_column()
    note: Mapped[str] = mapped_column(default="")
    provenance: Mapped[str] = mapped_column(default="{}")  # canonical JSON: how the version came to be (freeze, or derived with reasons)


class GoldVersionCaseRow(Base):
    __tablename__ = "gold_version_cases"
    version_id: Mapped[str] = mapped_column(ForeignKey("gold_versions.id"), primary_key=True)
    case_id: Mapped[str] = mapped_column(primary_key=True)
    position: Mapped[int] = mapped_column()  # order in the export (by case id, code point order on every backend)
    blob_hash: Mapped[str] = mapped_column(ForeignKey("gold_blobs.hash"), index=True)


class ReviewItemRow(Base):
    """Something a reviewer must decide about one decision point (``ref`` is its gold case id)."""

    __tablename__ = "review_items"
    __table_args__ = (Index("ix_review_items_status_kind", "status", "kind"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column()  # disagreement | unsure | judge_mismatch
    ref: Mapped[str] = mapped_column(index=True)
    status: Mapped[str] = mapped_column()  # open | escalated | resolved
    payload: Mapped[str] = mapped_column(default="{}")  # canonical JSON (what the judge saw, which fields disagree, ...)
    created_at: Mapped[str] = mapped_column(Timestamp)
    created_by: Mapped[str] = mapped_column()
    decided_at: Mapped[str | None] = mapped_column(Timestamp)
    decided_by: Mapped[str | None] = mapped_column()
    decision: Mapped[str | None] = mapped_column()  # accept | edit | reject | escalate | withdrawn
    comment: Mapped[str | None] = mapped_column()


class ReviewSettingRow(Base):
    """Review settings an admin changes (overlap), as canonical JSON values."""

    __tablename__ = "review_settings"
    key: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[str] = mapped_column()
    updated_at: Mapped[str] = mapped_column(Timestamp)
    updated_by: Mapped[str] = mapped_column()


class RelabelItemRow(Base):
    """A gold case whose tool schemas moved since it was labeled, with the reasons, until someone decides."""

    __tablename__ = "relabel_items"
    id: Mapped[int] = mapped_column(primary_key=True)
    case_id: Mapped[str] = mapped_column(index=True)
    status: Mapped[str] = mapped_column()  # open | resolved | dismissed
    reasons: Mapped[str] = mapped_column()  # canonical JSON: {"reasons": [drift reasons], "tools": [the current schemas checked against]}
    tools_hash: Mapped[str] = mapped_column()  # which current schemas the case was checked against
    detected_at: Mapped[str] = mapped_column(Timestamp)
    decided_at: Mapped[str | None] = mapped_column(Timestamp)
    decided_by: Mapped[str | None] = mapped_column()
    note: Mapped[str | None] = mapped_column()


# --------------------------------------------------------------------------------------------------
# Run history (migration 6): scored runs, their headline numbers and per-case outcomes, queryable
# --------------------------------------------------------------------------------------------------


class RunRow(Base):
    """One scored run of an agent over a gold set, with what produced it."""

    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(unique=True)
    label: Mapped[str | None] = mapped_column()
    model: Mapped[str | None] = mapped_column()
    prompt_version: Mapped[str | None] = mapped_column()
    agent: Mapped[str | None] = mapped_column()
    gold_version: Mapped[str] = mapped_column(index=True)  # runs are only compared within one gold version
    gold_digest: Mapped[str] = mapped_column()  # order-independent content hash of the gold cases
    schema_version: Mapped[str | None] = mapped_column()
    schema_hash: Mapped[str] = mapped_column()  # hash of the distinct tool schemas the gold offers
    git_commit: Mapped[str | None] = mapped_column()
    source: Mapped[str] = mapped_column()  # cli | api | app
    created_at: Mapped[str] = mapped_column(Timestamp, index=True)
    results: Mapped[int] = mapped_column()
    passed: Mapped[int] = mapped_column()
    failed: Mapped[int] = mapped_column()
    needs_review: Mapped[int] = mapped_column()
    report: Mapped[str] = mapped_column()  # toolgold.report/1 summary (JSON, without the per-case list: that is run_cases)


class RunMetricRow(Base):
    """A headline number of a run (pass_rate, selection, ..., redundancy, ungrounded, fabricated)."""

    __tablename__ = "run_metrics"
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    metric: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[float | None] = mapped_column(Float)
    count: Mapped[int | None] = mapped_column()
    total: Mapped[int | None] = mapped_column()


class RunGroupRow(Base):
    """One row of a run's breakdowns: by tool (incl. NO_CALL), tag, split or toolkit size."""

    __tablename__ = "run_groups"
    __table_args__ = (Index("ix_run_groups_kind_name", "kind", "name"),)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    kind: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(primary_key=True)
    results: Mapped[int] = mapped_column()
    passed: Mapped[int] = mapped_column()
    selection_ok: Mapped[int] = mapped_column()
    selection_n: Mapped[int] = mapped_column()
    arguments_ok: Mapped[int] = mapped_column()
    arguments_n: Mapped[int] = mapped_column()
    sequencing_ok: Mapped[int] = mapped_column()
    sequencing_n: Mapped[int] = mapped_column()


class RunConfusionRow(Base):
    __tablename__ = "run_confusion"
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    gold: Mapped[str] = mapped_column(primary_key=True)
    actual: Mapped[str] = mapped_column(primary_key=True)
    count: Mapped[int] = mapped_column()


class RunPatternRow(Base):
    """A ranked failure pattern of a run; its failing results are the run_case_errors with the same text."""

    __tablename__ = "run_patterns"
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    rank: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column()
    text: Mapped[str] = mapped_column()
    count: Mapped[int] = mapped_column()
    of: Mapped[int] = mapped_column()


class RunGoldCaseRow(Base):
    """A gold case a saved failure refers to, content-addressed so runs on one gold version share it."""

    __tablename__ = "run_gold_cases"
    digest: Mapped[str] = mapped_column(primary_key=True)
    case_id: Mapped[str] = mapped_column()
    body: Mapped[str] = mapped_column()  # canonical toolgold.gold/1 line


class RunCaseRow(Base):
    """One scored result (case × trial) of a run. Failures keep their result, gold and what the agent did."""

    __tablename__ = "run_cases"
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    case_id: Mapped[str] = mapped_column(primary_key=True)
    trial: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column()
    status: Mapped[str] = mapped_column()  # pass | fail | needs_review
    matched: Mapped[str | None] = mapped_column()
    expected_behavior: Mapped[str] = mapped_column()
    actual_behavior: Mapped[str] = mapped_column()
    selection: Mapped[bool | None] = mapped_column()
    arguments: Mapped[bool | None] = mapped_column()
    sequencing: Mapped[bool | None] = mapped_column()
    expected_tools: Mapped[str] = mapped_column()  # canonical JSON list
    actual_tools: Mapped[str] = mapped_column()  # canonical JSON list
    error_codes: Mapped[str] = mapped_column()  # canonical JSON list of distinct codes
    split: Mapped[str] = mapped_column()
    toolkit_size: Mapped[int] = mapped_column()
    tags: Mapped[str] = mapped_column()  # canonical JSON list
    gold_digest: Mapped[str | None] = mapped_column(ForeignKey("run_gold_cases.digest"))
    result: Mapped[str | None] = mapped_column()  # CaseResult JSON (not kept for passing results)
    actual: Mapped[str | None] = mapped_column()  # toolgold.run/1 line (not kept for passing results)


class RunCaseToolRow(Base):
    """Which tool a result counts under in the per-tool breakdown (its expected tools, or NO_CALL)."""

    __tablename__ = "run_case_tools"
    __table_args__ = (Index("ix_run_case_tools_tool", "run_pk", "tool"),)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    case_id: Mapped[str] = mapped_column(primary_key=True)
    trial: Mapped[int] = mapped_column(primary_key=True)
    tool: Mapped[str] = mapped_column(primary_key=True)


class RunCaseErrorRow(Base):
    """One error of a failing result, with the failure-pattern text it groups under."""

    __tablename__ = "run_case_errors"
    __table_args__ = (Index("ix_run_case_errors_pattern", "run_pk", "code", "pattern"),)
    run_pk: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    case_id: Mapped[str] = mapped_column(primary_key=True)
    trial: Mapped[int] = mapped_column(primary_key=True)
    position: Mapped[int] = mapped_column(primary_key=True)
    code: Mapped[str] = mapped_column()
    pattern: Mapped[str] = mapped_column()
    tool: Mapped[str | None] = mapped_column()
    arg: Mapped[str | None] = mapped_column()


# --------------------------------------------------------------------------------------------------
# Judge verdicts and queue (migration 5): the verdict cache, where questions came from, adjudications
# --------------------------------------------------------------------------------------------------


class JudgeVerdictRow(Base):
    """One judge question and its verdict, keyed by a hash of (kind, inputs, model, prompt version).

    ``pending`` rows are the queue (not asked yet, or still failing after the SDK's retries: ``problem``
    says why); ``answered`` rows are the cache. The request and reply are stored in full; no API key is."""

    __tablename__ = "judge_verdicts"
    __table_args__ = (Index("ix_judge_verdicts_status_model", "status", "model"),)
    key: Mapped[str] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column()  # semantic_argument | mismatch
    model: Mapped[str] = mapped_column()
    prompt_version: Mapped[str] = mapped_column()
    inputs: Mapped[str] = mapped_column()  # canonical JSON: what the prompt shows
    request: Mapped[str] = mapped_column()  # canonical JSON: the Messages API request body
    status: Mapped[str] = mapped_column()  # pending | answered
    verdict: Mapped[str | None] = mapped_column()  # equivalent | not_equivalent | gold_wrong | ambiguous | needs_review
    rationale: Mapped[str | None] = mapped_column()
    confidence: Mapped[float | None] = mapped_column(Float)
    problem: Mapped[str | None] = mapped_column()  # why needs_review, or why still pending
    reply: Mapped[str | None] = mapped_column()  # canonical JSON of the API reply
    reply_model: Mapped[str | None] = mapped_column()
    input_tokens: Mapped[int] = mapped_column(default=0)
    output_tokens: Mapped[int] = mapped_column(default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float)  # an estimate (labeler.judge.pricing)
    latency_s: Mapped[float | None] = mapped_column(Float)
    attempts: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[str] = mapped_column(Timestamp)
    updated_at: Mapped[str] = mapped_column(Timestamp)
    answered_at: Mapped[str | None] = mapped_column(Timestamp)


class JudgeUseRow(Base):
    """Where a verdict was asked for: a case, run and trial (``refs``), and whether it went to review."""

    __tablename__ = "judge_uses"
    verdict_key: Mapped[str] = mapped_column(ForeignKey("judge_verdicts.key"), primary_key=True)
    ref_hash: Mapped[str] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column()
    case_id: Mapped[str] = mapped_column(index=True)
    refs: Mapped[str] = mapped_column()  # canonical JSON: case_id, version, run, trial, the agent's answer
    queue_state: Mapped[str] = mapped_column(index=True)  # waiting | queued | not_needed | no_case
    review_item_id: Mapped[int | None] = mapped_column(index=True)
    created_at: Mapped[str] = mapped_column(Timestamp)


class JudgeAdjudicationRow(Base):
    """A reviewer's decision on a judge verdict: what calibration compares the judge with."""

    __tablename__ = "judge_adjudications"
    id: Mapped[int] = mapped_column(primary_key=True)
    review_item_id: Mapped[int] = mapped_column(index=True)
    verdict_key: Mapped[str] = mapped_column(ForeignKey("judge_verdicts.key"), index=True)
    kind: Mapped[str] = mapped_column()
    model: Mapped[str] = mapped_column()
    prompt_version: Mapped[str] = mapped_column()
    judge_verdict: Mapped[str] = mapped_column()
    reviewer_verdict: Mapped[str] = mapped_column()  # equivalent | not_equivalent | gold_wrong | ambiguous
    decision: Mapped[str] = mapped_column()  # confirm_defect | accept_alternative | fix_gold | judge_wrong
    reviewer: Mapped[str] = mapped_column()
    note: Mapped[str] = mapped_column(default="")
    new_version: Mapped[str | None] = mapped_column()
    created_at: Mapped[str] = mapped_column(Timestamp, index=True)
