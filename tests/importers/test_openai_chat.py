"""OpenAI chat JSON Lines -> transcripts."""

from __future__ import annotations

import json
from pathlib import Path

from scorer.importers import ImportOptions, detect
from scorer.importers.common import unique_call_ids
from scorer.model import FunctionCall, Message, ToolCallRef, ToolSpec, Transcript
from tests.importers.helpers import convert, write_lines

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def line(**record: object) -> str:
    return json.dumps(record)


def test_a_conversation_with_parallel_calls_becomes_one_transcript(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "support.jsonl", [line(
        id="conv-1",
        metadata={"team": "support"},
        model="gpt-4o",
        tools=[{"type": "function", "function": {"name": "weather", "description": "Weather now",
                                                 "parameters": WEATHER, "strict": True}}],
        messages=[
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Paris and Rome?"},
                                         {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]},
            {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "b", "type": "function", "function": {"name": "weather", "arguments": {"city": "Rome"}}}]},
            {"role": "tool", "tool_call_id": "a", "content": "18C"},
            {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "21C"}]},
            {"role": "assistant", "content": "Paris 18C, Rome 21C."},
        ])])
    result = convert(src)
    assert detect(src).NAME == "openai"
    assert result.errors == []
    assert result.transcripts == [Transcript(
        id="conv-1",
        messages=(
            Message(role="system", content="Be brief."),
            Message(role="user", content="Paris and Rome?\n[image_url]"),
            Message(role="assistant", tool_calls=(
                ToolCallRef(id="a", function=FunctionCall(name="weather", arguments='{"city":"Paris"}')),
                ToolCallRef(id="b", function=FunctionCall(name="weather", arguments='{"city":"Rome"}')))),
            Message(role="tool", tool_call_id="a", content="18C"),
            Message(role="tool", tool_call_id="b", content='[{"type": "text", "text": "21C"}]'),
            Message(role="assistant", content="Paris 18C, Rome 21C."),
        ),
        tools=(ToolSpec(name="weather", description="Weather now", parameters=WEATHER),),
        metadata={"team": "support", "model": "gpt-4o"},
    )]
    assert result.gold == []


def test_ids_default_to_file_stem_and_line_and_plain_tools_are_read(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "logs.jsonl", [
        line(messages=[{"role": "user", "content": "hi"}], tools=[{"name": "ping", "parameters": WEATHER}]),
        "",
        line(messages=[{"role": "user", "content": "again"}]),
    ])
    result = convert(src)
    assert [t.id for t in result.transcripts] == ["logs:1", "logs:3"]
    assert result.lines == [1, 3]
    assert result.transcripts[0].tools == (ToolSpec(name="ping", parameters=WEATHER),)


def test_legacy_function_calls_become_tool_calls_linked_to_their_results(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "legacy.jsonl", [line(messages=[
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": "{}"}},
        {"role": "function", "name": "weather", "content": "sunny"},
    ], functions=[{"name": "weather"}])])
    transcript, = convert(src).transcripts
    assert transcript.messages[1:] == (
        Message(role="assistant", tool_calls=(ToolCallRef(id="call_1_0", function=FunctionCall(name="weather")),)),
        Message(role="tool", tool_call_id="call_1_0", content="sunny", name="weather"),
    )
    assert transcript.tools == (ToolSpec(name="weather"),)


def test_reused_call_ids_are_renamed_and_each_result_follows_its_call(tmp_path: Path) -> None:
    call = {"id": "call_x", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    src = write_lines(tmp_path / "dup.jsonl", [line(messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_x", "content": "1"},
        {"role": "assistant", "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_x", "content": "2"},
    ])])
    transcript, = convert(src).transcripts
    assert [(m.role, m.tool_calls[0].id if m.tool_calls else m.tool_call_id) for m in transcript.messages[1:]] == [
        ("assistant", "call_x"), ("tool", "call_x"), ("assistant", "call_x~2"), ("tool", "call_x~2")]


def test_bad_lines_are_reported_at_their_line_and_reading_goes_on(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "bad.jsonl", [
        line(messages=[{"role": "user", "content": "ok"}]),
        line(messages=[{"role": "wizard", "content": "x"}]),
        "{not json",
        line(prompt="no messages"),
        line(messages=[{"role": "tool", "content": "orphan", "tool_call_id": "nope"}]),
        line(messages=[{"role": "user", "content": "fine"}]),
    ])
    result = convert(src)
    assert [t.id for t in result.transcripts] == ["bad:1", "bad:6"]
    assert result.error_lines == [
        f"{src}:2: messages[0].role 'wizard' is not one of system, developer, user, assistant, tool",
        f"{src}:3: not valid JSON: Expecting property name enclosed in double quotes (column 2)",
        f"{src}:4: no 'messages': expected {{\"messages\": [...], \"tools\": [...]}}",
        f"{src}:5: messages[0]: tool result answers 'nope', which no earlier assistant message called",
    ]


def test_conversion_is_deterministic(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "a.jsonl", [line(messages=[{"role": "user", "content": "hi"}])])
    assert convert(src).transcripts == convert(src).transcripts


def test_tools_from_the_options_fill_in_only_where_a_line_has_none(tmp_path: Path) -> None:
    mine = (ToolSpec(name="weather", parameters=WEATHER),)
    src = write_lines(tmp_path / "a.jsonl", [line(messages=[{"role": "user", "content": "hi"}]),
                                             line(messages=[{"role": "user", "content": "hi"}], tools=[])])
    assert [t.tools for t in convert(src, options=ImportOptions(tools=mine)).transcripts] == [mine, ()]


def test_renamed_ids_never_collide_with_ids_the_log_already_uses() -> None:
    def call(call_id: str) -> Message:
        return Message(role="assistant", tool_calls=(ToolCallRef(id=call_id, function=FunctionCall(name="f")),))
    messages = [call("a~2"), call("a"), call("a"), call("a"), call("a~2"),
                Message(role="tool", tool_call_id="a~2", content="r")]
    renamed = unique_call_ids(messages)
    assert [m.tool_calls[0].id for m in renamed[:5]] == ["a~2", "a", "a~3", "a~4", "a~2~2"]
    assert renamed[5].tool_call_id == "a~2~2"
