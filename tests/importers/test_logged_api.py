"""OpenAI chat and Anthropic Messages traffic as API loggers keep it: a {request, response} pair per call,
response bodies, and JSON arrays. A real tau-bench run (gpt-4o, airline) is re-expressed as the calls its
agent made -- one request per assistant turn holding the history so far, and the reply -- and must import
as the very conversation the tau-bench importer reads from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorer.importers import detect
from scorer.model import Message, Transcript
from tests.importers.helpers import REAL, convert, write_lines

RUNS = REAL / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"


def said(messages: tuple[Message, ...]) -> list[tuple[object, ...]]:
    """What each message says: role, text ("" and no text alike), calls, the call a result answers.
    (tau-bench also names each tool message after its tool; the API bodies have no such field.)"""
    return [(m.role, m.content or "", m.tool_calls, m.tool_call_id) for m in messages]


def reference() -> Transcript:
    transcript = convert(RUNS).transcripts[0]
    assert sum(m.role == "assistant" for m in transcript.messages) >= 3
    return transcript


def openai_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.function.name, "arguments": c.function.arguments}} for c in message.tool_calls]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


def openai_pairs(transcript: Transcript) -> list[dict[str, Any]]:
    messages = [openai_message(m) for m in transcript.messages]
    return [{"request": {"model": "gpt-4o", "messages": messages[:i]},
             "response": {"object": "chat.completion", "model": "gpt-4o-2024-08-06",
                          "choices": [{"index": 0, "message": messages[i], "finish_reason": "stop"}]}}
            for i, m in enumerate(transcript.messages) if m.role == "assistant"]


def anthropic_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.function.name,
                        "input": json.loads(c.function.arguments)} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks})
        elif m.role == "tool":
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif m.role == "user":
            out.append({"role": "user", "content": m.content})
    return out


def test_openai_pairs_one_per_call_import_as_the_whole_conversation(tmp_path: Path) -> None:
    ref = reference()
    pairs = openai_pairs(ref)
    src = write_lines(tmp_path / "calls.jsonl", [json.dumps(p) for p in pairs])
    result = convert(src)
    assert detect(src).NAME == "openai"
    assert result.errors == []
    transcript, = result.transcripts  # every call continues the one before: one conversation
    assert said(transcript.messages) == said(ref.messages[:len(transcript.messages)])
    last_assistant = max(i for i, m in enumerate(ref.messages) if m.role == "assistant")
    assert len(transcript.messages) == last_assistant + 1
    assert transcript.metadata == {"source": "openai", "model": "gpt-4o-2024-08-06"}
    array = tmp_path / "calls.json"
    array.write_text(json.dumps(pairs, indent=2))
    assert [t.messages for t in convert(array).transcripts] == [transcript.messages]


def test_anthropic_pairs_one_per_call_import_as_the_whole_conversation(tmp_path: Path) -> None:
    ref = reference()
    system = ref.messages[0].content
    assert ref.messages[0].role == "system"
    pairs = []
    for i, m in enumerate(ref.messages):
        if m.role == "assistant":
            reply, = anthropic_messages((m,))
            pairs.append({"request": {"model": "claude-x", "system": system,
                                      "messages": anthropic_messages(ref.messages[1:i])},
                          "response": {"type": "message", "role": "assistant", "model": "claude-x-1",
                                       "content": reply["content"], "stop_reason": "tool_use"}})
    src = write_lines(tmp_path / "claude.jsonl", [json.dumps(p) for p in pairs])
    result = convert(src)
    assert detect(src).NAME == "anthropic"
    assert result.errors == []
    transcript, = result.transcripts
    assert said(transcript.messages) == said(ref.messages[:len(transcript.messages)])
    assert len(transcript.messages) == max(i for i, m in enumerate(ref.messages) if m.role == "assistant") + 1
    assert transcript.metadata == {"source": "anthropic", "model": "claude-x-1"}


def test_a_response_body_alone_and_a_bad_record_in_a_log(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "log.jsonl", [
        json.dumps({"request": {"messages": [{"role": "user", "content": "hi"}]},
                    "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}}),
        json.dumps({"request": {"messages": "hi"}, "response": None}),
        json.dumps({"object": "chat.completion", "choices": [{"message": {"role": "assistant", "content": "yo"}}]}),
    ])
    result = convert(src)
    assert [(t.id, [m.content for m in t.messages]) for t in result.transcripts] == [
        ("log:1", ["hi", "hello"]), ("log:3", ["yo"])]
    assert result.error_lines == [f"{src}:2: messages should be an array, got a string"]
