"""Gold versions (reviewers and admins): freeze a split, see the versions, diff two, export one.

A version is immutable and content-hashed; its export is byte for byte what was frozen.
"""

from __future__ import annotations

import streamlit as st

from labeler.app import context, identity, render, review_view
from labeler.store import SPLITS, StoreError, User

EXPORT_KEY = "export-ready"


def freeze(user: User) -> None:
    split, note = st.session_state["freeze-split"], st.session_state.get("freeze-note", "")
    try:
        version = context.store().freeze(split, actor=user.name, note=note)
    except StoreError as exc:
        st.session_state["versions-error"] = str(exc)
        return
    st.session_state["versions-done"] = (f"Froze {version.id}: {version.n_cases} cases, sha256 "
                                         f"{version.content_hash}")


def prepare_export(user: User) -> None:
    vid = st.session_state["export-version"]
    try:
        data = "".join(line + "\n" for line in context.store().iter_version_lines(vid, actor=user.name))
    except StoreError as exc:
        st.session_state["versions-error"] = str(exc)
        return
    st.session_state[EXPORT_KEY] = (vid, data)


def exported(user: User, vid: str) -> None:
    context.store().note_export(vid, actor=user.name, target="download")


user = identity.require("reviewer", "admin")
store = context.store()
st.title("Gold versions")
review_view.flash("versions")

with st.form("freeze", border=True):
    st.subheader("Freeze a split")
    st.caption("Snapshots the approved gold cases of the split as a new immutable version.")
    left, right = st.columns([1, 3])
    left.selectbox("Split", SPLITS, key="freeze-split")
    right.text_input("Note (why this version)", key="freeze-note")
    st.form_submit_button("Freeze", type="primary", icon=":material/ac_unit:", on_click=freeze, args=(user,))

versions = store.list_versions()
st.subheader("Versions")
if not versions:
    with st.container(key="no-versions"):
        st.text("Nothing is frozen yet.")
    st.stop()
with st.container(key="versions-table"):
    st.table({"Version": [v.id for v in versions], "Cases": [v.n_cases for v in versions],
              "sha256": [v.content_hash[:16] for v in versions], "Parent": [v.parent or "" for v in versions],
              "Frozen by": [render.md_label(v.created_by) for v in versions],
              "At": [v.created_at for v in versions], "Note": [render.md_label(v.note) for v in versions]},
             hide_index=True)

ids = [v.id for v in versions]
st.subheader("Compare two versions")
left, right = st.columns(2)
a = left.selectbox("From", ids, index=min(1, len(ids) - 1), key="diff-a")
b = right.selectbox("To", ids, index=0, key="diff-b")
if a and b:
    diff = store.diff_versions(a, b)
    with st.container(key="diff-summary"):
        st.text(f"{a} → {b}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed")
    with st.expander("Cases", icon=":material/difference:"):
        for sign, case_ids in (("+", diff.added), ("-", diff.removed), ("~", diff.changed)):
            for case_id in case_ids:
                st.text(f"{sign} {case_id}")

st.subheader("Export")
st.selectbox("Version", ids, key="export-version")
st.button("Prepare the export", key="prepare-export", on_click=prepare_export, args=(user,))
ready = st.session_state.get(EXPORT_KEY)
if ready is not None and ready[0] == st.session_state.get("export-version"):
    vid, data = ready
    st.download_button(f"Download {vid}.jsonl", data=data, file_name=f"{vid}.jsonl", mime="application/jsonl",
                       key="download-version", icon=":material/download:", on_click=exported, args=(user, vid))
