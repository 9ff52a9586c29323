"""Run history in the store: saved reports, queryable.

A saved run is one ``runs`` row (metadata and the report summary) plus the numbers the dashboards read
as rows: headline metrics, breakdown groups, the confusion matrix, ranked failure patterns, and one row
per scored result with its status and error codes. Trends, per-tool lines and run-vs-run diffs are
queries over these rows, never re-parsed report blobs. Runs are only compared on the same gold version:
the methods that compare two runs refuse otherwise (``GoldVersionMismatch``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, and_, case, delete, exc, func, insert, select

from labeler.store import tables as t
from labeler.store.common import REVIEWER_ROLES, audit, require_role
from labeler.store.engine import Database
from labeler.store.history import (
    CaseOutcome,
    FingerprintBuilder,
    GoldFingerprint,
    RunMeta,
    ToolPoint,
    metric_values,
    outcomes,
)
from scorer import canonical
from scorer.codes import NO_CALL
from scorer.errors import ToolgoldError
from scorer.formats import dumps_record, iter_json_lines, parse_json_text, parse_record
from scorer.model import GoldCase, RunRecord
from scorer.report import ConfusionCell, McNemar, Rate, Report, pattern_of
from scorer.results import CaseResult, Verdicts
from scorer.stats import mcnemar_exact, wilson

SAVE_CHUNK = 500
DIFF_LIST_LIMIT = 500


class RunHistoryError(ToolgoldError):
    """A run-history action could not be done (the message says why)."""


class RunNotFound(RunHistoryError):
    """No saved run has this id."""


class RunExists(RunHistoryError):
    """A run with this id is already saved (saving it again would count it twice)."""


class GoldVersionMismatch(RunHistoryError):
    """Two runs scored on different gold versions were asked to be compared."""

    def __init__(self, runs: Sequence[tuple[str, str]]) -> None:
        self.runs = tuple(runs)
        listed = "; ".join(f"{run_id} on {version}" for run_id, version in runs)
        super().__init__(f"runs are only compared on the same gold version: {listed}. Score both runs on one "
                         "gold version (toolgold export a frozen version) to compare them")


class GoldVersionConflict(RunHistoryError):
    """A gold version label already names other gold content."""


# --------------------------------------------------------------------------------------------------
# Read models
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    label: str | None
    model: str | None
    prompt_version: str | None
    agent: str | None
    gold_version: str
    gold_digest: str
    schema_version: str | None
    schema_hash: str
    git_commit: str | None
    source: str
    created_at: str
    results: int
    passed: int
    failed: int
    needs_review: int

    @property
    def name(self) -> str:
        """How charts and lists name the run."""
        return self.label or self.run_id

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.results if self.results else None


@dataclass(frozen=True)
class GoldVersionRuns:
    gold_version: str
    runs: int
    latest_at: str


@dataclass(frozen=True)
class MetricPoint:
    run_id: str
    metric: str
    value: float | None
    count: int | None = None
    total: int | None = None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return wilson(self.count, self.total) if self.count is not None and self.total else None


@dataclass(frozen=True)
class GroupPoint:
    """A breakdown row of one run (kind: tool, tag, split or toolkit_size)."""

    run_id: str
    kind: str
    name: str
    results: int
    passed: int
    selection: Rate
    arguments: Rate
    sequencing: Rate

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.results if self.results else None


@dataclass(frozen=True)
class PatternInfo:
    rank: int
    code: str
    text: str
    count: int
    of: int

    @property
    def sentence(self) -> str:
        return f"{self.count} of {self.of} failures: {self.text}"


@dataclass(frozen=True)
class CaseSummary:
    """A result of a run, as lists show it."""

    case_id: str
    trial: int
    status: str
    error_codes: tuple[str, ...]
    expected_tools: tuple[str, ...]
    actual_tools: tuple[str, ...]
    expected_behavior: str
    actual_behavior: str


@dataclass(frozen=True)
class CaseDetail:
    """One result with what the side-by-side view needs: the gold case and what the agent did."""

    run_id: str
    summary: CaseSummary
    result: CaseResult | None
    gold: GoldCase | None
    actual: RunRecord | None


@dataclass(frozen=True)
class History:
    """The runs of one gold version, oldest first, with their numbers."""

    gold_version: str
    runs: tuple[RunInfo, ...]
    metrics: tuple[MetricPoint, ...]
    groups: tuple[GroupPoint, ...]
    other_versions: tuple[GoldVersionRuns, ...]
    """Runs on other gold versions: not in these lines, since they are not comparable."""

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(r.run_id for r in self.runs)

    def tool_points(self) -> list[ToolPoint]:
        return [ToolPoint(run_id=g.run_id, tool=g.name, results=g.results, passed=g.passed)
                for g in self.groups if g.kind == "tool"]


@dataclass(frozen=True)
class DiffCase:
    case_id: str
    trial: int
    before: str
    after: str
    before_codes: tuple[str, ...]
    after_codes: tuple[str, ...]


@dataclass(frozen=True)
class RunDiff:
    """Two runs on the same gold version, paired by (case id, trial)."""

    before: RunInfo
    after: RunInfo
    fixed: tuple[DiffCase, ...]
    """Failed (or needed review) before, pass now."""
    broken: tuple[DiffCase, ...]
    still_failing: tuple[DiffCase, ...]
    mcnemar: McNemar
    only_before: int
    """Results in the earlier run with no partner in the later one (and the other way round)."""
    only_after: int
    truncated: bool = False
    """The lists hold at most ``limit`` cases each; the McNemar counts cover every pair."""


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("run-%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:6]


def _json_list(text: str | None) -> tuple[str, ...]:
    return tuple(json.loads(text)) if text else ()


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


# -- saving -----------------------------------------------------------------------------------

def save_run(db: Database, report: Report, meta: RunMeta, gold: GoldFingerprint,
             outcomes: Iterable[CaseOutcome]) -> RunInfo:
    """Save a scored run in one transaction: all of it or nothing.

    ``outcomes`` has one entry per scored result (the report's ``totals.results``); a count that
    does not match is refused. The gold version is ``meta.gold_version`` or the fingerprint's; a
    version label already used for other gold content is refused (``GoldVersionConflict``)."""
    version = meta.gold_version or gold.version
    run_id = meta.run_id or _new_run_id()
    totals = report.totals
    row = {
        "run_id": run_id, "label": meta.label, "model": meta.model, "prompt_version": meta.prompt_version,
        "agent": meta.agent, "gold_version": version, "gold_digest": gold.digest,
        "schema_version": meta.schema_version, "schema_hash": gold.schema_hash, "git_commit": meta.git_commit,
        "source": meta.source, "created_at": meta.created_at or _now_iso(), "results": totals.results,
        "passed": totals.passed, "failed": totals.failed, "needs_review": totals.needs_review,
        "report": report.model_dump_json(exclude={"cases"}),
    }
    try:
        with db.write() as conn:
            if conn.scalar(select(t.RunRow.id).where(t.RunRow.run_id == run_id)) is not None:
                raise RunExists(f"run {run_id!r} is already saved; give this one another id (--run-id)")
            other = conn.scalar(select(t.RunRow.gold_digest).where(t.RunRow.gold_version == version)
                                .where(t.RunRow.gold_digest != gold.digest).limit(1))
            if other is not None:
                raise GoldVersionConflict(
                    f"gold version {version!r} was saved before with other content (digest {other[:12]}, "
                    f"this gold {gold.digest[:12]}); name this gold set's version differently")
            pk = conn.execute(insert(t.RunRow).returning(t.RunRow.id), [row]).scalar_one()
            _save_aggregates(conn, pk, report)
            saved = _save_outcomes(conn, pk, outcomes)
            if saved != totals.results:
                raise RunHistoryError(f"run {run_id!r}: the report has {totals.results} results but {saved} case "
                                 "outcomes were given; nothing was saved")
    except exc.IntegrityError:
        # Two saves of one run id at once: the unique run id stopped the second. Anything else is a bug.
        with db.read() as conn:
            if conn.scalar(select(t.RunRow.id).where(t.RunRow.run_id == run_id)) is None:
                raise
        raise RunExists(f"run {run_id!r} is already saved; give this one another id (--run-id)") from None
    return get_run(db, run_id)


def _save_aggregates(conn: Connection, pk: int, report: Report) -> None:
    metrics = []
    for name, value in metric_values(report).items():
        if isinstance(value, Rate):
            metrics.append({"run_pk": pk, "metric": name, "value": value.value, "count": value.count,
                            "total": value.total})
        else:
            metrics.append({"run_pk": pk, "metric": name, "value": value, "count": None, "total": None})
    conn.execute(insert(t.RunMetricRow), metrics)
    groups = [{"run_pk": pk, "kind": kind, "name": name, "results": g.results, "passed": g.passed.count,
               "selection_ok": g.selection.count, "selection_n": g.selection.total,
               "arguments_ok": g.arguments.count, "arguments_n": g.arguments.total,
               "sequencing_ok": g.sequencing.count, "sequencing_n": g.sequencing.total}
              for kind, rows in report.breakdowns.items() for name, g in rows.items()]
    confusion = [{"run_pk": pk, "gold": c.gold, "actual": c.actual, "count": c.count} for c in report.confusion]
    patterns = [{"run_pk": pk, "rank": n, "code": p.code.value, "text": p.text, "count": p.count, "of": p.of}
                for n, p in enumerate(report.failure_patterns, start=1)]
    for table, rows in ((t.RunGroupRow, groups), (t.RunConfusionRow, confusion), (t.RunPatternRow, patterns)):
        for batch in _chunks(rows, SAVE_CHUNK):
            conn.execute(insert(table), batch)


def _save_outcomes(conn: Connection, pk: int, outcomes: Iterable[CaseOutcome]) -> int:
    saved = 0
    for batch in _chunks(outcomes, SAVE_CHUNK):
        cases, tools, errors, golds = [], [], {}, {}
        for o in batch:
            r = o.result
            failing = r.status != "pass"
            if failing and o.gold is not None and o.gold_digest:
                golds[o.gold_digest] = {"digest": o.gold_digest, "case_id": o.gold.id, "body": dumps_record(o.gold)}
            cases.append({
                "run_pk": pk, "case_id": r.case_id, "trial": r.trial, "kind": r.kind, "status": r.status,
                "matched": None if r.matched is None else str(r.matched),
                "expected_behavior": r.expected_behavior, "actual_behavior": r.actual_behavior,
                "selection": r.verdicts.selection, "arguments": r.verdicts.arguments,
                "sequencing": r.verdicts.sequencing,
                "expected_tools": canonical.dumps_stored(list(r.expected_tools)),
                "actual_tools": canonical.dumps_stored(list(r.actual_tools)),
                "error_codes": canonical.dumps_stored(sorted({e.code.value for e in r.errors})),
                "split": r.split, "toolkit_size": r.toolkit_size, "tags": canonical.dumps_stored(list(r.tags)),
                "gold_digest": o.gold_digest if failing and o.gold is not None else None,
                "result": r.model_dump_json() if failing else None,
                "actual": dumps_record(o.run) if failing and o.run is not None else None,
            })
            # The same membership the report's per-tool breakdown uses.
            tools += [{"run_pk": pk, "case_id": r.case_id, "trial": r.trial, "tool": tool}
                      for tool in sorted(set(r.expected_tools) or {NO_CALL})]
            for position, e in enumerate(r.errors):
                errors[r.case_id, r.trial, position] = {
                    "run_pk": pk, "case_id": r.case_id, "trial": r.trial, "position": position,
                    "code": e.code.value, "pattern": pattern_of(e)[1], "tool": e.tool, "arg": e.arg}
        if golds:
            known = set(conn.scalars(select(t.RunGoldCaseRow.digest).where(
                t.RunGoldCaseRow.digest.in_(list(golds)))))
            fresh = [g for digest, g in golds.items() if digest not in known]
            if fresh:
                conn.execute(insert(t.RunGoldCaseRow), fresh)
        conn.execute(insert(t.RunCaseRow), cases)
        conn.execute(insert(t.RunCaseToolRow), tools)
        if errors:
            conn.execute(insert(t.RunCaseErrorRow), list(errors.values()))
        saved += len(cases)
    return saved


def delete_run(db: Database, run_id: str, *, actor: str) -> None:
    """Remove a saved run (reviewers and admins): the history loses a point, so it is an audit event."""
    with db.write() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "delete saved runs")
        pk = _run_pk(conn, run_id)
        gone = conn.execute(select(t.RunRow.gold_version, t.RunRow.label, t.RunRow.model, t.RunRow.results,
                                   t.RunRow.passed, t.RunRow.created_at).where(t.RunRow.id == pk)).one()
        audit(conn, actor=actor, action="run.delete", entity="run", entity_id=run_id, before=dict(gone._mapping))
        for table in (t.RunCaseErrorRow, t.RunCaseToolRow, t.RunCaseRow, t.RunPatternRow, t.RunConfusionRow,
                      t.RunGroupRow, t.RunMetricRow):
            conn.execute(delete(table).where(table.run_pk == pk))
        conn.execute(delete(t.RunRow).where(t.RunRow.id == pk))
        still_used = select(t.RunCaseRow.gold_digest).where(t.RunCaseRow.gold_digest.is_not(None))
        conn.execute(delete(t.RunGoldCaseRow).where(t.RunGoldCaseRow.digest.not_in(still_used)))

# -- runs -------------------------------------------------------------------------------------

def _run_pk(conn: Connection, run_id: str) -> int:
    pk = conn.scalar(select(t.RunRow.id).where(t.RunRow.run_id == run_id))
    if pk is None:
        raise RunNotFound(f"no saved run with id {run_id!r} (toolgold runs list shows the saved runs)")
    return int(pk)

_INFO = (t.RunRow.run_id, t.RunRow.label, t.RunRow.model, t.RunRow.prompt_version, t.RunRow.agent,
         t.RunRow.gold_version, t.RunRow.gold_digest, t.RunRow.schema_version, t.RunRow.schema_hash,
         t.RunRow.git_commit, t.RunRow.source, t.RunRow.created_at, t.RunRow.results, t.RunRow.passed,
         t.RunRow.failed, t.RunRow.needs_review)


def _infos(conn: Connection, where: Any = None, *, newest_first: bool = False,
           limit: int | None = None) -> list[RunInfo]:
    q = select(*_INFO)
    if where is not None:
        q = q.where(where)
    if newest_first:
        q = q.order_by(t.RunRow.created_at.desc(), t.RunRow.id.desc())
    else:
        q = q.order_by(t.RunRow.created_at, t.RunRow.id)
    if limit is not None:
        q = q.limit(limit)
    return [RunInfo(**row._asdict()) for row in conn.execute(q)]


def get_run(db: Database, run_id: str) -> RunInfo:
    with db.read() as conn:
        found = _infos(conn, t.RunRow.run_id == run_id)
    if not found:
        raise RunNotFound(f"no saved run with id {run_id!r} (toolgold runs list shows the saved runs)")
    return found[0]


def list_runs(db: Database, *, gold_version: str | None = None, limit: int = 100) -> list[RunInfo]:
    """Saved runs, newest first."""
    where = t.RunRow.gold_version == gold_version if gold_version is not None else None
    with db.read() as conn:
        return _infos(conn, where, newest_first=True, limit=limit)


def gold_versions(db: Database) -> list[GoldVersionRuns]:
    """Gold versions with saved runs, the one with the latest run first."""
    q = (select(t.RunRow.gold_version, func.count(), func.max(t.RunRow.created_at))
         .group_by(t.RunRow.gold_version))
    with db.read() as conn:
        rows = [GoldVersionRuns(v, n, latest) for v, n, latest in conn.execute(q)]
    return sorted(rows, key=lambda g: (g.latest_at, g.gold_version), reverse=True)


def run_report(db: Database, run_id: str) -> Report:
    """The saved report summary (without the per-case list)."""
    with db.read() as conn:
        body = conn.scalar(select(t.RunRow.report).where(t.RunRow.run_id == run_id))
    if body is None:
        raise RunNotFound(f"no saved run with id {run_id!r} (toolgold runs list shows the saved runs)")
    return Report.model_validate_json(body)


def result_lines(db: Database, run_id: str) -> Iterator[str]:
    """Every result of a run as a ``CaseResult`` JSON line, in (case id, trial) order: what a report's
    per-case list needs to serve as a ``--baseline``. Failures are as scored; a passing result is rebuilt
    from its row (its confusion pairs, call counts and sequence metrics are not kept)."""
    c = t.RunCaseRow
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        rows = conn.execute(select(c.case_id, c.trial, c.kind, c.status, c.matched, c.expected_behavior,
                                   c.actual_behavior, c.selection, c.arguments, c.sequencing,
                                   c.expected_tools, c.actual_tools, c.split, c.toolkit_size, c.tags, c.result)
                            .where(c.run_pk == pk)).all()
    for row in sorted(rows, key=lambda r: (r.case_id, r.trial)):
        if row.result is not None:
            yield row.result
            continue
        matched = int(row.matched) if row.matched and row.matched.isdigit() else row.matched
        yield CaseResult(
            case_id=row.case_id, trial=row.trial, kind=row.kind, status=row.status, matched=matched,
            expected_behavior=row.expected_behavior, actual_behavior=row.actual_behavior,
            verdicts=Verdicts(selection=row.selection, arguments=row.arguments, sequencing=row.sequencing),
            expected_tools=_json_list(row.expected_tools), actual_tools=_json_list(row.actual_tools),
            split=row.split, toolkit_size=row.toolkit_size, tags=_json_list(row.tags)).model_dump_json()

# -- history ----------------------------------------------------------------------------------

def history(db: Database, gold_version: str | None = None, *, run_ids: Sequence[str] | None = None,
            limit: int = 50) -> History:
    """The latest ``limit`` runs of a gold version (default: the version of the newest run), or exactly
    ``run_ids``, which must share one gold version."""
    with db.read() as conn:
        if run_ids is not None:
            runs = _infos(conn, t.RunRow.run_id.in_(list(run_ids)))
            missing = sorted(set(run_ids) - {r.run_id for r in runs})
            if missing:
                raise RunNotFound(f"no saved run with id {missing[0]!r}")
            if len({r.gold_version for r in runs}) > 1:
                raise GoldVersionMismatch([(r.run_id, r.gold_version) for r in runs])
            gold_version = runs[0].gold_version if runs else gold_version
        else:
            if gold_version is None:
                newest = _infos(conn, newest_first=True, limit=1)
                gold_version = newest[0].gold_version if newest else ""
            runs = _infos(conn, t.RunRow.gold_version == gold_version, newest_first=True, limit=limit)
            runs.reverse()
        pks = list(conn.scalars(select(t.RunRow.id).where(
            t.RunRow.run_id.in_([r.run_id for r in runs]))))
        metrics = [MetricPoint(*row) for row in conn.execute(
            select(t.RunRow.run_id, t.RunMetricRow.metric, t.RunMetricRow.value, t.RunMetricRow.count,
                   t.RunMetricRow.total)
            .join(t.RunRow, t.RunRow.id == t.RunMetricRow.run_pk)
            .where(t.RunMetricRow.run_pk.in_(pks)))]
        groups = _groups(conn, t.RunGroupRow.run_pk.in_(pks))
    others = tuple(g for g in gold_versions(db) if g.gold_version != gold_version)
    return History(gold_version=gold_version or "", runs=tuple(runs), metrics=tuple(metrics),
                   groups=tuple(groups), other_versions=others)


def _groups(conn: Connection, where: Any) -> list[GroupPoint]:
    g = t.RunGroupRow
    q = (select(t.RunRow.run_id, g.kind, g.name, g.results, g.passed, g.selection_ok, g.selection_n,
                g.arguments_ok, g.arguments_n, g.sequencing_ok, g.sequencing_n)
         .join(t.RunRow, t.RunRow.id == g.run_pk).where(where))
    out = []
    for run_id, kind, name, results, passed, so, sn, ao, an, qo, qn in conn.execute(q):
        out.append(GroupPoint(run_id=run_id, kind=kind, name=name, results=results, passed=passed,
                              selection=_rate(so, sn), arguments=_rate(ao, an), sequencing=_rate(qo, qn)))
    return sorted(out, key=lambda p: (p.kind, p.name, p.run_id))

# -- one run ----------------------------------------------------------------------------------

def run_groups(db: Database, run_id: str, kind: str) -> list[GroupPoint]:
    """One breakdown of a run: ``tool``, ``tag``, ``split`` or ``toolkit_size``."""
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        return _groups(conn, and_(t.RunGroupRow.run_pk == pk, t.RunGroupRow.kind == kind))


def confusion(db: Database, run_id: str) -> list[ConfusionCell]:
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        rows = conn.execute(select(t.RunConfusionRow.gold, t.RunConfusionRow.actual, t.RunConfusionRow.count)
                            .where(t.RunConfusionRow.run_pk == pk)).all()
    return sorted((ConfusionCell(gold=g, actual=a, count=n) for g, a, n in rows),
                  key=lambda c: (c.gold, c.actual))


def failure_patterns(db: Database, run_id: str) -> list[PatternInfo]:
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        rows = conn.execute(select(t.RunPatternRow.rank, t.RunPatternRow.code, t.RunPatternRow.text,
                                   t.RunPatternRow.count, t.RunPatternRow.of)
                            .where(t.RunPatternRow.run_pk == pk).order_by(t.RunPatternRow.rank)).all()
    return [PatternInfo(*row) for row in rows]

_SUMMARY = (t.RunCaseRow.case_id, t.RunCaseRow.trial, t.RunCaseRow.status, t.RunCaseRow.error_codes,
            t.RunCaseRow.expected_tools, t.RunCaseRow.actual_tools, t.RunCaseRow.expected_behavior,
            t.RunCaseRow.actual_behavior)


def _summary(row: Any) -> CaseSummary:
    case_id, trial, status, codes, expected, actual, expected_behavior, actual_behavior = row
    return CaseSummary(case_id=case_id, trial=trial, status=status, error_codes=_json_list(codes),
                       expected_tools=_json_list(expected), actual_tools=_json_list(actual),
                       expected_behavior=expected_behavior, actual_behavior=actual_behavior)


def failing_cases(db: Database, run_id: str, *, tool: str | None = None, code: str | None = None,
                  pattern: str | None = None, limit: int = 200) -> tuple[list[CaseSummary], int]:
    """Results of a run that did not pass, ordered by case id: all of them, those counted under
    ``tool`` (as the per-tool table counts them), or those with an error of ``code`` (and ``pattern``,
    a failure pattern's text). Returns up to ``limit`` of them and how many there are."""
    c = t.RunCaseRow
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        q = select(*_SUMMARY).where(c.run_pk == pk, c.status != "pass")
        if tool is not None:
            q = q.where(select(t.RunCaseToolRow.tool).where(
                t.RunCaseToolRow.run_pk == pk, t.RunCaseToolRow.case_id == c.case_id,
                t.RunCaseToolRow.trial == c.trial, t.RunCaseToolRow.tool == tool).exists())
        if code is not None or pattern is not None:
            e = t.RunCaseErrorRow
            match = select(e.code).where(e.run_pk == pk, e.case_id == c.case_id, e.trial == c.trial)
            if code is not None:
                match = match.where(e.code == code)
            if pattern is not None:
                match = match.where(e.pattern == pattern)
            q = q.where(match.exists())
        rows = [_summary(row) for row in conn.execute(q)]
    # Sorted here, not in SQL: collations differ between backends; code point order is the same.
    rows.sort(key=lambda s: (s.case_id, s.trial))
    return rows[:limit], len(rows)


def case_detail(db: Database, run_id: str, case_id: str, trial: int = 0) -> CaseDetail:
    c = t.RunCaseRow
    with db.read() as conn:
        pk = _run_pk(conn, run_id)
        row = conn.execute(select(*_SUMMARY, c.result, c.actual, t.RunGoldCaseRow.body)
                           .outerjoin(t.RunGoldCaseRow, t.RunGoldCaseRow.digest == c.gold_digest)
                           .where(c.run_pk == pk, c.case_id == case_id, c.trial == trial)).first()
    if row is None:
        raise RunHistoryError(f"run {run_id!r} has no result for case {case_id!r} trial {trial}")
    return CaseDetail(
        run_id=run_id, summary=_summary(row[:-3]),
        result=CaseResult.model_validate_json(row.result) if row.result else None,
        gold=parse_record(parse_json_text(row.body), expect=GoldCase) if row.body else None,
        actual=parse_record(parse_json_text(row.actual), expect=RunRecord) if row.actual else None)

# -- comparing two runs -----------------------------------------------------------------------

def diff_runs(db: Database, before: str, after: str, *, limit: int = DIFF_LIST_LIMIT) -> RunDiff:
    """Pair the results of two runs on the same gold version by (case id, trial): fixed, broken and
    still failing cases, and the exact McNemar test on the discordant pairs."""
    with db.read() as conn:
        found = {r.run_id: r for r in _infos(conn, t.RunRow.run_id.in_([before, after]))}
        for run_id in (before, after):
            if run_id not in found:
                raise RunNotFound(f"no saved run with id {run_id!r} (toolgold runs list shows the saved runs)")
        a_info, b_info = found[before], found[after]
        if a_info.gold_version != b_info.gold_version:
            raise GoldVersionMismatch([(before, a_info.gold_version), (after, b_info.gold_version)])
        a_pk, b_pk = _run_pk(conn, before), _run_pk(conn, after)
        a, b = t.RunCaseRow.__table__.alias("a"), t.RunCaseRow.__table__.alias("b")
        paired = and_(a.c.case_id == b.c.case_id, a.c.trial == b.c.trial)
        a_pass, b_pass = a.c.status == "pass", b.c.status == "pass"
        counts = conn.execute(
            select(func.count(),
                   func.sum(case((and_(a_pass, b_pass), 1), else_=0)),
                   func.sum(case((and_(a_pass, ~b_pass), 1), else_=0)),
                   func.sum(case((and_(~a_pass, b_pass), 1), else_=0)))
            .select_from(a.join(b, paired)).where(a.c.run_pk == a_pk, b.c.run_pk == b_pk)).one()
        pairs, both_pass, only_before_pass, only_after_pass = (int(v or 0) for v in counts)
        changed = conn.execute(
            select(a.c.case_id, a.c.trial, a.c.status, b.c.status, a.c.error_codes, b.c.error_codes)
            .select_from(a.join(b, paired))
            .where(a.c.run_pk == a_pk, b.c.run_pk == b_pk, ~and_(a_pass, b_pass))).all()
        sizes = dict(conn.execute(select(t.RunCaseRow.run_pk, func.count()).where(
            t.RunCaseRow.run_pk.in_([a_pk, b_pk])).group_by(t.RunCaseRow.run_pk)).all())
    lists: dict[str, list[DiffCase]] = {"fixed": [], "broken": [], "still": []}
    for case_id, trial, was, now, was_codes, now_codes in changed:
        item = DiffCase(case_id, trial, was, now, _json_list(was_codes), _json_list(now_codes))
        lists["fixed" if now == "pass" else "broken" if was == "pass" else "still"].append(item)
    for items in lists.values():
        items.sort(key=lambda d: (d.case_id, d.trial))
    both_fail = pairs - both_pass - only_before_pass - only_after_pass
    mcnemar = McNemar(pairs=pairs, both_pass=both_pass, only_baseline=only_before_pass,
                      only_current=only_after_pass, both_fail=both_fail,
                      p_value=mcnemar_exact(only_before_pass, only_after_pass))
    return RunDiff(before=a_info, after=b_info, fixed=tuple(lists["fixed"][:limit]),
                   broken=tuple(lists["broken"][:limit]), still_failing=tuple(lists["still"][:limit]),
                   mcnemar=mcnemar, only_before=sizes.get(a_pk, 0) - pairs, only_after=sizes.get(b_pk, 0) - pairs,
                   truncated=any(len(v) > limit for v in lists.values()))


def _rate(ok: int, n: int) -> Rate:
    return Rate(count=ok, total=n, value=ok / n if n else None, ci95=wilson(ok, n))


NO_META = RunMeta()


def score_and_save(db: Database, cases: Sequence[GoldCase], runs: Sequence[RunRecord],
                   meta: RunMeta = NO_META) -> tuple[Report, RunInfo]:
    """Score ``runs`` against ``cases`` and save the run: the programmatic twin of ``toolgold score --save``.
    The records are written to temporary files and scored by the file engine, so this saves exactly what
    the command saves for the same records."""
    with tempfile.TemporaryDirectory(prefix="toolgold-score-") as tmp:
        gold, run_file = Path(tmp) / "gold.jsonl", Path(tmp) / "runs.jsonl"
        gold.write_text("".join(dumps_record(c) + "\n" for c in cases), encoding="utf-8")
        run_file.write_text("".join(dumps_record(r) + "\n" for r in runs), encoding="utf-8")
        return score_files_and_save(db, gold, run_file, meta)


def score_files_and_save(db: Database, gold: Path, runs: Path, meta: RunMeta = NO_META, *,
                         names: tuple[str, str] | None = None) -> tuple[Report, RunInfo]:
    """Score a runs file against a gold file with the engine ``toolgold score`` uses (``scorer.engine``) and
    save the run; ``names`` are what errors call the two files. One process: the app's server is threaded,
    and forking it for workers is not safe (the engine gives the same report with any number)."""
    from scorer.engine import score_files, spooled_lines

    spool_dir = Path(tempfile.mkdtemp(prefix="toolgold-score-"))
    try:
        scored = score_files(gold, runs, workers=1, spool_dir=spool_dir, names=names)
        info = save_scored(db, scored.report, lambda: spooled_lines(scored.spools), gold, runs, meta)
    finally:
        shutil.rmtree(spool_dir, ignore_errors=True)
    return scored.report, info


def save_scored(db: Database, report: Report, result_lines: Callable[[], Iterable[str]], gold: Path, runs: Path,
                meta: RunMeta) -> RunInfo:
    """Save what the engine scored. ``result_lines`` gives the per-result JSON lines (it is read twice: once
    for which results failed, once to save them); the gold and run files are read again for the fingerprint
    and for the failures' gold cases and calls. The run id and model default to the first run's."""
    failing = _failing_keys(result_lines())
    fingerprint, gold_cases = _read_gold(gold, {case_id for case_id, _ in failing})
    first, run_records = _read_runs(runs, failing)
    results = (CaseResult.model_validate_json(line) for line in result_lines())
    return save_run(db, report, meta.filled_from(first), fingerprint, outcomes(results, gold_cases, run_records))


def gold_file_fingerprint(gold: Path) -> GoldFingerprint:
    """The fingerprint (and so the gold version) of a gold file, read in constant memory."""
    return _read_gold(gold, set())[0]


def _failing_keys(result_lines: Iterable[str]) -> set[tuple[str, int]]:
    keys = set()
    for line in result_lines:
        data = json.loads(line)
        if data.get("status") != "pass":
            keys.add((data["case_id"], data.get("trial") or 0))
    return keys


def _read_gold(gold: Path, wanted: set[str]) -> tuple[GoldFingerprint, dict[str, tuple[str, GoldCase]]]:
    builder = FingerprintBuilder()
    kept: dict[str, tuple[str, GoldCase]] = {}
    with gold.open("rb") as fh:
        for number, value in iter_json_lines(fh, str(gold)):
            case: GoldCase = parse_record(value, expect=GoldCase, source=str(gold), line=number)
            digest = builder.add(case)
            if case.id in wanted:
                kept[case.id] = (digest, case)
    return builder.finish(), kept


def _read_runs(runs: Path, wanted: set[tuple[str, int]]) -> tuple[RunRecord | None, dict[tuple[str, int], RunRecord]]:
    first = None
    kept = {}
    with runs.open("rb") as fh:
        for number, value in iter_json_lines(fh, str(runs)):
            if first is None or (isinstance(value, dict) and (value.get("case_id"), value.get("trial") or 0) in wanted):
                record: RunRecord = parse_record(value, expect=RunRecord, source=str(runs), line=number)
                first = first or record
                if (record.case_id, record.trial) in wanted:
                    kept[record.case_id, record.trial] = record
    return first, kept


__all__ = ["CaseDetail", "CaseSummary", "DiffCase", "GoldVersionConflict", "GoldVersionMismatch",
           "GoldVersionRuns", "GroupPoint", "History", "MetricPoint", "PatternInfo", "RunDiff", "RunExists",
           "RunHistoryError", "RunInfo", "RunNotFound", "case_detail", "confusion", "delete_run", "diff_runs",
           "failing_cases", "failure_patterns", "get_run", "gold_file_fingerprint", "gold_versions", "history",
           "list_runs", "result_lines", "run_groups", "run_report", "save_run", "save_scored", "score_and_save", "score_files_and_save"]
