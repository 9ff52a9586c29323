"""Labeling under AppTest: the real app script and store; widgets clicked as a person would."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from labeler.labels import LabelBody
from labeler.store import Store
from scorer.model import Call
from tests.app.conftest import APP_MAIN
from tests.store_reads import active_lease

TAU = "tau-airline-task10-trial1"  # decision points at messages 2 (text), 4 (call), 6 (text), 8 (call)
PAGES = ["pages_/transcripts.py", "pages_/label.py", "pages_/coverage.py"]


@pytest.fixture
def people(seeded: Store) -> Store:
    seeded.add_user("root", "admin")
    seeded.add_user("ann", "annotator", actor="root")
    seeded.add_user("rita", "reviewer", actor="root")
    return seeded


def as_user(app: AppTest, name: str, **params: str) -> AppTest:
    app.session_state["user"] = name  # what the sidebar picker sets; the URL has no say
    for key, value in params.items():
        app.query_params[key] = value
    return app


def open_turn(app: AppTest, name: str = "ann", turn: int = 4) -> AppTest:
    as_user(app, name, t=TAU, turn=str(turn)).run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    return app


def button(app: AppTest, name: str):  # type: ignore[no-untyped-def]
    """The label panel's button ``name`` (its key also names the turn it belongs to)."""
    [found] = [b for b in app.button if b.key and b.key.startswith(f"{name}-w")]
    return found


def texts(app: AppTest) -> list[str]:
    return [t.value for t in app.text]


@pytest.mark.parametrize("role", ["annotator", "reviewer", "admin", None])
def test_every_page_loads_for_every_role(people: Store, app: AppTest, role: str | None) -> None:
    name = {"annotator": "ann", "reviewer": "rita", "admin": "root", None: None}[role]
    if name:
        as_user(app, name)
    app.run()
    assert not app.exception
    pages = [*PAGES, "pages_/admin.py"] if role == "admin" else PAGES
    for page in pages:
        app.switch_page(page).run()
        assert not app.exception, (page, app.exception)
    if name is None:
        app.switch_page("pages_/label.py").run()
        assert [t.value for t in app.main.text] == ["Pick your name in the sidebar to start."]
    if role in ("annotator", "reviewer"):  # listed nowhere, and refused by the router (tests/access)
        app.switch_page("pages_/admin.py").run()
        assert [t.value for t in app.main.text] == [f"Team setup: users, tags, overlap is for admins; you are signed in as {name} ({role})."]


def test_the_first_user_becomes_admin(seeded: Store, app: AppTest) -> None:
    app.run()
    app.sidebar.text_input(key="first-admin").input("Grace").run()
    assert not app.exception
    assert seeded.users()[0].name == "Grace" and seeded.users()[0].role == "admin"
    assert app.sidebar.selectbox(key="user").value == "Grace"


def test_a_decision_is_saved_as_a_draft_at_once(people: Store, app: AppTest) -> None:
    open_turn(app, turn=4)
    assert "Not saved yet: your first change creates the draft." in texts(app)
    button(app, "decide-same").click().run()
    assert not app.exception
    label = people.get_label(TAU, 4, "ann")
    assert label is not None and (label.status, label.version) == ("draft", 1)
    assert label.body.decision == "same"
    assert label.body.calls == (Call(name="get_reservation_details", arguments={"reservation_id": "H9ZU1C"}),)
    assert str(label.body.reference_time) == "2024-05-15 15:00:00-05:00"  # the transcript's own "now"
    assert any(t.startswith("Draft saved ") and t.endswith("· version 1") for t in texts(app))
    assert button(app, "decide-same").proto.type == "primary"


def test_editing_an_argument_saves_it_checks_the_schema_and_shows_the_diff(people: Store, app: AppTest) -> None:
    open_turn(app, turn=4)
    button(app, "decide-same").click().run()
    [field] = [w for w in app.text_input if w.label == "reservation_id *"]
    field.input("").run()
    assert "required, but missing" in texts(app)
    body = people.get_label(TAU, 4, "ann").body  # type: ignore[union-attr]
    assert (body.decision, body.calls[0].arguments) == ("different", {})  # no longer what the agent did
    [field] = [w for w in app.text_input if w.label == "reservation_id *"]
    field.input("ZZ9").run()
    assert people.get_label(TAU, 4, "ann").body.calls[0].arguments == {"reservation_id": "ZZ9"}  # type: ignore[union-attr]
    assert any('~ call 1 reservation_id: "H9ZU1C" → "ZZ9"' in c.value for c in app.code)


def test_raw_json_mode_and_match_rules(people: Store, app: AppTest) -> None:
    open_turn(app, turn=4)
    button(app, "decide-different").click().run()
    [toggle] = [t for t in app.toggle if t.label == "Edit as JSON"]
    toggle.set_value(True).run()
    [area] = [a for a in app.text_area if a.label == "Arguments (JSON object)"]
    area.input("{not json").run()
    assert any(t.startswith("not valid JSON") for t in texts(app))
    [area] = [a for a in app.text_area if a.label == "Arguments (JSON object)"]
    area.input('{"reservation_id": "h9zu1c"}').run()
    [match] = [s for s in app.selectbox if s.label == "match"]
    match.select("ci").run()
    body = people.get_label(TAU, 4, "ann").body  # type: ignore[union-attr]
    assert body.calls[0].arguments == {"reservation_id": "h9zu1c"}
    assert body.arg_rules["get_reservation_details"]["reservation_id"].match == "ci"
    [match] = [s for s in app.selectbox if s.label == "match"]
    match.select("regex").run()
    assert "match 'regex' needs a pattern" in texts(app)


def test_submit_and_next_writes_gold_and_moves_to_the_next_turn(people: Store, app: AppTest) -> None:
    open_turn(app, turn=2)
    button(app, "decide-clarify").click().run()
    button(app, "submit").click().run()
    assert not app.exception
    assert app.query_params["turn"] == "4"
    assert people.get_gold(f"{TAU}#t2").expected.behavior == "clarify"
    assert "labeled 1/4 turns" in texts(app)


def test_an_incomplete_label_lists_what_blocks_it(people: Store, app: AppTest) -> None:
    open_turn(app, turn=2)
    button(app, "submit").click().run()
    assert "choose a decision (0 no call, 1 same as observed, 2 different call, 3 ask the user)" in texts(app)
    assert app.query_params["turn"] == "2" and people.count_gold() == 0


def test_a_conflict_is_reported_with_both_versions(people: Store, app: AppTest) -> None:
    open_turn(app, turn=6)
    # Meanwhile the same annotator saves this turn from another tab.
    people.save_label(TAU, 6, "ann", LabelBody(decision="no_call", rationale="from the other tab"), version=0)
    button(app, "decide-clarify").click().run()
    assert not app.exception
    assert app.error[0].value.startswith("This label was changed elsewhere")
    assert any("the stored version 1" in t and "nothing was overwritten" in t for t in texts(app))
    codes = [c.value for c in app.code]
    assert ('decision:\n  yours: "clarify"\n  saved: "no_call"\n'
            'rationale:\n  yours: null\n  saved: "from the other tab"\n'
            'reference_time:\n  yours: "2024-05-15T15:00:00-05:00"\n  saved: null') in codes
    assert any('"rationale": "from the other tab"' in c for c in codes)  # both versions in full
    assert any('"decision": "clarify"' in c for c in codes)
    assert people.get_label(TAU, 6, "ann").body.decision == "no_call"  # type: ignore[union-attr]
    button(app, "conflict-theirs").click().run()
    assert not app.error
    assert button(app, "decide-no_call").proto.type == "primary"


def test_keep_mine_after_a_conflict_saves_over_the_newer_version(people: Store, app: AppTest) -> None:
    open_turn(app, turn=6)
    people.save_label(TAU, 6, "ann", LabelBody(decision="no_call"), version=0)
    button(app, "decide-clarify").click().run()
    button(app, "conflict-mine").click().run()
    label = people.get_label(TAU, 6, "ann")
    assert label is not None and (label.body.decision, label.version) == ("clarify", 2)


def test_unsure_flag_tags_and_rationale_are_saved(people: Store, app: AppTest) -> None:
    open_turn(app, turn=8)
    button(app, "decide-same").click().run()
    button(app, "unsure").click().run()
    [tags] = [p for p in app.pills if p.label == "Tags"]  # type: ignore[attr-defined]
    tags.set_value(["policy_refusal"]).run()
    [why] = [a for a in app.text_area if a.label == "Rationale"]
    why.input("the user asked for a human").run()
    body = people.get_label(TAU, 8, "ann").body  # type: ignore[union-attr]
    assert (body.unsure, body.tags, body.rationale) == (True, ("policy_refusal",), "the user asked for a human")


def test_start_labeling_leases_the_next_transcript(people: Store, app: AppTest) -> None:
    as_user(app, "ann").run()
    app.switch_page("pages_/label.py").run()
    app.button(key="start").click().run()
    assert app.query_params["t"] == TAU and app.query_params["turn"] == "2"
    assert active_lease(people, TAU).holder == "ann"  # type: ignore[union-attr]


def test_signing_out_releases_the_lease_for_the_next_annotator(people: Store, app: AppTest) -> None:
    as_user(app, "ann").run()
    app.switch_page("pages_/label.py").run()
    app.button(key="start").click().run()
    assert active_lease(people, TAU).holder == "ann"  # type: ignore[union-attr]
    app.button(key="sign-out").click().run()
    assert not app.exception
    assert app.session_state["user"] is None  # signed out: the picker asks again
    assert active_lease(people, TAU) is None
    assert people.claim_next("rita") == TAU  # free at once, not after the lease expires


def test_handing_the_session_to_another_name_releases_the_first_ones_lease(people: Store, app: AppTest) -> None:
    as_user(app, "ann").run()
    app.switch_page("pages_/label.py").run()
    app.button(key="start").click().run()
    app.selectbox(key="user").select("rita").run()
    assert not app.exception
    assert active_lease(people, TAU) is None


def test_the_gold_set_page_shows_coverage_and_the_ratio(people: Store, app: AppTest) -> None:
    people.submit_label(TAU, 4, "ann", LabelBody(decision="same", tags=("happy_path",), calls=(
        Call(name="get_reservation_details", arguments={"reservation_id": "H9ZU1C"}),)), version=0)
    people.submit_label(TAU, 2, "ann", LabelBody(decision="clarify", tags=("underspecified",)), version=0)
    as_user(app, "ann").run()
    app.switch_page("pages_/coverage.py").run()
    assert not app.exception
    assert [m.value for m in app.metric] == ["2", "1", "1", "1.00 : 1"]
    assert "Below target: 1 more adversarial cases needed for 1 happy-path cases (at least 2 : 1)." in texts(app)


def test_admin_adds_a_user_and_a_tag(people: Store, app: AppTest) -> None:
    as_user(app, "root").run()
    app.switch_page("pages_/admin.py").run()
    app.text_input(key="new-user").input("zoe")
    app.selectbox(key="new-role").select("reviewer")
    app.button[0].click().run()  # the form's submit button
    assert not app.exception
    assert people.get_user("zoe") is not None and people.get_user("zoe").role == "reviewer"  # type: ignore[union-attr]


def test_trajectory_view_prefills_the_agents_calls_and_submits_a_trajectory_case(people: Store, app: AppTest) -> None:
    open_turn(app, turn=2)
    [view] = [g for g in app.button_group if g.label == "View"]
    view.set_value("Trajectory").run()
    assert not app.exception, app.exception
    steps = [s.value for s in app.selectbox if s.label.startswith("Tool (step")]
    assert steps == ["get_reservation_details", "transfer_to_human_agents"]  # what the agent did, in order
    # each step's arguments as a form from the tool's schema (the call editor of the turn panel), not raw JSON
    assert [t.label for t in app.text_input if t.label.startswith("reservation_id")]
    assert not [a for a in app.text_area if a.label == "Arguments (JSON)"]
    [order] = [s for s in app.selectbox if s.label == "Order"]
    order.select("superset").run()
    [after] = [m for m in app.multiselect if m.label == "Only after steps"]
    after.select(0).run()
    [forbidden] = [m for m in app.multiselect if m.label == "Forbidden calls (must not happen)"]
    forbidden.select("cancel_reservation").run()
    [submit] = [b for b in app.button if b.key and b.key.startswith("submit-trajectory-")]
    submit.click().run()
    assert not app.exception, app.exception
    gold = people.get_gold(f"{TAU}#trajectory")
    assert (gold.order, [c.name for c in gold.expected.calls], gold.after[0].requires, gold.forbidden[0].name) == (
        "superset", ["get_reservation_details", "transfer_to_human_agents"], (0,), "cancel_reservation")
    assert people.get_trajectory_label(TAU, "ann").status == "submitted"  # type: ignore[union-attr]


def test_coming_back_to_a_turn_shows_what_another_tab_saved_meanwhile(people: Store, app: AppTest) -> None:
    open_turn(app, turn=4)
    button(app, "decide-no_call").click().run()
    app.button(key="next").click().run()  # on to turn 6
    people.save_label(TAU, 4, "ann", LabelBody(decision="clarify"), version=1)  # another tab, meanwhile
    app.button(key="prev").click().run()
    assert app.query_params["turn"] == "4"
    assert button(app, "decide-clarify").proto.type == "primary"
    button(app, "decide-no_call").click().run()  # and saving again is no conflict
    assert not app.error
    assert people.get_label(TAU, 4, "ann").version == 3  # type: ignore[union-attr]


def test_a_transcript_held_by_another_annotator_says_who_in_the_trajectory_view(people: Store, app: AppTest) -> None:
    people.add_user("bob", "annotator", actor="root")
    assert people.take_lease(TAU, "ann").holder == "ann"
    as_user(app, "bob", t=TAU, view="Trajectory").run()  # opened straight into the trajectory view
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert [b for b in app.button if b.key and b.key.startswith("submit-trajectory-")]  # the trajectory panel
    warning = app.get_by_key("lease-warning")
    assert warning is not None and "Held by ann" in [t.value for t in warning.text]
    assert active_lease(people, TAU).holder == "ann"  # type: ignore[union-attr]  # bob did not take it over
    # bob's own trajectory label is his (labels stay per annotator) and leaves ann's lease alone
    [submit] = [b for b in app.button if b.key and b.key.startswith("submit-trajectory-")]
    submit.click().run()
    assert not app.exception, app.exception
    assert active_lease(people, TAU).holder == "ann"  # type: ignore[union-attr]
    assert people.get_trajectory_label(TAU, "ann") is None
    warning = app.get_by_key("lease-warning")
    assert warning is not None and "Held by ann" in [t.value for t in warning.text]


def test_switching_to_the_trajectory_view_keeps_the_holder_notice_and_the_holder_sees_none(
        people: Store, app: AppTest) -> None:
    people.add_user("bob", "annotator", actor="root")
    holder = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    open_turn(holder, "ann", turn=2)  # ann opens it first and holds it
    assert active_lease(people, TAU).holder == "ann"  # type: ignore[union-attr]
    open_turn(app, "bob", turn=2)
    assert "Held by ann" in [t.value for t in app.get_by_key("lease-warning").text]
    [view] = [g for g in app.button_group if g.label == "View"]
    view.set_value("Trajectory").run()
    assert not app.exception, app.exception
    assert "Held by ann" in [t.value for t in app.get_by_key("lease-warning").text]
    [view] = [g for g in holder.button_group if g.label == "View"]
    view.set_value("Trajectory").run()
    with pytest.raises(KeyError):  # no notice for the one who holds it
        holder.get_by_key("lease-warning")
    assert [b for b in holder.button if b.key and b.key.startswith("submit-trajectory-")]


def test_the_closed_tools_expander_draws_no_schema_until_it_is_opened(people: Store, app: AppTest) -> None:
    """Issue 16 "Speed of the loop": every turn's run used to draw every tool's JSON Schema inside the closed
    "Tools offered" expander (tau-bench's offers 14); a lazy expander draws them only once opened."""
    open_turn(app, turn=4)
    assert not app.exception, app.exception
    assert [e for e in app.expander if e.label.startswith("Tools offered at this point")]
    assert not [t for t in texts(app) if t.startswith("get_reservation_details: ")]  # its spec line
