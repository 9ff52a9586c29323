"""Who is labeling: a name picker backed by the users table (or ``st.login`` when OIDC is configured).

The picker is not authentication: it tells the store whose label is whose. The chosen name is bound to the
``user`` query parameter, so a reload keeps it. With an ``[auth]`` section in ``.streamlit/secrets.toml``
the app asks the identity provider instead, and the signed-in email must be a user an admin added.
"""

from __future__ import annotations

import streamlit as st

from labeler.app import context
from labeler.store import ROLES, StoreError, User

USER_KEY = "user"


def _oidc_configured() -> bool:
    try:
        return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)
    except Exception:  # an unreadable secrets file must not take the app down; the picker still works
        return False


def _create_first_admin() -> None:
    name = (st.session_state.get("first-admin") or "").strip()
    if not name:
        return
    try:
        context.store().add_user(name, "admin")
    except StoreError as exc:
        st.session_state["identity-error"] = str(exc)
        return
    st.session_state[USER_KEY] = name


def _first_user_form() -> None:
    st.write("No users yet. The first user is the admin, who then adds the annotators.")
    st.text_input("Your name", key="first-admin", on_change=_create_first_admin)
    st.button("Create admin", on_click=_create_first_admin, type="primary")
    if "identity-error" in st.session_state:
        st.text(st.session_state.pop("identity-error"))


def _signed_in_user() -> User | None:
    if not st.user.is_logged_in:
        st.button("Log in", on_click=st.login, type="primary")
        return None
    email = str(st.user.get("email") or st.user.get("name") or "")
    user = context.store().get_user(email)
    if user is None or not user.active:
        st.text(f"{email} is not a toolgold user yet; ask an admin to add this address.")
    st.button("Log out", on_click=st.logout, type="tertiary")
    return user if user and user.active else None


def sidebar_identity() -> User | None:
    """Render the identity picker in the sidebar and return the current user, if any."""
    with st.sidebar:
        if _oidc_configured():
            user = _signed_in_user()
        else:
            users = context.store().users()
            if not users:
                _first_user_form()
                return None
            by_name = {u.name: u for u in users}
            name = st.selectbox("Who is labeling?", list(by_name), index=None, key=USER_KEY,
                                bind="query-params", placeholder="Pick your name")
            user = by_name.get(name) if name else None
        if user is not None:
            st.caption(f"Role: {user.role}")
    return user


def current() -> User | None:
    """The user picked in this session (set by ``main`` before the page runs)."""
    user: User | None = st.session_state.get("current-user")
    return user


def require(*roles: str) -> User:
    """The current user, or stop the page with a note saying who may see it."""
    user = current()
    if user is None:
        st.info("Pick your name in the sidebar to start.")
        st.stop()
    if roles and user.role not in roles:
        st.warning(f"This page is for: {', '.join(r for r in ROLES if r in roles)}.")
        st.stop()
    return user
