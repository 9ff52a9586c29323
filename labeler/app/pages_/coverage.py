"""Gold set: coverage at a glance (decision kinds, tools, tags) and the adversarial : happy-path balance."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from labeler import synthesis
from labeler.app import context, identity, render
from labeler.store import StoreError
from scorer.synthesize import TRANSFORMS

TARGET_RATIO = 2.0
BAR_COLOR = "#a86b00"  # the theme's primary colour
STATUSES = {"": "All statuses", "submitted": "Submitted", "approved": "Approved"}
BEHAVIORS = {"call": "Call", "no_call": "No tool call", "clarify": "Ask the user"}
BROWSE = 200


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
status = st.selectbox("Status", list(STATUSES), format_func=STATUSES.__getitem__, key="gstatus", bind="query-params")
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
st.caption("A case is adversarial when it carries a tag the vocabulary marks adversarial (Team setup page).")


def propose(user: str) -> None:
    """Run the synthesis (the button's callback: the result shows on the rerun)."""
    try:
        done = synthesis.synthesize(store, actor=user, transforms=st.session_state["synth-transforms"] or TRANSFORMS,
                                    n=int(st.session_state["synth-n"]), seed=int(st.session_state["synth-seed"]))
    except StoreError as exc:
        st.session_state["synth-result"] = ("error", str(exc))
        return
    st.session_state["synth-result"] = ("ok", done.summary)


def synthetic_section(missing: int | None) -> None:
    """How many candidates wait; "propose N adversarial cases" for reviewers and admins below target."""
    st.subheader("Synthetic adversarial cases")
    pending = synthesis.waiting(store, limit=BROWSE)
    with st.container(key="synthetic-waiting"):
        kinds = ", ".join(f"{k} {n}" for k, n in pending.by_transform.items())
        st.text(f"{pending.waiting} of {pending.candidates} synthetic candidates wait for labeling"
                + (f" ({kinds})." if kinds else "."))
    user = identity.current()
    result = st.session_state.pop("synth-result", None)
    if result is not None:
        (render.success if result[0] == "ok" else render.error)(result[1])
    if user is not None and user.role in synthesis.PROPOSERS and missing is not None and missing > 0:
        with st.container(key="synthetic-propose"):
            # Candidates already waiting will count once labeled: propose the rest (at most 50 at a time).
            n = int(st.number_input("How many", min_value=1, max_value=max(1, missing),
                                    value=max(1, min(missing - pending.waiting, 50)), step=1, key="synth-n"))
            st.multiselect("Transformations (none: all)", TRANSFORMS, key="synth-transforms")
            st.number_input("Seed", min_value=0, value=0, step=1, key="synth-seed")
            st.button(f"Propose {n} adversarial cases", key="synth-propose", on_click=propose, args=(user.name,),
                      type="primary")
        st.caption("Made from approved gold by deterministic transformations; each candidate waits in the labeling "
                   "queue as a draft and becomes gold only when an annotator submits it and review passes.")
    if pending.proposed:
        with st.expander(f"Browse the proposals ({pending.candidates})"), st.container(key="synthetic-proposals"):
            shown = pending.proposed[:BROWSE]
            st.table(pd.DataFrame({  # st.table reads Markdown: ids and text are escaped
                "Candidate": [render.md_label(p.id) for p in shown],
                "Transformation": [render.md_label(p.transform) for p in shown],
                "Label": ["submitted" if p.labeled else "waiting" for p in shown],
                "Starts with": [render.md_label(p.title) for p in shown],
            }), hide_index=True)
            if pending.candidates > BROWSE:
                st.caption(f"The first {BROWSE}; the Transcripts page lists all (source: synthetic).")

synthetic_section(None if ratio is None or ratio >= TARGET_RATIO
                  else int(TARGET_RATIO * cov.happy_path) - cov.adversarial)

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
