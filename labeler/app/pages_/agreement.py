"""Agreement (reviewers and admins): the overlap setting, how far annotators agree per field, annotator,
tool and tag, and the turns with the most disagreement. The statistics come from ``scorer.agreement``."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from labeler.app import charts, context, identity, render, review_view
from labeler.store import StoreError, User
from scorer.agreement import AgreementReport, GroupAgreement, Stat, agreement, decision_matrix
from scorer.model import GoldCase

FIELD_NAMES = {"label": "whole label", "decision": "decision kind", "tool": "tool"}
SHOWN_DISAGREEMENTS = 25


def field_name(field: str) -> str:
    return FIELD_NAMES.get(field, "argument " + field.removeprefix("arg:"))


def number(stat: Stat | None) -> str:
    return "–" if stat is None or stat.value is None else f"{stat.value:.2f}"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def save_overlap(user: User) -> None:
    try:
        overlap = context.store().set_overlap(int(st.session_state["overlap-n"]),
                                              float(st.session_state["overlap-percent"]), actor=user.name)
    except StoreError as exc:
        st.session_state["agreement-error"] = str(exc)
        return
    st.session_state["agreement-done"] = (f"Overlap: {overlap.annotators} annotators on {overlap.percent:g}% "
                                          "of turns")


def overlap_section(user: User) -> None:
    overlap = context.store().overlap()
    with st.container(key="overlap-now"):
        st.text(f"Overlap now: {overlap.annotators} annotators on {overlap.percent:g}% of turns"
                if overlap.active else "Overlap now: off (every turn gets one annotator)")
    if user.role != "admin":
        st.caption("An admin sets the overlap.")
        return
    with st.form("overlap", border=True):
        left, right = st.columns(2)
        left.number_input("Annotators per sampled turn", min_value=1, max_value=10, value=max(overlap.annotators, 2),
                          key="overlap-n")
        right.slider("Share of turns (%)", min_value=0, max_value=100, value=int(overlap.percent) or 10,
                     key="overlap-percent")
        st.form_submit_button("Set overlap", on_click=save_overlap, args=(user,))


def field_table(report: AgreementReport) -> None:
    frame = pd.DataFrame({
        "Field": [render.md_label(field_name(f.field)) for f in report.fields],
        "Turns": [f.n_items for f in report.fields],
        "Agreement": [share(f.percent) for f in report.fields],
        "Cohen κ": [number(f.cohen) for f in report.fields],
        "Fleiss κ": [number(f.fleiss) for f in report.fields],
        "Krippendorff α": [number(f.alpha) for f in report.fields],
        "Gwet AC1": [number(f.ac1) for f in report.fields],
    })
    with st.container(key="agreement-fields"):
        st.table(frame, hide_index=True)
    reasons = sorted({s.reason for f in report.fields for s in (f.cohen, f.fleiss, f.alpha, f.ac1) if s and s.reason})
    for reason in reasons:
        render.caption("– " + reason)
    chart = pd.DataFrame({"field": [field_name(f.field) for f in report.fields],
                          "value": [f.headline.value for f in report.fields],
                          "statistic": ["Cohen κ" if f.cohen else "Krippendorff α" for f in report.fields]})
    chart = chart.dropna()
    if not chart.empty:
        bars = alt.Chart(chart).mark_bar().encode(
            x=alt.X("value:Q", scale=alt.Scale(domain=[-1, 1]), title="agreement beyond chance"),
            y=alt.Y("field:N", sort=None, title=None), color=alt.Color("statistic:N", legend=alt.Legend(orient="bottom")),
            tooltip=["field", "statistic", alt.Tooltip("value:Q", format=".2f")])
        good = alt.Chart(pd.DataFrame({"x": [0.6]})).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
        st.altair_chart(bars + good, width="stretch")
        st.caption("Dashed line: 0.6, where agreement is usually called substantial.")


def annotator_table(report: AgreementReport) -> None:
    frame = pd.DataFrame({
        "Annotator": [a.annotator for a in report.annotators],
        "Shared turns": [a.n_items for a in report.annotators],
        "Agrees with others": [a.percent for a in report.annotators],
        "Decision κ vs others": [a.decision_kappa.value for a in report.annotators],
    })
    if frame.empty:
        return
    chart = alt.Chart(frame.dropna(subset=["Agrees with others"])).mark_bar().encode(
        x=alt.X("Agrees with others:Q", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        y=alt.Y("Annotator:N", sort="-x", title=None), tooltip=["Annotator", "Shared turns"])
    st.altair_chart(chart, width="stretch")
    with st.container(key="agreement-annotators"):
        st.table(frame.assign(**{
            "Annotator": frame["Annotator"].map(render.md_label),
            "Agrees with others": [share(v) for v in frame["Agrees with others"]],
            "Decision κ vs others": ["–" if pd.isna(v) else f"{v:.2f}" for v in frame["Decision κ vs others"]]}),
            hide_index=True)


def group_table(title: str, key: str, groups: tuple[GroupAgreement, ...], column: str) -> None:
    st.subheader(title)
    if not groups:
        st.text("Nothing yet.")
        return
    with st.container(key=key):
        st.table({column: [render.md_label(g.group) for g in groups], "Turns": [g.n_items for g in groups],
                  "Agreement": [share(g.percent) for g in groups], "Krippendorff α": [number(g.alpha) for g in groups]},
                 hide_index=True)


def confusion_section(labels: dict[str, dict[str, GoldCase]], raters: tuple[str, ...]) -> None:
    """The decision confusion matrix between two chosen annotators (``scorer.agreement.decision_matrix``,
    from the same labels as the statistics above): a heatmap and the counts."""
    st.subheader("Decisions: one annotator against another")
    if len(raters) < 2:
        st.text("Only one annotator has labels shared with another.")
        return
    cols = st.columns(2)
    first = cols[0].selectbox("Rows: annotator", raters, index=0, key="confusion-first", format_func=render.md_label)
    second = cols[1].selectbox("Columns: annotator", raters, index=1, key="confusion-second",
                               format_func=render.md_label)
    if first == second:
        st.text("Choose two different annotators.")
        return
    matrix = decision_matrix(labels, first, second)
    if matrix.n_items == 0:
        st.text(f"{first} and {second} have no decision point labeled by both.")
        return
    st.text(f"{first} and {second} both labeled {matrix.n_items} decision points and made the same decision on "
            f"{matrix.n_agree} ({matrix.n_agree / matrix.n_items:.0%}).")
    rows = [c for c in matrix.categories if any(cell.first == c for cell in matrix.cells)]
    columns = [c for c in matrix.categories if any(cell.second == c for cell in matrix.cells)]
    corner = render.md_label(f"{first} ↓ / {second} →")
    frame = pd.DataFrame({corner: [render.md_label(r) for r in rows],
                          **{render.md_label(c): [matrix.count(r, c) for r in rows] for c in columns}})
    with st.container(key="decision-confusion"):
        left, right = st.columns([3, 2], gap="large")
        with left:
            st.altair_chart(charts.decision_heatmap(matrix), width="stretch")
        with right:
            st.table(frame, hide_index=True)
            st.caption("Rows: what the first annotator decided; columns: the second. The diagonal is agreement "
                       "(call: which tools · ask_user · no_call).")


def disagreements(report: AgreementReport) -> None:
    st.subheader("Turns with the most disagreement")
    if not report.disagreements:
        with st.container(key="no-disagreement"):
            st.text("The annotators agree on every shared turn.")
        return
    store = context.store()
    for n, d in enumerate(report.disagreements[:SHOWN_DISAGREEMENTS]):
        with st.container(key=f"disagreement-{n}"):
            cells = st.columns([3, 2, 4, 1], vertical_alignment="center")
            cells[0].text(d.item)
            cells[1].text(f"{d.share:.0%} of pairs differ · {', '.join(d.raters)}")
            cells[2].text(", ".join(field_name(f) for f in d.fields))
            item = store.review_item_for(d.item)
            if item is not None:
                cells[3].page_link("pages_/review.py", label="Review", query_params={"item": str(item.id)})


user = identity.require("reviewer", "admin")
store = context.store()
st.title("Agreement")
review_view.flash("agreement")
overlap_section(user)
labels = store.agreement_labels(actor=user.name)
report = agreement(labels)
if report.n_items == 0:
    with st.container(key="no-overlap"):
        st.text("No turn has submitted labels from two annotators yet: set an overlap and let them label.")
    st.stop()
cols = st.columns(3)
cols[0].metric("Turns labeled by 2+ annotators", report.n_items)
cols[1].metric("Annotators", len(report.raters))
whole = report.field("label")
cols[2].metric("Whole-label agreement", share(whole.percent if whole else None))
st.subheader("Per field")
field_table(report)
st.subheader("Per annotator")
annotator_table(report)
left, right = st.columns(2, gap="large")
with left:
    group_table("Per tool", "agreement-tools", report.tools, "Tool")
with right:
    group_table("Per tag", "agreement-tags", report.tags, "Tag")
confusion_section(labels, report.raters)
disagreements(report)
