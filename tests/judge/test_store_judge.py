"""The judge's part of the store on SQLite and PostgreSQL: cache, pending queue, review hand-off, decisions."""

from __future__ import annotations

from typing import Any

import pytest

from labeler.judge.anthropic_judge import Outcome
from labeler.judge.questions import Question, mismatch_question, run_refs
from labeler.judge.step import JudgeStep
from labeler.store import NOT_ASKED, NewQuestion, PermissionDenied, Store, StoreError
from scorer.api import score_case
from scorer.model import Answer, Call
from tests.judge.kit import orders_case, orders_run, seeded, shoes_case
from tests.store_reads import audit_events, judge_uses

MODEL = "claude-sonnet-4-6"


@pytest.fixture
def js(any_store: Store) -> Store:
    seeded(any_store, shoes_case(), orders_case())
    return any_store


def new(q: Question, model: str = MODEL) -> NewQuestion:
    return NewQuestion(key=q.key(model), kind=q.kind, model=model, prompt_version=q.prompt.version, inputs=q.inputs,
                       request=q.request(model), refs=q.refs, ref_hash=q.ref_hash)


def mismatch(store: Store, run_id: str = "run-1") -> Question:
    case = store.version_case("regression-v1", "orders#t2", actor="rita")
    run = orders_run().model_copy(update={"run_id": run_id})
    q = mismatch_question(case, run, score_case(case, run), run_refs(case, run))
    assert q is not None
    return q


def answered(verdict: str = "equivalent", **kw: Any) -> Outcome:
    fields: dict[str, Any] = {"answered": True, "verdict": verdict, "rationale": "A batch lookup does the same.",
                              "confidence": 0.8, "reply": {"id": "msg_1", "content": []}, "model": MODEL,
                              "input_tokens": 900, "output_tokens": 60, "latency_s": 1.25, "cost_usd": 0.0036}
    return Outcome(**{**fields, **kw})


def test_questions_are_remembered_once_and_wait_until_answered(js: Store) -> None:
    q = mismatch(js)
    assert js.remember_judge_questions([new(q), new(q)]) == 1
    assert js.remember_judge_questions([new(mismatch(js, "run-2"))]) == 0  # same question, another run
    [pending] = js.pending_judge_questions()
    assert (pending.key, pending.kind, pending.model, pending.prompt_version, pending.attempts, pending.problem) == (
        q.key(MODEL), "mismatch", MODEL, "mismatch/1", 0, NOT_ASKED)
    assert pending.request == q.request(MODEL)
    assert [u.refs["run"] for u in judge_uses(js, q.key(MODEL))] == ["run-1", "run-2"]
    assert js.judge_answers(MODEL) == {}


def test_an_answer_is_kept_in_full_and_becomes_the_cache(js: Store) -> None:
    q = mismatch(js)
    js.remember_judge_questions([new(q)])
    js.record_judge_outcome(q.key(MODEL), answered())
    assert js.pending_judge_questions() == []
    assert js.judge_answers(MODEL) == {q.key(MODEL): ("equivalent", "A batch lookup does the same.")}
    assert js.judge_answers("claude-haiku-4-5") == {}
    stored = js.judge_verdict(q.key(MODEL))
    assert (stored.status, stored.verdict, stored.confidence, stored.input_tokens, stored.output_tokens,
            stored.cost_usd, stored.latency_s, stored.attempts, stored.model, stored.prompt_version) == (
        "answered", "equivalent", 0.8, 900, 60, 0.0036, 1.25, 1, MODEL, "mismatch/1")
    assert stored.request == q.request(MODEL) and stored.inputs == q.inputs
    assert stored.reply == {"id": "msg_1", "content": []}
    assert stored.created_at <= (stored.answered_at or "")
    js.record_judge_outcome(q.key(MODEL), answered("not_equivalent"))  # an answer is never overwritten
    assert js.judge_verdict(q.key(MODEL)).verdict == "equivalent"
    with pytest.raises(StoreError, match="no judge question"):
        js.record_judge_outcome("0" * 64, answered())


def test_a_failure_keeps_the_question_pending_with_the_reason(js: Store) -> None:
    q = mismatch(js)
    js.remember_judge_questions([new(q)])
    js.note_judge_skipped([q.key(MODEL)], "no Anthropic API key")
    assert [(p.attempts, p.problem) for p in js.pending_judge_questions()] == [(0, "no Anthropic API key")]
    js.record_judge_outcome(q.key(MODEL), Outcome(answered=False, problem="HTTP 529 from the API: Overloaded"))
    assert [(p.attempts, p.problem) for p in js.pending_judge_questions()] == [
        (1, "HTTP 529 from the API: Overloaded")]
    status = js.judge_status()
    assert (dict(status.pending), status.last_problems) == (
        {MODEL: 1}, ((q.key(MODEL), "HTTP 529 from the API: Overloaded"),))


def test_pending_questions_by_model_and_limit(js: Store) -> None:
    q = mismatch(js)
    js.remember_judge_questions([new(q), new(q, "claude-haiku-4-5"), new(mismatch(js, "x"), "claude-opus-4-5")])
    assert [p.model for p in js.pending_judge_questions(model="claude-haiku-4-5")] == ["claude-haiku-4-5"]
    assert len(js.pending_judge_questions(limit=2)) == 2
    assert len(js.pending_judge_questions(keys=[q.key(MODEL)])) == 1


def queued_item(js: Store, verdict: str = "equivalent") -> int:
    q = mismatch(js)
    js.remember_judge_questions([new(q)])
    js.record_judge_outcome(q.key(MODEL), answered(verdict))
    step = JudgeStep(js, MODEL, None, audit_rate=0)
    step.queue_reviews()
    assert step.tally.queued == 1
    [item] = js.adjudication_queue(actor="rita")
    return item.item_id


def test_a_verdict_that_needs_a_person_is_queued_once(js: Store) -> None:
    item_id = queued_item(js)
    JudgeStep(js, MODEL, None).queue_reviews()  # re-scoring the same run queues nothing new
    [item] = js.adjudication_queue(actor="rita")
    assert item.item_id == item_id and item.case_id == "orders#t2" and item.version == "regression-v1"
    assert {k: item.payload[k] for k in ("question", "verdict", "run", "trial", "model", "prompt_version")} == {
        "question": "mismatch", "verdict": "equivalent", "run": "run-1", "trial": 0, "model": MODEL,
        "prompt_version": "mismatch/1"}
    [use] = judge_uses(js, item.payload["judge_key"])
    assert (use.queue_state, use.review_item_id) == ("queued", item_id)
    with pytest.raises(PermissionDenied, match="only a reviewer or admin"):
        js.adjudication_queue(actor="ann")


def test_a_confirmed_defect_needs_no_person_and_is_not_queued(js: Store) -> None:
    q = mismatch(js)
    js.remember_judge_questions([new(q)])
    js.record_judge_outcome(q.key(MODEL), answered("not_equivalent"))
    JudgeStep(js, MODEL, None, audit_rate=0).queue_reviews()
    assert js.adjudication_queue(actor="rita") == []
    assert [u.queue_state for u in judge_uses(js, q.key(MODEL))] == ["not_needed"]
    js.remember_judge_questions([new(mismatch(js, "sampled"))])
    JudgeStep(js, MODEL, None, audit_rate=1).queue_reviews()  # the calibration sample takes it anyway
    [item] = js.adjudication_queue(actor="rita")
    assert item.payload["calibration_sample"] is True and item.payload["run"] == "sampled"


def test_accepting_an_alternative_writes_a_new_version_and_leaves_the_frozen_one(js: Store) -> None:
    item_id = queued_item(js)
    before = list(js.iter_version_lines("regression-v1", actor="rita"))
    with pytest.raises(PermissionDenied):
        js.adjudicate(item_id, "accept_alternative", actor="ann")
    made = js.adjudicate(item_id, "accept_alternative", actor="rita", note="the batch tool is fine")
    assert (made.decision, made.judge_verdict, made.reviewer_verdict, made.new_version) == (
        "accept_alternative", "equivalent", "equivalent", "regression-v2")
    assert list(js.iter_version_lines("regression-v1", actor="rita")) == before
    new_case = js.version_case("regression-v2", "orders#t2", actor="rita")
    assert new_case.alternatives == (Answer(behavior="call", calls=(
        Call(name="get_orders", arguments={"order_ids": ["O-1", "O-2"]}),)),)
    version = js.get_version("regression-v2")
    assert (version.parent, version.note) == ("regression-v1", "the batch tool is fine")
    assert {k: version.provenance[k] for k in ("reviewer", "judge_verdict", "run", "action")} == {
        "reviewer": "rita", "judge_verdict": "equivalent", "run": "run-1", "action": "accept_alternative"}
    assert js.get_gold("orders#t2").alternatives == new_case.alternatives  # the next freeze keeps it
    assert js.adjudication_queue(actor="rita") == []
    with pytest.raises(StoreError, match="already decided"):
        js.adjudicate(item_id, "confirm_defect", actor="rita")
    assert js.judge_adjudications() == [made]


def test_fixing_the_gold_replaces_the_expected_answer_in_a_new_version(js: Store) -> None:
    item_id = queued_item(js, "gold_wrong")
    fixed = Answer(behavior="call", calls=(Call(name="get_orders", arguments={"order_ids": ["O-1", "O-2"]}),))
    with pytest.raises(StoreError, match="needs the corrected answer"):
        js.adjudicate(item_id, "fix_gold", actor="rita")
    made = js.adjudicate(item_id, "fix_gold", actor="rita", fixed=fixed)
    assert (made.reviewer_verdict, made.new_version) == ("gold_wrong", "regression-v2")
    assert js.version_case("regression-v2", "orders#t2", actor="rita").expected == fixed
    assert js.version_case("regression-v1", "orders#t2", actor="rita").expected != fixed


def test_judge_wrong_needs_a_note_and_the_right_verdict(js: Store) -> None:
    item_id = queued_item(js)
    with pytest.raises(StoreError, match="say why the judge is wrong"):
        js.adjudicate(item_id, "judge_wrong", actor="rita", reviewer_verdict="not_equivalent")
    with pytest.raises(StoreError, match="other than the judge's equivalent"):
        js.adjudicate(item_id, "judge_wrong", actor="rita", note="no", reviewer_verdict="equivalent")
    made = js.adjudicate(item_id, "judge_wrong", actor="rita", note="the batch tool skips the audit log",
                         reviewer_verdict="not_equivalent")
    assert (made.judge_verdict, made.reviewer_verdict, made.new_version) == ("equivalent", "not_equivalent", None)
    assert [v.id for v in js.list_versions()] == ["regression-v1"]
    with pytest.raises(StoreError, match="unknown decision"):
        js.adjudicate(item_id, "shrug", actor="rita")


def test_only_an_admin_sets_the_judge_model(js: Store) -> None:
    assert js.judge_model_setting() is None
    with pytest.raises(PermissionDenied):
        js.set_judge_model_setting("claude-haiku-4-5", actor="rita")
    js.set_judge_model_setting("claude-haiku-4-5", actor="root")
    assert js.judge_model_setting() == "claude-haiku-4-5"
    js.set_judge_model_setting("", actor="root")
    assert js.judge_model_setting() is None
    assert [e["action"] for e in audit_events(js, "judge_model")] == ["setting.judge_model"] * 2


def test_the_dump_holds_the_judge_tables(js: Store) -> None:
    queued_item(js)
    dump = js.dump()
    assert len(dump["judge_verdicts"]) == 1 and len(dump["judge_uses"]) == 1
    assert dump["judge_adjudications"] == []


def test_a_judge_item_is_decided_on_the_adjudication_page_only(js: Store) -> None:
    """One workflow, one recorded decision: the Review page's accept/edit/reject refuse judge items."""
    item_id = queued_item(js)
    candidates = [c.key for c in js.review_detail(item_id, actor="rita").candidates]
    assert candidates[0] == "gold" and "agent" in candidates
    with pytest.raises(StoreError, match="decide it on the Adjudication page"):
        js.accept_review(item_id, "gold", actor="rita", comment="the gold asks for one lookup per order")
    with pytest.raises(StoreError, match="decide it on the Adjudication page"):
        js.reject_review(item_id, actor="rita", comment="no")
    assert js.judge_adjudications() == []
    made = js.adjudicate(item_id, "confirm_defect", actor="rita")
    assert js.judge_adjudications() == [made]
