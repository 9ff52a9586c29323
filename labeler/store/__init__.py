"""The store: the only package that talks SQL.

``Store`` is the facade the app, the CLI and the tests use: one per database, it creates the engine once and
applies outstanding Alembic revisions when it is constructed (``labeler.store.engine``), and every action
runs in its own transaction. Behind it, one small module per aggregate holds that aggregate's SQL as plain
functions of the database (``transcripts``, ``labels``, ``review``, ``versions``, ``drift``, ``runs``,
``judge``, ``users``), all on top of ``common`` (roles, audit, the live-gold writer), ``engine`` and
``tables``; they never import each other (``make lint`` checks it). A workflow that spans aggregates lives
above them (``adjudication``). What goes in and comes out are domain types from ``scorer.model`` or the
frozen read models of those modules, re-exported here; table rows never leave the package.

Adding a store action: write it as a function ``def action(db: Database, ...)`` in its aggregate's module
and add one line ``action = _module.action`` to ``Store``. Nothing is imported until used (a command pays only
for the aggregates it touches): ``_module`` stands in for the module at run time, and the function replaces
its stand-in on the class when first looked up; mypy reads the ``TYPE_CHECKING`` imports. A new aggregate
module gets both lines (its ``TYPE_CHECKING`` import and its ``_Aggregate``); a new re-exported name goes
into the ``TYPE_CHECKING`` imports and ``_LAZY`` (tests/labeler/test_cli_startup.py checks they agree).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from labeler.store.engine import (
    DEFAULT_DB,
    Database,
    DatabaseBusy,
    DatabaseUnavailable,
    StoreError,
    database_url,
    describe_database_error,
    head_revision,
    now_iso,
)

if TYPE_CHECKING:
    from labeler.store import adjudication as _adjudication
    from labeler.store import drift as _drift
    from labeler.store import gold as _gold
    from labeler.store import judge as _judge
    from labeler.store import labels as _labels
    from labeler.store import review as _review
    from labeler.store import runs as _runs
    from labeler.store import synthetic as _synthetic
    from labeler.store import transcripts as _transcripts
    from labeler.store import users as _users
    from labeler.store import versions as _versions
    from labeler.store.common import (
        REVIEWER_ROLES,
        ROLES,
        Overlap,
        PermissionDenied,
        UnreadableRecord,
        label_key,
    )
    from labeler.store.drift import RelabelItem
    from labeler.store.judge import (
        NOT_ASKED,
        REVIEW_KIND,
        Adjudication,
        AdjudicationItem,
        JudgeOutcome,
        JudgeStatus,
        JudgeUse,
        NewQuestion,
        PendingQuestion,
        StoredVerdict,
        agent_answer,
    )
    from labeler.store.labels import (
        LEASE_SECONDS,
        AnnotatorTotals,
        ConflictError,
        LabelRecord,
        Lease,
        QueueFilter,
        QueueItem,
        TrajectoryRecord,
        TurnState,
        TurnWindow,
    )
    from labeler.store.pending import PendingEdit, PendingJournal, UnreadablePending
    from labeler.store.review import REVIEW_KINDS, ReviewCandidate, ReviewDetail, ReviewItem
    from labeler.store.runs import (
        CaseDetail,
        CaseSummary,
        DiffCase,
        GoldVersionConflict,
        GoldVersionMismatch,
        GoldVersionRuns,
        GroupPoint,
        History,
        MetricPoint,
        PatternInfo,
        RunDiff,
        RunExists,
        RunHistoryError,
        RunInfo,
        RunNotFound,
        gold_file_fingerprint,
        save_scored,
        score_and_save,
        score_files_and_save,
    )
    from labeler.store.synthetic import Proposed, SyntheticCandidates
    from labeler.store.transcripts import (
        BodyWriteFailed,
        Coverage,
        ImportItem,
        ImportResult,
        PreparedItem,
        StagedItem,
        StageFailed,
        StageWriter,
        TranscriptDetail,
        TranscriptSummary,
        TurnSummary,
        observed_calls,
        prepare_item,
    )
    from labeler.store.users import Tag, User
    from labeler.store.versions import SPLITS, GoldVersion, VersionDiff, stamp, version_id
else:

    class _Action:
        """``Store.NAME``, standing in for ``MODULE.NAME`` until first used: then the module is imported and
        the function takes this one's place on the class, so every later call is a plain method call."""

        def __init__(self, module: str, name: str) -> None:
            self.module, self.name = module, name

        def __set_name__(self, owner: type, attr: str) -> None:
            self.owner, self.attr = owner, attr

        def __get__(self, obj: object, objtype: type | None = None) -> Any:
            function = getattr(importlib.import_module(self.module), self.name)
            setattr(self.owner, self.attr, function)
            return function if obj is None else function.__get__(obj, objtype)

    class _Aggregate:
        """An aggregate module not imported yet: ``_transcripts.import_items`` in ``Store``'s body is an
        ``_Action``, so building the class imports nothing."""

        def __init__(self, name: str) -> None:
            self.module = f"labeler.store.{name}"

        def __getattr__(self, name: str) -> _Action:
            return _Action(self.module, name)

    _adjudication = _Aggregate("adjudication")
    _drift = _Aggregate("drift")
    _gold = _Aggregate("gold")
    _judge = _Aggregate("judge")
    _labels = _Aggregate("labels")
    _review = _Aggregate("review")
    _runs = _Aggregate("runs")
    _synthetic = _Aggregate("synthetic")
    _transcripts = _Aggregate("transcripts")
    _users = _Aggregate("users")
    _versions = _Aggregate("versions")

_LAZY: dict[str, tuple[str, ...]] = {
    "common": ("REVIEWER_ROLES", "ROLES", "Overlap", "PermissionDenied", "UnreadableRecord", "label_key"),
    "drift": ("RelabelItem",),
    "judge": (
        "NOT_ASKED", "REVIEW_KIND", "Adjudication", "AdjudicationItem", "JudgeOutcome", "JudgeStatus", "JudgeUse",
        "NewQuestion", "PendingQuestion", "StoredVerdict", "agent_answer",
    ),
    "labels": (
        "LEASE_SECONDS", "AnnotatorTotals", "ConflictError", "LabelRecord", "Lease", "QueueFilter", "QueueItem",
        "TrajectoryRecord", "TurnState", "TurnWindow",
    ),
    "pending": ("PendingEdit", "PendingJournal", "UnreadablePending"),
    "review": ("REVIEW_KINDS", "ReviewCandidate", "ReviewDetail", "ReviewItem"),
    "runs": (
        "CaseDetail", "CaseSummary", "DiffCase", "GoldVersionConflict", "GoldVersionMismatch", "GoldVersionRuns",
        "GroupPoint", "History", "MetricPoint", "PatternInfo", "RunDiff", "RunExists", "RunHistoryError", "RunInfo",
        "RunNotFound", "gold_file_fingerprint", "save_scored", "score_and_save", "score_files_and_save",
    ),
    "synthetic": ("Proposed", "SyntheticCandidates"),
    "transcripts": (
        "BodyWriteFailed", "Coverage", "ImportItem", "ImportResult", "PreparedItem", "StagedItem", "StageFailed", "StageWriter",
        "TranscriptDetail", "TranscriptSummary",
        "TurnSummary", "observed_calls", "prepare_item",
    ),
    "users": ("Tag", "User"),
    "versions": ("SPLITS", "GoldVersion", "VersionDiff", "stamp", "version_id"),
}
"""The names re-exported from each aggregate module, imported on first use (PEP 562): a command pays only
for the aggregates it touches (``toolgold export`` never loads review, numpy or jsonschema)."""
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"labeler.store.{module}"), name)
    globals()[name] = value
    return value


class Store(Database):
    """All persistence for toolgold. Construct once per process (the app caches it)."""

    # -- edits the database was too busy for, kept on disk beside it until a save lands (labeler.store.pending)
    def pending_journal(self) -> PendingJournal:
        from labeler.store.pending import PendingJournal, journal_dir

        return PendingJournal(journal_dir(self.url))

    # -- transcripts, turns and import; the live gold set as read
    import_items = _transcripts.import_items
    list_transcripts = _transcripts.list_transcripts
    sources = _transcripts.sources
    count_transcripts = _transcripts.count_transcripts
    get_transcript = _transcripts.get_transcript
    count_gold = _gold.count_gold
    iter_gold_lines = _gold.iter_gold_lines
    iter_gold_blocks = _gold.iter_gold_blocks
    authorize_gold_export = _gold.authorize_gold_export
    get_gold = _gold.get_gold
    gold_cases = _gold.gold_cases
    tool_names = _transcripts.tool_names
    coverage = _transcripts.coverage

    # -- synthetic candidates (toolgold synthesize)
    require_proposer = _synthetic.require_proposer
    propose_candidates = _synthetic.propose_candidates
    synthetic_ids = _synthetic.synthetic_ids
    synthetic_candidates = _synthetic.synthetic_candidates
    stats = _transcripts.stats

    # -- labels, leases and the annotator's queue
    get_label = _labels.get_label
    labels_for_turn = _labels.labels_for_turn
    save_label = _labels.save_label
    submit_label = _labels.submit_label
    get_trajectory_label = _labels.get_trajectory_label
    save_trajectory_label = _labels.save_trajectory_label
    turn_states = _labels.turn_states
    turn_window = _labels.turn_window
    next_to_label = _labels.next_to_label
    queue = _labels.queue
    claim_next = _labels.claim_next
    take_lease = _labels.take_lease
    release_leases = _labels.release_leases
    annotator_totals = _labels.annotator_totals

    # -- the review queue and overlap
    enqueue_review = _review.enqueue_review
    sync_review_queue = _review.sync_review_queue
    review_queue = _review.review_queue
    review_counts = _review.review_counts
    review_detail = _review.review_detail
    accept_review = _review.accept_review
    edit_and_accept = _review.edit_and_accept
    reject_review = _review.reject_review
    escalate_review = _review.escalate_review
    approvable_cases = _review.approvable_cases
    approve_cases = _review.approve_cases
    overlap = _review.overlap
    set_overlap = _review.set_overlap
    agreement_labels = _review.agreement_labels
    review_item_for = _review.review_item_for
    returned_to = _review.returned_to

    # -- frozen gold versions
    freeze = _versions.freeze
    derive_version = _versions.derive_version
    list_versions = _versions.list_versions
    get_version = _versions.get_version
    latest_version = _versions.latest_version
    iter_version_lines = _versions.iter_version_lines
    version_cases = _versions.version_cases
    version_case = _versions.version_case
    diff_versions = _versions.diff_versions
    note_export = _versions.note_export

    # -- schema drift: the re-labeling queue
    current_tools = _drift.current_tools
    check_schema_drift = _drift.check_schema_drift
    relabel_queue = _drift.relabel_queue
    resolve_relabel = _drift.resolve_relabel
    dismiss_relabel = _drift.dismiss_relabel

    # -- run history
    save_run = _runs.save_run
    delete_run = _runs.delete_run
    get_run = _runs.get_run
    list_runs = _runs.list_runs
    gold_versions = _runs.gold_versions
    run_report = _runs.run_report
    result_lines = _runs.result_lines
    history = _runs.history
    run_groups = _runs.run_groups
    confusion = _runs.confusion
    failure_patterns = _runs.failure_patterns
    failing_cases = _runs.failing_cases
    case_detail = _runs.case_detail
    diff_runs = _runs.diff_runs

    # -- the judge's questions, verdicts and settings
    remember_judge_questions = _judge.remember_judge_questions
    judge_answers = _judge.judge_answers
    judge_verdict = _judge.judge_verdict
    judge_verdicts = _judge.judge_verdicts
    pending_judge_questions = _judge.pending_judge_questions
    record_judge_outcome = _judge.record_judge_outcome
    note_judge_skipped = _judge.note_judge_skipped
    judge_status = _judge.judge_status
    judge_uses_to_queue = _judge.judge_uses_to_queue
    set_judge_use_state = _judge.set_judge_use_state
    gold_case_known = _judge.gold_case_known
    judge_adjudications = _judge.judge_adjudications
    judge_model_setting = _judge.judge_model_setting
    set_judge_model_setting = _judge.set_judge_model_setting

    # -- deciding judge items (across judge, review and versions)
    adjudication_queue = _adjudication.adjudication_queue
    adjudication_item = _adjudication.adjudication_item
    adjudicate = _adjudication.adjudicate

    # -- users, the tag vocabulary, the audit log
    add_user = _users.add_user
    set_user = _users.set_user
    users = _users.users
    get_user = _users.get_user
    tags = _users.tags
    set_tag = _users.set_tag
    remove_tag = _users.remove_tag

__all__ = [
    "DEFAULT_DB",
    "LEASE_SECONDS",
    "NOT_ASKED",
    "REVIEWER_ROLES",
    "REVIEW_KIND",
    "REVIEW_KINDS",
    "ROLES",
    "SPLITS",
    "Adjudication",
    "AdjudicationItem",
    "AnnotatorTotals",
    "BodyWriteFailed",
    "CaseDetail",
    "CaseSummary",
    "ConflictError",
    "Coverage",
    "DatabaseBusy",
    "DatabaseUnavailable",
    "DiffCase",
    "GoldVersion",
    "GoldVersionConflict",
    "GoldVersionMismatch",
    "GoldVersionRuns",
    "GroupPoint",
    "History",
    "ImportItem",
    "ImportResult",
    "JudgeOutcome",
    "JudgeStatus",
    "JudgeUse",
    "LabelRecord",
    "Lease",
    "MetricPoint",
    "NewQuestion",
    "Overlap",
    "PatternInfo",
    "PendingEdit",
    "PendingJournal",
    "PendingQuestion",
    "PermissionDenied",
    "PreparedItem",
    "Proposed",
    "QueueFilter",
    "QueueItem",
    "RelabelItem",
    "ReviewCandidate",
    "ReviewDetail",
    "ReviewItem",
    "RunDiff",
    "RunExists",
    "RunHistoryError",
    "RunInfo",
    "RunNotFound",
    "StageFailed",
    "StageWriter",
    "StagedItem",
    "Store",
    "StoreError",
    "StoredVerdict",
    "SyntheticCandidates",
    "Tag",
    "TrajectoryRecord",
    "TranscriptDetail",
    "TranscriptSummary",
    "TurnState",
    "TurnSummary",
    "TurnWindow",
    "UnreadablePending",
    "UnreadableRecord",
    "User",
    "VersionDiff",
    "agent_answer",
    "database_url",
    "describe_database_error",
    "gold_file_fingerprint",
    "head_revision",
    "label_key",
    "now_iso",
    "observed_calls",
    "prepare_item",
    "save_scored",
    "score_and_save",
    "score_files_and_save",
    "stamp",
    "version_id",
]
