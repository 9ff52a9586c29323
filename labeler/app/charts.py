"""Altair charts of the run-history dashboards, built from the store's read models.

Runs are placed on the x axis in the order they were saved, named ``"3 · prompt v7"`` so two runs with the
same label stay apart. Every chart carries tooltips with the counts behind a rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import altair as alt
import pandas as pd

from labeler.store import GroupPoint, MetricPoint, RunInfo
from labeler.store.history import ToolTrend
from scorer.agreement import DecisionMatrix
from scorer.codes import NO_CALL
from scorer.report import ConfusionCell

HEATMAP_LIMIT = 20
CELL = 30
HEATMAP_MARGIN = 170
"""Room for the rotated column labels and the axis title above the cells."""
FLAGGED = "#d92d20"
CALM = "#98a2b3"
RISEN = "#079455"
EPSILON = 1e-9


def run_names(runs: Sequence[RunInfo]) -> dict[str, str]:
    """run id -> the name the x axis shows."""
    return {r.run_id: f"{n} · {r.name}" for n, r in enumerate(runs, start=1)}


def _axis_order(runs: Sequence[RunInfo]) -> list[str]:
    return list(run_names(runs).values())


def metric_frame(runs: Sequence[RunInfo], points: Iterable[MetricPoint], metrics: Sequence[str]) -> pd.DataFrame:
    names = run_names(runs)
    rows = []
    for p in points:
        if p.metric in metrics and p.run_id in names and p.value is not None:
            low, high = p.ci95 or (None, None)
            rows.append({"run": names[p.run_id], "metric": p.metric, "value": p.value, "low": low, "high": high,
                         "count": "" if p.count is None else f"{p.count}/{p.total}"})
    return pd.DataFrame(rows, columns=["run", "metric", "value", "low", "high", "count"])


def trend_chart(runs: Sequence[RunInfo], points: Iterable[MetricPoint], metrics: Sequence[str],
                *, title: str) -> alt.LayerChart:
    """One line per metric over the runs, with its 95% interval as a band."""
    frame = metric_frame(runs, points, metrics)
    x = alt.X("run:N", sort=_axis_order(runs), title=None, axis=alt.Axis(labelAngle=-30))
    color = alt.Color("metric:N", sort=list(metrics), title=None)
    base = alt.Chart(frame, title=title)
    band = base.mark_area(opacity=0.08).encode(x=x, y="low:Q", y2="high:Q", color=color)
    line = base.mark_line(point=True).encode(
        x=x, y=alt.Y("value:Q", title=None, axis=alt.Axis(format="%")), color=color,
        tooltip=["run", "metric", alt.Tooltip("value:Q", format=".1%"), "count"])
    return alt.LayerChart(layer=[band, line])


def tool_frame(runs: Sequence[RunInfo], trends: Sequence[ToolTrend]) -> pd.DataFrame:
    names = list(run_names(runs).values())
    rows = [{"run": names[n], "tool": t.tool, "pass rate": rate, "flagged": t.flagged}
            for t in trends for n, rate in enumerate(t.rates) if rate is not None]
    return pd.DataFrame(rows, columns=["run", "tool", "pass rate", "flagged"])


def tool_chart(runs: Sequence[RunInfo], trends: Sequence[ToolTrend]) -> alt.LayerChart:
    """Per-tool pass rate over the runs: tools that dropped beyond the threshold in red, the rest grey; each
    line carries its tool's name at its last point (grey lines are told apart by name, not by colour)."""
    frame = tool_frame(runs, trends)
    x = alt.X("run:N", sort=_axis_order(runs), title=None, axis=alt.Axis(labelAngle=-30))
    y = alt.Y("pass rate:Q", title=None, axis=alt.Axis(format="%"))
    color = alt.condition(alt.datum.flagged, alt.value(FLAGGED), alt.value(CALM))
    base = alt.Chart(frame, title="Pass rate per tool")
    lines = base.mark_line(point=True).encode(
        x=x, y=y, detail="tool:N", color=color,
        strokeWidth=alt.condition(alt.datum.flagged, alt.value(3), alt.value(1.2)),
        tooltip=["tool", "run", alt.Tooltip("pass rate:Q", format=".1%")])
    last = frame.sort_values("run", key=lambda col: col.map(_axis_order(runs).index)).groupby("tool").tail(1)
    labels = alt.Chart(last).mark_text(align="left", dx=6, fontSize=11).encode(x=x, y=y, text="tool:N", color=color)
    return alt.LayerChart(layer=[lines, labels])


def slope_frame(rows: Sequence[tuple[str, float | None, float | None]]) -> pd.DataFrame:
    """(name, before, after) as one row per side, for the names that have both."""
    def trend(change: float) -> str:
        return "fell" if change < -EPSILON else "rose" if change > EPSILON else "held"

    out = [{"name": name, "side": side, "value": value, "change": after - before, "trend": trend(after - before)}
           for name, before, after in rows if before is not None and after is not None
           for side, value in (("before", before), ("after", after))]
    return pd.DataFrame(out, columns=["name", "side", "value", "change", "trend"])


def slope_chart(rows: Sequence[tuple[str, float | None, float | None]], *, title: str) -> alt.LayerChart:
    """Before and after side by side, one line per name: what fell slopes down in red, what rose in green."""
    frame = slope_frame(rows)
    x = alt.X("side:N", sort=["before", "after"], title=None, axis=alt.Axis(labelAngle=0),
              scale=alt.Scale(padding=0.3))
    y = alt.Y("value:Q", title=None, axis=alt.Axis(format="%"))
    color = alt.Color("trend:N", scale=alt.Scale(domain=["fell", "rose", "held"], range=[FLAGGED, RISEN, CALM]),
                      title=None)
    base = alt.Chart(frame, title=title)
    lines = base.mark_line(point=True).encode(x=x, y=y, detail="name:N", color=color, tooltip=[
        "name", "side", alt.Tooltip("value:Q", format=".1%"), alt.Tooltip("change:Q", format="+.1%")])
    labels = base.transform_filter(alt.datum.side == "after").mark_text(align="left", dx=6, fontSize=11).encode(
        x=x, y=y, text="name:N", color=color)
    return alt.LayerChart(layer=[lines, labels])


def run_heatmap(runs: Sequence[RunInfo], trends: Sequence[ToolTrend]) -> alt.LayerChart:
    """Tools × runs, each cell the tool's pass rate in that run (blank: no results)."""
    frame = tool_frame(runs, trends)
    base = alt.Chart(frame, title="Pass rate per tool and run").encode(
        x=alt.X("run:N", sort=_axis_order(runs), title=None, axis=alt.Axis(labelAngle=-30, orient="top")),
        y=alt.Y("tool:N", title=None, sort=[t.tool for t in trends], axis=alt.Axis(labelLimit=220)))
    rect = base.mark_rect().encode(
        color=alt.Color("pass rate:Q", scale=alt.Scale(scheme="redyellowgreen", domain=[0, 1]), title="pass rate"),
        tooltip=["tool", "run", alt.Tooltip("pass rate:Q", format=".1%")])
    text = base.mark_text(fontSize=10).encode(text=alt.Text("pass rate:Q", format=".0%"))
    return alt.LayerChart(layer=[rect, text])


def heatmap_frame(cells: Sequence[ConfusionCell], limit: int = HEATMAP_LIMIT) -> tuple[pd.DataFrame, list[str]]:
    """The confusion matrix as rows (gold, actual, count, share of the gold row), the most frequent classes
    kept, ``NO_CALL`` always, the rest folded into ``(other)``."""
    weight: dict[str, int] = {}
    for c in cells:
        weight[c.gold] = weight.get(c.gold, 0) + c.count
        weight[c.actual] = weight.get(c.actual, 0) + c.count
    ranked = sorted((t for t in weight if t != NO_CALL), key=lambda t: (-weight[t], t))[: limit - 1]
    labels = sorted(ranked) + ([NO_CALL] if NO_CALL in weight else [])
    if len(weight) > len(labels):
        labels.append("(other)")
    keep = set(labels)
    folded: dict[tuple[str, str], int] = {}
    for c in cells:
        key = (c.gold if c.gold in keep else "(other)", c.actual if c.actual in keep else "(other)")
        folded[key] = folded.get(key, 0) + c.count
    row_totals: dict[str, int] = {}
    for (gold, _), n in folded.items():
        row_totals[gold] = row_totals.get(gold, 0) + n
    rows = [{"gold": g, "actual": a, "count": n, "share": n / row_totals[g], "agree": g == a}
            for (g, a), n in sorted(folded.items())]
    return pd.DataFrame(rows, columns=["gold", "actual", "count", "share", "agree"]), labels


def heatmap(cells: Sequence[ConfusionCell]) -> alt.LayerChart:
    """Rows: the tool the gold expects (NO_CALL: no call or ask); columns: what the agent called."""
    frame, labels = heatmap_frame(cells)
    # Both axes list every class, so the diagonal is agreement even for a class only one side has.
    base = alt.Chart(frame).encode(
        x=alt.X("actual:N", scale=alt.Scale(domain=labels), title="agent called",
                axis=alt.Axis(labelAngle=-40, orient="top", labelOverlap=False, labelLimit=180)),
        y=alt.Y("gold:N", scale=alt.Scale(domain=labels), title="gold expects",
                axis=alt.Axis(labelOverlap=False, labelLimit=180)))
    rect = base.mark_rect().encode(
        color=alt.Color("share:Q", scale=alt.Scale(scheme="blues", domain=[0, 1]), title="share of row"),
        tooltip=["gold", "actual", "count", alt.Tooltip("share:Q", format=".0%")])
    text = base.mark_text(fontSize=11).encode(
        text="count:Q", color=alt.condition(alt.datum.share > 0.5, alt.value("white"), alt.value("black")))
    return alt.LayerChart(layer=[rect, text])


def heatmap_height(cells: Sequence[ConfusionCell]) -> int:
    """Pixels for the heatmap: it grows with the classes (the width follows the page), so no row label is
    squeezed out."""
    return CELL * len(heatmap_frame(cells)[1]) + HEATMAP_MARGIN


def breakdown_chart(groups: Sequence[GroupPoint], *, title: str, order: Sequence[str] | None = None) -> alt.Chart:
    """Selection accuracy and pass rate per group of one run (toolkit size or tag)."""
    rows = []
    for g in groups:
        for measure, value in (("pass rate", g.pass_rate), ("selection", g.selection.value)):
            if value is not None:
                rows.append({"group": g.name, "measure": measure, "value": value, "results": g.results})
    frame = pd.DataFrame(rows, columns=["group", "measure", "value", "results"])
    chart: alt.Chart = alt.Chart(frame, title=title).mark_bar().encode(
        x=alt.X("value:Q", title=None, axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("group:N", sort=list(order) if order else None, title=None),
        yOffset="measure:N", color=alt.Color("measure:N", title=None),
        tooltip=["group", "measure", alt.Tooltip("value:Q", format=".1%"), "results"])
    return chart


__all__ = ["breakdown_chart", "heatmap", "heatmap_frame", "heatmap_height", "metric_frame", "run_heatmap", "run_names",
           "slope_chart", "slope_frame", "tool_chart", "tool_frame", "trend_chart"]


def decision_heatmap(matrix: DecisionMatrix) -> alt.LayerChart:
    """Two annotators' decisions over the decision points both labeled: rows the first annotator's, columns
    the second's, every category on both axes so the diagonal is agreement; the count in each cell."""
    rows = [{"first": c.first, "second": c.second, "count": c.count, "agree": c.first == c.second}
            for c in matrix.cells]
    frame = pd.DataFrame(rows, columns=["first", "second", "count", "agree"])
    labels = list(matrix.categories)
    base = alt.Chart(frame).encode(
        x=alt.X("second:N", scale=alt.Scale(domain=labels), title=matrix.second,
                axis=alt.Axis(labelAngle=-40, orient="top", labelOverlap=False, labelLimit=180)),
        y=alt.Y("first:N", scale=alt.Scale(domain=labels), title=matrix.first,
                axis=alt.Axis(labelOverlap=False, labelLimit=180)))
    top = max((c.count for c in matrix.cells), default=1)
    rect = base.mark_rect().encode(
        color=alt.Color("count:Q", scale=alt.Scale(scheme="blues", domain=[0, top]), title="decision points"),
        stroke=alt.condition(alt.datum.agree, alt.value("#2e7d32"), alt.value(None)),
        tooltip=[alt.Tooltip("first:N", title=matrix.first), alt.Tooltip("second:N", title=matrix.second), "count"])
    text = base.mark_text(fontSize=12).encode(
        text="count:Q", color=alt.condition(alt.datum.count > top / 2, alt.value("white"), alt.value("black")))
    return alt.LayerChart(layer=[rect, text]).properties(height=CELL * len(labels) + HEATMAP_MARGIN)
