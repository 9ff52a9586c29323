"""The Markdown report, for pull-request comments."""

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

TOP_TOOLS = 25
TOP_REGRESSIONS = 25
TOP_FAILURE_ROWS = 60
"""Bounds that keep the comment PR-sized whatever the gold set's size: about 40,000 characters at most."""


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(escape(str(c)) for c in row) + " |" for row in rows]
    return lines


def render_markdown(report: Report) -> str:
    t = report.totals
    out = ["## toolgold score", "",
           f"**{t.passed}** pass, **{t.failed}** fail, **{t.needs_review}** need review — {t.results} results "
           f"from {t.cases} cases.", ""]
    for line in unscored_lines(report):
        out.append(f"> **Unscored:** {escape(line)}")
    if report.gates:
        out += ["", "### Gates", ""] + [f"- {escape(line)}" for line in gate_lines(report)]
    if report.judge is not None:
        out += ["", "### Judge", ""] + [f"- {escape(line)}" for line in judge_lines(report.judge)]
    out += ["", "### Dimensions", ""]
    out += table(("dimension", "metric", "value", "count", "95% CI"),
                 [(r.dimension, r.metric, *cells(r)) for r in headline_rows(report)])
    tools = tool_rows(report)
    if tools:
        out += ["", "### Per tool", ""]
        out += table(("tool", "support", "precision", "recall", "F1", "pass rate"), tools[:TOP_TOOLS])
    synthetic = synthetic_rows(report)
    if synthetic:
        out += ["", "### Real vs synthetic", "", *table(SYNTHETIC_HEADER, synthetic)]
    if report.failure_patterns:
        out += ["", "### Failure patterns", ""]
        out += [f"1. {escape(p.sentence)}" for p in report.failure_patterns[:TOP_PATTERNS]]
    lines = comparison_lines(report)
    if lines:
        # A PR comment stays readable (and under GitHub's 65,536 characters) with thousands of tools:
        # the worst regressions are listed, the rest counted.
        # comparison_lines ends with one line per regression, in the comparison's order.
        found = report.comparison.regressions if report.comparison else ()
        head, regressions = lines[: len(lines) - len(found)], lines[len(lines) - len(found):]
        worst = sorted(range(len(found)), key=lambda i: -found[i].drop)[:TOP_REGRESSIONS]
        kept = head + [regressions[i] for i in worst]
        out += ["", "### Against the baseline", ""] + [f"- {escape(line)}" for line in kept]
        if len(found) > TOP_REGRESSIONS:
            out.append(f"- (+{len(found) - TOP_REGRESSIONS} more tool regressions in the JSON report)")
    if report.failures:
        out += ["", "<details><summary>Failures</summary>", ""]
        rows = [(r.case_id, e.code.value, e.note) for r in report.failures[:TOP_FAILURES] for e in r.errors]
        out += table(("case", "code", "note"), rows[:TOP_FAILURE_ROWS])
        if len(rows) > TOP_FAILURE_ROWS:
            out += ["", f"(+{len(rows) - TOP_FAILURE_ROWS} more errors; --format json lists every case)"]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"
