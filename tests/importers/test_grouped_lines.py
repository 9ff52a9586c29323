"""Formats where several lines make one conversation (logged calls of one thread, a trace's spans, a JSON-RPC
session): an error found in one record names that record's line, not the line the conversation starts on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.importers.helpers import convert, write_lines


def openai_pair(history: list[dict[str, Any]], reply: dict[str, Any]) -> str:
    return json.dumps({"request": {"model": "gpt-4o", "messages": history},
                       "response": {"object": "chat.completion", "choices": [{"index": 0, "message": reply}]}})


CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}


def test_openai_log_names_the_call_whose_result_answers_no_call(tmp_path: Path) -> None:
    user = {"role": "user", "content": "find it"}
    src = write_lines(tmp_path / "calls.jsonl", [
        openai_pair([user], CALL),
        openai_pair([user, CALL, {"role": "tool", "tool_call_id": "c1", "content": "42"}],
                    {"role": "assistant", "content": "it is 42"}),
        openai_pair([user, CALL, {"role": "tool", "tool_call_id": "c1", "content": "42"},
                     {"role": "assistant", "content": "it is 42"}, {"role": "user", "content": "again"},
                     {"role": "tool", "tool_call_id": "c9", "content": "?"}],
                    {"role": "assistant", "content": "done"}),
    ])
    result = convert(src)
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:3: messages: a tool result answers 'c9', which no earlier assistant message called"]


def anthropic_pair(history: list[dict[str, Any]], reply: list[dict[str, Any]]) -> str:
    return json.dumps({"request": {"model": "claude-x", "messages": history},
                       "response": {"type": "message", "role": "assistant", "content": reply,
                                    "stop_reason": "end_turn"}})


def test_anthropic_log_names_the_call_whose_result_answers_no_call(tmp_path: Path) -> None:
    user = {"role": "user", "content": "find it"}
    use = [{"type": "tool_use", "id": "c1", "name": "lookup", "input": {}}]
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "42"}]}
    src = write_lines(tmp_path / "claude.jsonl", [
        anthropic_pair([user], use),
        anthropic_pair([user, {"role": "assistant", "content": use}, answer], [{"type": "text", "text": "42"}]),
        anthropic_pair([user, {"role": "assistant", "content": use}, answer,
                        {"role": "assistant", "content": [{"type": "text", "text": "42"}]},
                        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c9", "content": "?"}]}],
                       [{"type": "text", "text": "done"}]),
    ])
    result = convert(src)
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:3: messages: a tool result answers 'c9', which no earlier assistant message called"]


def gemini_pair(history: list[dict[str, Any]], reply: list[dict[str, Any]]) -> str:
    return json.dumps({"request": {"contents": history},
                       "response": {"candidates": [{"content": {"role": "model", "parts": reply}}]}})


def test_gemini_log_names_the_call_whose_response_answers_no_call(tmp_path: Path) -> None:
    user = {"role": "user", "parts": [{"text": "find it"}]}
    call = [{"functionCall": {"name": "lookup", "args": {}}}]
    answer = {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"value": 42}}}]}
    said = [{"text": "42"}]
    src = write_lines(tmp_path / "gemini.jsonl", [
        gemini_pair([user], call),
        gemini_pair([user, {"role": "model", "parts": call}, answer], said),
        gemini_pair([user, {"role": "model", "parts": call}, answer, {"role": "model", "parts": said},
                     {"role": "user", "parts": [{"functionResponse": {"name": "other", "response": {}}}]}],
                    [{"text": "done"}]),
    ])
    result = convert(src, "gemini")
    assert result.transcripts == []
    assert result.error_lines == [f"{src}:3: messages: a tool result of 'other' without an id, and no unanswered "
                                  "call of that name before it"]


def responses_pair(history: list[dict[str, Any]], output: list[dict[str, Any]]) -> str:
    return json.dumps({"request": {"model": "gpt-4.1", "input": history},
                       "response": {"object": "response", "output": output}})


def test_openai_responses_log_names_the_response_with_a_nameless_call(tmp_path: Path) -> None:
    user = {"role": "user", "content": "find it"}
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "42"}
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "42"}]}
    src = write_lines(tmp_path / "responses.jsonl", [
        responses_pair([user], [call]),
        responses_pair([user, call, output], [said]),
        responses_pair([user, call, output, said, {"role": "user", "content": "again"}],
                       [{"type": "function_call", "call_id": "c2", "name": "", "arguments": "{}"}]),
    ])
    result = convert(src, "openai-responses")
    assert result.transcripts == []
    assert result.error_lines == [f"{src}:3: messages: a tool call without a name"]


def otel_span(trace: str, start: int, messages_in: list[dict[str, Any]], messages_out: list[dict[str, Any]]) -> str:
    return json.dumps({"traceId": trace, "spanId": f"{trace}{start}", "name": "chat", "startTimeUnixNano": start,
                       "attributes": {"gen_ai.operation.name": "chat",
                                      "gen_ai.input.messages": json.dumps(messages_in),
                                      "gen_ai.output.messages": json.dumps(messages_out)}})


def test_otel_trace_names_the_span_that_holds_the_bad_message(tmp_path: Path) -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "find it"}]}
    call = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {}}]}
    answer = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "42"}]}
    said = {"role": "assistant", "parts": [{"type": "text", "content": "42"}]}
    src = write_lines(tmp_path / "spans.jsonl", [
        otel_span("t1", 1, [user], [call]),
        otel_span("t2", 1, [user], [call]),
        otel_span("t1", 2, [user, call, answer], [said]),
        otel_span("t2", 2, [user, call, answer], [said]),
        otel_span("t1", 3, [user, call, answer, said, {"role": "robot", "parts": []}], [said]),
        otel_span("t2", 3, [user, call, answer, said,
                            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c9", "response": "?"}]}],
                  [said]),
    ])
    result = convert(src, "otel")
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:5: gen_ai.input.messages[4].role should be system, user, assistant or tool, got 'robot'",
        f"{src}:6: conversation: a tool result answers 'c9', which no earlier assistant message called"]


def test_mcp_log_names_the_request_with_a_nameless_call(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "session.jsonl", [json.dumps(m) for m in (
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "42"}]}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "?"}]}},
    )])
    result = convert(src, "mcp")
    assert result.transcripts == []
    assert result.error_lines == [f"{src}:4: log: a tool call without a name"]


def test_vercel_ai_stream_names_the_chunk_whose_output_answers_no_call(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "stream.jsonl", [json.dumps(c) for c in (
        {"type": "start"},
        {"type": "start-step"},
        {"type": "tool-input-available", "toolCallId": "c1", "toolName": "lookup", "input": {}},
        {"type": "tool-output-available", "toolCallId": "c1", "output": "42"},
        {"type": "start-step"},
        {"type": "text-delta", "id": "t1", "delta": "it is 42"},
        {"type": "tool-output-available", "toolCallId": "c9", "output": "?"},
        {"type": "finish"},
    )])
    result = convert(src, "vercel-ai")
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:7: stream: a tool result answers 'c9', which no earlier assistant message called"]


def test_vercel_ai_stream_names_the_chunk_that_is_not_an_object(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "stream.jsonl", [json.dumps(c) for c in (
        {"type": "start"}, {"type": "start-step"}, {"type": "text-delta", "id": "t1", "delta": "hi"}, [1])])
    assert convert(src, "vercel-ai").error_lines == [f"{src}:4: chunk at line 4 should be an object, got a number"]


def langfuse_export(tmp_path: Path, observations: list[dict[str, Any]]) -> Path:
    """An export as Langfuse writes it: one document, indented, each observation on lines of its own."""
    src = tmp_path / "export.json"
    src.write_text(json.dumps({"trace": {"id": "t1", "name": "run"}, "observations": observations}, indent=2))
    return src


def observation_line(src: Path, observation_id: str) -> int:
    lines = src.read_text().splitlines()
    at = next(n for n, text in enumerate(lines, start=1) if f'"id": "{observation_id}"' in text)
    return at - 1  # the line of the observation's opening brace, just before its first key


def test_langfuse_export_names_the_observation_that_holds_the_bad_message(tmp_path: Path) -> None:
    user = {"role": "user", "content": "find it"}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]}
    src = langfuse_export(tmp_path, [
        {"id": "g1", "type": "GENERATION", "startTime": "2025-01-01T00:00:01Z", "input": [user], "output": call},
        {"id": "g2", "type": "GENERATION", "startTime": "2025-01-01T00:00:02Z",
         "input": [user, call, {"role": "tool", "tool_call_id": "c1", "content": "42"}],
         "output": {"role": "assistant", "content": "42"}},
        {"id": "g3", "type": "GENERATION", "startTime": "2025-01-01T00:00:03Z",
         "input": [user, {"role": "robot", "content": "?"}], "output": {"role": "assistant", "content": "?"}},
    ])
    result = convert(src, "langfuse")
    assert result.transcripts == []
    assert result.error_lines == [f"{src}:{observation_line(src, 'g3')}: observation 'g3'.input[1].role should be "
                                  "system, user, assistant or tool, got 'robot'"]


def test_langfuse_export_names_the_observation_whose_result_answers_no_call(tmp_path: Path) -> None:
    user = {"role": "user", "content": "find it"}
    src = langfuse_export(tmp_path, [
        {"id": "g1", "type": "GENERATION", "startTime": "2025-01-01T00:00:01Z", "input": [user],
         "output": {"role": "assistant", "content": "hello"}},
        {"id": "g2", "type": "GENERATION", "startTime": "2025-01-01T00:00:02Z",
         "input": [user, {"role": "assistant", "content": "hello"},
                   {"role": "tool", "tool_call_id": "c9", "content": "?"}],
         "output": {"role": "assistant", "content": "done"}},
    ])
    result = convert(src, "langfuse")
    assert result.transcripts == []
    assert result.error_lines == [f"{src}:{observation_line(src, 'g2')}: observations: a tool result answers 'c9', "
                                  "which no earlier assistant message called"]


def test_otlp_document_names_the_span_that_holds_the_bad_message(tmp_path: Path) -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "find it"}]}
    said = {"role": "assistant", "parts": [{"type": "text", "content": "42"}]}

    def span(span_id: str, start: int, messages_in: list[dict[str, Any]]) -> dict[str, Any]:
        return {"traceId": "t1", "spanId": span_id, "name": "chat", "startTimeUnixNano": start, "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages_in)}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps([said])}}]}

    src = tmp_path / "traces.json"
    src.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [
        {"spans": [span("s1", 1, [user])]},
        {"spans": [span("s2", 2, [user, said]), span("s3", 3, [user, said, {"role": "robot", "parts": []}])]},
    ]}]}, indent=2))
    at = next(n for n, text in enumerate(src.read_text().splitlines(), start=1) if '"spanId": "s3"' in text) - 2
    result = convert(src, "otel")
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:{at}: gen_ai.input.messages[2].role should be system, user, assistant or tool, got 'robot'"]


def test_agents_run_state_names_the_generated_item_that_holds_the_bad_value(tmp_path: Path) -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    src = tmp_path / "state.json"
    src.write_text(json.dumps({"$schemaVersion": "1.0", "original_input": "find it", "generated_items": [
        {"type": "tool_call_item", "raw_item": call},
        {"type": "tool_call_output_item", "raw_item": {"type": "function_call_output", "call_id": "c1", "output": "4"}},
        {"type": "tool_call_output_item", "raw_item": {"type": "function_call_output", "call_id": "c9", "output": "?"}},
        {"type": "message_output_item", "raw_item": {"type": "message", "role": "assistant", "content": "?"}},
    ]}, indent=2))
    lines = src.read_text().splitlines()
    third = [n for n, text in enumerate(lines, start=1) if '"type": "tool_call_output_item"' in text][1] - 1
    result = convert(src, "openai-responses")
    assert result.error_lines == [f"{src}:{third}: generated_items: a tool result answers 'c9', "
                                  "which no earlier assistant message called"]
    src.write_text(src.read_text().replace('"c9"', '"c1"').replace('"assistant"', '"robot"'))
    fourth = next(n for n, text in enumerate(lines, start=1) if '"type": "message_output_item"' in text) - 1
    assert convert(src, "openai-responses").error_lines == [
        f"{src}:{fourth}: generated_items[3].raw_item.role should be user, system, developer or assistant, "
        "got 'robot'"]


def test_otlp_json_lines_name_the_export_line_that_holds_the_bad_span(tmp_path: Path) -> None:
    user = {"role": "user", "parts": [{"type": "text", "content": "find it"}]}

    def export(*spans: tuple[str, str, int, list[dict[str, Any]]]) -> str:
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": trace, "spanId": span_id, "startTimeUnixNano": start, "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages)}}]}
            for trace, span_id, start, messages in spans]}]}]})

    robot = {"role": "robot", "parts": []}
    src = write_lines(tmp_path / "traces.jsonl", [
        export(("a", "1", 1, [user]), ("b", "2", 1, [user])),
        export(("a", "3", 2, [user, robot])),
        export(("b", "4", 2, [user, robot])),
    ])
    message = "gen_ai.input.messages[1].role should be system, user, assistant or tool, got 'robot'"
    assert convert(src, "otel").error_lines == [f"{src}:2: {message}", f"{src}:3: {message}"]
