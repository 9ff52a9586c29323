"""The Transcripts page under AppTest: the real app script, a real store."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.store import Store


@pytest.fixture(autouse=True)
def signed_in(store: Store, app: AppTest) -> None:
    """Every page needs a signed-in user: an annotator, picked in the sidebar (the session, not the URL)."""
    store.add_user("ann", "annotator")
    app.session_state["user"] = "ann"


def texts(app: AppTest) -> list[str]:
    return [t.value for t in app.text]


def test_empty_store_says_how_to_import(store: Store, app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert "toolgold import" in app.info[0].value


def test_list_shows_each_transcript_with_its_counts(seeded: Store, app: AppTest) -> None:
    app.run()
    assert not app.exception
    shown = texts(app)
    row = shown.index("tau-airline-task10-trial1")
    assert shown[row:row + 7][:2] == ["tau-airline-task10-trial1", "tau-bench"]
    assert shown[row + 3:row + 7] == ["4", "2", "0", "4"]
    assert [b.label for b in app.main.button] == ["Open", "Open", "Open"]


def test_source_filter_and_search_narrow_the_list(seeded: Store, app: AppTest) -> None:
    app.run()
    app.selectbox(key="source").select("xss-probe").run()
    assert "xss-probe" in texts(app) and "tau-airline-task10-trial1" not in texts(app)
    app.selectbox(key="source").select("All sources").run()
    app.text_input(key="q").input("PEP4E0").run()
    assert "tau-airline-task35-trial3" in texts(app) and "tau-airline-task10-trial1" not in texts(app)


def test_open_renders_the_conversation_and_puts_it_in_the_url(seeded: Store, app: AppTest) -> None:
    app.run()
    app.button(key="open-0").click().run()
    assert not app.exception
    assert app.query_params["t"] == "tau-airline-task10-trial1"
    shown = texts(app)
    assert any("remove Ethan from it" in t for t in shown)
    assert "get_reservation_details" in shown
    assert any('"reservation_id": "H9ZU1C"' in c.value for c in app.code)
    assert any(t.startswith("↳ get_reservation_details → ") for t in shown)


def test_unknown_transcript_in_the_url_is_reported(seeded: Store, app: AppTest) -> None:
    app.query_params["t"] = "nope"
    app.run()
    assert not app.exception
    assert app.error[0].value == md_escape("no transcript with id 'nope'")
