"""The store: the only package that talks SQL.

``Store`` (``facade``) is the facade the app, the CLI and the tests use: one per database, it creates the
engine once and applies outstanding Alembic revisions when it is constructed (``labeler.store.engine``), and
every action runs in its own transaction. Behind it, one small module per aggregate holds that aggregate's SQL
as plain functions of the database (``transcripts``, ``labels``, ``review``, ``versions``, ``drift``, ``runs``,
``judge``, ``users``), all on top of ``common`` (roles, audit, the live-gold writer), ``engine`` and
``tables``; they never import each other (``make lint`` checks it). A workflow that spans aggregates lives
above them (``adjudication``). What goes in and comes out are domain types from ``scorer.model`` or the
frozen read models of those modules, re-exported here; table rows never leave the package. ``staging`` (an
import's rows, written into its stage file with ``sqlite3``) and ``base`` load no SQL library: an import's
worker processes run them, forked before the importing process loads SQLAlchemy. So this package imports
nothing until a name is used: ``Store`` loads the engine and the tables.

Adding a store action: write it as a function ``def action(db: Database, ...)`` in its aggregate's module
and add one line ``action = _module.action`` to ``Store`` (in ``facade``). Nothing is imported until used (a
command pays only for the aggregates it touches): ``_module`` stands in for the module at run time, and the
function replaces its stand-in on the class when first looked up; mypy reads the ``TYPE_CHECKING`` imports. A
new aggregate module gets both lines in ``facade`` (its ``TYPE_CHECKING`` import and its ``_Aggregate``); a new
re-exported name goes into this module's ``TYPE_CHECKING`` imports and ``_LAZY`` (tests/labeler/test_cli_startup.py
checks they agree).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from labeler.store.base import StoreError
    from labeler.store.common import (
        REVIEWER_ROLES,
        ROLES,
        Overlap,
        PermissionDenied,
        UnreadableRecord,
        label_key,
    )
    from labeler.store.drift import RelabelItem
    from labeler.store.engine import (
        DEFAULT_DB,
        Database,
        DatabaseBusy,
        DatabaseUnavailable,
        database_url,
        describe_database_error,
        head_revision,
        now_iso,
    )
    from labeler.store.facade import Store
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
    from labeler.store.staging import (
        BodyWriteFailed,
        ImportItem,
        PreparedItem,
        StagedItem,
        StageFailed,
        StageWriter,
        observed_calls,
        prepare_item,
    )
    from labeler.store.synthetic import Proposed, SyntheticCandidates
    from labeler.store.transcripts import (
        Coverage,
        ImportResult,
        TranscriptDetail,
        TranscriptSummary,
        TurnSummary,
    )
    from labeler.store.users import Tag, User
    from labeler.store.versions import SPLITS, GoldVersion, VersionDiff, stamp, version_id
_LAZY: dict[str, tuple[str, ...]] = {
    "base": ("StoreError",),
    "engine": ("DEFAULT_DB", "Database", "DatabaseBusy", "DatabaseUnavailable", "database_url",
               "describe_database_error", "head_revision", "now_iso"),
    "facade": ("Store",),
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
    "staging": ("BodyWriteFailed", "ImportItem", "PreparedItem", "StagedItem", "StageFailed", "StageWriter",
                "observed_calls", "prepare_item"),
    "transcripts": ("Coverage", "ImportResult", "TranscriptDetail", "TranscriptSummary", "TurnSummary"),
    "users": ("Tag", "User"),
    "versions": ("SPLITS", "GoldVersion", "VersionDiff", "stamp", "version_id"),
}
"""The names re-exported from each module, imported on first use (PEP 562): a command pays only for what it
touches (``toolgold export`` never loads review, numpy or jsonschema), and naming ``StoreError`` or an import's
rows (``staging``) loads no SQL library; ``Store`` loads the engine (``facade``)."""
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"labeler.store.{module}"), name)
    globals()[name] = value
    return value


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
    "Database",
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
