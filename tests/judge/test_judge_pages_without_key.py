"""Without an Anthropic API key the judge pages say why questions wait and what to run (as the CLI does)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.judge_key import NO_KEY
from labeler.store import Store
from tests.app.conftest import APP_MAIN


@pytest.mark.parametrize("page", ["pages_/adjudication.py", "pages_/calibration.py"])
def test_a_judge_page_without_a_key_says_why_questions_wait(store: Store, page: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    store.add_user("root", "admin")
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    app.session_state["user"] = "root"  # what the sidebar picker sets (the URL has no say)
    app.run()
    app.switch_page(page).run()
    assert not app.exception, app.exception
    [warning] = app.get_by_key("judge-no-key").warning
    assert warning.value == NO_KEY.replace("_", "\\_")
    assert "toolgold judge" in NO_KEY and "ANTHROPIC_API_KEY" in NO_KEY


def test_with_a_key_the_notice_is_not_shown(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    store.add_user("root", "admin")
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    app.session_state["user"] = "root"  # what the sidebar picker sets (the URL has no say)
    app.run()
    app.switch_page("pages_/calibration.py").run()
    assert not app.exception, app.exception
    assert not [w for w in app.warning if "No Anthropic API key" in w.value]
