"""One saved run: its failing cases side by side with the gold, failure patterns, the confusion matrix with
NO_CALL, and accuracy by toolkit size and by tag.

The URL says what is open: ``run``, a filter (``tool``, or ``code`` and ``pattern``) and ``case``/``trial``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.app import charts, context, render
from labeler.app.case_view import side_by_side
from labeler.app.dashboard import FILTERS, HISTORY_PAGE, NO_RUNS, RUN_PAGE, link, param, percent, url_select
from labeler.store import GroupPoint, RunHistoryError, RunInfo

CASES_SHOWN = 100
HEADLINE = (("pass_rate", "Pass rate"), ("selection", "Selection"), ("arguments", "Arguments"),
            ("sequencing", "Sequencing"), ("no_call_recall", "No-call recall"), ("ungrounded", "Ungrounded"))


def forget_case() -> None:
    """Another run was picked: the case and filter in the URL belonged to the one before."""
    for name in (*FILTERS, "case", "trial"):
        st.query_params.pop(name, None)


def pick_run(runs: list[RunInfo]) -> RunInfo:
    by_id = {r.run_id: r for r in runs}
    wanted = param("run")
    if wanted and wanted not in by_id:  # a link to a run older than the list shows still opens it
        try:
            by_id[wanted] = store.get_run(wanted)
        except RunHistoryError as exc:
            render.error(str(exc))
            st.stop()
    chosen = url_select("Run", list(by_id), "run", default=runs[0].run_id, on_pick=forget_case,
                        format_func=lambda r: f"{by_id[r].name} · {by_id[r].created_at[:16].replace('T', ' ')}")
    return by_id[chosen]


def headline(info: RunInfo) -> None:
    st.text(" · ".join(x for x in (
        info.run_id, f"model {info.model}" if info.model else "", f"prompt {info.prompt_version}"
        if info.prompt_version else "", f"commit {info.git_commit[:10]}" if info.git_commit else "",
        f"gold {info.gold_version}", f"saved {info.created_at[:16].replace('T', ' ')}") if x))
    values = {p.metric: p for p in store.history(run_ids=[info.run_id]).metrics}
    for cell, (metric, title) in zip(st.columns(len(HEADLINE)), HEADLINE, strict=True):
        point = values.get(metric)
        cell.metric(title, percent(point.value if point else None),
                    help=f"{point.count}/{point.total}" if point and point.total else None)


def filter_label(filters: dict[str, str]) -> str:
    if "tool" in filters:
        return f"expecting {filters['tool']}"
    if "pattern" in filters:
        return filters["pattern"]
    return f"with {filters['code']}" if "code" in filters else "all"


def failing_cases(info: RunInfo) -> None:
    filters = {k: v for k in FILTERS if (v := param(k))}
    cases, total = store.failing_cases(info.run_id, limit=CASES_SHOWN, **filters)
    st.subheader("Failing cases")
    with st.container(key="case-filter", horizontal=True, vertical_alignment="center"):
        st.text(f"{total} failing: {filter_label(filters)}" if filters else f"{total} failing (all)")
        if filters:
            link(RUN_PAGE, "Show all failing cases", {"run": info.run_id}, icon=":material/filter_alt_off:")
    opened, trial = param("case"), int(param("trial") or 0)
    if opened:
        try:
            side_by_side(store.case_detail(info.run_id, opened, trial))
        except RunHistoryError as exc:
            render.error(str(exc))
    for n, c in enumerate(cases):
        with st.container(key=f"case-row-{n}"):
            cells = st.columns([3, 3, 4, 1], vertical_alignment="center")
            cells[0].text(c.case_id + (f" (trial {c.trial})" if c.trial else ""))
            cells[1].text(", ".join(c.error_codes) or c.status)
            expected = ", ".join(c.expected_tools) or c.expected_behavior
            actual = ", ".join(c.actual_tools) or "no call"
            cells[2].text(f"{expected} → {actual}")
            with cells[3]:
                is_open = opened == c.case_id and trial == c.trial
                link(RUN_PAGE, "Shown" if is_open else "Open",
                     {"run": info.run_id, **filters, "case": c.case_id, "trial": c.trial},
                     icon=":material/visibility:" if is_open else ":material/open_in_new:")
    if total > len(cases):
        st.caption(f"The first {len(cases)} of {total}, by case id.")


def patterns(info: RunInfo) -> None:
    st.subheader("Failure patterns")
    found = store.failure_patterns(info.run_id)
    if not found:
        st.text("No failures.")
        return
    for p in found:
        with st.container(key=f"pattern-{p.rank}"):
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.text(f"{p.rank}. {p.sentence}  [{p.code}]")
            with right:
                link(RUN_PAGE, f"Open {p.count}", {"run": info.run_id, "code": p.code, "pattern": p.text},
                     icon=":material/open_in_new:")


def breakdown(groups: list[GroupPoint], kind: str, title: str, order: list[str] | None = None) -> None:
    if not groups:
        return
    st.altair_chart(charts.breakdown_chart(groups, title=title, order=order))
    with st.container(key=f"by-{kind}"):
        st.table(pd.DataFrame({
            title: [render.md_label(g.name) for g in groups],
            "Results": [g.results for g in groups],
            "Pass rate": [f"{percent(g.pass_rate)} ({g.passed}/{g.results})" for g in groups],
            "Selection": [percent(g.selection.value) for g in groups],
            "Arguments": [percent(g.arguments.value) for g in groups],
        }), hide_index=True)


def toolkit_order(groups: list[GroupPoint]) -> list[str]:
    def size(name: str) -> int:
        head = name.split("-")[0].rstrip("+")
        return int(head) if head.isdigit() else 0

    return sorted((g.name for g in groups), key=size)


render.inject_style()  # errors in red, tool-call cards as on the label page
store = context.store()
st.title("Run")
runs = store.list_runs(limit=200)
if not runs:
    st.info(NO_RUNS)
    st.stop()
info = pick_run(runs)
headline(info)
link(HISTORY_PAGE, "Run history of this gold version", {"gold": info.gold_version}, icon=":material/show_chart:")
failing_cases(info)
patterns(info)
st.subheader("Tool selection: confusion matrix")
cells = store.confusion(info.run_id)
if cells:
    st.altair_chart(charts.heatmap(cells), height=charts.heatmap_height(cells))
    st.caption("Rows: the tool the gold expects (NO_CALL: no call, or ask the user). Columns: what the agent "
               "called (NO_CALL: it made no call). Shade: share of the row.")
else:
    st.text("No turn cases in this run.")
left, right = st.columns(2, gap="large")
with left:
    sizes = store.run_groups(info.run_id, "toolkit_size")
    breakdown(sizes, "toolkit_size", "Toolkit size", toolkit_order(sizes))
with right:
    breakdown(store.run_groups(info.run_id, "tag"), "tag", "Tag")
origins = store.run_groups(info.run_id, "origin")
if any(g.name == "synthetic" for g in origins):  # only once synthetic cases are in the gold set
    left, right = st.columns(2, gap="large")
    with left:
        breakdown(origins, "origin", "Real vs synthetic")
    with right:
        breakdown(store.run_groups(info.run_id, "transformation"), "transformation", "Transformation")
