"""OpenAI Responses API bodies as logged, and Agents SDK run states -> transcripts.

The recorded traffic is in VCR cassettes (pydantic-ai): the bodies inside them (``parsed_body``) are what
an API logger keeps, so the tests extract them into the logged shapes (pairs per line, a JSON array,
requests only) and compare the transcript with the raw bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from scorer import canonical
from scorer.importers import detect
from tests.importers.helpers import REAL, convert, write_lines

RESPONSES = REAL / "traces" / "openai-responses"
RETRY = RESPONSES / "pydantic-ai" / "test_openai_responses_model_retry.yaml"
MCP = RESPONSES / "pydantic-ai" / "test_openai_responses_model_mcp_server_tool.yaml"
PENDING = RESPONSES / "openai-agents-python" / "v1_13_pending_tool_approval.json"
ORPHAN_OUTPUT = RESPONSES / "openai-agents-python" / "v1_11_tool_output_custom_data.json"


def bodies(cassette: Path) -> list[dict[str, Any]]:
    """Each recorded interaction as a ``{"request", "response"}`` pair of parsed bodies."""
    data = yaml.safe_load(cassette.read_text())
    return [{"request": i["request"]["parsed_body"], "response": i["response"]["parsed_body"]}
            for i in data["interactions"]]


def items(pairs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Distinct items of a type over every body (histories repeat earlier items: keyed by id)."""
    seen: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        for item in pair["request"].get("input", []) + pair["response"].get("output", []):
            if isinstance(item, dict) and item.get("type") == kind:
                seen.setdefault(item.get("call_id") or item["id"], item)
    return list(seen.values())


def test_a_pair_per_line_is_one_conversation_with_parallel_calls_and_their_outputs(tmp_path: Path) -> None:
    pairs = bodies(RETRY)
    src = write_lines(tmp_path / "responses.jsonl", [json.dumps(p) for p in pairs])
    result = convert(src)
    assert detect(src).NAME == "openai-responses"
    assert result.errors == []
    transcript, = result.transcripts  # 2 interactions of one conversation
    calls, outputs = items(pairs, "function_call"), items(pairs, "function_call_output")
    assert (len(calls), len(outputs)) == (2, 2)
    assert [m.role for m in transcript.messages] == ["user", "assistant", "tool", "tool", "assistant"]
    parallel = transcript.messages[1].tool_calls  # both calls came in one response: one decision point
    assert [(c.id, c.function.name, c.function.arguments) for c in parallel] == [
        (c["call_id"], c["name"], c["arguments"]) for c in calls]
    assert [(m.tool_call_id, m.content) for m in transcript.messages[2:4]] == [
        (o["call_id"], o["output"]) for o in outputs]
    final = pairs[-1]["response"]["output"][0]["content"][0]["text"]
    assert transcript.messages[4].content == final
    assert transcript.messages[0].content == pairs[0]["request"]["input"][0]["content"]
    assert len(transcript.decision_points()) == 2
    tool = pairs[0]["request"]["tools"][0]
    assert [(t.name, t.parameters) for t in transcript.tools] == [(tool["name"], tool["parameters"])]
    assert transcript.metadata == {"source": "openai-responses", "model": pairs[-1]["response"]["model"]}
    assert transcript.id == "responses:1"


def test_a_json_array_and_requests_only_read_the_same(tmp_path: Path) -> None:
    pairs = bodies(RETRY)
    lines = convert(write_lines(tmp_path / "a.jsonl", [json.dumps(p) for p in pairs])).transcripts[0]
    array = tmp_path / "array.json"
    array.write_text(json.dumps(pairs, indent=2))
    assert [t.messages for t in convert(array).transcripts] == [lines.messages]
    requests = write_lines(tmp_path / "requests.jsonl", [json.dumps(p["request"]) for p in pairs])
    only, = convert(requests).transcripts
    assert only.messages == lines.messages[:-1]  # the last request holds the history, not the final reply


def test_an_mcp_call_carries_its_output_and_mcp_list_tools_gives_tools_with_annotations(tmp_path: Path) -> None:
    pairs = bodies(MCP)
    src = write_lines(tmp_path / "mcp.jsonl", [json.dumps(p) for p in pairs])
    result = convert(src)
    assert result.errors == []
    transcript, = result.transcripts  # the second request replays the mcp_call without its output
    mcp_calls, reasoning = items(pairs, "mcp_call"), items(pairs, "reasoning")
    assert (len(mcp_calls), len(reasoning)) == (1, 3)
    recorded = next(i for i in pairs[0]["response"]["output"] if i["type"] == "mcp_call")
    call_message = next(m for m in transcript.messages if m.tool_calls)
    call, = call_message.tool_calls
    assert (call.id, call.function.name, call.function.arguments) == (
        recorded["id"], recorded["name"], recorded["arguments"])
    answer = transcript.messages[transcript.messages.index(call_message) + 1]
    assert (answer.role, answer.tool_call_id, answer.content) == ("tool", recorded["id"], recorded["output"])
    assert [m.role for m in transcript.messages] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    assert transcript.messages[5].content == pairs[1]["request"]["input"][-1]["content"]
    listed = next(i for i in pairs[0]["response"]["output"] if i["type"] == "mcp_list_tools")["tools"][0]
    tool, = transcript.tools
    assert (tool.name, tool.parameters, tool.annotations) == (
        listed["name"], listed["input_schema"], listed["annotations"])
    assert transcript.metadata["skipped"] == {"mcp_list_tools": 1, "reasoning": len(reasoning)}


def test_an_agents_sdk_run_state_lists_its_pending_approval() -> None:
    raw = json.loads(PENDING.read_text())
    result = convert(PENDING)
    assert detect(PENDING).NAME == "openai-responses"
    transcript, = result.transcripts
    pending = raw["current_step"]["data"]["interruptions"][0]["raw_item"]
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert transcript.messages[0].content == raw["original_input"]
    call, = transcript.messages[1].tool_calls  # the approval item repeats the call: one call
    assert (call.id, call.function.name, call.function.arguments) == (
        pending["call_id"], pending["name"], pending["arguments"])
    assert transcript.metadata == {"source": "openai-agents", "schema_version": raw["$schemaVersion"],
                                   "agent": "compat-agent", "pending_approvals": [pending["call_id"]]}


def test_a_run_state_whose_output_answers_no_call_is_refused_at_its_line() -> None:
    raw = json.loads(ORPHAN_OUTPUT.read_text())
    orphan = next(i for i, item in enumerate(raw["generated_items"])
                  if item["raw_item"].get("call_id") == "custom-data-1")
    lines = ORPHAN_OUTPUT.read_text().splitlines()
    items = next(n for n, text in enumerate(lines) if text.strip() == '"generated_items": [')
    openings = [n + 1 for n, text in enumerate(lines) if n > items and text == "    {"]  # the items' own lines
    result = convert(ORPHAN_OUTPUT)
    assert result.transcripts == []
    assert result.error_lines == [f"{ORPHAN_OUTPUT}:{openings[orphan]}: generated_items: a tool result answers "
                                  "'custom-data-1', which no earlier assistant message called"]


def test_unknown_items_and_records_are_errors_naming_what_was_expected(tmp_path: Path) -> None:
    good = {"input": [{"role": "user", "content": "hi"}], "model": "gpt-4o"}
    src = write_lines(tmp_path / "bad.jsonl", [
        json.dumps(good),
        json.dumps({"input": [{"type": "telepathy", "id": "t1"}]}),
        json.dumps({"hello": "world"}),
        json.dumps({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}),
    ])
    result = convert(src, "openai-responses")
    assert [t.id for t in result.transcripts] == ["bad:1"]
    assert result.error_lines == [
        f"{src}:2: input[0]: an item of type 'telepathy'; expected one of message, function_call, "
        "function_call_output, custom_tool_call, custom_tool_call_output, mcp_call, mcp_list_tools, "
        "mcp_approval_request, reasoning",
        f"{src}:3: not a Responses API request ({{\"input\": ...}}), response ({{\"object\": \"response\", "
        "\"output\": [...]}) or {\"request\", \"response\"} pair",
        f"{src}:4: input[0]: a function_call item without its call_id",
    ]


def test_custom_tool_calls_keep_their_free_text_input(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "custom.jsonl", [json.dumps({"input": [
        {"role": "user", "content": "run it"},
        {"type": "custom_tool_call", "call_id": "c1", "name": "shell", "input": "ls -la"},
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "total 0"}]})])
    transcript, = convert(src).transcripts
    call, = transcript.messages[1].tool_calls
    assert canonical.equal(json.loads(call.function.arguments), {"input": "ls -la"})
    assert transcript.messages[2].content == "total 0"
