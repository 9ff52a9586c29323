"""SQLModel table definitions. Only the ``labeler.store`` package imports this module: table rows never leave it.

The schema itself is made by the Alembic revisions in ``labeler/store/migrations/versions/``; a test checks
that those revisions and these classes describe the same schema, on SQLite and on PostgreSQL.

Bodies are canonical JSON text of the domain types (validated with pydantic at the store boundary,
since ``table=True`` models skip validation); the columns next to them exist to filter and index.
"""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel


class TranscriptRow(SQLModel, table=True):
    __tablename__ = "transcripts"
    id: int | None = Field(default=None, primary_key=True)
    external_id: str = Field(unique=True)
    source: str = Field(index=True)
    content_hash: str = Field(unique=True)
    title: str = ""
    body: str  # canonical JSON of the Transcript without its tools (those live in tool_schemas)
    n_messages: int
    n_turns: int
    n_tool_calls: int
    started_at: str | None = None  # the transcript's own timestamp, when it has one
    imported_at: str


class ToolSchemaRow(SQLModel, table=True):
    """A tool's schema, versioned by content hash: a changed schema is a new row with the same name."""

    __tablename__ = "tool_schemas"
    hash: str = Field(primary_key=True)
    name: str = Field(index=True)
    body: str  # canonical JSON of the ToolSpec
    first_seen: str


class TranscriptToolRow(SQLModel, table=True):
    __tablename__ = "transcript_tools"
    transcript_id: int = Field(foreign_key="transcripts.id", primary_key=True, ondelete="CASCADE")
    position: int = Field(primary_key=True)
    schema_hash: str = Field(foreign_key="tool_schemas.hash", index=True)


class TurnRow(SQLModel, table=True):
    """A decision point: the message index in its transcript where the agent chose what to do."""

    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("transcript_id", "message_index"),)
    id: int | None = Field(default=None, primary_key=True)
    transcript_id: int = Field(foreign_key="transcripts.id", index=True, ondelete="CASCADE")
    ordinal: int  # 0-based position among the transcript's decision points
    message_index: int
    observed: str  # canonical JSON list of the agent's calls ([{name, arguments}]) at this point
    observed_behavior: str  # "call" | "text" | "open" (no assistant message: the agent has yet to answer)
    n_calls: int


class GoldCaseRow(SQLModel, table=True):
    __tablename__ = "gold_cases"
    __table_args__ = (Index("ix_gold_cases_split_status", "split", "status"),)
    id: str = Field(primary_key=True)
    conversation_id: str | None = Field(default=None, index=True)
    turn: int | None = None
    split: str
    kind: str
    status: str
    behavior: str
    tags: str  # canonical JSON list, for display; filtering uses gold_case_tags
    source: str | None = None
    body: str  # canonical JSON of the GoldCase, exactly as exported
    content_hash: str
    created_at: str
    updated_at: str


class GoldCaseTagRow(SQLModel, table=True):
    __tablename__ = "gold_case_tags"
    case_id: str = Field(foreign_key="gold_cases.id", primary_key=True, ondelete="CASCADE")
    tag: str = Field(primary_key=True, index=True)


class AuditRow(SQLModel, table=True):
    """Append-only: who did what, when, with the before and after state."""

    __tablename__ = "audit_log"
    id: int | None = Field(default=None, primary_key=True)
    at: str = Field(index=True)
    actor: str
    action: str
    entity: str
    entity_id: str = Field(index=True)
    before: str | None = None
    after: str | None = None
    note: str | None = None


# --------------------------------------------------------------------------------------------------
# Labeling (migration 2): users, labels, leases, the tag vocabulary
# --------------------------------------------------------------------------------------------------


class UserRow(SQLModel, table=True):
    __tablename__ = "users"
    name: str = Field(primary_key=True)
    role: str  # annotator | reviewer | admin
    active: bool = True
    created_at: str


class LabelRow(SQLModel, table=True):
    """One annotator's label of one decision point; ``version`` grows by one on every save."""

    __tablename__ = "labels"
    __table_args__ = (
        UniqueConstraint("turn_id", "annotator"),
        Index("ix_labels_annotator_status", "annotator", "status"),
        Index("ix_labels_transcript_annotator", "transcript_id", "annotator"),
    )
    id: int | None = Field(default=None, primary_key=True)
    turn_id: int = Field(foreign_key="turns.id", ondelete="CASCADE")
    transcript_id: int = Field(foreign_key="transcripts.id", ondelete="CASCADE")  # denormalized for progress
    annotator: str = Field(foreign_key="users.name")
    status: str  # draft | submitted
    decision: str | None = None  # denormalized from body for filters and coverage
    unsure: bool = False
    body: str  # canonical JSON of labeler.labels.LabelBody
    version: int
    created_at: str
    updated_at: str
    submitted_at: str | None = None


class LeaseRow(SQLModel, table=True):
    """Who is working on a transcript until when; an expired lease is free for the next annotator."""

    __tablename__ = "leases"
    transcript_id: int = Field(foreign_key="transcripts.id", primary_key=True, ondelete="CASCADE")
    holder: str = Field(foreign_key="users.name", index=True)
    claimed_at: str
    expires_at: str = Field(index=True)


class TagRow(SQLModel, table=True):
    """The tag vocabulary annotators choose from (admins edit it)."""

    __tablename__ = "tag_vocabulary"
    tag: str = Field(primary_key=True)
    adversarial: bool  # counts toward the adversarial side of the adversarial : happy-path ratio
    description: str = ""


class TrajectoryLabelRow(SQLModel, table=True):
    """One annotator's label of a whole transcript (migration 4); versioned like ``labels``."""

    __tablename__ = "trajectory_labels"
    __table_args__ = (UniqueConstraint("transcript_id", "annotator"),)
    id: int | None = Field(default=None, primary_key=True)
    transcript_id: int = Field(foreign_key="transcripts.id", ondelete="CASCADE")
    annotator: str = Field(foreign_key="users.name", index=True)
    status: str  # draft | submitted
    body: str  # canonical JSON of labeler.labels.TrajectoryBody
    version: int
    created_at: str
    updated_at: str
    submitted_at: str | None = None


# --------------------------------------------------------------------------------------------------
# Review and gold versions (migration 3): frozen versions, review queue, overlap, schema-drift queue
# --------------------------------------------------------------------------------------------------


class GoldBlobRow(SQLModel, table=True):
    """A gold case as frozen, content-addressed: versions that share a case share its row. ``body`` is the
    canonical line with ``provenance.gold_version`` null (the export stamps the version id)."""

    __tablename__ = "gold_blobs"
    hash: str = Field(primary_key=True)  # sha256 of body
    body: str


class GoldVersionRow(SQLModel, table=True):
    """An immutable snapshot of one split: written once, never updated."""

    __tablename__ = "gold_versions"
    __table_args__ = (UniqueConstraint("split", "number"),)
    id: str = Field(primary_key=True)  # "<split>-v<number>"
    split: str
    number: int
    parent_id: str | None = Field(default=None, foreign_key="gold_versions.id")
    content_hash: str  # sha256 of the exported bytes
    n_cases: int
    created_at: str
    created_by: str
    note: str = ""
    provenance: str = "{}"  # canonical JSON: how the version came to be (freeze, or derived with reasons)


class GoldVersionCaseRow(SQLModel, table=True):
    __tablename__ = "gold_version_cases"
    version_id: str = Field(foreign_key="gold_versions.id", primary_key=True)
    case_id: str = Field(primary_key=True)
    position: int  # order in the export (by case id, code point order on every backend)
    blob_hash: str = Field(foreign_key="gold_blobs.hash", index=True)


class ReviewItemRow(SQLModel, table=True):
    """Something a reviewer must decide about one decision point (``ref`` is its gold case id)."""

    __tablename__ = "review_items"
    __table_args__ = (Index("ix_review_items_status_kind", "status", "kind"),)
    id: int | None = Field(default=None, primary_key=True)
    kind: str  # disagreement | unsure | judge_mismatch
    ref: str = Field(index=True)
    status: str  # open | escalated | resolved
    payload: str = "{}"  # canonical JSON (what the judge saw, which fields disagree, ...)
    created_at: str
    created_by: str
    decided_at: str | None = None
    decided_by: str | None = None
    decision: str | None = None  # accept | edit | reject | escalate | withdrawn
    comment: str | None = None


class ReviewSettingRow(SQLModel, table=True):
    """Review settings an admin changes (overlap), as canonical JSON values."""

    __tablename__ = "review_settings"
    key: str = Field(primary_key=True)
    value: str
    updated_at: str
    updated_by: str


class RelabelItemRow(SQLModel, table=True):
    """A gold case whose tool schemas moved since it was labeled, with the reasons, until someone decides."""

    __tablename__ = "relabel_items"
    id: int | None = Field(default=None, primary_key=True)
    case_id: str = Field(index=True)
    status: str  # open | resolved | dismissed
    reasons: str  # canonical JSON: {"reasons": [drift reasons], "tools": [the current schemas checked against]}
    tools_hash: str  # which current schemas the case was checked against
    detected_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None


# --------------------------------------------------------------------------------------------------
# Run history (migration 6): scored runs, their headline numbers and per-case outcomes, queryable
# --------------------------------------------------------------------------------------------------


class RunRow(SQLModel, table=True):
    """One scored run of an agent over a gold set, with what produced it."""

    __tablename__ = "runs"
    id: int | None = Field(default=None, primary_key=True)
    run_id: str = Field(unique=True)
    label: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    agent: str | None = None
    gold_version: str = Field(index=True)  # runs are only compared within one gold version
    gold_digest: str  # order-independent content hash of the gold cases
    schema_version: str | None = None
    schema_hash: str  # hash of the distinct tool schemas the gold offers
    git_commit: str | None = None
    source: str  # cli | api | app
    created_at: str = Field(index=True)
    results: int
    passed: int
    failed: int
    needs_review: int
    report: str  # toolgold.report/1 summary (JSON, without the per-case list: that is run_cases)


class RunMetricRow(SQLModel, table=True):
    """A headline number of a run (pass_rate, selection, ..., redundancy, ungrounded, fabricated)."""

    __tablename__ = "run_metrics"
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    metric: str = Field(primary_key=True)
    value: float | None = None
    count: int | None = None
    total: int | None = None


class RunGroupRow(SQLModel, table=True):
    """One row of a run's breakdowns: by tool (incl. NO_CALL), tag, split or toolkit size."""

    __tablename__ = "run_groups"
    __table_args__ = (Index("ix_run_groups_kind_name", "kind", "name"),)
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    kind: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    results: int
    passed: int
    selection_ok: int
    selection_n: int
    arguments_ok: int
    arguments_n: int
    sequencing_ok: int
    sequencing_n: int


class RunConfusionRow(SQLModel, table=True):
    __tablename__ = "run_confusion"
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    gold: str = Field(primary_key=True)
    actual: str = Field(primary_key=True)
    count: int


class RunPatternRow(SQLModel, table=True):
    """A ranked failure pattern of a run; its failing results are the run_case_errors with the same text."""

    __tablename__ = "run_patterns"
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    rank: int = Field(primary_key=True)
    code: str
    text: str
    count: int
    of: int


class RunGoldCaseRow(SQLModel, table=True):
    """A gold case a saved failure refers to, content-addressed so runs on one gold version share it."""

    __tablename__ = "run_gold_cases"
    digest: str = Field(primary_key=True)
    case_id: str
    body: str  # canonical toolgold.gold/1 line


class RunCaseRow(SQLModel, table=True):
    """One scored result (case × trial) of a run. Failures keep their result, gold and what the agent did."""

    __tablename__ = "run_cases"
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    case_id: str = Field(primary_key=True)
    trial: int = Field(primary_key=True)
    kind: str
    status: str  # pass | fail | needs_review
    matched: str | None = None
    expected_behavior: str
    actual_behavior: str
    selection: bool | None = None
    arguments: bool | None = None
    sequencing: bool | None = None
    expected_tools: str  # canonical JSON list
    actual_tools: str  # canonical JSON list
    error_codes: str  # canonical JSON list of distinct codes
    split: str
    toolkit_size: int
    tags: str  # canonical JSON list
    gold_digest: str | None = Field(default=None, foreign_key="run_gold_cases.digest")
    result: str | None = None  # CaseResult JSON (not kept for passing results)
    actual: str | None = None  # toolgold.run/1 line (not kept for passing results)


class RunCaseToolRow(SQLModel, table=True):
    """Which tool a result counts under in the per-tool breakdown (its expected tools, or NO_CALL)."""

    __tablename__ = "run_case_tools"
    __table_args__ = (Index("ix_run_case_tools_tool", "run_pk", "tool"),)
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    case_id: str = Field(primary_key=True)
    trial: int = Field(primary_key=True)
    tool: str = Field(primary_key=True)


class RunCaseErrorRow(SQLModel, table=True):
    """One error of a failing result, with the failure-pattern text it groups under."""

    __tablename__ = "run_case_errors"
    __table_args__ = (Index("ix_run_case_errors_pattern", "run_pk", "code", "pattern"),)
    run_pk: int = Field(foreign_key="runs.id", primary_key=True, ondelete="CASCADE")
    case_id: str = Field(primary_key=True)
    trial: int = Field(primary_key=True)
    position: int = Field(primary_key=True)
    code: str
    pattern: str
    tool: str | None = None
    arg: str | None = None


# --------------------------------------------------------------------------------------------------
# Judge verdicts and queue (migration 5): the verdict cache, where questions came from, adjudications
# --------------------------------------------------------------------------------------------------


class JudgeVerdictRow(SQLModel, table=True):
    """One judge question and its verdict, keyed by a hash of (kind, inputs, model, prompt version).

    ``pending`` rows are the queue (not asked yet, or still failing after the SDK's retries: ``problem``
    says why); ``answered`` rows are the cache. The request and reply are stored in full; no API key is."""

    __tablename__ = "judge_verdicts"
    __table_args__ = (Index("ix_judge_verdicts_status_model", "status", "model"),)
    key: str = Field(primary_key=True)
    kind: str  # semantic_argument | mismatch
    model: str
    prompt_version: str
    inputs: str  # canonical JSON: what the prompt shows
    request: str  # canonical JSON: the Messages API request body
    status: str  # pending | answered
    verdict: str | None = None  # equivalent | not_equivalent | gold_wrong | ambiguous | needs_review
    rationale: str | None = None
    confidence: float | None = None
    problem: str | None = None  # why needs_review, or why still pending
    reply: str | None = None  # canonical JSON of the API reply
    reply_model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # an estimate (labeler.judge.pricing)
    latency_s: float | None = None
    attempts: int = 0
    created_at: str
    updated_at: str
    answered_at: str | None = None


class JudgeUseRow(SQLModel, table=True):
    """Where a verdict was asked for: a case, run and trial (``refs``), and whether it went to review."""

    __tablename__ = "judge_uses"
    verdict_key: str = Field(foreign_key="judge_verdicts.key", primary_key=True)
    ref_hash: str = Field(primary_key=True)
    kind: str
    case_id: str = Field(index=True)
    refs: str  # canonical JSON: case_id, version, run, trial, the agent's answer
    queue_state: str = Field(index=True)  # waiting | queued | not_needed | no_case
    review_item_id: int | None = Field(default=None, index=True)
    created_at: str


class JudgeAdjudicationRow(SQLModel, table=True):
    """A reviewer's decision on a judge verdict: what calibration compares the judge with."""

    __tablename__ = "judge_adjudications"
    id: int | None = Field(default=None, primary_key=True)
    review_item_id: int = Field(index=True)
    verdict_key: str = Field(foreign_key="judge_verdicts.key", index=True)
    kind: str
    model: str
    prompt_version: str
    judge_verdict: str
    reviewer_verdict: str  # equivalent | not_equivalent | gold_wrong | ambiguous
    decision: str  # confirm_defect | accept_alternative | fix_gold | judge_wrong
    reviewer: str
    note: str = ""
    new_version: str | None = None
    created_at: str = Field(index=True)
