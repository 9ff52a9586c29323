"""Comparing a report with a baseline: per-dimension and per-tool deltas, an exact McNemar test on the
paired per-result outcomes, and per-tool regression alerts that fire even when the average holds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scorer.report import Comparison, Delta, McNemar, Report, ToolRegression
from scorer.stats import mcnemar_exact

DEFAULT_MAX_TOOL_DROP = 0.05
"""A tool whose pass rate falls by more than this (absolute) is a regression."""
DEFAULT_MIN_TOOL_SUPPORT = 10
"""Tools with fewer results than this, in either report, are too noisy to alert on."""


@dataclass(frozen=True, slots=True)
class Paired:
    both_pass: int = 0
    only_baseline: int = 0
    only_current: int = 0
    both_fail: int = 0


def pair_outcomes(baseline: Mapping[tuple[str, int], bool], current: Iterable[tuple[str, int, bool]]) -> Paired:
    """Count paired outcomes of results present in both reports, keyed by (case id, trial)."""
    counts = [0, 0, 0, 0]
    for case_id, trial, passed in current:
        before = baseline.get((case_id, trial))
        if before is None:
            continue
        counts[(0 if before else 2) + (0 if passed else 1)] += 1
    both_pass, only_baseline, only_current, both_fail = counts
    return Paired(both_pass=both_pass, only_baseline=only_baseline, only_current=only_current, both_fail=both_fail)


def dimension_values(report: Report) -> dict[str, float | None]:
    """The headline number of each dimension, by the name gates and comparisons use."""
    s, a = report.selection, report.abstention
    return {
        "pass_rate": report.totals.pass_rate.value,
        "selection": s.accuracy.value,
        "macro_f1": s.macro.f1,
        "micro_f1": s.micro.f1,
        "arguments": report.arguments.accuracy.value,
        "sequencing": report.sequencing.accuracy.value,
        "exact_sequence": report.sequencing.exact_sequence.value,
        "no_call_precision": a.no_call_precision.value,
        "no_call_recall": a.no_call_recall.value,
        "over_call": a.over_call.value,
        "under_call": a.under_call.value,
        "clarify_asked": a.clarify_asked.value,
        "redundancy": report.redundancy.value,
        "ungrounded": report.ungrounded.value,
        "argument_accuracy": report.partial.argument_accuracy.value,
        "call_precision": report.partial.call_precision.value,
        "call_recall": report.partial.call_recall.value,
        "call_f1": report.partial.call_f1.value,
        "sequence_alignment": report.partial.sequence_alignment.value,
    }


def _delta(metric: str, before: float | None, now: float | None) -> Delta:
    return Delta(metric=metric, baseline=before, current=now,
                 delta=None if before is None or now is None else now - before)


def compare(current: Report, baseline: Report, paired: Paired | None = None, *,
            max_tool_drop: float = DEFAULT_MAX_TOOL_DROP,
            min_tool_support: int = DEFAULT_MIN_TOOL_SUPPORT) -> Comparison:
    before, now = dimension_values(baseline), dimension_values(current)
    dimensions = tuple(_delta(m, before[m], now[m]) for m in now)
    old_tools, new_tools = baseline.breakdowns.get("tool", {}), current.breakdowns.get("tool", {})
    tools = []
    regressions = []
    for tool in sorted(set(old_tools) | set(new_tools)):
        old, new = old_tools.get(tool), new_tools.get(tool)
        tools.append(_delta(tool, old.passed.value if old else None, new.passed.value if new else None))
        if old is None or new is None or old.passed.value is None or new.passed.value is None:
            continue
        drop = old.passed.value - new.passed.value
        # The tolerance keeps a drop of exactly the threshold (100% -> 95% at 0.05) from failing on float noise.
        if drop > max_tool_drop + 1e-9 and min(old.results, new.results) >= min_tool_support:
            regressions.append(ToolRegression(tool=tool, baseline=old.passed, current=new.passed, drop=drop))
    mcnemar = None
    if paired is not None:
        mcnemar = McNemar(
            pairs=paired.both_pass + paired.only_baseline + paired.only_current + paired.both_fail,
            both_pass=paired.both_pass, only_baseline=paired.only_baseline, only_current=paired.only_current,
            both_fail=paired.both_fail, p_value=mcnemar_exact(paired.only_baseline, paired.only_current))
    return Comparison(dimensions=dimensions, tools=tuple(tools), mcnemar=mcnemar, regressions=tuple(regressions),
                      max_tool_drop=max_tool_drop, min_tool_support=min_tool_support)


__all__ = ["DEFAULT_MAX_TOOL_DROP", "DEFAULT_MIN_TOOL_SUPPORT", "Paired", "compare", "dimension_values",
           "pair_outcomes"]
