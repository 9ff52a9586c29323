"""The self-contained HTML report: no scripts, no external assets; the confusion matrix as a heatmap.

Every string from the data (tool names, case ids, notes) is escaped: transcripts are untrusted input.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from scorer.render.common import (
    TOP_FAILURES,
    TOP_PATTERNS,
    cells,
    comparison_lines,
    confusion_grid,
    counts,
    gate_lines,
    headline_rows,
    heatmap_labels,
    percent,
    tool_rows,
    unscored_lines,
)
from scorer.report import Report

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2430;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #dde;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{padding:.25rem .6rem;border:1px solid #dde;text-align:left}
th{background:#f3f5f9}td.num{text-align:right;font-variant-numeric:tabular-nums}
.warn{background:#fff4e0;border-left:4px solid #e8a33d;padding:.4rem .8rem}
.fail{color:#b3261e;font-weight:600}.pass{color:#1e7b34;font-weight:600}
table.heatmap td{width:2.2rem;text-align:center;font-size:12px;border:1px solid #fff}
table.heatmap th.col{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:12px}
table.heatmap th.row{font-weight:normal;font-size:12px;text-align:right}
small{color:#667}
"""


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], numeric_from: int = 99) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{escape(str(c))}</td>' if i >= numeric_from else f"<td>{escape(str(c))}</td>"
                         for i, c in enumerate(row)) + "</tr>"
        for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def heatmap(report: Report) -> str:
    """Rows are the gold class, columns what the agent called; colour is the share of the row."""
    labels = heatmap_labels(report)
    if not labels:
        return "<p><small>No turn cases: nothing to show.</small></p>"
    grid = confusion_grid(report, labels)
    head = "<th></th>" + "".join(f'<th class="col">{escape(label)}</th>' for label in labels)
    rows = []
    for label, row in zip(labels, grid, strict=True):
        total = sum(row) or 1
        tds = []
        for j, n in enumerate(row):
            share = n / total
            hue = 140 if labels[j] == label else 5
            colour = f"hsla({hue},65%,45%,{0.08 + 0.85 * share:.2f})" if n else "#fafbfc"
            tds.append(f'<td style="background:{colour}" title="gold {escape(label)} → {escape(labels[j])}: {n}">'
                       f"{n or ''}</td>")
        rows.append(f'<tr><th class="row">{escape(label)}</th>{"".join(tds)}</tr>')
    return (f'<table class="heatmap" data-testid="confusion-heatmap"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>'
            "<p><small>Rows: the tool the gold expects (NO_CALL: no call or ask). Columns: what the agent "
            "called. Green: agreement; red: confusion; shade: share of the row.</small></p>")


def render_html(report: Report) -> str:
    t = report.totals
    parts = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width,initial-scale=1">',
             f"<title>toolgold report</title><style>{_STYLE}</style></head><body>",
             "<h1>toolgold report</h1>",
             f"<p><b>{t.passed}</b> pass, <b>{t.failed}</b> fail, <b>{t.needs_review}</b> need review — "
             f"{t.results} results from {t.cases} cases.</p>"]
    parts += [f'<p class="warn">Unscored: {escape(line)}</p>' for line in unscored_lines(report)]
    if report.gates:
        parts.append("<h2>Gates</h2><ul>" + "".join(
            f'<li class="{"pass" if g.passed else "fail"}">{escape(line)}</li>'
            for g, line in zip(report.gates, gate_lines(report), strict=True)) + "</ul>")
    parts.append("<h2>Dimensions</h2>")
    parts.append(_table(("dimension", "metric", "value", "count", "95% CI"),
                        [(r.dimension, r.metric, *cells(r)) for r in headline_rows(report)], numeric_from=2))
    parts.append("<h2>Tool selection: confusion matrix</h2>" + heatmap(report))
    tools = tool_rows(report)
    if tools:
        parts.append("<h2>Per tool</h2>" + _table(("tool", "support", "precision", "recall", "F1", "pass rate"),
                                                   tools, numeric_from=1))
    for kind, title in (("tag", "By tag"), ("split", "By split"), ("toolkit_size", "By toolkit size"),
                        ("origin", "Real vs synthetic"), ("transformation", "By transformation")):
        groups = report.breakdowns.get(kind, {})
        if groups and (kind != "origin" or "synthetic" in groups):  # a real-only gold set needs no such table
            parts.append(f"<h2>{title}</h2>" + _table(
                (kind, "results", "pass rate", "selection", "arguments", "sequencing"),
                [(name, g.results, f"{percent(g.passed.value)} ({counts(g.passed)})", percent(g.selection.value),
                  percent(g.arguments.value), percent(g.sequencing.value)) for name, g in groups.items()],
                numeric_from=1))
    if report.failure_patterns:
        parts.append("<h2>Failure patterns</h2><ol>" + "".join(
            f"<li>{escape(p.sentence)} <small>(e.g. {escape(', '.join(p.examples))})</small></li>"
            for p in report.failure_patterns[:TOP_PATTERNS]) + "</ol>")
    lines = comparison_lines(report)
    if lines:
        parts.append("<h2>Against the baseline</h2><ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines)
                     + "</ul>")
    if report.failures:
        rows = [(r.case_id, e.code.value, e.note) for r in report.failures[:TOP_FAILURES * 5] for e in r.errors]
        parts.append("<h2>Failures</h2>" + _table(("case", "code", "note"), rows))
    parts.append("</body></html>\n")
    return "".join(parts)
