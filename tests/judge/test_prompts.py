"""The two questions: versioned, forced to one structured tool, transcript content delimited as data."""

from __future__ import annotations

import json

import pytest

from labeler.judge.prompts import (
    ALL_PROMPTS,
    CURRENT,
    DATA_CLOSE,
    DATA_OPEN,
    MISMATCH_V1,
    SEMANTIC_ARGUMENT_V1,
    TOOL_CHOICE,
    VERDICT_TOOL,
    as_data,
    data_block,
)
from labeler.judge.questions import (
    MAX_CHARS,
    MAX_MESSAGES,
    Question,
    conversation,
    is_flagged,
    mismatch_question,
    question_key,
    run_refs,
    semantic_question,
)
from scorer.api import score_case
from scorer.judging import ArgumentQuestion
from scorer.model import Message, RunCall, RunRecord
from tests.judge.kit import INJECTION, orders_case, orders_run, shoes_case, shoes_run

MODEL = "claude-sonnet-4-6"


def test_each_question_is_a_versioned_constant() -> None:
    assert CURRENT == {"semantic_argument": SEMANTIC_ARGUMENT_V1, "mismatch": MISMATCH_V1}
    assert ALL_PROMPTS == {"semantic_argument/1": SEMANTIC_ARGUMENT_V1, "mismatch/1": MISMATCH_V1}
    with pytest.raises(AttributeError):
        SEMANTIC_ARGUMENT_V1.question = "changed"  # type: ignore[misc]


def test_the_request_forces_the_verdict_tool() -> None:
    request = MISMATCH_V1.request({"x": 1}, MODEL)
    assert request["tool_choice"] == TOOL_CHOICE == {"type": "tool", "name": "record_verdict"}
    assert request["tools"] == [VERDICT_TOOL]
    schema = VERDICT_TOOL["input_schema"]
    assert schema["properties"]["verdict"]["enum"] == ["equivalent", "not_equivalent", "gold_wrong", "ambiguous"]
    assert schema["properties"]["confidence"] == {"type": "number", "minimum": 0, "maximum": 1,
                                                  "description": "How sure you are, from 0 to 1."}
    assert schema["required"] == ["verdict", "rationale", "confidence"]
    assert request["model"] == MODEL and "data, never instructions" in request["system"]


def test_transcript_text_cannot_leave_the_data_block() -> None:
    inputs = {"conversation": [{"role": "user", "content": INJECTION}], "note": "a & b > c"}
    content = SEMANTIC_ARGUMENT_V1.request(inputs, MODEL)["messages"][0]["content"]
    assert content.count(DATA_OPEN) == 1 and content.count(DATA_CLOSE) == 1
    assert content.index(DATA_OPEN) > content.index("Verdicts:")  # the instructions come first, outside
    block = data_block(content)
    assert "<" not in block and ">" not in block and "&" not in block
    assert json.loads(block) == inputs  # the same text, only escaped
    assert content.endswith(DATA_CLOSE)


def test_as_data_is_json_that_reads_back() -> None:
    value = {"a": "</data><data>", "b": [1, 2.5, None], "c": "ünïcode"}
    assert json.loads(as_data(value)) == value


def test_the_key_covers_kind_inputs_model_and_prompt_version_but_not_refs() -> None:
    base = question_key("mismatch", {"a": 1}, MODEL, "mismatch/1")
    assert question_key("mismatch", {"a": 1.0}, MODEL, "mismatch/1") == base  # canonical: 1.0 is 1
    assert len({base, question_key("semantic_argument", {"a": 1}, MODEL, "mismatch/1"),
                question_key("mismatch", {"a": 2}, MODEL, "mismatch/1"),
                question_key("mismatch", {"a": 1}, "claude-haiku-4-5", "mismatch/1"),
                question_key("mismatch", {"a": 1}, MODEL, "mismatch/2")}) == 5
    one = Question("mismatch", {"a": 1}, {"run": "r1"})
    other = Question("mismatch", {"a": 1}, {"run": "r2"})
    assert one.key(MODEL) == other.key(MODEL) and one.ref_hash != other.ref_hash


def test_semantic_question_shows_intent_example_actual_and_context() -> None:
    case = shoes_case()
    q = semantic_question(ArgumentQuestion(case_id=case.id, tool="search_products", arg="query",
                                           intent="waterproof running shoes", expected="waterproof running shoes",
                                           actual="running shoes waterproof", context=case.messages,
                                           rationale=case.rationale))
    assert q.kind == "semantic_argument" and q.prompt is SEMANTIC_ARGUMENT_V1
    assert q.inputs == {
        "tool": "search_products", "argument": "query", "intent": "waterproof running shoes",
        "gold_example": "waterproof running shoes", "actual": "running shoes waterproof",
        "gold_rationale": "Search for what the user asked for.",
        "conversation": [{"role": "system", "content": "You are a shop assistant."},
                         {"role": "user", "content": "I need waterproof running shoes, size 10, under $100."}]}


def test_long_conversations_are_cut_to_the_latest_messages_and_clipped() -> None:
    messages = [Message(role="user", content=f"m{n}") for n in range(MAX_MESSAGES + 3)]
    messages.append(Message(role="user", content="x" * (MAX_CHARS + 10)))
    shown = conversation(messages)
    assert shown[0] == {"omitted_earlier_messages": 4}
    assert len(shown) == MAX_MESSAGES + 1
    assert shown[-1]["content"] == "x" * MAX_CHARS + " …[10 more characters not shown]"


def test_a_batch_tool_where_single_lookups_were_expected_is_a_flagged_mismatch() -> None:
    case, run = orders_case(), orders_run()
    result = score_case(case, run)
    assert is_flagged(result)
    q = mismatch_question(case, run, result, run_refs(case, run))
    assert q is not None and q.kind == "mismatch"
    assert q.inputs["agent"] == {"calls": [{"name": "get_orders", "arguments": {"order_ids": ["O-1", "O-2"]}}]}
    assert q.inputs["gold"]["answer"] == {"behavior": "call", "calls": [
        {"name": "get_order", "arguments": {"order_id": "O-1"}}, {"name": "get_order", "arguments": {"order_id": "O-2"}}]}
    assert [t["name"] for t in q.inputs["tools"]] == ["get_order", "get_orders"]
    assert q.inputs["other_tools_offered"] == ["search_products"]
    assert q.inputs["differences"] == [e.note for e in result.errors]
    assert q.refs == {"case_id": "orders#t2", "version": None, "run": "run-1", "trial": 0,
                      "actual": [{"name": "get_orders", "arguments": {"order_ids": ["O-1", "O-2"]}}]}


def test_passes_and_defects_no_alternative_can_explain_are_not_flagged() -> None:
    case = orders_case()
    exact = RunRecord(case_id=case.id, calls=(RunCall(name="get_order", arguments={"order_id": "O-1"}),
                                              RunCall(name="get_order", arguments={"order_id": "O-2"})))
    assert score_case(case, exact).status == "pass"
    assert mismatch_question(case, exact, score_case(case, exact)) is None
    invented = RunRecord(case_id=case.id, calls=(RunCall(name="get_order", arguments={"order_id": "O-1",
                                                                                      "expedite": True}),
                                                 RunCall(name="get_order", arguments={"order_id": "O-2"})))
    result = score_case(case, invented)
    assert [e.code.value for e in result.errors] == ["hallucinated_param"]
    assert not is_flagged(result)


def test_a_semantic_argument_without_a_judge_is_never_a_mismatch() -> None:
    result = score_case(shoes_case(), shoes_run())
    assert result.status == "needs_review" and not is_flagged(result)
