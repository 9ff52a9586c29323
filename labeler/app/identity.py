"""Who is signed in: the identity provider through ``st.login`` (OIDC), or a name picker in local mode.

- **OIDC** (an ``[auth]`` section in ``.streamlit/secrets.toml``): the identity is the verified ``email``
  claim (``email_verified`` true) or else ``sub``, compared case-insensitively with the users table; never
  the display name. Someone the table does not know, or a deactivated user, sees one line saying whom to ask.
- **Local** (no ``[auth]``): one person or a small trusted group on one machine pick their name. The pick
  lives in the browser session only, never in the URL, so a link cannot make anyone someone else; the app
  refuses to serve this mode on a non-loopback address.

The users table is the authority on roles; ``toolgold users add`` bootstraps it without the app.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st
from streamlit import runtime

from labeler.app import context
from labeler.binding import is_loopback, local_mode_refusal
from labeler.store import ROLES, StoreError, User

USER_KEY = "user"
NOTE_KEY = "sign-in-note"


def oidc_configured() -> bool:
    try:
        return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)
    except Exception:  # an unreadable secrets file must not take the app down: local mode still refuses remote
        return False


def claimed_identity(claims: Mapping[str, Any]) -> str | None:
    """The identity an OIDC sign-in proves: the verified email, else the subject; never the display name."""
    email = claims.get("email")
    if email and claims.get("email_verified") in (True, "true"):
        return str(email).strip()
    sub = claims.get("sub")
    return str(sub).strip() if sub else None


def role_allowed_by_groups(claims: Mapping[str, Any], settings: Mapping[str, Any]) -> str | None:
    """With ``[toolgold] groups_claim`` and ``[toolgold.roles_by_group]`` set, the highest role the person's
    identity-provider groups map to (``None``: no mapped group). Without the setting, any role."""
    mapping = settings.get("roles_by_group") or {}
    claim = settings.get("groups_claim")
    if not claim or not mapping:
        return ROLES[-1]
    groups = claims.get(str(claim)) or []
    groups = [groups] if isinstance(groups, str) else list(groups)
    mapped = [ROLES.index(mapping[g]) for g in groups if mapping.get(g) in ROLES]
    return ROLES[max(mapped)] if mapped else None


def capped(user: User, allowed: str) -> User:
    """The users table grants the role; the groups can only lower it (someone leaving a group at the identity
    provider loses that access at once)."""
    role = ROLES[min(ROLES.index(user.role), ROLES.index(allowed))]
    return User(user.name, role, user.active)


def find_user(users: Iterable[User], identity: str) -> User | None:
    wanted = identity.casefold()
    return next((u for u in users if u.name.casefold() == wanted), None)


def _note(text: str) -> None:
    st.session_state[NOTE_KEY] = text


def _admins(users: Iterable[User]) -> str:
    names = sorted(u.name for u in users if u.active and u.role == "admin")
    return ", ".join(names) if names else "the person who runs this server"


def _leave(user: User | None) -> None:
    """Someone signing out (or handing the session to another name) leaves the transcript they hold: its
    lease is released now, so the next annotator gets it without waiting for the lease to expire."""
    if user is not None:
        context.store().release_leases(user.name)


def _log_out() -> None:
    _leave(current())
    st.logout()


def _sign_out() -> None:
    _leave(current())
    st.session_state.pop(USER_KEY, None)


def _switched() -> None:
    before = current()
    if before is not None and before.name != st.session_state.get(USER_KEY):
        _leave(before)


def _oidc_user() -> User | None:
    if not st.user.is_logged_in:
        st.button("Log in", on_click=st.login, type="primary", key="log-in")
        _note("Log in to use toolgold.")
        return None
    st.button("Log out", on_click=_log_out, type="tertiary", key="log-out")
    claims = st.user.to_dict()
    identity = claimed_identity(claims)
    everyone = context.store().users(include_inactive=True)
    if identity is None:
        _note("Your identity provider sent neither a verified email nor a subject; ask an admin "
              f"({_admins(everyone)}).")
        return None
    if not everyone:
        _note(f"No users yet. On the server, run: toolgold users add {identity} --role admin")
        return None
    user = find_user(everyone, identity)
    if user is None or not user.active:
        state = "is not a toolgold user" if user is None else "is deactivated"
        _note(f"{identity} {state}; ask an admin ({_admins(everyone)}) to add it.")
        return None
    allowed = role_allowed_by_groups(claims, _settings())
    if allowed is None:
        _note(f"{identity}: none of your identity provider groups gives a toolgold role; ask an admin "
              f"({_admins(everyone)}).")
        return None
    return capped(user, allowed)


def _settings() -> Mapping[str, Any]:
    try:
        found: Mapping[str, Any] = st.secrets.get("toolgold", {})
        return found
    except Exception:  # no secrets file: no group mapping
        return {}


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
    st.text("No users yet. The first user is the admin, who then adds the annotators.")
    st.text_input("Your name", key="first-admin", on_change=_create_first_admin)
    st.button("Create admin", on_click=_create_first_admin, type="primary")
    if "identity-error" in st.session_state:
        st.text(st.session_state.pop("identity-error"))


def _picked_user() -> User | None:
    users = context.store().users()
    if not users:
        _first_user_form()
        _note("No users yet: create the first (admin) user in the sidebar.")
        return None
    by_name = {u.name: u for u in users}
    if st.session_state.get(USER_KEY) not in by_name:  # deactivated meanwhile, or never picked
        st.session_state.pop(USER_KEY, None)
    name = st.selectbox("Who is labeling?", list(by_name), index=None, key=USER_KEY, placeholder="Pick your name",
                        on_change=_switched)
    _note("Pick your name in the sidebar to start.")
    if not name:
        return None
    st.button("Sign out", on_click=_sign_out, type="tertiary", key="sign-out")
    return by_name.get(name)


def sidebar_identity() -> User | None:
    """Render the sign-in controls in the sidebar and return the signed-in user, if any."""
    st.session_state.pop(NOTE_KEY, None)
    with st.sidebar:
        if oidc_configured():
            user = _oidc_user()
        else:
            host = st.get_option("server.address")
            if runtime.exists() and not is_loopback(host):
                _note(local_mode_refusal(host))
                return None
            user = _picked_user()
        if user is not None:
            st.text(f"{user.name} · {user.role}")
    return user


def sign_in_screen() -> None:
    """What someone not (or not yet) signed in sees instead of any page: one line."""
    with st.container(key="sign-in"):
        st.text(st.session_state.get(NOTE_KEY) or "Sign in to use toolgold.")


def current() -> User | None:
    """The user signed in for this script run (set by the router before the page runs)."""
    user: User | None = st.session_state.get("current-user")
    return user


def require(*roles: str) -> User:
    """The current user, or stop the page (the router already refused anyone else; this keeps a page safe
    on its own too)."""
    user = current()
    if user is None:
        sign_in_screen()
        st.stop()
    if roles and user.role not in roles:
        st.text(f"This page is for: {', '.join(roles)}.")
        st.stop()
    return user
