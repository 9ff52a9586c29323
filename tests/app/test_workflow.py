"""The labeling workflow a team adopts (issue 16), under AppTest: the real app script and store."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.cli.data import convert_files
from labeler.labels import LabelBody
from labeler.store import Store
from scorer.importers import ImportOptions
from tests.app import long_transcripts
from tests.app.conftest import REPO
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


DEMO = REPO / "data" / "demo"


@pytest.fixture
def demo(store: Store) -> Store:
    items, rejects = convert_files(sorted(DEMO.glob("*.jsonl")), None, ImportOptions())
    assert not rejects
    store.import_items(items)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    return store


def decide_and_submit(app: AppTest, decision: str) -> None:
    button(app, f"decide-{decision}").click().run()
    button(app, "submit").click().run()
    assert not app.exception, app.exception


def test_submit_and_next_stays_in_a_transcript_with_imported_gold_then_says_it_moved_on(
        demo: Store, app: AppTest) -> None:
    email = "tooltalk/SendEmail-easy"  # decision points 2 (text), 4 (text), 6 (call), all with imported gold
    as_user(app, "ann", t=email, turn="2").run()
    app.switch_page("pages_/label.py").run()
    decide_and_submit(app, "clarify")
    assert (app.query_params["t"], app.query_params["turn"]) == (email, "4")
    assert not [s for s in app.success if "Done with" in s.value]
    decide_and_submit(app, "clarify")
    assert (app.query_params["t"], app.query_params["turn"]) == (email, "6")
    decide_and_submit(app, "same")
    assert app.query_params.get("t") != email
    [notice] = [s.value for s in app.success if "Done with" in s.value]
    assert notice.startswith(f"Done with {md_escape(email)}: every decision point has your label or gold. "
                             f"Moved on to the next transcript from the queue, {md_escape(app.query_params['t'])}.")
    assert [s.label_status for s in demo.turn_states(email, "ann")] == ["submitted"] * 3


def test_a_submitted_turn_is_read_only_until_edit_and_an_edit_can_be_discarded(people: Store, app: AppTest) -> None:
    open_turn(app, turn=2)
    decide_and_submit(app, "clarify")
    app.query_params["turn"] = "2"
    app.run()
    assert any(c.value.startswith("Submitted: read-only") for c in app.caption)
    assert button(app, "decide-no_call").disabled
    label = people.get_label(TAU, 2, "ann")
    assert label is not None and (label.status, label.body.decision) == ("submitted", "clarify")
    assert people.get_gold(f"{TAU}#t2").expected.behavior == "clarify"
    button(app, "edit").click().run()
    assert not button(app, "decide-no_call").disabled
    button(app, "decide-no_call").click().run()
    label = people.get_label(TAU, 2, "ann")
    assert label is not None and (label.status, label.body.decision) == ("draft", "no_call")
    button(app, "discard").click().run()
    assert not app.exception
    label = people.get_label(TAU, 2, "ann")
    assert label is not None and (label.status, label.body.decision) == ("submitted", "clarify")
    assert people.get_gold(f"{TAU}#t2").expected.behavior == "clarify"
    assert button(app, "decide-no_call").disabled and button(app, "decide-clarify").proto.type == "primary"


def labeled_turn_map(app: AppTest) -> list[str]:
    return [b.label for b in app.button if b.key and (b.key.startswith("mm-"))]


def test_a_long_transcript_draws_a_window_of_the_turn_map_and_of_the_conversation(
        people: Store, app: AppTest) -> None:
    tid = long_transcripts.add(people, long_transcripts.many_turns("long-300", 300))
    turn = 2 * 199 + 2  # decision point 200
    as_user(app, "ann", t=tid, turn=str(turn)).run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert labeled_turn_map(app) == ["◀", "1", *[str(n) for n in range(195, 206)], "300", "▶"]
    assert [p.value for p in app.get("progress")] == [0]
    assert "long-300 · decision point 200 of 300 · the agent answered in text" in texts(app)
    shown = [t for t in texts(app) if t.startswith(("question ", "answer "))]
    assert len(shown) <= 45 and "answer 200: record R199 holds nothing unusual" in shown
    assert "question 1: what is in record R0?" not in shown
    [earlier] = [b for b in app.button if b.label.startswith("Show 100 earlier messages")]
    earlier.click().run()
    assert len([t for t in texts(app) if t.startswith(("question ", "answer "))]) > len(shown)
    [ahead] = [b for b in app.button if b.label == "▶"]
    ahead.click().run()
    assert app.query_params["turn"] == str(2 * 210 + 2)  # a window further: decision point 211


def test_opening_and_submitting_a_turn_of_a_long_transcript_reads_a_window_not_every_turn_state(
        people: Store, app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    tid = long_transcripts.add(people, long_transcripts.many_turns("long-300", 300))
    people.submit_label(tid, 4, "ann", LabelBody(decision="no_call"), version=0)
    read_all: list[str] = []
    every_state = Store.turn_states

    def counted(self: Store, transcript_id: str, annotator: str | None = None):  # type: ignore[no-untyped-def]
        read_all.append(transcript_id)
        return every_state(self, transcript_id, annotator)

    monkeypatch.setattr(Store, "turn_states", counted)
    as_user(app, "ann", t=tid, turn=str(2 * 199 + 2)).run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert "labeled 1/300 turns" in texts(app)
    assert labeled_turn_map(app) == ["◀", "1", *[str(n) for n in range(195, 206)], "300", "▶"]
    decide_and_submit(app, "no_call")
    assert app.query_params["turn"] == str(2 * 200 + 2)  # Submit & next: decision point 201
    assert "labeled 2/300 turns" in texts(app)
    assert "long-300 · decision point 201 of 300 · the agent answered in text" in texts(app)
    app.button(key="prev").click().run()
    assert app.query_params["turn"] == str(2 * 199 + 2)
    assert read_all == []  # the page read windows and SQL counts, never all 300 turn states


def test_a_2_mb_message_without_whitespace_is_cut_and_shown_in_parts_on_request(people: Store, app: AppTest) -> None:
    huge = "x" * 2_000_000
    tid = long_transcripts.add(people, long_transcripts.many_turns("huge-message", 2, long_message=huge))
    as_user(app, "ann", t=tid, turn="2").run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert sum(len(t) for t in texts(app)) < 10_000
    assert not [c for c in app.code if len(c.value) > 100_000]
    [show] = [t for t in app.toggle if t.label == "Show all 2,000,000 characters"]
    show.set_value(True).run()
    [part] = [c.value for c in app.code if len(c.value) > 100_000]
    assert part == "x" * 200_000
    [which] = [n for n in app.number_input if n.label.startswith("Part (of 10")]
    which.set_value(10).run()
    assert [c.value for c in app.code if len(c.value) > 100_000] == ["x" * 200_000]


def test_different_call_starts_from_a_tool_picker_and_shows_errors_only_once_touched(
        people: Store, app: AppTest) -> None:
    open_turn(app, turn=2)  # the agent answered in text: no call of its own to start from
    button(app, "decide-different").click().run()
    assert not app.exception, app.exception
    [picker] = [s for s in app.selectbox if s.label == "Which tool should the agent call?"]
    assert picker.value is None and not [s for s in app.selectbox if s.label.startswith("Tool (call")]
    assert not [t for t in texts(app) if "required, but missing" in t]
    picker.select("book_reservation").run()
    assert [s.value for s in app.selectbox if s.label == "Tool (call 1)"] == ["book_reservation"]
    assert not [t for t in texts(app) if "required, but missing" in t]  # nothing touched yet
    [user_id] = [w for w in app.text_input if w.label == "user_id *"]
    user_id.input("mia_li_3668").run()
    [origin] = [w for w in app.text_input if w.label == "origin *"]
    origin.input("JFK").run()
    [origin] = [w for w in app.text_input if w.label == "origin *"]
    origin.input("").run()  # touched, then emptied: now its error shows, and only its own
    assert texts(app).count("required, but missing") == 1
    button(app, "submit").click().run()
    assert texts(app).count("required, but missing") > 5  # a submit attempt shows every error
    assert "Before submitting" in [c.value for c in app.caption]


def test_an_empty_string_argument_reads_differently_from_a_missing_one(people: Store, app: AppTest) -> None:
    tid = long_transcripts.add(people, long_transcripts.one_call("empty-arg", '{"id": ""}'))
    as_user(app, "ann", t=tid, turn="1").run()
    app.switch_page("pages_/label.py").run()
    button(app, "decide-same").click().run()
    assert not app.exception, app.exception
    assert 'The value is an empty string `""` (not missing).' in [c.value for c in app.caption]
    assert 'id = ""' in texts(app)
    [field] = [w for w in app.text_input if w.label == "id *"]
    field.input("R7").run()
    assert 'id = "R7"' in texts(app)
    [field] = [w for w in app.text_input if w.label == "id *"]
    field.input("").run()  # emptying the field leaves the argument out
    assert "id = missing" in texts(app)
    assert [w.placeholder for w in app.text_input if w.label == "id *"] == ["missing"]


def test_the_default_queue_lists_imported_gold_transcripts_with_progress_bars(demo: Store, app: AppTest) -> None:
    as_user(app, "ann").run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert app.selectbox(key="qstatus").value == "unlabeled"
    listed = texts(app)
    assert "tooltalk/SendEmail-easy" in listed and "bfcl/simple_python_0" in listed
    bars = {p.proto.text: p.value for p in app.get("progress")}
    assert bars["labeled 0/3 turns · 3 with imported gold"] == 0


def test_a_second_annotator_sees_which_turns_await_their_overlap_label(people: Store, app: AppTest) -> None:
    people.add_user("bob", "annotator", actor="root")
    people.set_overlap(2, 100, actor="root")  # every turn wants two annotators
    people.submit_label(TAU, 4, "ann", LabelBody(decision="clarify"), version=0)
    people.submit_label(TAU, 8, "ann", LabelBody(decision="no_call"), version=0)
    as_user(app, "bob", t=TAU, turn="2").run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert ("2 decision point(s) await your overlap label (another annotator labeled them; the team compares "
            "both): 2, 4") in texts(app)
    assert [b.key for b in app.button if b.key and b.key.startswith("mm-")] == [
        "mm-open-2", "mm-overlap-4", "mm-open-6", "mm-overlap-8"]


def test_the_admin_page_sets_the_overlap(people: Store, app: AppTest) -> None:
    as_user(app, "root").run()
    app.switch_page("pages_/admin.py").run()
    assert [h.value for h in app.subheader][:3] == ["Users", "Tag vocabulary", "Double annotation (overlap)"]
    app.number_input(key="admin-overlap-n").set_value(3)
    app.slider(key="admin-overlap-percent").set_value(20)
    [save] = [b for b in app.button if b.label == "Set overlap"]
    save.click().run()
    assert not app.exception, app.exception
    overlap = people.overlap()
    assert (overlap.annotators, overlap.percent) == (3, 20.0)
    assert "Overlap now: 3 annotators on 20% of turns" in texts(app)
