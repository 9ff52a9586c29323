"""Run history without SQL: what a saved run is made of, and the computations the dashboards share.

A saved run is a scored ``toolgold.report/1`` plus who made it (``RunMeta``), which gold it was scored
on (``GoldFingerprint``) and one ``CaseOutcome`` per result. Gold identity is content: the version label
is the ``provenance.gold_version`` every case carries (a frozen version's export stamps it), else a
digest of the cases. Trends and per-tool drops are pure functions of the store's read models.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from scorer import canonical
from scorer.formats import to_json
from scorer.model import GoldCase, RunRecord
from scorer.report import Rate, Report
from scorer.results import CaseResult

DIGEST_BITS = 256
DEFAULT_DROP = 0.05
EPSILON = 1e-9
"""A tool whose pass rate falls by more than this between two runs is highlighted (as the CI gate does)."""

DIMENSION_METRICS = ("pass_rate", "selection", "arguments", "sequencing", "macro_f1", "no_call_precision",
                     "no_call_recall", "over_call", "under_call", "clarify_asked")
"""Per-dimension trend lines: higher is better, except over_call and under_call."""
RISK_METRICS = ("redundancy", "ungrounded", "fabricated")
"""Rates where lower is better, over time: repeated calls, ungrounded values, invented values."""


@dataclass(frozen=True)
class GoldFingerprint:
    """Which gold a run was scored on."""

    digest: str
    """Order-independent hash of the cases' canonical JSON: the same set in any order hashes the same."""
    schema_hash: str
    """Hash of the distinct tool schemas the cases offer."""
    versions: tuple[str, ...]
    """The distinct ``provenance.gold_version`` labels (empty unless every case has one)."""
    cases: int

    @property
    def version(self) -> str:
        """The gold version runs are compared under: the frozen version label(s), else the digest."""
        return "+".join(self.versions) if self.versions else f"sha256:{self.digest[:12]}"


class FingerprintBuilder:
    """Fingerprints a gold set one case at a time in constant memory (the cases may stream)."""

    def __init__(self) -> None:
        self._sum = 0
        self._tools: set[str] = set()
        self._versions: set[str] = set()
        self._unversioned = False
        self._cases = 0

    def add(self, case: GoldCase) -> str:
        """Add a case; return its content digest (the key a saved failure's gold is stored under)."""
        digest = canonical.content_hash(to_json(case))
        # A sum of digests modulo 2^256 is a multiset hash: the order of the cases does not change it.
        self._sum = (self._sum + int(digest, 16)) % (1 << DIGEST_BITS)
        self._tools.update(canonical.content_hash(to_json(tool)) for tool in case.tools)
        if case.provenance.gold_version:
            self._versions.add(case.provenance.gold_version)
        else:
            self._unversioned = True
        self._cases += 1
        return digest

    def finish(self) -> GoldFingerprint:
        schema = hashlib.sha256("\n".join(sorted(self._tools)).encode("ascii")).hexdigest()
        digest = hashlib.sha256(f"{self._cases}:{self._sum:064x}".encode("ascii")).hexdigest()
        versions = () if self._unversioned else tuple(sorted(self._versions))
        return GoldFingerprint(digest=digest, schema_hash=schema, versions=versions, cases=self._cases)


def fingerprint(cases: Iterable[GoldCase]) -> GoldFingerprint:
    builder = FingerprintBuilder()
    for case in cases:
        builder.add(case)
    return builder.finish()


@dataclass(frozen=True)
class RunMeta:
    """What produced a run. Everything is optional; the store fills ``run_id`` and ``created_at``."""

    run_id: str | None = None
    label: str | None = None
    model: str | None = None
    prompt_version: str | None = None
    agent: str | None = None
    gold_version: str | None = None
    """Overrides the fingerprint's version label (a name for an unfrozen gold file)."""
    schema_version: str | None = None
    git_commit: str | None = None
    created_at: str | None = None
    """ISO 8601 UTC; defaults to now."""
    source: str = "api"

    def filled_from(self, run: RunRecord | None) -> RunMeta:
        """Take the run id and model the run records carry when none was given."""
        if run is None:
            return self
        agent = run.metadata.get("agent") if isinstance(run.metadata.get("agent"), str) else None
        return RunMeta(run_id=self.run_id or run.run_id, label=self.label, model=self.model or run.model,
                       prompt_version=self.prompt_version, agent=self.agent or agent,
                       gold_version=self.gold_version, schema_version=self.schema_version,
                       git_commit=self.git_commit, created_at=self.created_at, source=self.source)


@dataclass(frozen=True)
class CaseOutcome:
    """One scored result to save. ``gold_digest``/``gold``/``run`` matter only for results that did not
    pass: they are what the side-by-side view shows."""

    result: CaseResult
    gold_digest: str | None = None
    gold: GoldCase | None = None
    run: RunRecord | None = None


def outcomes(results: Iterable[CaseResult], gold: Mapping[str, tuple[str, GoldCase]],
             runs: Mapping[tuple[str, int], RunRecord]) -> Iterator[CaseOutcome]:
    """Pair results with their gold (``case id -> (digest, case)``) and run (``(case id, trial)``)."""
    for result in results:
        if result.status == "pass":
            yield CaseOutcome(result)
            continue
        digest, case = gold.get(result.case_id, (None, None))
        yield CaseOutcome(result, digest, case, runs.get((result.case_id, result.trial)))


def metric_values(report: Report) -> dict[str, Rate | float | None]:
    """The headline numbers saved with a run, by the names gates and comparisons use."""
    s, a = report.selection, report.abstention
    values: dict[str, Rate | float | None] = {
        "pass_rate": report.totals.pass_rate,
        "selection": s.accuracy,
        "macro_f1": s.macro.f1,
        "micro_f1": s.micro.f1,
        "arguments": report.arguments.accuracy,
        "sequencing": report.sequencing.accuracy,
        "exact_sequence": report.sequencing.exact_sequence,
        "no_call_precision": a.no_call_precision,
        "no_call_recall": a.no_call_recall,
        "over_call": a.over_call,
        "under_call": a.under_call,
        "clarify_asked": a.clarify_asked,
        "fabricated": a.clarify_fabricated,
        "redundancy": report.redundancy,
        "ungrounded": report.ungrounded,
    }
    for p in report.pass_hat_k:
        values[f"pass^{p.k}"] = p.value
    return values


# --------------------------------------------------------------------------------------------------
# Computations over the store's read models
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolPoint:
    """A tool's pass rate in one run (the results whose gold expects the tool; NO_CALL: expects none)."""

    run_id: str
    tool: str
    results: int
    passed: int

    @property
    def rate(self) -> float | None:
        return self.passed / self.results if self.results else None


@dataclass(frozen=True)
class ToolTrend:
    """A tool over the runs of one gold version, latest against the run before it."""

    tool: str
    rates: tuple[float | None, ...]
    """One per run, in run order (None: the tool had no results in that run)."""
    latest: ToolPoint | None
    previous: ToolPoint | None
    drop: float | None
    """previous − latest pass rate (positive: worse)."""
    flagged: bool
    failing: int = 0
    """Results of the tool that did not pass in the latest run."""
    best: float | None = field(default=None)


def tool_trends(run_ids: Sequence[str], points: Iterable[ToolPoint], *, threshold: float = DEFAULT_DROP,
                min_support: int = 1) -> list[ToolTrend]:
    """Per-tool lines over ``run_ids`` (oldest first). A tool is flagged when its pass rate in the latest
    run is more than ``threshold`` below the run before, with at least ``min_support`` results in both:
    a tool going 98% → 91% stands out even when the average holds. Flagged tools come first, worst drop
    first; then the rest by name."""
    order = {run_id: n for n, run_id in enumerate(run_ids)}
    by_tool: dict[str, dict[int, ToolPoint]] = {}
    for p in points:
        if p.run_id in order:
            by_tool.setdefault(p.tool, {})[order[p.run_id]] = p
    last = len(run_ids) - 1
    trends = []
    for tool, seen in by_tool.items():
        latest, previous = seen.get(last), seen.get(last - 1)
        drop = None
        if latest and previous and latest.rate is not None and previous.rate is not None:
            drop = previous.rate - latest.rate
        # The epsilon keeps 1.0 - 0.95 (0.0500...04 in floating point) from counting as beyond 0.05.
        flagged = (drop is not None and drop > threshold + EPSILON and latest is not None and previous is not None
                   and min(latest.results, previous.results) >= min_support)
        rates = tuple(seen[n].rate if n in seen else None for n in range(len(run_ids)))
        known = [r for r in rates if r is not None]
        trends.append(ToolTrend(tool=tool, rates=rates, latest=latest, previous=previous, drop=drop,
                                flagged=flagged, failing=(latest.results - latest.passed) if latest else 0,
                                best=max(known) if known else None))
    return sorted(trends, key=lambda t: (not t.flagged, -(t.drop or 0) if t.flagged else 0, t.tool))


__all__ = ["DEFAULT_DROP", "DIMENSION_METRICS", "RISK_METRICS", "CaseOutcome", "FingerprintBuilder",
           "GoldFingerprint", "RunMeta", "ToolPoint", "ToolTrend", "fingerprint", "metric_values", "outcomes",
           "tool_trends"]
