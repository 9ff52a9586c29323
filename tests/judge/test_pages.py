"""The Adjudication and Judge calibration pages under AppTest: the real app script, store and decisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.judge.anthropic_judge import AnthropicJudge
from labeler.judge.step import JudgeStep
from labeler.store import Store
from scorer.api import score
from tests.fakes.anthropic_api import FakeMessagesAPI
from tests.judge.kit import (
    by_kind,
    gateway,
    orders_case,
    orders_run,
    seeded,
    shoes_case,
    shoes_run,
    verdict_reply,
)

APP_MAIN = Path(__file__).resolve().parents[2] / "labeler" / "app" / "main.py"
HOSTILE = "Where are **O-1** and O-2? <script>alert(1)</script> [click](https://evil.example)"


@pytest.fixture
def judged(store: Store) -> Store:
    """Both cases frozen in regression-v1, judged once: the batch-tool mismatch is in the queue."""
    seeded(store, shoes_case(), orders_case(HOSTILE))
    cases = store.version_cases("regression-v1", actor="rita")
    runs = {"shoes#t2": [shoes_run()], "orders#t2": [orders_run()]}
    api = FakeMessagesAPI(default=lambda body: verdict_reply(
        "equivalent", "get_orders looks both up in one call." if by_kind(body) == "mismatch" else "Same."))
    step = JudgeStep(store, "claude-sonnet-4-6", AnthropicJudge(gateway(api), "claude-sonnet-4-6"), audit_rate=0)
    step.run(lambda: ((c, runs[c.id]) for c in cases))
    return store


def open_page(name: str, page: str, **params: str) -> AppTest:
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    app.session_state["user"] = name  # what the sidebar picker sets; the URL has no say
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    app.switch_page(page).run()
    assert not app.exception, app.exception
    return app


def texts(app: AppTest) -> list[str]:
    return [t.value for t in app.text]


def test_a_reviewer_accepts_the_agents_answer_as_an_alternative(judged: Store) -> None:
    [item] = judged.adjudication_queue(actor="rita")
    app = open_page("rita", "pages_/adjudication.py")
    assert "1 item(s) wait for a decision." in texts(app)
    app.button(key=f"adj-open-{item.item_id}").click().run()
    shown = texts(app)
    assert HOSTILE in shown  # the conversation up to the turn, as plain text
    assert not any("evil.example" in m.value for m in app.markdown)
    assert "Judge: equivalent (acceptable) · confidence 0.90" in shown
    assert "Rationale: get_orders looks both up in one call." in shown
    assert "Why: Look both orders up." in shown
    code = [c.value for c in app.code]
    assert any(c.startswith("get_order(") for c in code) and any(c.startswith("get_orders(") for c in code)

    before = list(judged.iter_version_lines("regression-v1", actor="rita"))
    app.button(key=f"adj-accept-{item.item_id}").click().run()
    assert not app.exception
    assert [s.value for s in app.success] == [md_escape(s) for s in [
        f"Item {item.item_id}: accept alternative; new gold version regression-v2"]]
    assert "No judge verdict waits for a reviewer." in texts(app)
    assert list(judged.iter_version_lines("regression-v1", actor="rita")) == before

    # Re-scoring the run against the new version: the batch call is now an accepted alternative.
    old = score(judged.version_cases("regression-v1", actor="rita"), [orders_run()]).cases
    new = score(judged.version_cases("regression-v2", actor="rita"), [orders_run()]).cases
    assert [(r.case_id, r.status, r.matched) for r in old] == [("orders#t2", "fail", None)]
    assert [(r.case_id, r.status, r.matched) for r in new] == [("orders#t2", "pass", 0)]


def test_judge_wrong_needs_a_note_then_counts_in_calibration(judged: Store) -> None:
    [item] = judged.adjudication_queue(actor="rita")
    app = open_page("rita", "pages_/adjudication.py", item=str(item.item_id))
    app.button(key=f"adj-wrong-{item.item_id}").click().run()
    assert [e.value for e in app.error] == [md_escape(s) for s in ["say why the judge is wrong: the note goes into calibration"]]
    app.text_area(key=f"adj-note-{item.item_id}").input("get_orders skips the audit trail").run()
    app.selectbox(key=f"adj-right-{item.item_id}").select("not_equivalent").run()
    app.button(key=f"adj-wrong-{item.item_id}").click().run()
    assert [s.value for s in app.success] == [md_escape(s) for s in [f"Item {item.item_id}: judge wrong"]]
    [made] = judged.judge_adjudications()
    assert (made.judge_verdict, made.reviewer_verdict, made.note) == (
        "equivalent", "not_equivalent", "get_orders skips the audit trail")

    app = open_page("rita", "pages_/calibration.py")
    assert "In use: claude-sonnet-4-6 (from default; the --judge-model flag and TOOLGOLD_JUDGE_MODEL come first)" \
        in texts(app)
    table = app.table[0].value
    assert list(table["Prompt version"]) == ["mismatch/1"] and list(table["Accuracy"]) == ["0.0%"]
    assert not app.text_input  # only admins change the model


def test_an_admin_sets_the_judge_model_on_the_calibration_page(judged: Store) -> None:
    app = open_page("root", "pages_/calibration.py")
    assert "No reviewer has decided on a judge verdict yet (Adjudication page): nothing to compare." in texts(app)
    app.text_input(key="judge-model").input("claude-haiku-4-5").run()
    app.button(key="judge-model-save").click().run()
    assert judged.judge_model_setting() == "claude-haiku-4-5"
    assert "In use: claude-haiku-4-5 (from settings; the --judge-model flag and TOOLGOLD_JUDGE_MODEL come first)" \
        in texts(app)


def test_annotators_do_not_get_the_judge_pages(judged: Store) -> None:
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    app.session_state["user"] = "ann"
    app.run()
    for page, title in (("pages_/adjudication.py", "Adjudication"), ("pages_/calibration.py", "Judge calibration")):
        app.switch_page(page).run()
        assert [t.value for t in app.main.text] == [
            f"{title} is for reviewers and admins; you are signed in as ann (annotator)."]
