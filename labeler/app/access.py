"""Who may open which page: the role × page matrix, applied once, in the router.

Every page is registered with ``st.navigation`` so its URL resolves, but only the pages of the signed-in
user's role are listed, and the router runs a page only when the matrix allows it; any other page shows one
line saying who may open it. Nobody signed in: every URL shows the sign-in screen. docs/deployment.md
prints this matrix; tests/access checks every cell.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from labeler.store import ROLES, User

PAGES_DIR = Path(__file__).resolve().parent / "pages_"
EVERYONE = ROLES
STAFF = ("reviewer", "admin")
ADMINS = ("admin",)

log = logging.getLogger("toolgold.app")


@dataclass(frozen=True)
class PageSpec:
    file: str
    title: str
    icon: str
    url_path: str
    roles: tuple[str, ...]


# Gold content (expected calls, arguments, alternatives, rationale, frozen versions) and scored runs are for
# reviewers and admins; annotators see the transcripts, their own labels, what was sent back to them, and the
# gold set's coverage counts (with the synthetic candidates waiting to be labeled).
PAGES: tuple[PageSpec, ...] = (
    PageSpec("transcripts.py", "Transcripts", ":material/forum:", "transcripts", EVERYONE),
    PageSpec("label.py", "Label", ":material/label:", "label", EVERYONE),
    PageSpec("coverage.py", "Gold set", ":material/donut_small:", "gold", EVERYONE),  # counts, not gold content
    PageSpec("runs.py", "Run history", ":material/show_chart:", "runs", STAFF),
    PageSpec("run.py", "Run", ":material/fact_check:", "run", STAFF),
    PageSpec("compare.py", "Compare runs", ":material/compare_arrows:", "compare", STAFF),
    PageSpec("review.py", "Review", ":material/rate_review:", "review", EVERYONE),
    PageSpec("agreement.py", "Agreement", ":material/groups:", "agreement", STAFF),
    PageSpec("versions.py", "Gold versions", ":material/inventory_2:", "versions", STAFF),
    PageSpec("hygiene.py", "Gold hygiene", ":material/cleaning_services:", "hygiene", STAFF),
    PageSpec("adjudication.py", "Adjudication", ":material/gavel:", "adjudication", STAFF),
    PageSpec("calibration.py", "Judge calibration", ":material/balance:", "calibration", STAFF),
    PageSpec("admin.py", "Team setup: users, tags, overlap", ":material/group:", "admin", ADMINS),
)
DEFAULT = PAGES[0]
BY_PATH = {spec.url_path: spec for spec in PAGES}


def allowed(user: User | None, spec: PageSpec) -> bool:
    return user is not None and user.active and user.role in spec.roles


def who_may(spec: PageSpec) -> str:
    names = [r + "s" for r in ROLES if r in spec.roles]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def navigation_pages(user: User | None) -> list[StreamlitPage]:
    """Every page, so each URL resolves; only the user's own are listed in the sidebar."""
    pages = []
    for spec in PAGES:
        visible = allowed(user, spec) or (user is None and spec is DEFAULT)
        title = "Sign in" if user is None and spec is DEFAULT else spec.title
        pages.append(st.Page(PAGES_DIR / spec.file, title=title, icon=spec.icon, url_path=spec.url_path,
                             default=spec is DEFAULT, visibility="visible" if visible else "hidden"))
    return pages


def refusal(user: User, spec: PageSpec) -> str:
    return f"{spec.title} is for {who_may(spec)}; you are signed in as {user.name} ({user.role})."


def run_page(page: StreamlitPage, user: User | None, sign_in: Callable[[], None]) -> None:
    """Run ``page`` if ``user`` may see it; otherwise one line (or the sign-in screen), and no data.

    A crash in a page shows one line with an error id; the traceback goes to the server log only."""
    spec = BY_PATH.get(page.url_path, DEFAULT)
    if user is None:
        sign_in()
        return
    if not allowed(user, spec):
        with st.container(key="access-refused"):
            st.text(refusal(user, spec))
        return
    try:
        page.run()
    except Exception:  # st.stop and st.rerun are BaseExceptions: they pass through
        error_id = uuid.uuid4().hex[:10]
        log.exception("error %s on page %s (user %s)", error_id, spec.url_path, user.name)
        with st.container(key="app-error"):
            st.text(f"Something went wrong on this page (error id {error_id}); the details are in the server "
                    "log.")
