"""The terminal report: aligned plain-text tables, the four dimensions apart, failures in words."""

from __future__ import annotations

from collections.abc import Sequence

from scorer.render.common import (
    SYNTHETIC_HEADER,
    TOP_FAILURES,
    TOP_PATTERNS,
    cells,
    comparison_lines,
    gate_lines,
    headline_rows,
    judge_lines,
    synthetic_rows,
    tool_rows,
    unscored_lines,
)
from scorer.report import Report

TOP_TOOLS = 15


def grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def render_table(report: Report) -> str:
    t = report.totals
    out = [f"toolgold score: {t.results} results from {t.cases} cases — {t.passed} pass, {t.failed} fail, "
           f"{t.needs_review} need review"]
    out += [f"UNSCORED: {line}" for line in unscored_lines(report)]
    out += ["", grid(("dimension", "metric", "value", "count", "95% CI"),
                     [(r.dimension, r.metric, *cells(r)) for r in headline_rows(report)])]
    tools = tool_rows(report)
    if tools:
        out += ["", grid(("tool", "support", "precision", "recall", "F1", "pass rate"), tools[:TOP_TOOLS])]
        if len(tools) > TOP_TOOLS:
            out.append(f"(+{len(tools) - TOP_TOOLS} more tools in the JSON report)")
    synthetic = synthetic_rows(report)
    if synthetic:
        out += ["", grid(SYNTHETIC_HEADER, synthetic)]
    if report.failure_patterns:
        out += ["", "Failure patterns:"]
        out += [f"  {p.sentence}" for p in report.failure_patterns[:TOP_PATTERNS]]
    if report.failures:
        out += ["", "Failures:"]
        for r in report.failures[:TOP_FAILURES]:
            trial = f" (trial {r.trial})" if r.trial else ""
            for e in r.errors or ():
                out.append(f"  {r.case_id}{trial}: {e.code.value}: {e.note}")
            for review in r.reviews if not r.errors else ():
                out.append(f"  {r.case_id}{trial}: needs review: {review.tool}.{review.arg} ({review.reason})")
        if t.failed + t.needs_review > TOP_FAILURES:
            out.append(f"  (+{t.failed + t.needs_review - TOP_FAILURES} more; --format json lists every case)")
    lines = comparison_lines(report)
    if lines:
        out += ["", "Against the baseline:"] + [f"  {line}" for line in lines]
    if report.gates:
        out += ["", "Gates:"] + [f"  {line}" for line in gate_lines(report)]
    if report.judge is not None:
        out += ["", "Judge:"] + [f"  {line}" for line in judge_lines(report.judge)]
    return "\n".join(out) + "\n"
