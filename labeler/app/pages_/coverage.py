"""Gold set: coverage at a glance (decision kinds, tools, tags) and the adversarial : happy-path balance."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler.app import context, render

TARGET_RATIO = 2.0
BAR_COLOR = "#a86b00"  # the theme's primary colour
STATUSES = {"": "All statuses", "submitted": "Submitted", "approved": "Approved"}
BEHAVIORS = {"call": "Call", "no_call": "No tool call", "clarify": "Ask the user"}


def counts_table(title: str, counts: dict[str, int], key: str, label: str) -> None:
    st.subheader(title)
    if not counts:
        st.text("Nothing yet.")
        return
    frame = pd.DataFrame({label: list(counts), "Cases": list(counts.values())})
    st.bar_chart(frame, x=label, y="Cases", horizontal=True, height=max(140, 60 + 26 * len(counts)), sort="-Cases",
                 color=BAR_COLOR)
    with st.container(key=key), st.expander("As a table"):  # st.table reads Markdown: names are escaped
        st.table(frame.assign(**{label: frame[label].map(render.md_label)}), hide_index=True)


store = context.store()
st.title("Gold set")
status = st.selectbox("Status", list(STATUSES), format_func=STATUSES.get, key="gstatus", bind="query-params")
cov = store.coverage(status=status or None)
ratio = cov.adversarial_ratio

a, b, c, d = st.columns(4)
a.metric("Turn cases", f"{cov.total:,}")
b.metric("Happy path", f"{cov.happy_path:,}")
c.metric("Adversarial", f"{cov.adversarial:,}")
d.metric("Adversarial per happy-path case", "–" if ratio is None else f"{ratio:.2f} : 1",
         delta=None if ratio is None else f"{ratio - TARGET_RATIO:+.2f} vs target {TARGET_RATIO:g} : 1",
         delta_color="normal")
with st.container(key="balance"):
    if ratio is None:
        st.text(f"No happy-path cases yet; the target is at least {TARGET_RATIO:g} adversarial per happy-path case.")
    elif ratio >= TARGET_RATIO:
        st.text(f"On target: {cov.adversarial} adversarial for {cov.happy_path} happy-path cases "
                f"(at least {TARGET_RATIO:g} : 1).")
    else:
        missing = int(TARGET_RATIO * cov.happy_path) - cov.adversarial
        st.text(f"Below target: {missing} more adversarial cases needed for {cov.happy_path} happy-path cases "
                f"(at least {TARGET_RATIO:g} : 1).")
st.caption("A case is adversarial when it carries a tag the vocabulary marks adversarial (Users & tags page).")

left, middle, right = st.columns(3, gap="large")
with left:
    counts_table("By decision", {BEHAVIORS.get(k, k): v for k, v in cov.by_behavior.items()}, "by-behavior",
                 "Decision")
with middle:
    counts_table("By tool", cov.by_tool, "by-tool", "Tool")
with right:
    adversarial = {t.tag for t in store.tags() if t.adversarial}
    counts_table("By tag", {(f"{k} (adversarial)" if k in adversarial else k): v for k, v in cov.by_tag.items()},
                 "by-tag", "Tag")

totals = store.annotator_totals()
if totals:
    st.subheader("Per annotator")
    st.table(pd.DataFrame({"Annotator": [render.md_label(x.annotator) for x in totals], "Submitted": [x.submitted for x in totals],
                           "Drafts": [x.drafts for x in totals], "Unsure": [x.unsure for x in totals]}),
             hide_index=True)
