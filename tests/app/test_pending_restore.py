"""An edit the database was too busy for, restored from the pending-edit journal on the next page load (a new
session): shown unsaved, retried, removed from the journal only once saved; a newer stored version is a
conflict shown field by field, never overwritten."""

from __future__ import annotations

import pytest
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


REFUSED_REASON = "there is no saved label (version 3 was expected)"


def refused_entry(store: Store) -> None:
    """A journaled edit the store refuses for good (not busy, not a conflict): it was based on version 3 of a
    label that is not stored (the database was restored from an older backup, say)."""
    journaled(store, base_version=3)


def still_journaled(store: Store) -> bool:
    kept = store.pending_journal().get(TAU, 6, "ann")
    return kept is not None and (kept.body, kept.base_version) == (TYPED, 3)


def test_an_edit_the_store_refuses_shows_what_was_typed_and_the_reason_once(people: Store,  # noqa: F811
                                                                            app: AppTest) -> None:
    refused_entry(people)
    open_turn(app, turn=6)
    retry_now(app)
    box = app.get_by_key("refused-edit")
    said = [t.value for t in box.text]
    assert any(REFUSED_REASON in t for t in said), said
    assert any("typed before the reload" in c.value for c in box.code)  # to copy
    assert [b.label for b in box.button] == ["Discard this unsaved edit"]
    # Until the annotator chooses, the entry stays: a new session (a reload) offers the same choice.
    assert still_journaled(people)
    again = AppTest.from_file(app._script_path, default_timeout=30)
    open_turn(again, turn=6)
    retry_now(again)
    assert [b.label for b in again.get_by_key("refused-edit").button] == ["Discard this unsaved edit"]


def test_discarding_a_refused_edit_sets_it_aside_and_starts_from_the_stored_label(people: Store,  # noqa: F811
                                                                                  app: AppTest) -> None:
    refused_entry(people)
    journal = people.pending_journal()
    entry = journal.path_for(TAU, 6, "ann")
    open_turn(app, turn=6)
    retry_now(app)
    assert still_journaled(people)
    raw = entry.read_bytes()
    [discard] = [b for b in app.button if b.label == "Discard this unsaved edit"]
    discard.click().run()
    assert not app.exception, app.exception
    assert journal.entries() == []
    kept = entry.with_name(entry.name + ".discarded")
    assert kept.read_bytes() == raw  # moved aside, never deleted
    with pytest.raises(KeyError):
        app.get_by_key("refused-edit")
    assert "Not saved yet: your first change creates the draft." in texts(app)
    [why] = [a for a in app.text_area if a.label == "Rationale"]
    assert why.value == ""
    assert people.get_label(TAU, 6, "ann") is None
    # A second refused edit of the same turn, discarded too, does not replace the first one set aside.
    refused_entry(people)
    again = AppTest.from_file(app._script_path, default_timeout=30)
    open_turn(again, turn=6)
    retry_now(again)
    second = entry.read_bytes()
    [discard] = [b for b in again.button if b.label == "Discard this unsaved edit"]
    discard.click().run()
    assert kept.read_bytes() == raw and entry.with_name(entry.name + ".discarded-2").read_bytes() == second
    assert journal.entries() == []
