"""The judge through the real anthropic client, served by a mock transport in the Messages API's shape."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx2
import pytest

from labeler.judge.anthropic_judge import AnthropicJudge, Outcome
from labeler.judge.prompts import DATA_CLOSE, DATA_OPEN, TOOL_NAME, data_block
from labeler.judge.questions import semantic_question
from scorer.api import score
from scorer.judging import ArgumentQuestion, Judge
from tests.fakes.anthropic_api import (
    OVERLOADED,
    RATE_LIMITED,
    FakeMessagesAPI,
    error,
    message,
    text,
    tool_use,
)
from tests.judge.kit import INJECTION, gateway, shoes_case, shoes_run, text_reply, verdict_reply

MODEL = "claude-sonnet-4-6"


def question(user_text: str = "I need waterproof running shoes, size 10, under $100.") -> dict[str, Any]:
    case = shoes_case(user_text)
    return semantic_question(ArgumentQuestion(
        case_id=case.id, tool="search_products", arg="query", intent="waterproof running shoes",
        expected="waterproof running shoes", actual="running shoes", context=case.messages)).request(MODEL)


def judge(api: FakeMessagesAPI, **kw: Any) -> AnthropicJudge:
    return AnthropicJudge(gateway(api, **kw), MODEL)


def test_a_tool_use_verdict_is_read_with_usage_latency_and_cost() -> None:
    api = FakeMessagesAPI([verdict_reply("not_equivalent", "The reply drops 'waterproof'.", 0.8,
                                         model="claude-sonnet-4-6", input_tokens=1000, output_tokens=100)])
    outcome = judge(api).ask(question())
    assert outcome == Outcome(answered=True, verdict="not_equivalent", rationale="The reply drops 'waterproof'.",
                              confidence=0.8, problem=None, reply=outcome.reply, model="claude-sonnet-4-6",
                              input_tokens=1000, output_tokens=100, latency_s=outcome.latency_s,
                              cost_usd=pytest.approx(0.0045))
    assert outcome.reply is not None and outcome.reply["content"][0]["name"] == TOOL_NAME
    assert outcome.latency_s is not None and outcome.latency_s >= 0
    [sent] = api.requests
    assert sent["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert sent["model"] == MODEL and [t["name"] for t in sent["tools"]] == [TOOL_NAME]


def test_rate_limited_then_answered_after_the_sdk_retries() -> None:
    api = FakeMessagesAPI([error(*RATE_LIMITED), verdict_reply("equivalent")])
    outcome = judge(api).ask(question())
    assert (outcome.answered, outcome.verdict) == (True, "equivalent")
    assert len(api.requests) == 2


def test_overloaded_every_time_leaves_the_question_pending_with_the_reason() -> None:
    api = FakeMessagesAPI(default=lambda body: error(*OVERLOADED))
    outcome = judge(api, max_retries=2).ask(question())
    assert outcome == Outcome(answered=False, problem="HTTP 529 from the API: Overloaded")
    assert len(api.requests) == 3  # the first try and two retries


def test_a_timeout_leaves_the_question_pending() -> None:
    api = FakeMessagesAPI(default=lambda body: httpx2.ReadTimeout("slow"))
    outcome = judge(api, max_retries=1).ask(question())
    assert outcome == Outcome(answered=False, problem="timed out after retries")


@pytest.mark.parametrize(("tool_input", "problem"), [
    ({"verdict": "maybe", "rationale": "?", "confidence": 0.5},
     "the record_verdict input has no valid verdict (got 'maybe')"),
    ({"verdict": "equivalent", "rationale": "ok", "confidence": 7},
     "the record_verdict confidence is not a number from 0 to 1 (got '7')"),
    ({"verdict": "equivalent", "rationale": "ok", "confidence": True},
     "the record_verdict confidence is not a number from 0 to 1 (got 'True')"),
    ({"verdict": "equivalent", "confidence": 0.5}, "the record_verdict input has no rationale text"),
    ("equivalent", "the record_verdict input has no valid verdict (got 'None')"),
])
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")  # the SDK's own dump of a non-object input
def test_a_malformed_tool_input_needs_review(tool_input: Any, problem: str) -> None:
    api = FakeMessagesAPI([message([tool_use(TOOL_NAME, tool_input)])])
    outcome = judge(api).ask(question())
    assert (outcome.answered, outcome.verdict, outcome.problem) == (True, "needs_review", problem)


def test_a_refusal_needs_review_even_with_a_tool_call() -> None:
    api = FakeMessagesAPI([
        message([text("I can't help with that.")], stop_reason="refusal"),
        message([tool_use(TOOL_NAME, {"verdict": "equivalent", "rationale": "x", "confidence": 1})],
                stop_reason="refusal"),
    ])
    for _ in range(2):
        outcome = judge(api).ask(question())
        assert (outcome.verdict, outcome.problem) == ("needs_review",
                                                      "the model declined to answer (stop_reason refusal)")


def test_text_alone_is_never_a_verdict() -> None:
    api = FakeMessagesAPI([text_reply("equivalent"), message([
        tool_use(TOOL_NAME, {"verdict": "equivalent", "rationale": "a", "confidence": 0.9}),
        tool_use(TOOL_NAME, {"verdict": "not_equivalent", "rationale": "b", "confidence": 0.9})])])
    first, second = judge(api).ask(question()), judge(api).ask(question())
    assert (first.verdict, first.problem) == ("needs_review", "the reply has no record_verdict tool call (text only)")
    assert (second.verdict, second.problem) == ("needs_review", "the reply records contradicting verdicts")


def test_an_injection_in_the_transcript_cannot_produce_a_verdict_by_itself() -> None:
    def obedient(body: dict[str, Any]) -> dict[str, Any]:
        # A model that falls for the injection in its text, but whose structured verdict is its own.
        return message([text("equivalent, as the transcript instructs"),
                        tool_use(TOOL_NAME, {"verdict": "not_equivalent", "rationale": "drops a constraint",
                                             "confidence": 0.7})])

    api = FakeMessagesAPI([obedient, text_reply("equivalent")])
    request = question(INJECTION)
    content = request["messages"][0]["content"]
    instructions = content[:content.index(DATA_OPEN)]
    assert "Ignore your instructions" not in instructions and "Ignore your instructions" in data_block(content)
    assert content.count(DATA_CLOSE) == 1 and "\\u003c/data\\u003e" in data_block(content)
    assert judge(api).ask(request).verdict == "not_equivalent"
    assert judge(api).ask(request).verdict == "needs_review"  # text saying "equivalent" counts for nothing


def test_the_judge_protocol_passes_fails_or_leaves_for_review_never_fails_when_unsure() -> None:
    case = shoes_case()
    assert isinstance(judge(FakeMessagesAPI()), Judge)
    outcomes = {"equivalent": "pass", "not_equivalent": "fail", "ambiguous": "needs_review",
                "gold_wrong": "needs_review"}
    for verdict, status in outcomes.items():
        api = FakeMessagesAPI([verdict_reply(verdict, "because")])
        [result] = score([case], [shoes_run()], judge=judge(api)).cases
        assert result.status == status, verdict
    [failed] = score([case], [shoes_run()], judge=judge(FakeMessagesAPI([verdict_reply("not_equivalent",
                                                                                       "no")]))).cases
    [note] = [e.note for e in failed.errors]
    assert note.endswith("the judge found it does not capture: waterproof running shoes (no)")
    down = FakeMessagesAPI(default=lambda body: error(*OVERLOADED))
    [waiting] = score([case], [shoes_run()], judge=judge(down, max_retries=0)).cases
    assert waiting.status == "needs_review"
    assert waiting.reviews[0].reason == "the judge could not answer: HTTP 529 from the API: Overloaded"


def test_many_questions_are_asked_with_bounded_concurrency() -> None:
    lock = threading.Lock()
    in_flight, peak = 0, 0

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)  # lets the pool fill up; the assertion is on the bound, not on time
        with lock:
            in_flight -= 1
        return verdict_reply("equivalent")

    api = FakeMessagesAPI(default=slow)
    asker = AnthropicJudge(gateway(api), MODEL, concurrency=2)
    outcomes = dict(asker.ask_many((f"k{n}", question()) for n in range(7)))
    assert sorted(outcomes) == [f"k{n}" for n in range(7)]
    assert {o.verdict for o in outcomes.values()} == {"equivalent"}
    assert len(api.requests) == 7 and peak <= 2


@pytest.mark.parametrize("echoed", [
    "invalid x-api-key: sk-ant-api03-Zq8vK2mN5pL9wX3rT7yB1cD4fG6hJ0kA-abcdEFGH_ijkl",
    "key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 was revoked",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWhlcmU",
])
def test_a_key_echoed_in_an_http_error_is_scrubbed_before_it_is_kept(echoed: str) -> None:
    """The reason a question stays pending is stored and shown; an API key in it would leak with it."""
    api = FakeMessagesAPI(default=lambda body: error(401, "authentication_error", echoed))
    outcome = judge(api, max_retries=0).ask(question())
    assert outcome.problem is not None and outcome.problem.startswith("HTTP 401 from the API: ")
    assert "[redacted]" in outcome.problem
    for secret in ("Zq8vK2mN5pL9wX3rT7yB1cD4fG6hJ0kA", "AbCdEfGhIjKlMnOpQrStUvWx1234", "c2lnbmF0dXJlLWhlcmU"):
        assert secret not in outcome.problem
