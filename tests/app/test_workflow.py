"""The labeling workflow a team adopts (issue 16), under AppTest: the real app script and store."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.store import Store
from tests.app.test_labeling import TAU, as_user, button, open_turn, texts


@pytest.fixture
def people(seeded: Store) -> Store:
    seeded.add_user("root", "admin")
    seeded.add_user("ann", "annotator", actor="root")
    seeded.add_user("rita", "reviewer", actor="root")
    return seeded


def test_the_update_user_form_loads_the_selected_users_role_and_state(people: Store, app: AppTest) -> None:
    as_user(app, "root").run()
    app.switch_page("pages_/admin.py").run()
    app.selectbox(key="edit-user").select("rita").run()
    assert app.selectbox(key="edit-role").value == "reviewer"
    assert app.checkbox(key="edit-active").value is True
    app.checkbox(key="edit-active").uncheck()
    [update] = [b for b in app.button if b.label == "Update user"]
    update.click().run()
    assert not app.exception
    rita = people.get_user("rita")
    assert rita is not None and (rita.role, rita.active) == ("reviewer", False)  # deactivated, not demoted
    app.selectbox(key="edit-user").select("ann").run()
    assert (app.selectbox(key="edit-role").value, app.checkbox(key="edit-active").value) == ("annotator", True)
    app.selectbox(key="edit-user").select("rita").run()
    assert (app.selectbox(key="edit-role").value, app.checkbox(key="edit-active").value) == ("reviewer", False)
