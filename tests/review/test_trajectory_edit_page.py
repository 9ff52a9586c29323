"""Review's edit-and-accept of a trajectory case under AppTest: the chosen version opens in the schema-driven
step editor the trajectory labeling panel uses (one form per step from the tool's schema, step order, "only
after" dependencies, forbidden calls), the reviewer's edit becomes the gold as one audited decision, and an
annotator has no editor at all."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.labels import RuleDraft, TrajectoryBody
from labeler.store import Store
from scorer.model import Call, Dependency, ForbiddenCall
from tests.app.conftest import APP_MAIN
from tests.review.kit import people, put, transcript
from tests.review.test_review_pages import open_page
from tests.store_reads import audit_events

T = "t-traj"
CASE = f"{T}#trajectory"
LOOKUP = Call(name="search_orders", arguments={"customer": "C-1042"})
REFUND = Call(name="refund_order", arguments={"order_id": "O-7"})


def submit(store: Store, annotator: str, body: TrajectoryBody) -> None:
    store.save_trajectory_label(T, annotator, body, version=0, submit=True)


@pytest.fixture
def disputed(store: Store) -> Store:
    """ann: look up, then refund O-7 (the refund only after the look-up); bob: look up, refund forbidden."""
    people(store)
    put(store, transcript(T))
    submit(store, "ann", TrajectoryBody(calls=(LOOKUP, REFUND), after=(Dependency(step=1, requires=(0,)),),
                                        tags=("happy_path",)))
    submit(store, "bob", TrajectoryBody(calls=(LOOKUP,), forbidden=(ForbiddenCall(name="refund_order"),)))
    return store


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP_MAIN), default_timeout=30)


def step_input(app: AppTest, label: str) -> object:
    [field] = [t for t in app.text_input if t.label.startswith(label)]
    return field


def test_a_reviewer_edits_a_trajectory_with_the_schema_editor_and_accepts(disputed: Store, app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    assert app.radio(key=f"choice-{item.id}").value == "label:ann"
    # No raw JSON of the whole case: one input per argument of each step's tool schema.
    assert not [a for a in app.text_area if a.key == f"edit-{item.id}"]
    assert [s.value for s in app.selectbox if s.label.startswith("Tool (step")] == ["search_orders", "refund_order"]
    order_id = step_input(app, "order_id")
    assert order_id.value == "O-7"  # type: ignore[attr-defined]
    assert [b for b in app.selectbox if b.label == "status"]  # the lookup's enum argument: a picker
    # A required argument emptied: the error shows next to it (touched), and nothing is approved.
    order_id.input("").run()  # type: ignore[attr-defined]
    assert "required, but missing" in [t.value for t in app.text]
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    assert app.error[0].value == md_escape(
        "The edit cannot be approved: step 1 refund_order.order_id: required, but missing")
    assert disputed.get_gold(CASE).provenance.status == "submitted"
    # The argument through its schema field, then the order: the refund moves up to step 0.
    step_input(app, "order_id").input("O-8").run()  # type: ignore[attr-defined]
    [up] = [b for b in app.button if b.key and b.key.endswith("step1:up")]
    up.click().run()
    assert [s.value for s in app.selectbox if s.label.startswith("Tool (step")] == ["refund_order", "search_orders"]
    app.text_area(key=f"comment-{item.id}").input("refund first, O-8 is the order").run()
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    assert app.success[0].value == md_escape(f"Approved your edit for item {item.id}")
    gold = disputed.get_gold(CASE)
    assert gold.kind == "trajectory"
    assert gold.expected.calls == (Call(name="refund_order", arguments={"order_id": "O-8"}), LOOKUP)
    assert gold.after == ()  # "refund after the look-up" cannot hold once the refund comes first
    assert (gold.provenance.status, gold.provenance.reviewer, gold.provenance.annotators) == (
        "approved", "rita", ("ann",))
    assert gold.tags == ("happy_path",) and gold.order_mode == "strict"
    decided = [e for e in audit_events(disputed, CASE) if e["action"] == "review.edit"]
    assert [(e["actor"], e["note"]) for e in decided] == [("rita", "refund first, O-8 is the order")]
    assert disputed.review_queue(actor="rita") == []


def test_the_step_editor_sets_order_mode_dependencies_and_forbidden_calls(disputed: Store, app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    app.radio(key=f"choice-{item.id}").set_value("label:bob").run()
    [order] = [s for s in app.selectbox if s.label == "Order"]
    order.set_value("superset").run()
    [forbidden] = [m for m in app.multiselect if m.label.startswith("Forbidden calls")]
    assert forbidden.value == ["refund_order"]
    [add] = [s for s in app.selectbox if s.label == "Add a step"]
    add.set_value("search_orders").run()  # type-to-search picker: nothing preselected, the pick adds a step
    customers = [t for t in app.text_input if t.label.startswith("customer")]
    assert [c.value for c in customers] == ["C-1042", ""]
    customers[1].input("C-1043").run()
    [after] = [m for m in app.multiselect if m.label == "Only after steps"]
    after.set_value([0]).run()
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    gold = disputed.get_gold(CASE)
    assert gold.expected.calls == (LOOKUP, Call(name="search_orders", arguments={"customer": "C-1043"}))
    assert (gold.order, gold.after, gold.forbidden) == (
        "superset", (Dependency(step=1, requires=(0,)),), (ForbiddenCall(name="refund_order"),))
    assert gold.provenance.annotators == ("bob",)


def test_an_annotator_gets_no_trajectory_editor(disputed: Store, app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "ann", "pages_/review.py", item=str(item.id))
    assert not [b for b in app.button if b.key == f"edit-accept-{item.id}"]
    assert not [s for s in app.selectbox if s.label.startswith("Tool (step")]
    assert disputed.get_gold(CASE).provenance.status == "submitted"


def test_trajectory_versions_show_and_highlight_order_dependencies_and_forbidden_calls(disputed: Store,
                                                                                      app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    ann = [t.value for t in app.get_by_key("cand-label-ann").text]
    bob = [t.value for t in app.get_by_key("cand-label-bob").text]
    assert "Order: strict: exactly these calls, in this order" in ann
    assert "step 1 (refund_order) only after step 0 (search_orders)" in ann
    assert "Forbidden: refund_order" in bob and not [t for t in ann if t.startswith("Forbidden")]
    differing = [t.value for t in app.get_by_key("review-differences").text]
    agent = " · Observed agent calls none"  # what the agent did is a version too
    assert "≠ forbidden: Gold (submitted) none · ann none · bob refund_order" + agent in differing
    assert ("≠ step 1 only after: Gold (submitted) step 0 (search_orders) · ann step 0 (search_orders) · bob none"
            + agent in differing)
    assert not [t for t in differing if t.startswith("≠ order")]  # all strict: nothing to flag


def test_a_trajectory_item_shows_what_the_agent_did_and_the_conversation(disputed: Store, app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    observed = app.get_by_key("cand-observed")
    assert next(t.value for t in observed.text) == "Observed agent calls"
    assert [c.value for c in observed.code] == ['step 0: search_orders({\n  "customer": "C-1042"\n})']  # the agent's own
    # the agent's answer has no tags of its own: the gold's are named as such, not shown as the agent's
    assert not [t for t in observed.text if t.value.startswith("Tags:")]
    assert any("happy_path" in c.value for c in observed.caption)
    assert [e for e in app.expander if e.label == "The whole conversation"]
    app.radio(key=f"choice-{item.id}").set_value("observed").run()
    app.button(key=f"accept-{item.id}").click().run()
    assert not app.exception, app.exception
    gold = disputed.get_gold(CASE)
    assert (gold.expected.calls, gold.provenance.status, gold.tags) == ((LOOKUP,), "approved", ("happy_path",))


def test_moving_a_step_keeps_what_comes_from_call_k_pointing_at_the_same_call(store: Store, app: AppTest) -> None:
    people(store)
    put(store, transcript(T))
    from_lookup = {"refund_order": {"order_id": RuleDraft(match="from_call", from_call=0)}}  # the lookup's result
    check = Call(name="search_orders", arguments={"customer": "C-1042", "status": "open"})
    for annotator in ("ann", "bob"):
        submit(store, annotator, TrajectoryBody(calls=(LOOKUP, check, REFUND), arg_rules=from_lookup,
                                                order="unordered" if annotator == "bob" else "strict"))
    [item] = store.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    [up] = [b for b in app.button if b.key and b.key.endswith("step1:up")]
    up.click().run()  # the check first, then the lookup (now step 1), then the refund
    assert not app.exception, app.exception
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    gold = store.get_gold(CASE)
    assert gold.expected.calls == (check, LOOKUP, REFUND)
    assert gold.arg_rules["refund_order"]["order_id"].from_call == 1  # still the lookup


def test_an_escalated_trajectory_offers_its_decisions_to_admins_only(disputed: Store, app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    disputed.escalate_review(item.id, actor="rita", comment="needs the team lead")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    assert [t.value for t in app.get_by_key("review-admin-only").text] == [
        "Escalated: only an admin can decide it (you are a reviewer). Next item (N) moves on."]
    assert app.button(key=f"accept-{item.id}").disabled and app.button(key=f"reject-{item.id}").disabled
    assert not [b for b in app.button if b.key == f"edit-accept-{item.id}"]
    assert not app.button(key=f"next-item-{item.id}").disabled
    admin = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    open_page(admin, "root", "pages_/review.py", item=str(item.id))
    assert not admin.button(key=f"accept-{item.id}").disabled
    assert not [c for c in admin.main if getattr(c, "key", None) == "review-admin-only"]
    admin.button(key=f"edit-accept-{item.id}").click().run()
    assert not admin.exception, admin.exception
    assert disputed.get_gold(CASE).provenance.reviewer == "root"


def test_the_advanced_json_edits_what_the_step_editor_cannot_an_alternative_trajectory(disputed: Store,
                                                                                       app: AppTest) -> None:
    [item] = disputed.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    app.toggle(key=f"edit-json-open-{item.id}").set_value(True).run()
    alternative = {"behavior": "call", "calls": [{"name": "search_orders", "arguments": {"customer": "C-1042"}}]}
    app.text_area(key=f"edit-json-{item.id}").input(json.dumps({"alternatives": [alternative]})).run()
    app.button(key=f"edit-json-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    gold = disputed.get_gold(CASE)
    assert [a.calls for a in gold.alternatives] == [(LOOKUP,)]
    assert gold.expected.calls == (LOOKUP, REFUND) and gold.provenance.reviewer == "rita"


def test_trajectory_cards_show_their_steps_not_a_turn_decision(disputed: Store, app: AppTest) -> None:
    """A trajectory label has no decision (call / no call / ask): its card says how many steps it expects and
    lists them by number, or that no action is expected."""
    put(disputed, transcript("t-quiet"))
    submit_quiet = TrajectoryBody(no_action=True, forbidden=(ForbiddenCall(name="refund_order"),))
    disputed.save_trajectory_label("t-quiet", "ann", submit_quiet, version=0, submit=True)
    disputed.save_trajectory_label("t-quiet", "bob", TrajectoryBody(calls=(LOOKUP,)), version=0, submit=True)
    [item] = [i for i in disputed.review_queue(actor="rita") if i.ref == CASE]
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    for key in ("cand-label-ann", "cand-label-bob", "cand-observed"):
        card = [t.value for t in app.get_by_key(key).text]
        assert not [t for t in card if t.startswith("Decision:")], (key, card)
    ann = app.get_by_key("cand-label-ann")
    assert "Expected: 2 steps" in [t.value for t in ann.text]
    assert [c.value for c in ann.code] == ['step 0: search_orders({\n  "customer": "C-1042"\n})',
                                           'step 1: refund_order({\n  "order_id": "O-7"\n})']
    assert "Expected: 1 step" in [t.value for t in app.get_by_key("cand-label-bob").text]
    [quiet] = [i for i in disputed.review_queue(actor="rita") if i.ref == "t-quiet#trajectory"]
    open_page(app, "rita", "pages_/review.py", item=str(quiet.id))
    card = [t.value for t in app.get_by_key("cand-label-ann").text]
    assert "Expected: no action (no call at all)" in card and "Forbidden: refund_order" in card, card
