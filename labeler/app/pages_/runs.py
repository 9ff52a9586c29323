"""Run history: how the agent's numbers moved over the saved runs of one gold version.

Per-dimension lines, the risk rates (redundancy, ungrounded values, fabrication) and one line per tool; a
tool whose pass rate fell by more than the threshold since the run before is flagged even when the
average held, and its failing cases are one click away.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.app import charts, context, render
from labeler.app.dashboard import COMPARE_PAGE, NO_RUNS, RUN_PAGE, link, percent, points, url_select
from labeler.app.score_run import score_form
from labeler.store.history import tool_trends
from scorer.compare import DEFAULT_MAX_TOOL_DROP, DEFAULT_MIN_TOOL_SUPPORT

DIMENSIONS = ("pass_rate", "selection", "arguments", "sequencing", "macro_f1")
ABSTENTION = ("no_call_precision", "no_call_recall", "over_call", "under_call", "clarify_asked")
RISKS = ("redundancy", "ungrounded", "fabricated")
RATES_SHOWN = 4
"""Runs whose per-tool rate the table spells out (the chart has them all)."""

store = context.store()
st.title("Run history")
score_form()
versions = store.gold_versions()
if not versions:
    st.info(NO_RUNS)
    st.stop()
runs_of = {v.gold_version: v.runs for v in versions}
gold = url_select("Gold version", list(runs_of), "gold", default=versions[0].gold_version,
                  format_func=lambda v: f"{v} ({runs_of[v]} runs)")
history = store.history(gold)
runs = history.runs
with st.container(key="other-versions"):
    if history.other_versions:
        hidden = sum(v.runs for v in history.other_versions)
        st.caption(f"{hidden} run(s) on {len(history.other_versions)} other gold version(s) are not in these "
                   "lines: runs are only compared on the same gold version.")

latest = runs[-1]
st.subheader("Runs")
with st.container(key="runs-table"):  # st.table reads Markdown: names from users are escaped
    st.table(pd.DataFrame({
        "#": range(1, len(runs) + 1),
        "Run": [render.md_label(r.run_id) for r in runs],
        "Saved": [r.created_at[:16].replace("T", " ") for r in runs],
        "Label": [render.md_label(r.label or "") for r in runs],
        "Model": [render.md_label(r.model or "") for r in runs],
        "Prompt": [render.md_label(r.prompt_version or "") for r in runs],
        "Commit": [render.md_label((r.git_commit or "")[:10]) for r in runs],
        "Results": [r.results for r in runs],
        "Pass rate": [percent(r.pass_rate) for r in runs],
    }), hide_index=True)
with st.container(horizontal=True):
    link(RUN_PAGE, f"Open the latest run ({latest.name})", {"run": latest.run_id}, icon=":material/open_in_new:")
    if len(runs) > 1:
        link(COMPARE_PAGE, "Compare the last two runs", {"a": runs[-2].run_id, "b": latest.run_id},
             icon=":material/compare_arrows:")

st.subheader("Dimensions over time")
left, right = st.columns(2)
left.altair_chart(charts.trend_chart(runs, history.metrics, DIMENSIONS, title="Pass rate and dimensions"))
right.altair_chart(charts.trend_chart(runs, history.metrics, ABSTENTION, title="Abstention"))
st.altair_chart(charts.trend_chart(runs, history.metrics, RISKS,
                                   title="Redundancy, ungrounded values and fabrication (lower is better)"))

st.subheader("Per tool")
a, b = st.columns(2)
threshold = a.number_input("Flag a tool whose pass rate drops by more than (points)", min_value=0.0,
                           max_value=100.0, value=100 * DEFAULT_MAX_TOOL_DROP, step=1.0, key="drop") / 100
support = b.number_input("…with at least this many results in both runs", min_value=1,
                         value=DEFAULT_MIN_TOOL_SUPPORT, step=1, key="support")
trends = tool_trends(history.run_ids, history.tool_points(), threshold=threshold, min_support=int(support))
flagged = [t for t in trends if t.flagged]
# A drop the support rule kept out is said, not hidden: "no tool dropped" read as all clear.
unsupported = [t for t in trends if not t.flagged and t.latest and t.previous and t.drop is not None
               and t.drop > threshold and min(t.latest.results, t.previous.results) < support]
with st.container(key="tool-summary"):
    if len(runs) < 2:
        st.text("One run so far: drops show from the second run on.")
    elif flagged:
        st.text(f"{len(flagged)} tool(s) dropped by more than {100 * threshold:g} points since the run before: "
                + ", ".join(f"{t.tool} {percent(t.previous.rate if t.previous else None)} → "
                            f"{percent(t.latest.rate if t.latest else None)}" for t in flagged))
    elif unsupported:
        st.text(f"No tool flagged: none dropped by more than {100 * threshold:g} points since the run before "
                f"with at least {int(support)} results in both runs.")
    else:
        st.text(f"No tool dropped by more than {100 * threshold:g} points since the run before.")
    if len(runs) >= 2 and unsupported:
        st.text(f"Left out for too few results (fewer than {int(support)} in one of the two runs): "
                + ", ".join(f"{t.tool} {percent(t.previous.rate if t.previous else None)} → "
                            f"{percent(t.latest.rate if t.latest else None)} "
                            f"({t.previous.results if t.previous else 0} and {t.latest.results if t.latest else 0} "
                            "results)" for t in unsupported)
                + ". Lower the minimum above to flag them.")
st.altair_chart(charts.tool_chart(runs, trends))
if len(runs) > 1:
    st.altair_chart(charts.run_heatmap(runs, trends), height=28 * len(trends) + 90)

shown = runs[-RATES_SHOWN:]
widths = [3] + [1] * len(shown) + [1, 2, 1]
header = st.columns(widths)
for cell, name in zip(header, ["Tool", *(charts.run_names(runs)[r.run_id] for r in shown),
                               "Change", "Latest run", ""], strict=True):
    cell.caption(render.md_label(name))  # run names come from the runs: escaped
first_shown = len(runs) - len(shown)
for n, trend in enumerate(trends):
    with st.container(key=f"tool-{'flagged' if trend.flagged else 'row'}-{n}"):
        cells = st.columns(widths, vertical_alignment="center")
        cells[0].text(trend.tool)
        for cell, rate in zip(cells[1:len(shown) + 1], trend.rates[first_shown:], strict=True):
            cell.text(percent(rate))
        change = cells[len(shown) + 1]
        if trend.flagged:
            change.badge(points(-(trend.drop or 0)), icon=":material/trending_down:", color="red")
        else:
            change.text(points(None if trend.drop is None else -trend.drop))
        with cells[-2]:
            if trend.latest is not None and trend.failing:
                link(RUN_PAGE, f"{trend.failing} failing", {"run": latest.run_id, "tool": trend.tool},
                     icon=":material/bug_report:")
            else:
                st.text("none failing" if trend.latest is not None else "not in this run")
        cells[-1].text(f"{trend.latest.results} results" if trend.latest else "")
