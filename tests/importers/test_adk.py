"""Google ADK eval sets -> transcripts and gold cases; ADK session dumps -> transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from scorer import canonical
from scorer.importers import ImportOptions, detect
from scorer.model import ToolSpec
from tests.importers.helpers import REAL, convert

ADK = REAL / "traces" / "adk-evalset"
EVAL_SET = ADK / "order_query.test.json"
SESSION = ADK / "sample.session.json"


def test_each_invocation_is_a_gold_case_and_several_tool_uses_a_strict_trajectory() -> None:
    raw = json.loads(EVAL_SET.read_text())
    case = raw["eval_cases"][0]
    uses = [inv["intermediate_data"]["tool_uses"] for inv in case["conversation"]]
    assert (len(uses), sum(map(len, uses)), sum(len(u) > 1 for u in uses)) == (4, 7, 1)
    tools = (ToolSpec(name="send_email"),)
    result = convert(EVAL_SET, options=ImportOptions(tools=tools))
    assert detect(EVAL_SET).NAME == "adk"
    assert result.errors == []
    transcript, = result.transcripts
    assert transcript.id == f"adk/{raw['eval_set_id']}/{case['eval_id']}"
    assert transcript.tools == tools and result.tool_calls == 7
    assert len(result.gold) == len(uses)
    for gold, invocation, expected in zip(result.gold, case["conversation"], uses, strict=True):
        assert gold.kind == ("trajectory" if len(expected) > 1 else "turn")
        assert gold.order == ("strict" if len(expected) > 1 else None)
        assert [(c.name, canonical.dumps(c.arguments)) for c in gold.expected.calls] == [
            (u["name"], canonical.dumps(u["args"])) for u in expected]
        assert gold.messages[-1].content == invocation["user_content"]["parts"][0]["text"]
        assert transcript.messages[gold.turn - 1] == gold.messages[-1]
    finals = [m.content for m in transcript.messages if m.role == "assistant" and not m.tool_calls]
    assert finals == [inv["final_response"]["parts"][0]["text"] for inv in case["conversation"]]
    assert transcript.metadata["results"] == "not_recorded"


def test_a_session_dump_pairs_function_calls_and_responses_by_order_and_name() -> None:
    raw = json.loads(SESSION.read_text())
    parts = [p for e in raw["events"] for p in (e.get("content") or {}).get("parts") or []]
    calls = [p["function_call"] for p in parts if p.get("function_call")]
    responses = [p["function_response"] for p in parts if p.get("function_response")]
    assert (len(raw["events"]), len(calls), len(responses)) == (9, 2, 2)
    transcript, = convert(SESSION).transcripts
    made = [c for m in transcript.messages for c in m.tool_calls]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in made] == [
        (c["name"], c["args"]) for c in calls]
    answers = [m for m in transcript.messages if m.role == "tool"]
    assert [a.tool_call_id for a in answers] == [c.id for c in made]
    assert [json.loads(a.content) for a in answers] == [r["response"] for r in responses]
    assert transcript.metadata["authors"] == list(dict.fromkeys(
        e["author"] for e in raw["events"] if e["author"] != "user"))


def test_the_older_list_form_reads_the_same_way(tmp_path: Path) -> None:
    src = tmp_path / "legacy.test.json"
    src.write_text(json.dumps([
        {"query": "hi", "expected_tool_use": [], "reference": "Hello!"},
        {"query": "Roll a die", "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
         "reference": "You rolled a 4."}], indent=2))
    result = convert(src)
    assert detect(src).NAME == "adk"
    assert [g.expected.behavior for g in result.gold] == ["no_call", "call"]
    assert result.gold[1].expected.calls[0].arguments == {"sides": 6}


def test_bad_eval_cases_are_named_at_their_line(tmp_path: Path) -> None:
    raw = json.loads(EVAL_SET.read_text())
    good = raw["eval_cases"][0]
    nameless = json.loads(json.dumps(good))
    nameless["conversation"][0]["intermediate_data"]["tool_uses"][0]["name"] = None
    raw["eval_cases"] = [good, nameless]
    src = tmp_path / "set.evalset.json"
    src.write_text(json.dumps(raw, indent=2))
    result = convert(src)
    second = [n for n, text in enumerate(src.read_text().splitlines(), start=1) if text == "    {"][1]
    assert len(result.transcripts) == 1
    assert result.error_lines == [f"{src}:{second}: conversation[0].intermediate_data.tool_uses[0].name should be "
                                  "a non-empty string, got null"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    assert convert(other, "adk").error_lines == [
        f"{other}:1: expected an ADK eval set {{\"eval_set_id\", \"eval_cases\": [...]}}, a list of "
        "{\"query\", \"expected_tool_use\"} or a session {\"id\", \"events\": [...]}"]
