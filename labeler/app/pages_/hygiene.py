"""Gold hygiene (reviewers and admins): suspect gold cases, found by ``scorer.hygiene`` (the same checks as
``toolgold lint``)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from labeler.app import context, identity, render
from labeler.store import StoreError

CODES = {
    "conflicting_duplicate": "Same context, conflicting labels",
    "conflicting_near_duplicate": "Nearly the same context, conflicting labels",
    "schema_violation": "Expected call fails its tool's schema",
    "missing_required_value": "Required argument without a value",
    "ungrounded_value": "Expected value appears nowhere in the context",
    "unknown_tool": "Expected call to a tool not offered",
}
STATUSES = {"": "Any status", "submitted": "Submitted", "approved": "Approved"}
SHOWN = 500

identity.require("reviewer", "admin")
store = context.store()
st.title("Gold hygiene")
st.caption("Gold that is probably wrong, found without running an agent. The same checks run in "
           "`toolgold lint GOLD.jsonl`.")
left, right = st.columns(2)
split = left.selectbox("Split", ["", "regression", "rolling"], format_func=lambda s: s or "Both splits",
                       key="hy-split", bind="query-params")
status = right.selectbox("Status", list(STATUSES), format_func=STATUSES.__getitem__, key="hy-status", bind="query-params")
kept = store.kept_gold_hygiene(split=split or None, status=status or None)
notice = st.empty()
try:
    shows_kept = kept is not None and not kept.fresh and not kept.recheck_on_view
except StoreError as exc:  # the setting is not a number of seconds: said, not a traceback
    st.error(str(exc))
    st.stop()
if kept is not None and shows_kept:  # a slow lint of gold that moved on: shown until the reviewer asks again
    with notice.container(key="hygiene-stale"):
        changes = kept.changes
        checked_at = datetime.fromisoformat(kept.checked_at.replace("Z", "+00:00"))
        st.info(f"The gold has changed since this check ({changes if changes is not None else 'some'} "
                f"{'write' if changes == 1 else 'writes'} since {checked_at:%Y-%m-%d %H:%M} UTC); checking "
                f"again takes about {kept.seconds:.0f} s.")
        shows_kept = not st.button("Check again", key="hy-recheck")
if kept is not None and shows_kept:
    problems, checked = kept.hygiene
else:
    notice.empty()
    with st.spinner("Checking the gold set (kept until the gold changes)…"):
        problems, checked = store.gold_hygiene(split=split or None, status=status or None)
by_code = {code: sum(p.code == code for p in problems) for code in CODES}
with st.container(key="hygiene-summary"):
    st.text(f"{len(problems)} problems in {checked} gold cases "
            f"({len({p.case_id for p in problems})} cases affected)")
cols = st.columns(3)
for n, (code, title) in enumerate(CODES.items()):
    cols[n % 3].metric(title, by_code[code])
if not problems:
    st.stop()
st.bar_chart(pd.DataFrame({"Problem": [CODES[c] for c in by_code], "Cases": list(by_code.values())}),
             x="Problem", y="Cases", horizontal=True, sort="-Cases")
chosen = st.pills("Show", list(CODES), format_func=CODES.__getitem__, selection_mode="multi",
                  default=[c for c in CODES if by_code[c]], key="hy-codes")
shown = [p for p in problems if p.code in (chosen or [])][:SHOWN]
with st.container(key="hygiene-problems"):
    st.table({"Case": [render.md_label(p.case_id) for p in shown], "Problem": [CODES[p.code] for p in shown],
              "Detail": [render.md_escape(p.message) for p in shown]}, hide_index=True)
if len(problems) > SHOWN:
    st.caption(f"The first {SHOWN} are shown; `toolgold lint` lists all.")
