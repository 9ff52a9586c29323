"""A record stored by an older toolgold that this one cannot load (a tool schema whose NaN bound was
stored as null) is one line wherever it is opened, and the queue skips it instead of landing on it."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from streamlit.testing.v1 import AppTest

from labeler.store import Store, StoreError
from tests.app.conftest import (
    APP_MAIN,
    seeded,  # noqa: F401  (a fixture)
)
from tests.app.test_labeling import TAU, as_user, people  # noqa: F401  (a fixture)

PROBLEM = f"transcript {TAU!r} is stored in a form this toolgold cannot read"


def break_a_tool_schema(store: Store, transcript_id: str = TAU) -> None:
    """What importing `"maximum": NaN` used to store: null where a number must be."""
    with store.write() as conn:
        conn.execute(text(
            "UPDATE tool_schemas SET body = replace(body, :plain, :broken) "
            "WHERE hash = (SELECT tt.schema_hash FROM tool_set_tools tt JOIN transcripts tr ON tr.tool_set_id = tt.tool_set_id "
            "WHERE tr.external_id = :tid ORDER BY tt.position LIMIT 1)"),
            {"tid": transcript_id, "plain": '"type":"object"', "broken": '"maximum":null,"type":"object"'})


def test_loading_it_is_one_store_error(people: Store) -> None:  # noqa: F811
    break_a_tool_schema(people)
    with pytest.raises(StoreError) as caught:
        people.get_transcript(TAU)
    assert str(caught.value).startswith(PROBLEM + " (tools.0.parameters: ")
    assert "\n" not in str(caught.value)


def test_the_queue_skips_it(people: Store) -> None:  # noqa: F811
    assert people.claim_next("ann") == TAU  # first in line while it is readable
    people.release_leases("ann")
    break_a_tool_schema(people)
    following = people.claim_next("ann")
    assert following is not None and following != TAU
    people.get_transcript(following)  # and what it hands out can be opened


def test_start_labeling_never_lands_on_it_and_opening_it_is_one_line(people: Store) -> None:  # noqa: F811
    break_a_tool_schema(people)
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    as_user(app, "ann").run()
    app.switch_page("pages_/label.py").run()
    app.button(key="start").click().run()
    assert not app.exception, app.exception
    assert app.query_params["t"] not in ("", TAU)

    opened = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    as_user(opened, "ann", t=TAU).run()
    opened.switch_page("pages_/label.py").run()
    assert not opened.exception, opened.exception
    assert any(t.value.startswith(PROBLEM) for t in opened.text)

    listing = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    as_user(listing, "ann", t=TAU).run()
    assert not listing.exception, listing.exception
    assert listing.error[0].value.replace("\\", "").startswith(PROBLEM)  # shown Markdown-escaped


@pytest.mark.parametrize("typed,words", [('{"reservation_id": NaN}', "NaN/Infinity is not JSON"),
                                         ('{"reservation_id": "\\ud800"}', "lone UTF-16 surrogate")])
def test_an_annotator_typing_nan_or_a_surrogate_is_told_and_nothing_is_saved(
        typed: str, words: str, people: Store) -> None:  # noqa: F811
    from tests.app.test_labeling import button, open_turn, texts

    app = open_turn(AppTest.from_file(str(APP_MAIN), default_timeout=30), turn=4)
    button(app, "decide-different").click().run()
    [toggle] = [t for t in app.toggle if t.label == "Edit as JSON"]
    toggle.set_value(True).run()
    before = people.get_label(TAU, 4, "ann").body.calls[0].arguments  # type: ignore[union-attr]
    [area] = [a for a in app.text_area if a.label == "Arguments (JSON object)"]
    area.input(typed).run()
    assert not app.exception, app.exception
    assert any(t.startswith("not valid JSON: ") and words in t for t in texts(app)), texts(app)
    assert people.get_label(TAU, 4, "ann").body.calls[0].arguments == before  # type: ignore[union-attr]
