"""Run against run: which cases were fixed, which broke, which still fail, and whether the difference is more
than noise (exact McNemar test on the paired results). Only runs on the same gold version are compared."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.app import charts, context, render
from labeler.app.dashboard import NO_RUNS, RUN_PAGE, link, percent, points, url_select
from labeler.store import DiffCase, GoldVersionMismatch, RunDiff, RunHistoryError, RunInfo


def change(before: float | None, after: float | None) -> float | None:
    """How far a metric moved from one run to the other (None when either lacks it)."""
    return None if before is None or after is None else after - before


SHOWN = 200
METRICS = (("pass_rate", "pass rate"), ("selection", "selection"), ("arguments", "arguments"),
           ("sequencing", "sequencing"), ("macro_f1", "macro F1"), ("no_call_precision", "no-call precision"),
           ("no_call_recall", "no-call recall"), ("over_call", "over-call"), ("under_call", "under-call"),
           ("redundancy", "redundancy"), ("ungrounded", "ungrounded"), ("fabricated", "fabricated"))


def latest_pair(runs: list[RunInfo]) -> tuple[str, str]:
    """The default comparison (runs newest first): the newest run that has an older one on the same gold version
    under another name (a re-save of the same run, or a run on another gold version, compares nothing), and
    that older one; failing that, the two newest runs."""
    for n, after in enumerate(runs):
        same_gold = [r for r in runs[n + 1:] if r.gold_version == after.gold_version]
        before = next((r for r in same_gold if r.name != after.name), same_gold[0] if same_gold else None)
        if before is not None:
            return before.run_id, after.run_id
    return runs[1].run_id, runs[0].run_id


def pick(runs: list[RunInfo]) -> tuple[str, str]:
    by_id = {r.run_id: r for r in runs}
    ids = list(by_id)
    default_before, default_after = latest_pair(runs)

    def name(run_id: str) -> str:
        r = by_id[run_id]
        return f"{r.name} · {r.gold_version} · {r.created_at[:16].replace('T', ' ')}"

    left, right = st.columns(2)
    with left:
        before = url_select("Before", ids, "a", default=default_before, format_func=name)
    with right:
        after = url_select("After", ids, "b", default=default_after, format_func=name)
    return before, after


def case_list(title: str, key: str, items: tuple[DiffCase, ...], open_in: str) -> None:
    st.subheader(f"{title} ({len(items)})")
    if not items:
        st.text("None.")
        return
    for n, d in enumerate(items):
        with st.container(key=f"{key}-{n}"):
            cells = st.columns([3, 5, 1], vertical_alignment="center")
            cells[0].text(d.case_id + (f" (trial {d.trial})" if d.trial else ""))
            cells[1].text(f"{', '.join(d.before_codes) or d.before} → {', '.join(d.after_codes) or d.after}")
            with cells[2]:
                link(RUN_PAGE, "Open", {"run": open_in, "case": d.case_id, "trial": d.trial},
                     icon=":material/open_in_new:")


def summary(diff: RunDiff) -> None:
    m = diff.mcnemar
    a, b, c, d = st.columns(4)
    a.metric("Fixed", m.only_current)
    b.metric("Broken", m.only_baseline)
    c.metric("Still failing", m.both_fail)
    d.metric("McNemar p (exact)", f"{m.p_value:.3g}")
    with st.container(key="mcnemar"):
        verdict = ("significant at 0.05: more than noise" if m.p_value < 0.05
                   else "not significant at 0.05: could be noise")
        st.text(f"{m.pairs} paired results; {m.only_current} fixed vs {m.only_baseline} broken — {verdict}.")
        if diff.only_before or diff.only_after:
            st.text(f"Unpaired: {diff.only_before} result(s) only in {diff.before.name}, "
                    f"{diff.only_after} only in {diff.after.name}.")


def deltas(before: RunInfo, after: RunInfo) -> None:
    history = store.history(run_ids=[before.run_id, after.run_id])
    value = {(p.run_id, p.metric): p.value for p in history.metrics}
    st.subheader("Dimensions")
    with st.container(key="dimension-deltas"):
        st.table(pd.DataFrame({
            "Metric": [title for _, title in METRICS],
            "Before": [percent(value.get((before.run_id, m))) for m, _ in METRICS],
            "After": [percent(value.get((after.run_id, m))) for m, _ in METRICS],
            "Change": [points(change(value.get((before.run_id, m)), value.get((after.run_id, m))))
                       for m, _ in METRICS],
        }), hide_index=True)
    st.altair_chart(charts.slope_chart(
        [(title, value.get((before.run_id, m)), value.get((after.run_id, m))) for m, title in METRICS],
        title="Before → after, per metric"))
    tools = {(g.run_id, g.name): g for g in history.groups if g.kind == "tool"}
    names = sorted({name for _, name in tools})
    rates = [(tools.get((before.run_id, t)), tools.get((after.run_id, t))) for t in names]
    st.subheader("Per tool")
    with st.container(key="tool-deltas"):
        st.table(pd.DataFrame({
            "Tool": [render.md_label(t) for t in names],
            "Before": [percent(b.pass_rate) if b else "—" for b, _ in rates],
            "After": [percent(a.pass_rate) if a else "—" for _, a in rates],
            "Change": [points(a.pass_rate - b.pass_rate) if a and b and a.pass_rate is not None
                       and b.pass_rate is not None else "—" for b, a in rates],
        }), hide_index=True)
    st.altair_chart(charts.slope_chart(
        [(t, b.pass_rate if b else None, a.pass_rate if a else None) for t, (b, a) in zip(names, rates, strict=True)],
        title="Before → after, pass rate per tool"))


store = context.store()
st.title("Compare runs")
runs = store.list_runs(limit=200)
if len(runs) < 2:
    st.info(NO_RUNS if not runs else "One saved run so far: save another to compare.")
    st.stop()
before_id, after_id = pick(runs)
if before_id == after_id:
    st.info("Pick two different runs.")
    st.stop()
try:
    diff = store.diff_runs(before_id, after_id, limit=SHOWN)
except GoldVersionMismatch as exc:
    with st.container(key="version-mismatch"):
        render.warning(f"These runs were scored on different gold versions, so they are not compared: "
                   f"{exc.runs[0][0]} on {exc.runs[0][1]}, {exc.runs[1][0]} on {exc.runs[1][1]}. "
                   "Pick two runs on the same gold version.", icon=":material/block:")
    st.stop()
except RunHistoryError as exc:
    render.error(str(exc))
    st.stop()
render.caption(f"Gold version {diff.after.gold_version}: results paired by case id and trial.")
summary(diff)
deltas(diff.before, diff.after)
case_list("Broken", "broken", diff.broken, after_id)
case_list("Fixed", "fixed", diff.fixed, before_id)
case_list("Still failing", "still", diff.still_failing, after_id)
if diff.truncated:
    st.caption(f"Lists show the first {SHOWN} cases of each kind; the counts above cover every pair.")
