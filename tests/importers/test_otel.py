"""OpenTelemetry GenAI and OpenInference spans -> one transcript per trace.

The real samples are span attribute maps (Arize openinference fixtures) and the GenAI conventions'
own examples (Markdown): the OTLP/JSON files are assembled here from those examples' values, as an
exporter would write them, and every expectation is recomputed from the raw sample.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scorer import canonical
from scorer.importers import detect
from scorer.model import Transcript
from tests.importers.helpers import REAL, convert, write_lines

TRACES = REAL / "traces"
GENAI_CHAT = TRACES / "otel-genai" / "openinference-genai" / "otel_genai_client_span_tool_calls.json"
GENAI_TOOL = TRACES / "otel-genai" / "openinference-genai" / "otel_genai_tool_execution_span.json"
OPENINFERENCE = TRACES / "openinference" / "openinference_client_span_tool_calls.json"
EXAMPLES = TRACES / "otel-genai" / "semantic-conventions" / "examples-llm-calls.md"
OI_SPANS = TRACES / "openinference" / "llm_spans.md"


def json_blocks(markdown: Path) -> list[Any]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", markdown.read_text(), re.DOTALL)]


def otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [otlp_value(v) for v in value]}}
    return {"stringValue": value}


def otlp_span(trace: str, span: str, name: str, start: int, attributes: dict[str, Any],
              parent: str | None = None, events: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": trace, "spanId": span, "name": name, "kind": 3,
                           "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 1000),
                           "attributes": [{"key": k, "value": otlp_value(v)} for k, v in attributes.items()]}
    if parent:
        out["parentSpanId"] = parent
    if events is not None:
        out["events"] = events
    return out


def otlp_batch(service: str, spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
        "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"}, "spans": spans}]}]})


def tool_call_example() -> dict[str, Any]:
    """The conventions' "Tool calls (functions)" example: span 1's messages and tools, span 2's messages."""
    blocks = json_blocks(EXAMPLES)
    first = next(i for i, b in enumerate(blocks)
                 if isinstance(b, list) and b and b[0].get("parts", [{}])[0].get("content") == "Weather in Paris?")
    return {"input1": blocks[first], "output1": blocks[first + 1], "tools": blocks[first + 2],
            "input2": blocks[first + 3], "output2": blocks[first + 4]}


# --------------------------------------------------------------------------------------------------
# Flat attribute maps (the real fixtures)
# --------------------------------------------------------------------------------------------------


def test_a_genai_chat_span_keeps_every_message_part_byte_exact() -> None:
    raw = json.loads(GENAI_CHAT.read_text())
    inputs, outputs = json.loads(raw["gen_ai.input.messages"]), json.loads(raw["gen_ai.output.messages"])
    result = convert(GENAI_CHAT)
    assert detect(GENAI_CHAT).NAME == "otel"
    assert result.errors == []
    transcript, = result.transcripts
    # counted from the raw attribute: 3 input messages + 1 output, 1 tool_call part, 1 tool_call_response
    calls = [p for m in inputs + outputs for p in m["parts"] if p["type"] == "tool_call"]
    results = [p for m in inputs + outputs for p in m["parts"] if p["type"] == "tool_call_response"]
    assert (len(calls), len(results)) == (1, 1)
    assert result.tool_calls == len(calls)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert len(transcript.decision_points()) == 2
    call = transcript.messages[1].tool_calls[0]
    assert (call.id, call.function.name) == (calls[0]["id"], calls[0]["name"])
    assert canonical.dumps(json.loads(call.function.arguments)) == canonical.dumps(calls[0]["arguments"])
    assert transcript.messages[2].content == results[0]["response"]
    assert transcript.messages[2].tool_call_id == calls[0]["id"]
    assert transcript.messages[0].content == inputs[0]["parts"][0]["content"]
    assert transcript.messages[1].content == inputs[1]["parts"][0]["content"]
    assert transcript.messages[3].content == outputs[0]["parts"][0]["content"]
    assert transcript.metadata == {"source": "otel", "model": raw["gen_ai.response.model"]}


def test_an_execute_tool_span_alone_is_a_call_and_its_result() -> None:
    raw = json.loads(GENAI_TOOL.read_text())
    transcript, = convert(GENAI_TOOL).transcripts
    call_message, result_message = transcript.messages
    assert call_message.tool_calls[0].id == raw["gen_ai.tool.call.id"]
    assert call_message.tool_calls[0].function.name == raw["gen_ai.tool.name"]
    assert call_message.tool_calls[0].function.arguments == raw["input"]  # a JSON string stays byte for byte
    assert result_message.content == raw["output"]
    assert result_message.tool_call_id == raw["gen_ai.tool.call.id"]


def test_openinference_flattened_attributes_give_the_same_conversation_as_the_genai_parts() -> None:
    raw = json.loads(OPENINFERENCE.read_text())
    oi, = convert(OPENINFERENCE).transcripts
    genai, = convert(GENAI_CHAT).transcripts
    assert oi.messages == genai.messages  # the two fixtures describe the same exchange
    prefix = "llm.input_messages.1.message.tool_calls.0.tool_call."
    assert oi.messages[1].tool_calls[0].function.arguments == raw[prefix + "function.arguments"]
    assert oi.messages[2].content == raw["llm.input_messages.2.message.content"]


def test_openinference_logical_spans_of_one_trace_become_one_conversation(tmp_path: Path) -> None:
    spans = [b for b in json_blocks(OI_SPANS) if isinstance(b, dict) and "context" in b
             and "llm.input_messages" in b["attributes"]]  # the page's third span is a text completion
    assert len(spans) == 2 and len({s["context"]["trace_id"] for s in spans}) == 1
    src = write_lines(tmp_path / "phoenix.jsonl", [json.dumps(s) for s in reversed(spans)])  # out of order
    result = convert(src)
    assert result.errors == []
    transcript, = result.transcripts
    assert transcript.id == f"otel/{spans[0]['context']['trace_id']}"
    first_out = spans[0]["attributes"]["llm.output_messages"][0]["message.tool_calls"][0]
    second_in = spans[1]["attributes"]["llm.input_messages"]
    second_out = spans[1]["attributes"]["llm.output_messages"][0]
    # system + user, the call (span 1 output), then span 2's new input (the tool result) and its answer
    assert [m.role for m in transcript.messages] == ["system", "user", "assistant", "tool", "assistant"]
    call = transcript.messages[2].tool_calls[0]
    assert call.function.arguments == first_out["tool_call.function.arguments"]
    assert transcript.messages[3].tool_call_id == call.id  # no ids in the spans: paired by order and name
    tool_message = next(m for m in second_in if m["message.role"] == "tool")
    assert transcript.messages[3].content == tool_message["message.content"]
    assert transcript.messages[4].content == second_out["message.content"]


# --------------------------------------------------------------------------------------------------
# OTLP/JSON built from the conventions' own example values
# --------------------------------------------------------------------------------------------------


def test_otlp_spans_of_one_trace_in_two_batches_become_one_conversation_in_time_order(tmp_path: Path) -> None:
    ex = tool_call_example()
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    chat1 = otlp_span(trace, "00000000000000a1", "chat gpt-4", 1_000, {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4", "gen_ai.response.model": "gpt-4-0613",
        "gen_ai.input.messages": json.dumps(ex["input1"]), "gen_ai.output.messages": json.dumps(ex["output1"]),
        "gen_ai.tool.definitions": json.dumps(ex["tools"])}, parent="00000000000000f0")
    tool = otlp_span(trace, "00000000000000a2", "execute_tool get_weather", 2_000, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_VSPygqKTWdrhaFErNvMV18Yl", "gen_ai.tool.type": "function"},
        parent="00000000000000f0")
    chat2 = otlp_span(trace, "00000000000000a3", "chat gpt-4", 3_000, {
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(ex["input2"]),
        "gen_ai.output.messages": json.dumps(ex["output2"])}, parent="00000000000000f0")
    agent = otlp_span(trace, "00000000000000f0", "invoke_agent weather", 1_000, {
        "gen_ai.operation.name": "invoke_agent"})
    src = write_lines(tmp_path / "traces.jsonl", [otlp_batch("weather-bot", [chat2, tool]),
                                                  otlp_batch("weather-bot", [chat1, agent])])
    result = convert(src)
    assert detect(src).NAME == "otel"
    assert result.errors == []
    transcript, = result.transcripts
    assert transcript.id == f"otel/{trace}"
    assert transcript.metadata == {"source": "otel", "trace_id": trace, "service": "weather-bot",
                                   "model": "gpt-4-0613"}
    expected_call = ex["output1"][0]["parts"][0]
    assert [m.role for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    call = transcript.messages[1].tool_calls[0]
    assert (call.id, call.function.name) == (expected_call["id"], expected_call["name"])
    assert canonical.equal(json.loads(call.function.arguments), expected_call["arguments"])
    assert transcript.messages[2].content == ex["input2"][2]["parts"][0]["response"]
    assert transcript.messages[3].content == ex["output2"][0]["parts"][0]["content"]
    spec = ex["tools"][0]
    assert [(t.name, t.parameters) for t in transcript.tools] == [(spec["name"], spec["parameters"])]


def test_a_result_only_an_execute_tool_span_saw_is_added_after_its_call(tmp_path: Path) -> None:
    ex = tool_call_example()
    trace = "1" * 32
    chat1 = otlp_span(trace, "a1", "chat", 1, {"gen_ai.input.messages": json.dumps(ex["input1"]),
                                               "gen_ai.output.messages": json.dumps(ex["output1"])})
    tool = otlp_span(trace, "a2", "execute_tool get_weather", 2, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_VSPygqKTWdrhaFErNvMV18Yl",
        "gen_ai.tool.call.arguments": '{"location":"Paris"}', "gen_ai.tool.call.result": "rainy, 57°F"})
    tool["status"] = {"code": 2, "message": "timeout"}
    src = write_lines(tmp_path / "t.jsonl", [otlp_batch("svc", [chat1, tool])])
    transcript, = convert(src).transcripts
    assert [m.role for m in transcript.messages] == ["user", "assistant", "tool"]
    assert transcript.messages[2].content == "Error: rainy, 57°F"  # the span's status said it failed


def test_the_older_per_message_events_are_read(tmp_path: Path) -> None:
    def event(name: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "timeUnixNano": "1",
                "attributes": [{"key": "gen_ai.event.content", "value": {"stringValue": json.dumps(body)}}]}

    span = otlp_span("2" * 32, "b1", "chat gpt-4", 1, {"gen_ai.system": "openai"}, events=[
        event("gen_ai.user.message", {"content": "Weather in Paris?"}),
        event("gen_ai.assistant.message", {"tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": '{"location": "Paris"}'}}]}),
        event("gen_ai.tool.message", {"content": "rainy, 57°F", "id": "c1"}),
        event("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "Rainy, 57°F."}})])
    src = write_lines(tmp_path / "old.jsonl", [otlp_batch("svc", [span])])
    transcript, = convert(src).transcripts
    assert [(m.role, m.content) for m in transcript.messages] == [
        ("user", "Weather in Paris?"), ("assistant", None), ("tool", "rainy, 57°F"), ("assistant", "Rainy, 57°F.")]
    assert transcript.messages[1].tool_calls[0].function.arguments == '{"location": "Paris"}'


def test_reasoning_parts_are_skipped_and_counted(tmp_path: Path) -> None:
    src = tmp_path / "span.json"
    src.write_text(json.dumps({"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps([
        {"role": "assistant", "parts": [{"type": "reasoning", "content": "hmm"},
                                        {"type": "text", "content": "Done."}]}])}))
    transcript, = convert(src).transcripts
    assert transcript.messages[0].content == "Done."
    assert transcript.metadata["skipped"] == {"reasoning": 1}


# --------------------------------------------------------------------------------------------------
# Rejected
# --------------------------------------------------------------------------------------------------


def test_an_unknown_part_type_is_an_error_at_its_line_naming_what_was_expected(tmp_path: Path) -> None:
    good = otlp_span("3" * 32, "c1", "chat", 1, {"gen_ai.input.messages": json.dumps(
        [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])})
    bad = otlp_span("4" * 32, "c2", "chat", 1, {"gen_ai.input.messages": json.dumps(
        [{"role": "user", "parts": [{"type": "hologram", "content": "hi"}]}])})
    src = write_lines(tmp_path / "mixed.jsonl", [otlp_batch("svc", [good]), otlp_batch("svc", [bad])])
    result = convert(src)
    assert [t.id for t in result.transcripts] == [f"otel/{'3' * 32}"]
    assert result.error_lines == [
        f"{src}:2: gen_ai.input.messages[0].parts[0]: a 'hologram' part; expected one of text, tool_call, "
        "tool_call_response, server_tool_call, server_tool_call_response, reasoning, blob, uri, file"]


def test_a_trace_without_any_genai_content_is_refused_not_imported_empty(tmp_path: Path) -> None:
    span = otlp_span("5" * 32, "d1", "GET /health", 1, {"http.method": "GET"})
    src = write_lines(tmp_path / "http.jsonl", [otlp_batch("svc", [span])])
    result = convert(src, "otel")
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:1: no GenAI messages or tool executions in this trace: expected gen_ai.input.messages / "
        "gen_ai.output.messages, gen_ai.*.message events, execute_tool spans or OpenInference llm.input_messages"]


def test_a_tool_result_for_a_call_nobody_made_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "orphan.json"
    src.write_text(json.dumps({"gen_ai.input.messages": json.dumps([
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "zz", "response": "x"}]}])}))
    result = convert(src)
    assert result.transcripts == []
    assert result.error_lines == [
        f"{src}:1: conversation: a tool result answers 'zz', which no earlier assistant message called"]


def test_transcripts_are_the_same_on_every_read() -> None:
    assert convert(GENAI_CHAT).transcripts == convert(GENAI_CHAT).transcripts
    assert all(isinstance(t, Transcript) for t in convert(OPENINFERENCE).transcripts)


# -- NaN and Infinity inside a span's JSON-text attribute ----------------------------------------------


def _trace_with_arguments(tmp_path: Path, arguments: dict[str, Any], result: Any = "18°C") -> Path:
    """A real conventions example whose tool call carries ``arguments`` and whose tool returns ``result``: the
    messages are JSON *text* inside string attributes (as instrumentations write them, with Python's
    ``json.dumps``, which writes NaN), so the file itself is valid JSON."""
    ex = tool_call_example()
    output = json.loads(json.dumps(ex["output1"]))
    output[0]["parts"][0]["arguments"] = arguments
    second = json.loads(json.dumps(ex["input2"]))
    for message in second:
        for part in message.get("parts", []):
            if part.get("type") == "tool_call_response":
                part["response"] = result
    spans = [otlp_span("t1", "s1", "chat gpt-4", 1, {
        "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(ex["input1"]),
        "gen_ai.output.messages": json.dumps(output), "gen_ai.tool.definitions": json.dumps(ex["tools"])}),
        otlp_span("t1", "s2", "chat gpt-4", 2, {
            "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(second),
            "gen_ai.output.messages": json.dumps(ex["output2"])})]
    path = tmp_path / "trace.json"
    path.write_text(otlp_batch("weather-bot", spans) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("arguments", "result", "named"), [
    ({"location": "Paris", "days": float("nan")}, "18°C", "days: NaN"),
    ({"location": "Paris"}, {"temperature": float("inf")}, "temperature: Infinity"),
])
def test_a_nan_or_infinity_in_a_tool_call_or_result_is_refused_at_its_line_and_nothing_is_imported(
        tmp_path: Path, arguments: dict[str, Any], result: Any, named: str) -> None:
    from click.testing import CliRunner

    from labeler.cli import cli
    from labeler.store import Store

    path = _trace_with_arguments(tmp_path, arguments, result)
    assert "NaN" in path.read_text(encoding="utf-8") or "Infinity" in path.read_text(encoding="utf-8")
    done = CliRunner().invoke(cli, ["import", str(path)], catch_exceptions=False)
    assert done.exit_code == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}:1: ") and named in line and "not a JSON number" in line
    assert Store().count_transcripts() == 0


def test_the_same_trace_with_finite_numbers_imports(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from labeler.cli import cli
    from labeler.store import Store

    path = _trace_with_arguments(tmp_path, {"location": "Paris", "days": 3}, {"temperature": 18.5})
    done = CliRunner().invoke(cli, ["import", str(path)], catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    [summary] = Store().list_transcripts()
    detail = Store().get_transcript(summary.id)
    calls = [c for m in detail.transcript.messages for c in m.tool_calls]
    assert calls[0].parsed_arguments() == {"location": "Paris", "days": 3}
    assert any(m.content == '{"temperature": 18.5}' for m in detail.transcript.messages if m.role == "tool")
