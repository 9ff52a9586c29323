"""Judge calibration: how often the judge agrees with the reviewers, per question and prompt version, over
time; what the judge has cost; and (admins) which model judges."""

from __future__ import annotations

from typing import Literal

import pandas as pd
import streamlit as st

from labeler.app import context, identity, judge_key, render
from labeler.judge.calibration import calibration
from labeler.judge.config import JUDGE_MODEL_ENV, judge_model
from labeler.store import StoreError, User

PERIODS: dict[Literal["month", "week"], str] = {"month": "Month", "week": "Week"}


def save_model(user: User) -> None:
    try:
        context.store().set_judge_model_setting(st.session_state.get("judge-model", ""), actor=user.name)
    except StoreError as exc:
        st.session_state["cal-error"] = str(exc)
    else:
        st.session_state["cal-done"] = "Saved the judge model"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def number(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def settings(user: User) -> None:
    store = context.store()
    saved = store.judge_model_setting()
    model, source = judge_model(None, saved)
    st.subheader("Judge model")
    with st.container(key="cal-model"):
        st.text(f"In use: {model} (from {source}; the --judge-model flag and {JUDGE_MODEL_ENV} come first)")
    if user.role == "admin":
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.text_input("Model for the judge (empty: the default)", value=saved or "", key="judge-model")
            st.button("Save", key="judge-model-save", on_click=save_model, args=(user,))


render.inject_style()
user = identity.require("reviewer", "admin")
store = context.store()
st.title("Judge calibration")
judge_key.no_key_notice()
for kind, show in (("error", render.error), ("done", render.success)):
    if f"cal-{kind}" in st.session_state:
        with st.container(key=f"cal-{kind}"):
            show(st.session_state.pop(f"cal-{kind}"))

status = store.judge_status()
a, b, c, d = st.columns(4)
a.metric("Verdicts", f"{sum(status.answered.values()):,}")
b.metric("Pending", f"{sum(status.pending.values()):,}")
c.metric("Tokens", f"{status.input_tokens + status.output_tokens:,}")
d.metric("Cost (estimate)", f"${status.cost_usd:,.2f}")
if status.last_problems:
    with st.container(key="cal-problems"):
        st.text("Still pending after retries: " + "; ".join(p for _, p in status.last_problems[:3]))

period = st.segmented_control("Per", list(PERIODS), format_func=PERIODS.__getitem__, default="month", key="cal-period")
cal = calibration(store.judge_adjudications(), period=period or "month")
if not cal.overall:
    with st.container(key="cal-empty"):
        st.text("No reviewer has decided on a judge verdict yet (Adjudication page): nothing to compare.")
else:
    for row in cal.drops:
        with st.container(key=f"cal-drop-{row.kind}-{row.period or 'all'}"):
            st.warning(render.md_escape(f"{row.prompt_version} ({row.period or 'all time'}): agreement dropped, "
                                        f"{row.drop_note}"), icon=":material/trending_down:")
    st.subheader("Per question and prompt version")
    with st.container(key="cal-overall"):
        st.table(pd.DataFrame({
            "Question": [r.kind for r in cal.overall], "Prompt version": [r.prompt_version for r in cal.overall],
            "Decided": [r.n for r in cal.overall], "Accuracy": [percent(r.accuracy) for r in cal.overall],
            "Cohen's kappa": [number(r.kappa) for r in cal.overall],
            "No verdict": [r.unanswered for r in cal.overall]}), hide_index=True)
    st.subheader("Over time")
    frame = pd.DataFrame({"Period": [r.period for r in cal.over_time],
                          "Prompt": [f"{r.kind} · {r.prompt_version}" for r in cal.over_time],
                          "Accuracy": [r.accuracy for r in cal.over_time], "Decided": [r.n for r in cal.over_time]})
    st.line_chart(frame, x="Period", y="Accuracy", color="Prompt", height=260)
    with st.container(key="cal-timeline"):
        st.table(frame.assign(Accuracy=frame["Accuracy"].map(percent)), hide_index=True)
settings(user)
