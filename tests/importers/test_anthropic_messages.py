"""Anthropic Messages conversations (JSON Lines or a JSON array) -> transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from scorer.importers import detect
from scorer.model import FunctionCall, Message, ToolCallRef, ToolSpec, Transcript
from tests.importers.helpers import convert, write_lines

SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
CONVERSATION = {
    "system": [{"type": "text", "text": "You are a support agent."}, {"type": "text", "text": "Be kind."}],
    "model": "claude-x",
    "tools": [{"name": "get_order", "description": "Look an order up", "input_schema": SCHEMA,
               "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "Where are orders A1 and B2?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "two lookups", "signature": "sig"},
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "tu_1", "name": "get_order", "input": {"order_id": "A1"}},
            {"type": "tool_use", "id": "tu_2", "name": "get_order", "input": {"order_id": "B2"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu_1", "content": [{"type": "text", "text": "shipped"}]},
            {"type": "tool_result", "tool_use_id": "tu_2", "content": "not found", "is_error": True},
            {"type": "text", "text": "B2 was a typo, I meant B3."}]},
        {"role": "assistant", "content": "Let me check B3."},
    ],
}
EXPECTED_MESSAGES = (
    Message(role="system", content="You are a support agent.\nBe kind."),
    Message(role="user", content="Where are orders A1 and B2?"),
    Message(role="assistant", content="Checking both.", tool_calls=(
        ToolCallRef(id="tu_1", function=FunctionCall(name="get_order", arguments='{"order_id":"A1"}')),
        ToolCallRef(id="tu_2", function=FunctionCall(name="get_order", arguments='{"order_id":"B2"}')))),
    Message(role="tool", tool_call_id="tu_1", content="shipped"),
    Message(role="tool", tool_call_id="tu_2", content="Error: not found"),
    Message(role="user", content="B2 was a typo, I meant B3."),
    Message(role="assistant", content="Let me check B3."),
)


def test_blocks_map_to_one_assistant_message_with_parallel_calls_and_tool_messages(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "claude.jsonl", [json.dumps({**CONVERSATION, "id": "c-1"})])
    assert detect(src).NAME == "anthropic"
    result = convert(src)
    assert result.errors == []
    assert result.transcripts == [Transcript(
        id="c-1", messages=EXPECTED_MESSAGES,
        tools=(ToolSpec(name="get_order", description="Look an order up", parameters=SCHEMA),),
        metadata={"model": "claude-x"})]
    assert result.transcripts[0].decision_points() == (2, 6)


def test_a_json_array_of_conversations_gets_positional_ids(tmp_path: Path) -> None:
    src = tmp_path / "batch.json"
    src.write_text(json.dumps([CONVERSATION, {"messages": [{"role": "user", "content": "hi"}], "system": "s"}],
                              indent=1), encoding="utf-8")
    assert detect(src).NAME == "anthropic"
    result = convert(src)
    assert [t.id for t in result.transcripts] == ["batch:1", "batch:2"]
    assert result.transcripts[0].messages == EXPECTED_MESSAGES
    element_starts = [n for n, text in enumerate(src.read_text().splitlines(), start=1) if text == " {"]
    assert result.lines == element_starts == [2, element_starts[1]]


def test_unknown_blocks_and_misplaced_results_are_errors_at_their_line(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "bad.jsonl", [
        json.dumps({"system": "s", "messages": [{"role": "assistant", "content": [{"type": "web_search", "q": 1}]}]}),
        json.dumps({"system": "s", "messages": [{"role": "assistant", "content": [
            {"type": "tool_result", "tool_use_id": "x", "content": "?"}]}]}),
        json.dumps({"system": "s", "messages": [{"role": "system", "content": "no"}]}),
        json.dumps({"system": "s", "messages": [{"role": "user", "content": "fine"}]}),
    ])
    result = convert(src, "anthropic")
    assert [t.id for t in result.transcripts] == ["bad:4"]
    assert result.error_lines == [
        f"{src}:1: messages[0].content[0]: a 'web_search' block is not expected in a assistant message",
        f"{src}:2: messages[0].content[0]: a 'tool_result' block is not expected in a assistant message",
        f"{src}:3: messages[0].role should be 'user' or 'assistant', got 'system'",
    ]


def test_a_broken_array_stops_with_its_line(tmp_path: Path) -> None:
    src = tmp_path / "broken.json"
    src.write_text('[\n {"system": "s", "messages": [{"role": "user", "content": "a"}]},\n {"system": oops}\n]\n')
    result = convert(src, "anthropic")
    assert [t.id for t in result.transcripts] == ["broken:1"]
    assert result.error_lines == [f"{src}:3: not valid JSON: Expecting value (column 13)"]
