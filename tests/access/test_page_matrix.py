"""The role × page matrix (docs/deployment.md), cell by cell, through the real router with AppTest.

Allowed: the page renders (its title shows, no refusal). Forbidden: one line saying who may open it and
nothing of the page. Anonymous: the sign-in screen on every URL. The user comes from the session (what the
sidebar picker sets), never from the URL: ``?user=`` is tried on every page and changes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.access import PAGES, PageSpec, allowed
from labeler.store import Store, User
from tests.app.conftest import APP_MAIN, seed
from tests.history.kit import gold_cases, save_agent_run

REPO = Path(__file__).resolve().parents[2]
USERS = {"annotator": "ann", "reviewer": "rita", "admin": "root"}
# Which pages each role may open: written out, not derived from access.PAGES, so the matrix is checked.
MATRIX = {
    "annotator": {"transcripts", "label", "gold", "review"},
    "reviewer": {"transcripts", "label", "review", "gold", "runs", "run", "compare", "agreement", "versions",
                 "hygiene", "adjudication", "calibration"},
    "admin": {spec.url_path for spec in PAGES},
}
SECRET_RATIONALE = "SECRET-RATIONALE the refund needs the lookup first"


@pytest.fixture
def people(store: Store) -> Store:
    seed(store)
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    store.add_user("ann", "annotator", actor="root")
    return store


def open_as(name: str | None, spec: PageSpec, **params: str) -> AppTest:
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    if name is not None:
        app.session_state["user"] = name
    app.run()
    for key, value in params.items():
        app.query_params[key] = value
    app.switch_page(f"pages_/{spec.file}")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def texts(app: AppTest) -> list[str]:
    return [t.value for t in app.main.text]


def refused_in(app: AppTest) -> list[object]:
    return [c for c in app.get("flex_container") if getattr(c, "key", None) == "access-refused"]


@pytest.mark.parametrize("role", list(USERS))
@pytest.mark.parametrize("spec", PAGES, ids=[s.url_path for s in PAGES])
def test_every_cell_of_the_role_page_matrix(people: Store, role: str, spec: PageSpec) -> None:
    app = open_as(USERS[role], spec)
    refused = refused_in(app)
    if spec.url_path in MATRIX[role]:
        assert not refused, texts(app)
        assert [t.value for t in app.title] == [spec.title], texts(app)
    else:
        assert refused and [t.value for t in app.main.text] == [
            f"{spec.title} is for {'admins' if spec.roles == ('admin',) else 'reviewers and admins'}; "
            f"you are signed in as {USERS[role]} ({role})."]
        assert not app.title and not app.main.table and not app.main.code and not app.main.button


@pytest.mark.parametrize("role", list(USERS))
def test_the_matrix_in_access_matches_the_documented_one(role: str) -> None:
    user = User(USERS[role], role)
    assert {s.url_path for s in PAGES if allowed(user, s)} == MATRIX[role]


def test_the_deployment_guide_prints_the_same_matrix() -> None:
    guide = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    for spec in PAGES:
        row = re.search(rf"^\| {re.escape(spec.title)} \|(.*)\|$", guide, re.M)
        assert row, f"no row for {spec.title} in docs/deployment.md"
        cells = [c.strip() for c in row.group(1).split("|")]
        assert cells == ["yes" if spec.url_path in MATRIX[r] else "—" for r in USERS], spec.title


@pytest.mark.parametrize("spec", PAGES, ids=[s.url_path for s in PAGES])
def test_anonymous_visitors_see_only_the_sign_in_screen(people: Store, spec: PageSpec) -> None:
    app = open_as(None, spec, user="root")
    assert texts(app) == ["Pick your name in the sidebar to start."]
    assert not app.title and not app.main.table and not app.main.button


@pytest.mark.parametrize("spec", PAGES, ids=[s.url_path for s in PAGES])
def test_user_in_the_url_changes_nothing(people: Store, spec: PageSpec) -> None:
    app = open_as("ann", spec, user="root")
    assert app.sidebar.selectbox(key="user").value == "ann"
    assert (spec.url_path in MATRIX["annotator"]) != bool(refused_in(app))


def test_an_annotator_never_sees_frozen_gold_on_the_run_page(people: Store) -> None:
    """The Run page showed the frozen regression gold (rationale included) of failing cases to anyone."""
    cases = [c.model_copy(update={"rationale": SECRET_RATIONALE}) if c.id == "get_order-00" else c
             for c in gold_cases()]
    info = save_agent_run(people, cases, "v1", created_at="2025-06-01T10:00:00.000Z")
    spec = next(s for s in PAGES if s.url_path == "run")
    seen = open_as("ann", spec, run=info.run_id, case="get_order-00")
    assert not any(SECRET_RATIONALE in t for t in texts(seen) + [c.value for c in seen.main.code])
    shown = open_as("rita", spec, run=info.run_id, case="get_order-00")
    assert any(SECRET_RATIONALE in t for t in texts(shown))


def test_a_deactivated_user_loses_access_at_once(people: Store) -> None:
    spec = next(s for s in PAGES if s.url_path == "label")
    app = open_as("ann", spec)
    assert [t.value for t in app.title] == ["Label"]
    people.set_user("ann", active=False, actor="root")
    app.run()
    assert not app.title and texts(app) == ["Pick your name in the sidebar to start."]
