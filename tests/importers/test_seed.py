"""The hand-written seed format -> gold cases (and a transcript of each conversation)."""

from __future__ import annotations

import json
from pathlib import Path

from scorer.importers import ImportOptions, detect
from scorer.model import Answer, ArgRule, Call, GoldCase, Message, Provenance, ToolSpec, Transcript
from tests.importers.helpers import convert, write_lines

CONVERSATION = [{"role": "user", "content": "Where is my order? I'm customer C-1042."}]
MESSAGES = (Message(role="user", content="Where is my order? I'm customer C-1042."),)


def seed(**fields: object) -> str:
    return json.dumps({"turn_id": "t1", "conversation": CONVERSATION, "expected_tool": "search_orders",
                       "expected_args": {"customer_id": "C-1042", "status": "open"},
                       "acceptable_alternatives": ["lookup_order"], "required_arg_keys": ["customer_id"]} | fields)


def test_a_seed_line_maps_so_toolgold_passes_what_the_seed_harness_passes(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "seed.jsonl", [seed()])
    assert detect(src).NAME == "seed"
    result = convert(src, options=ImportOptions(split="rolling"))
    assert result.errors == []
    assert result.transcripts == [Transcript(id="t1", messages=MESSAGES, metadata={"source": "seed"})]
    assert result.gold == [GoldCase(
        id="t1", conversation_id="t1", turn=1, split="rolling", messages=MESSAGES,
        expected=Answer(behavior="call", calls=(
            Call(name="search_orders", arguments={"customer_id": "C-1042", "status": "open"}),)),
        alternatives=(Answer(behavior="call", calls=(Call(name="lookup_order"),), tool_only=True),),
        # the seed harness compares "status" only when the agent passes it
        arg_rules={"search_orders": {"status": ArgRule(optional=True)}},
        required_args={"search_orders": ("customer_id",)},
        tags=("seed",), provenance=Provenance(source="seed"))]


def test_null_expected_tool_is_no_call_and_optional_fields_are_kept(tmp_path: Path) -> None:
    tools = [{"name": "search_orders", "parameters": {"type": "object", "properties": {}}}]
    src = write_lines(tmp_path / "seed.jsonl", [json.dumps({
        "turn_id": 7, "conversation": CONVERSATION, "expected_tool": None, "tools": tools,
        "tags": ["tool_shaped_language", "seed"], "rationale": "Sarcasm, not a request."})])
    case, = convert(src).gold
    assert case.id == "7"
    assert case.expected == Answer(behavior="no_call")
    assert (case.arg_rules, case.required_args, case.alternatives) == ({}, None, ())
    assert case.tools == (ToolSpec(name="search_orders"),)
    assert case.tags == ("seed", "tool_shaped_language")
    assert case.rationale == "Sarcasm, not a request."


def test_a_full_call_is_accepted_as_an_alternative(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "seed.jsonl", [seed(acceptable_alternatives=[
        {"name": "lookup_order", "arguments": {"customer": "C-1042"}}])])
    case, = convert(src).gold
    assert case.alternatives == (Answer(behavior="call", calls=(
        Call(name="lookup_order", arguments={"customer": "C-1042"}),)),)


def test_labeling_mistakes_are_reported_at_their_line(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "seed.jsonl", [
        seed(expected_tol="typo"),
        seed(expected_tool=None),
        json.dumps({"turn_id": "t3", "conversation": CONVERSATION}),
        seed(turn_id="t4", conversation=[]),
        seed(turn_id="t5", required_arg_keys="customer_id"),
        seed(turn_id="t6"),
    ])
    result = convert(src)
    assert [c.id for c in result.gold] == ["t6"]
    assert result.error_lines == [
        f"{src}:1: unknown field 'expected_tol'; the seed format has turn_id, conversation, expected_tool, "
        "expected_args, acceptable_alternatives, required_arg_keys, tools, tags, rationale",
        f"{src}:2: expected_tool is null (no call) but expected_args, acceptable_alternatives or "
        "required_arg_keys are given",
        f"{src}:3: no 'expected_tool' (use null for 'no tool call')",
        f"{src}:4: conversation is empty: a case needs the messages the agent saw",
        f"{src}:5: required_arg_keys should be an array, got a string",
    ]


def test_tools_from_the_options_fill_in_when_a_line_has_none(tmp_path: Path) -> None:
    tools = (ToolSpec(name="search_orders"), ToolSpec(name="lookup_order"))
    src = write_lines(tmp_path / "seed.jsonl", [seed(), seed(turn_id="t2", tools=[{"name": "other"}])])
    result = convert(src, options=ImportOptions(tools=tools))
    assert [c.tools for c in result.gold] == [tools, (ToolSpec(name="other"),)]
    assert [t.tools for t in result.transcripts] == [tools, (ToolSpec(name="other"),)]
