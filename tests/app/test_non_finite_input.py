"""NaN, Infinity and numbers that overflow typed into a JSON field of the label panel: one clear line on the
panel, what was typed stays in the field, and nothing (least of all a null) is saved."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.store import Store
from tests.app.test_labeling import TAU, button, open_turn, people, texts  # noqa: F401  (people: a fixture)

TYPED = ['{"reservation_id": NaN}', '{"reservation_id": Infinity}', '{"reservation_id": -Infinity}',
         '{"reservation_id": 1e400}']


@pytest.mark.parametrize("typed", TYPED)
def test_a_non_finite_number_in_the_arguments_json_is_refused_on_the_panel(people: Store, app: AppTest,  # noqa: F811
                                                                           typed: str) -> None:
    open_turn(app, turn=4)
    button(app, "decide-same").click().run()
    before = people.get_label(TAU, 4, "ann")
    [toggle] = [t for t in app.toggle if t.label == "Edit as JSON"]
    toggle.set_value(True).run()
    [area] = [a for a in app.text_area if a.label == "Arguments (JSON object)"]
    area.input(typed).run()
    assert not app.exception, app.exception
    messages = [t for t in texts(app) if t.startswith("not valid JSON")]
    assert len(messages) == 1 and "\n" not in messages[0], texts(app)
    assert "not JSON" in messages[0] or "too large" in messages[0] or "overflow" in messages[0], messages
    [area] = [a for a in app.text_area if a.label == "Arguments (JSON object)"]
    assert area.value == typed  # what was typed stays, to be corrected
    after = people.get_label(TAU, 4, "ann")
    assert after is not None and before is not None and (after.version, after.body) == (before.version, before.body)


@pytest.mark.parametrize("typed", ["NaN", "[1, Infinity]"])
def test_a_non_finite_number_in_an_alternatives_arguments_is_refused_on_the_panel(people: Store, app: AppTest,  # noqa: F811
                                                                          typed: str) -> None:
    """The arguments of an acceptable alternative, typed as JSON."""
    open_turn(app, turn=4)
    button(app, "decide-same").click().run()
    before = people.get_label(TAU, 4, "ann")
    [args] = [w for w in app.text_input if w.label == "Arguments (JSON)"]
    args.input(typed).run()
    assert not app.exception, app.exception
    [button_add] = [b for b in app.button if b.key and b.key.startswith("alt-add-")]
    button_add.click().run()
    assert not app.exception, app.exception
    [message] = [t for t in texts(app) if "JSON" in t and ("NaN" in t or "Infinity" in t or "not" in t)]
    assert "\n" not in message
    [args] = [w for w in app.text_input if w.label == "Arguments (JSON)"]
    assert args.value == typed
    stored = people.get_label(TAU, 4, "ann")
    assert stored is not None and before is not None and stored.body.alternatives == before.body.alternatives
