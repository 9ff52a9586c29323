"""Vercel AI SDK: UI message streams (recorded snapshots), ModelMessage lists (v4 args, v5 input) and UIMessages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorer.importers import detect
from tests.importers.helpers import REAL, convert, write_lines

VERCEL = REAL / "traces" / "vercel-ai-sdk"
REACT = VERCEL / "react-agent-tool-calling.json"
HITL = VERCEL / "langgraph-hitl-request-1.json"


def streamed(chunks: list[dict[str, Any]]) -> tuple[dict[str, tuple[str, str]], dict[str, str], str]:
    """Calls (name, arguments re-assembled from the deltas), outputs and the text, straight from the chunks."""
    calls = {c["toolCallId"]: (c["toolName"], "") for c in chunks if c["type"] == "tool-input-start"}
    for c in chunks:
        if c["type"] == "tool-input-delta":
            name, so_far = calls[c["toolCallId"]]
            calls[c["toolCallId"]] = (name, so_far + c["inputTextDelta"])
    outputs = {c["toolCallId"]: c["output"] for c in chunks if c["type"] == "tool-output-available"}
    text = "".join(c["delta"] for c in chunks if c["type"] == "text-delta")
    return calls, outputs, text


def test_a_ui_message_stream_is_reassembled_into_calls_results_and_text() -> None:
    chunks = json.loads(REACT.read_text())
    calls, outputs, text = streamed(chunks)
    assert (len(calls), len(outputs)) == (2, 2)
    result = convert(REACT)
    assert detect(REACT).NAME == "vercel-ai"
    assert result.errors == []
    transcript, = result.transcripts
    made = transcript.messages[0].tool_calls  # both calls were streamed in the first step: parallel
    assert {c.id: (c.function.name, c.function.arguments) for c in made} == calls
    assert {m.tool_call_id: m.content for m in transcript.messages if m.role == "tool"} == outputs
    assert transcript.messages[-1].content == text
    assert transcript.metadata == {"source": "vercel-ai", "skipped": {"reasoning": 1}}


def test_an_approval_request_leaves_its_call_pending() -> None:
    chunks = json.loads(HITL.read_text())
    calls, _, _ = streamed(chunks)
    approval, = (c for c in chunks if c["type"] == "tool-approval-request")
    transcript, = convert(HITL).transcripts
    call, = transcript.messages[0].tool_calls
    assert (call.id, (call.function.name, call.function.arguments)) == (approval["toolCallId"],
                                                                         calls[approval["toolCallId"]])
    assert transcript.metadata["pending_approvals"] == [approval["toolCallId"]]
    assert [m.role for m in transcript.messages] == ["assistant"]


def test_the_stream_as_sent_over_sse_and_as_json_lines_reads_the_same(tmp_path: Path) -> None:
    chunks = json.loads(REACT.read_text())
    reference, = convert(REACT).transcripts
    sse = tmp_path / "react.sse"
    sse.write_text("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n")
    lines = write_lines(tmp_path / "react.jsonl", [json.dumps(c) for c in chunks])
    assert [t.messages for t in convert(sse, "vercel-ai").transcripts] == [reference.messages]
    assert [t.messages for t in convert(lines).transcripts] == [reference.messages]


def test_model_messages_v4_and_v5_and_ui_messages_give_the_same_conversation(tmp_path: Path) -> None:
    calls, outputs, text = streamed(json.loads(REACT.read_text()))
    reference, = convert(REACT).transcripts
    user = {"role": "user", "content": "What's the weather and time in Tokyo?"}
    v4 = [user, {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": i, "toolName": n, "args": json.loads(a)} for i, (n, a) in calls.items()]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": i, "toolName": calls[i][0], "result": o}
                                     for i, o in outputs.items()]},
        {"role": "assistant", "content": [{"type": "text", "text": text}]}]
    v5 = [user, {"role": "assistant", "content": [
        {"type": "tool-call", "toolCallId": i, "toolName": n, "input": json.loads(a)} for i, (n, a) in calls.items()]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": i, "toolName": calls[i][0],
                                      "output": {"type": "text", "value": o}} for i, o in outputs.items()]},
        {"role": "assistant", "content": [{"type": "text", "text": text}]}]
    ui = [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": user["content"]}]},
          {"id": "a1", "role": "assistant", "parts": [
              {"type": "reasoning", "text": "..."},
              *({"type": "dynamic-tool", "toolName": n, "toolCallId": i, "state": "output-available",
                 "input": json.loads(a), "output": outputs[i]} for i, (n, a) in calls.items())]},
          {"id": "a2", "role": "assistant", "parts": [{"type": "text", "text": text}]}]
    src = write_lines(tmp_path / "model.jsonl", [json.dumps(v4), json.dumps(v5), json.dumps(ui)])
    result = convert(src)
    assert detect(src).NAME == "vercel-ai"
    assert result.errors == []
    v4_t, v5_t, ui_t = result.transcripts
    assert v4_t.messages[1:] == v5_t.messages[1:] == reference.messages
    assert ui_t.messages[1:] == tuple(m for m in reference.messages)[:1] + tuple(
        m for m in reference.messages if m.role == "tool") + reference.messages[-1:]
    assert [t.id for t in result.transcripts] == ["model:1", "model:2", "model:3"]


def test_unknown_chunks_and_parts_are_named_at_their_line(tmp_path: Path) -> None:
    chunks = json.loads(HITL.read_text())
    chunks.insert(3, {"type": "hologram-delta", "toolCallId": "x"})
    src = tmp_path / "stream.json"
    src.write_text(json.dumps(chunks, indent=1))
    hologram = next(n for n, t in enumerate(src.read_text().splitlines(), start=1) if "hologram" in t) - 1
    assert convert(src).error_lines == [
        f"{src}:{hologram}: a 'hologram-delta' chunk; expected a UI message stream chunk (text-delta, "
        "tool-input-start, tool-input-delta, tool-output-available, start-step ...)"]
    bad = write_lines(tmp_path / "model.jsonl", [
        json.dumps([{"role": "user", "content": "hi"}]),
        json.dumps([{"role": "assistant", "content": [{"type": "telepathy"}]}]),
        json.dumps([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "nobody", "result": 1}]}])])
    assert convert(bad, "vercel-ai").error_lines == [
        f"{bad}:2: messages[0].content[0]: a 'telepathy' part; expected one of text, tool-call, tool-result, "
        "reasoning, image, file (or a UIMessage tool part)",
        f"{bad}:3: messages: a tool result answers 'nobody', which no earlier assistant message called"]
