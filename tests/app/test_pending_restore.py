"""An edit the database was too busy for, restored from the pending-edit journal on the next page load (a new
session): shown unsaved, retried, removed from the journal only once saved; a newer stored version is a
conflict shown field by field, never overwritten."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from labeler.app.editing import BUSY_KEY
from labeler.labels import LabelBody
from labeler.store import PendingEdit, Store
from tests.app.test_labeling import TAU, button, open_turn, people, texts  # noqa: F401  (people: a fixture)

TYPED = LabelBody(decision="clarify", rationale="typed before the reload")


def journaled(store: Store, *, base_version: int) -> None:
    store.pending_journal().put(PendingEdit(TAU, 6, "ann", TYPED, base_version=base_version))


def retry_now(app: AppTest) -> None:
    """What the decision bar's next retry does, without waiting out the session's 2 s backoff."""
    del app.session_state[BUSY_KEY]
    app.run()
    assert not app.exception, app.exception


def test_a_journaled_edit_is_restored_retried_and_then_forgotten(people: Store, app: AppTest) -> None:  # noqa: F811
    journaled(people, base_version=0)
    open_turn(app, turn=6)
    assert any(t.startswith("Unsaved (database was busy) — retrying") for t in texts(app)), texts(app)
    [why] = [a for a in app.text_area if a.label == "Rationale"]
    assert why.value == "typed before the reload"
    assert people.get_label(TAU, 6, "ann") is None and len(people.pending_journal().entries()) == 1
    retry_now(app)
    label = people.get_label(TAU, 6, "ann")
    assert label is not None and (label.body, label.version) == (TYPED, 1)
    assert people.pending_journal().entries() == []
    assert any(t.startswith("Draft saved") for t in texts(app)), texts(app)


def test_a_newer_stored_version_is_a_conflict_not_an_overwrite(people: Store, app: AppTest) -> None:  # noqa: F811
    journaled(people, base_version=0)
    people.save_label(TAU, 6, "ann", LabelBody(decision="no_call", rationale="from the other tab"), version=0)
    open_turn(app, turn=6)
    retry_now(app)
    assert app.error and app.error[0].value.startswith("This label was changed elsewhere")
    assert any('rationale:\n  yours: "typed before the reload"\n  saved: "from the other tab"' in c.value
               for c in app.code)
    stored = people.get_label(TAU, 6, "ann")
    assert stored is not None and stored.body.rationale == "from the other tab"  # nothing overwritten
    assert len(people.pending_journal().entries()) == 1  # kept until the annotator decides
    button(app, "conflict-mine").click().run()
    stored = people.get_label(TAU, 6, "ann")
    assert stored is not None and (stored.body, stored.version) == (TYPED, 2)
    assert people.pending_journal().entries() == []


def test_an_unreadable_entry_is_one_line_on_the_panel(people: Store, app: AppTest) -> None:  # noqa: F811
    journaled(people, base_version=0)
    journal = people.pending_journal()
    journal.path_for(TAU, 6, "ann").write_text('{"format": 1, "transcript_id": "tau')  # torn
    open_turn(app, turn=6)
    [line] = [t for t in texts(app) if "unreadable unsaved edit" in t]
    assert "\n" not in line and "Traceback" not in line
    assert people.get_label(TAU, 6, "ann") is None and journal.entries() == []
