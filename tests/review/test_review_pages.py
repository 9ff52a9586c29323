"""The review pages under AppTest: the real app script and a real store, clicked as each role would."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape, md_label
from labeler.labels import LabelBody
from labeler.store import Store, StoreError
from scorer.model import Call
from tests.app.conftest import APP_MAIN
from tests.review.kit import REFUND, gold, people, put, transcript
from tests.review.test_drift import RENAMED
from tests.store_reads import audit_events

REVIEWER_PAGES = ["pages_/review.py", "pages_/agreement.py", "pages_/versions.py", "pages_/hygiene.py"]


def lookup(customer: str) -> LabelBody:
    return LabelBody(decision="same" if customer == "C-1042" else "different",
                     calls=(Call(name="search_orders", arguments={"customer": customer}),), tags=("happy_path",))


@pytest.fixture
def team(store: Store) -> Store:
    """t1#t2 labeled twice, in disagreement (ann: C-1042, bob: C-1024); t2#t2 labeled once by ann."""
    people(store)
    put(store, transcript("t1"), transcript("t2", "Orders for C-77 please", observed={"customer": "C-77"}))
    store.submit_label("t1", 2, "ann", lookup("C-1042"), version=0)
    store.submit_label("t1", 2, "bob", lookup("C-1024"), version=0)
    store.submit_label("t2", 2, "ann", lookup("C-77"), version=0)
    return store


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP_MAIN), default_timeout=30)


def open_page(app: AppTest, user: str, page: str, **params: str) -> AppTest:
    app.session_state["user"] = user  # what the sidebar picker sets; the URL has no say
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    app.switch_page(page).run()
    assert not app.exception, app.exception
    return app


def texts(app: AppTest) -> list[str]:
    return [t.value for t in app.text]


@pytest.mark.parametrize("name", ["ann", "rita", "root"])
def test_every_review_page_loads_for_every_role(team: Store, app: AppTest, name: str) -> None:
    open_page(app, name, "pages_/review.py")
    if name == "ann":
        assert "Nothing was sent back to you. Reviewing is for reviewers and admins." in texts(app)
        for page in REVIEWER_PAGES[1:]:  # listed nowhere, and refused by the router (tests/access)
            app.switch_page(page).run()
            assert next(t.value for t in app.get_by_key("access-refused").text).endswith(
                "is for reviewers and admins; you are signed in as ann (annotator).")
        return
    for page in REVIEWER_PAGES:
        app.switch_page(page).run()
        assert not app.exception, (page, app.exception)


def test_a_reviewer_resolves_a_disagreement_choosing_a_version(team: Store, app: AppTest) -> None:
    open_page(app, "rita", "pages_/review.py")
    assert [m.value for m in app.metric][:2] == ["1", "0"]  # one disagreement, nothing unsure
    [item] = team.review_queue(actor="rita")
    app.button(key=f"review-open-{item.id}").click().run()
    radio = app.radio(key=f"choice-{item.id}")
    assert radio.value == "label:ann"  # ties go to the first submitted label
    assert "Disagree on: search_orders.customer" in texts(app)
    radio.set_value("label:bob").run()
    app.text_area(key=f"comment-{item.id}").input("the customer typed C-1024 later").run()
    app.button(key=f"accept-{item.id}").click().run()
    assert not app.exception
    case = team.get_gold("t1#t2")
    assert (case.provenance.status, case.provenance.reviewer, case.expected.calls[0].arguments) == (
        "approved", "rita", {"customer": "C-1024"})
    assert app.success[0].value == md_escape(f"Approved label:bob for item {item.id}")
    assert team.review_queue(actor="rita") == []


def test_edit_and_accept_uses_the_schema_driven_editor_and_the_edit_becomes_the_gold(team: Store,
                                                                                     app: AppTest) -> None:
    [item] = team.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    assert not [a for a in app.text_area if a.key == f"edit-{item.id}"]  # no raw JSON of the whole case
    # The chosen version (ann's C-1042) in the labeling editor: one input per argument of the tool's schema.
    [customer] = [t for t in app.text_input if t.label.startswith("customer")]
    assert customer.value == "C-1042"
    [status] = [b for b in app.selectbox if b.label == "status"]  # an enum of the schema: a picker
    customer.input("").run()  # a required argument left out: the schema says no, nothing is approved
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    assert app.error[0].value == md_escape(
        "The edit cannot be approved: call 1 search_orders.customer: required, but missing")
    assert team.get_gold("t1#t2").provenance.status == "submitted"
    [customer] = [t for t in app.text_input if t.label.startswith("customer")]
    customer.input("C-1043").run()
    [status] = [b for b in app.selectbox if b.label == "status"]
    status.select("shipped").run()
    app.text_area(key=f"comment-{item.id}").input("the customer corrected the id").run()
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    case = team.get_gold("t1#t2")
    assert (case.provenance.status, case.provenance.reviewer, case.expected.calls[0].arguments) == (
        "approved", "rita", {"customer": "C-1043", "status": "shipped"})
    assert case.provenance.annotators == ("ann",)  # who labeled the version the edit started from
    assert app.success[0].value == md_escape(f"Approved your edit for item {item.id}")
    decided = [e for e in audit_events(team, "t1#t2") if e["action"] == "review.edit"]
    assert [(e["actor"], e["note"]) for e in decided] == [("rita", "the customer corrected the id")]
    assert team.review_queue(actor="rita") == []


def test_the_store_refuses_an_edit_that_breaks_the_tool_schema(team: Store) -> None:
    [item] = team.review_queue(actor="rita")
    base = team.review_detail(item.id, actor="rita").candidate("label:ann")
    assert base is not None and base.case is not None
    broken = base.case.model_copy(update={"expected": base.case.expected.model_copy(update={
        "calls": (Call(name="search_orders", arguments={"customer": 1042}),)})})
    with pytest.raises(StoreError, match=r"the edited case breaks the tool schema: call 1 search_orders.customer: "
                                         r"1042 is not of type 'string'"):
        team.edit_and_accept(item.id, broken, actor="rita")
    assert team.get_gold("t1#t2").provenance.status == "submitted"


def test_reject_needs_a_comment_and_the_annotator_reads_it(team: Store, app: AppTest) -> None:
    team.sync_review_queue()
    [item] = team.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    app.button(key=f"reject-{item.id}").click().run()
    assert app.error[0].value == md_escape("say why when you reject: the annotators will read it")
    app.text_area(key=f"comment-{item.id}").input("both ids appear; ask the user").run()
    app.button(key=f"reject-{item.id}").click().run()
    assert [r.status for r in team.labels_for_turn("t1", 2)] == ["draft", "draft"]
    annotator = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    open_page(annotator, "bob", "pages_/review.py")
    assert "Why: both ids appear; ask the user" in texts(annotator)


def test_a_reviewer_demoted_while_the_page_is_open_cannot_approve(team: Store, app: AppTest) -> None:
    team.sync_review_queue()
    [item] = team.review_queue(actor="rita")
    open_page(app, "rita", "pages_/review.py", item=str(item.id))
    team.set_user("rita", role="annotator", actor="root")
    app.button(key=f"accept-{item.id}").click().run()
    assert app.error[0].value == md_escape(
        "only a reviewer or admin can approve or reject gold cases ('rita' is annotator)")
    assert team.get_gold("t1#t2").provenance.status == "submitted"


def test_uncontested_cases_are_approved_from_the_page(team: Store, app: AppTest) -> None:
    open_page(app, "rita", "pages_/review.py")
    assert "1 submitted regression cases need no decision (no disagreement, no flag, enough labels)." in texts(app)
    app.button(key="approve-uncontested").click().run()
    assert team.get_gold("t2#t2").provenance.reviewer == "rita"


def test_freeze_diff_and_export_on_the_versions_page(team: Store, app: AppTest) -> None:
    open_page(app, "root", "pages_/versions.py")
    assert "Nothing is frozen yet." in texts(app)
    app.button(key="FormSubmitter:freeze-Freeze").click().run()
    assert app.error[0].value.startswith(md_escape("there are no approved regression gold cases to freeze"))
    team.approve_cases(["t2#t2"], actor="root")
    app.text_input(key="freeze-note").input("baseline")
    app.button(key="FormSubmitter:freeze-Freeze").click().run()
    version = team.get_version("regression-v1")
    assert app.success[0].value == md_escape(f"Froze regression-v1: 1 cases, sha256 {version.content_hash}")
    assert "regression-v1 → regression-v1: 0 added, 0 removed, 0 changed" in texts(app)
    app.button(key="prepare-export").click().run()
    assert not app.exception
    assert app.session_state["export-ready"] == ("regression-v1", "".join(
        line + "\n" for line in team.iter_version_lines("regression-v1", actor="root")))


def test_the_agreement_page_shows_fields_and_the_worst_turns(team: Store, app: AppTest) -> None:
    open_page(app, "root", "pages_/agreement.py")
    assert "Overlap now: off (every turn gets one annotator)" in texts(app)
    assert app.metric[0].value == "1"
    assert "t1#t2" in texts(app)  # the disagreement is listed
    assert "Gwet AC1" in list(app.table[0].value.columns)  # beside the kappas and alpha
    app.number_input(key="overlap-n").set_value(3)  # inside a form: sent with the submit button
    app.slider(key="overlap-percent").set_value(25)
    app.button(key="FormSubmitter:overlap-Set overlap").click().run()
    assert team.overlap().annotators == 3 and team.overlap().percent == 25
    reviewer = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    open_page(reviewer, "rita", "pages_/agreement.py")
    assert "An admin sets the overlap." in [c.value for c in reviewer.caption]


def test_the_agreement_page_shows_a_decision_confusion_matrix_of_two_chosen_annotators(team: Store,
                                                                                       app: AppTest) -> None:
    team.add_user("cy", "annotator", actor="root")
    team.submit_label("t2", 2, "bob", LabelBody(decision="clarify", tags=("underspecified",)), version=0)
    team.submit_label("t2", 4, "ann", LabelBody(decision="no_call", tags=("happy_path",)), version=0)
    team.submit_label("t2", 4, "cy", LabelBody(decision="clarify", tags=("underspecified",)), version=0)
    open_page(app, "rita", "pages_/agreement.py")
    assert (app.selectbox(key="confusion-first").value, app.selectbox(key="confusion-second").value) == ("ann", "bob")
    matrix = app.get_by_key("decision-confusion")
    assert matrix is not None
    # Rows: ann's decision; columns: bob's. t1#t2 both call search_orders; t2#t2 ann calls, bob asks the user.
    [counts] = [t.value for t in app.table if md_label("ann ↓ / bob →") in t.value.columns]
    assert counts.to_dict("records") == [  # names are escaped where the table reads Markdown
        {md_label("ann ↓ / bob →"): md_label("call: search_orders"), md_label("call: search_orders"): 1,
         md_label("ask_user"): 1},
    ]
    assert "ann and bob both labeled 2 decision points and made the same decision on 1 (50%)." in texts(app)
    [heatmap] = [c for c in app.get("vega_lite_chart") if '"decision points"' in c.proto.spec]  # beside the counts
    spec = json.loads(heatmap.proto.spec)
    assert {(layer["encoding"]["y"]["title"], layer["encoding"]["x"]["title"]) for layer in spec["layer"]} == {
        ("ann", "bob")}
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"] == ["call: search_orders", "ask_user"]
    app.selectbox(key="confusion-second").select("cy").run()
    assert not app.exception, app.exception
    [counts] = [t.value for t in app.table if md_label("ann ↓ / cy →") in t.value.columns]
    assert counts.to_dict("records") == [{md_label("ann ↓ / cy →"): md_label("no_call"), md_label("ask_user"): 1}]
    app.selectbox(key="confusion-first").select("cy").run()  # the same annotator twice compares nothing
    assert "Choose two different annotators." in texts(app)


def test_the_hygiene_page_lists_suspect_gold(team: Store, app: AppTest) -> None:
    put(team, gold("g1#t2", expected=gold("x").expected.model_copy(update={"calls": (
        Call(name="refund_order", arguments={"order_id": "O-404"}),)})))
    open_page(app, "rita", "pages_/hygiene.py")
    # Its context is t1#t2's, with a conflicting answer, and the order id it expects is made up.
    assert "2 problems in 3 gold cases (1 cases affected)" in texts(app)


def test_the_relabeling_queue_migrates_a_renamed_parameter(team: Store, app: AppTest) -> None:
    put(team, gold("g1#t2"))
    team.check_schema_drift(tools=[RENAMED, REFUND])
    open_page(app, "rita", "pages_/review.py")
    item = next(i for i in team.relabel_queue(actor="rita") if i.case_id == "g1#t2")
    assert "• expected args use `customer`, renamed to `customer_id` in `search_orders`" in texts(app)
    app.button(key=f"migrate-{item.id}").click().run()
    assert team.get_gold("g1#t2").expected.calls[0].arguments == {"customer_id": "C-1042"}
