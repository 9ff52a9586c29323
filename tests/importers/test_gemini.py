"""Gemini generateContent bodies as logged -> transcripts (recorded traffic from a pydantic-ai cassette)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from scorer import canonical
from scorer.importers import detect
from tests.importers.helpers import REAL, convert, write_lines

CASSETTE = REAL / "traces" / "gemini" / "test_google_model_retry.yaml"


def pairs() -> list[dict[str, Any]]:
    data = yaml.safe_load(CASSETTE.read_text())
    return [{"request": i["request"]["parsed_body"], "response": i["response"]["parsed_body"]}
            for i in data["interactions"]]


def test_three_calls_of_one_conversation_become_one_transcript_with_the_failed_and_the_good_call(
        tmp_path: Path) -> None:
    recorded = pairs()
    src = write_lines(tmp_path / "gemini.jsonl", [json.dumps(p) for p in recorded])
    result = convert(src)
    assert detect(src).NAME == "gemini"
    assert result.errors == []
    transcript, = result.transcripts
    # counted from the raw bodies: the responses hold 2 functionCall parts, the last request 2 functionResponses
    response_calls = [p["functionCall"] for r in recorded for p in r["response"]["candidates"][0]["content"]["parts"]
                      if "functionCall" in p]
    history = recorded[-1]["request"]["contents"]
    responses = [p["functionResponse"] for c in history for p in c["parts"] if "functionResponse" in p]
    assert (len(response_calls), len(responses)) == (2, 2)
    assert result.tool_calls == 2
    assert [m.role for m in transcript.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                     "assistant"]
    calls = [m.tool_calls[0] for m in transcript.messages if m.tool_calls]
    for call, sent, answer in zip(calls, response_calls, responses, strict=True):
        assert call.function.name == sent["name"]
        assert canonical.dumps(json.loads(call.function.arguments)) == canonical.dumps(sent["args"])
        assert call.id == answer["id"]  # the API sends no id; the client's replay names it
    failed, succeeded = (m for m in transcript.messages if m.role == "tool")
    assert failed.content == f"Error: {responses[0]['response']['error']}"
    assert canonical.equal(json.loads(succeeded.content), responses[1]["response"])
    assert transcript.messages[0].content == recorded[0]["request"]["systemInstruction"]["parts"][0]["text"]
    assert transcript.messages[-1].content == recorded[-1]["response"]["candidates"][0]["content"]["parts"][0]["text"]
    declaration = recorded[0]["request"]["tools"][0]["functionDeclarations"][0]
    assert [(t.name, t.parameters) for t in transcript.tools] == [
        (declaration["name"], declaration["parameters_json_schema"])]
    assert transcript.metadata == {"source": "gemini", "model": "gemini-2.5-pro"}
    assert len(transcript.decision_points()) == 3


def test_parallel_calls_without_ids_are_paired_with_their_responses_by_order_and_name(tmp_path: Path) -> None:
    request = {"contents": [
        {"role": "user", "parts": [{"text": "Capitals of France and Peru, and the time?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_capital", "args": {"country": "France"}}},
                                    {"functionCall": {"name": "get_time", "args": {}}},
                                    {"functionCall": {"name": "get_capital", "args": {"country": "Peru"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}},
                                   {"functionResponse": {"name": "get_capital", "response": {"output": "Paris"}}},
                                   {"functionResponse": {"name": "get_capital", "response": {"output": "Lima"}}}]}],
        "tools": [{"functionDeclarations": [{"name": "get_capital", "parameters": {
            "type": "OBJECT", "properties": {"country": {"type": "STRING"}}}}]}]}
    transcript, = convert(write_lines(tmp_path / "g.jsonl", [json.dumps(request)])).transcripts
    calls = transcript.messages[1].tool_calls
    assert [c.function.arguments for c in calls] == ['{"country":"France"}', "{}", '{"country":"Peru"}']
    answers = {m.tool_call_id: m.content for m in transcript.messages[2:]}
    assert answers == {calls[0].id: '{"output": "Paris"}', calls[1].id: '{"output": "12:00"}',
                       calls[2].id: '{"output": "Lima"}'}
    assert transcript.tools[0].parameters == {"type": "object", "properties": {"country": {"type": "string"}}}


def test_unknown_parts_and_records_are_errors_at_their_line(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "bad.jsonl", [
        json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        json.dumps({"contents": [{"role": "user", "parts": [{"hologram": {"x": 1}}]}]}),
        json.dumps({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]}),
        json.dumps({"contents": [{"role": "narrator", "parts": [{"text": "x"}]}]}),
    ])
    result = convert(src, "gemini")
    assert [t.id for t in result.transcripts] == ["bad:1"]
    assert result.error_lines == [
        f"{src}:2: contents[0].parts[0] has hologram; expected one of text, functionCall, functionResponse, "
        "inlineData, fileData, executableCode, codeExecutionResult",
        f"{src}:3: messages: a tool result of 'f' without an id, and no unanswered call of that name before it",
        f"{src}:4: contents[0].role should be user or model, got 'narrator'",
    ]
