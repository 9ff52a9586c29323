"""Team setup (admins): who may label with which role, the tag vocabulary annotators choose from, and the
overlap (how many annotators label a sampled share of turns, for agreement).

The store checks the role again on every change; this page only decides what to show.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from labeler.app import context, identity, render
from labeler.store import ROLES, StoreError

admin = identity.require("admin")
store = context.store()


def report(action: str, run: Callable[[], object]) -> None:
    try:
        run()
    except StoreError as exc:
        st.session_state["admin-error"] = str(exc)
    else:
        st.session_state["admin-done"] = action


def add_user() -> None:
    name, role = st.session_state["new-user"], st.session_state["new-role"]
    report(f"Added {name}", lambda: store.add_user(name, role, actor=admin.name))


def load_user() -> None:
    """Fill the Update-user fields with the chosen user's current role and state, so saving a change of one
    never silently changes the other (deactivating must not demote)."""
    chosen = store.get_user(st.session_state["edit-user"])
    if chosen is not None:
        st.session_state["edit-role"], st.session_state["edit-active"] = chosen.role, chosen.active


def change_user() -> None:
    name = st.session_state["edit-user"]
    report(f"Updated {name}", lambda: store.set_user(name, role=st.session_state["edit-role"],
                                                      active=st.session_state["edit-active"], actor=admin.name))
    load_user()  # what is stored now, also after a refused change


def save_overlap() -> None:
    annotators, percent = int(st.session_state["admin-overlap-n"]), float(st.session_state["admin-overlap-percent"])
    report(f"Overlap: {annotators} annotators on {percent:g}% of turns",
           lambda: store.set_overlap(annotators, percent, actor=admin.name))


def save_tag() -> None:
    tag = st.session_state["tag-name"]
    report(f"Saved tag {tag}", lambda: store.set_tag(tag, adversarial=st.session_state["tag-adversarial"],
                                                     description=st.session_state["tag-description"],
                                                     actor=admin.name))


def remove_tag() -> None:
    tag = st.session_state["tag-remove"]
    report(f"Removed tag {tag}", lambda: store.remove_tag(tag, actor=admin.name))


st.title("Team setup: users, tags, overlap")
if "admin-error" in st.session_state:
    with st.container(key="err-admin"):
        st.text(st.session_state.pop("admin-error"))
if "admin-done" in st.session_state:
    with st.container(key="admin-done"):
        st.text(st.session_state.pop("admin-done"))

users_col, tags_col = st.columns(2, gap="large")
with users_col:
    st.subheader("Users")
    everyone = store.users(include_inactive=True)
    with st.container(key="users-table"):
        st.table({"Name": [render.md_label(u.name) for u in everyone], "Role": [u.role for u in everyone],
                  "Active": ["yes" if u.active else "no" for u in everyone]}, hide_index=True)
    with st.form("add-user", clear_on_submit=True, border=True):
        st.text_input("Name", key="new-user")
        st.selectbox("Role", ROLES, key="new-role")
        st.form_submit_button("Add user", on_click=add_user)
    with st.container(border=True, key="edit-user-box"):  # not a form: picking a user must load its fields
        names = [u.name for u in everyone]
        if names and st.session_state.get("edit-user") not in names:
            st.session_state["edit-user"] = names[0]
            load_user()
        st.selectbox("User", names, key="edit-user", on_change=load_user)
        st.selectbox("Role", ROLES, key="edit-role")
        st.checkbox("Active", key="edit-active")
        st.button("Update user", on_click=change_user, key="update-user")

with tags_col:
    st.subheader("Tag vocabulary")
    tags = store.tags()
    with st.container(key="tags-table"):
        st.table({"Tag": [render.md_label(t.tag) for t in tags],
                  "Adversarial": ["yes" if t.adversarial else "no" for t in tags],
                  "Meaning": [render.md_label(t.description) for t in tags]}, hide_index=True)
    with st.form("tag", clear_on_submit=True, border=True):
        st.text_input("Tag (snake_case)", key="tag-name")
        st.text_input("Meaning", key="tag-description")
        st.checkbox("Adversarial (counts against happy path)", value=True, key="tag-adversarial")
        st.form_submit_button("Save tag", on_click=save_tag)
    with st.form("tag-remove-form", border=True):
        st.selectbox("Tag", [t.tag for t in tags], key="tag-remove")
        st.form_submit_button("Remove tag", on_click=remove_tag)

st.subheader("Double annotation (overlap)")
overlap = store.overlap()
with st.container(key="overlap-now"):
    st.text(f"Overlap now: {overlap.annotators} annotators on {overlap.percent:g}% of turns"
            if overlap.active else "Overlap now: off (every turn gets one annotator)")
st.caption("A sampled share of turns is labeled by several annotators; the Agreement page compares them, and "
           "each annotator's label page shows which turns await their overlap label.")
with st.form("admin-overlap", border=True):
    left, right = st.columns(2)
    left.number_input("Annotators per sampled turn", min_value=1, max_value=10, value=max(overlap.annotators, 2),
                      key="admin-overlap-n")
    right.slider("Share of turns (%)", min_value=0, max_value=100, value=int(overlap.percent) or 10,
                 key="admin-overlap-percent")
    st.form_submit_button("Set overlap", on_click=save_overlap)
