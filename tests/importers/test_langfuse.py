"""Langfuse trace exports (recorded OpenAI Agents SDK and LangGraph runs) -> one transcript per trace."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from scorer import canonical
from scorer.importers import detect
from tests.importers.helpers import REAL, convert

LANGFUSE = REAL / "traces" / "langfuse"
AGENTS = LANGFUSE / "openai-agents-2025-09-30.json"
LANGGRAPH = LANGFUSE / "langgraph-2025-08-22.json"


def test_an_agents_sdk_run_becomes_one_conversation_in_order() -> None:
    raw = json.loads(AGENTS.read_text())
    kinds = Counter(o["type"] for o in raw["observations"])
    assert kinds == {"AGENT": 2, "GENERATION": 2, "TOOL": 1}
    first, second = sorted((o for o in raw["observations"] if o["type"] == "GENERATION"), key=lambda o: o["startTime"])
    call = next(i for i in first["output"]["output"] if i["type"] == "function_call")
    tool = next(o for o in raw["observations"] if o["type"] == "TOOL")
    result = convert(AGENTS)
    assert detect(AGENTS).NAME == "langfuse"
    assert result.errors == []
    transcript, = result.transcripts
    assert transcript.id == f"langfuse/{raw['trace']['id']}"
    assert [m.role for m in transcript.messages] == ["system", "user", "assistant", "tool", "assistant"]
    made, = transcript.messages[2].tool_calls
    assert (made.id, made.function.name) == (call["call_id"], call["name"])
    assert canonical.dumps(json.loads(made.function.arguments)) == canonical.dumps(call["arguments"])
    assert transcript.messages[3].content == tool["output"]  # the TOOL observation and the replay agree
    assert transcript.messages[0].content == first["output"]["instructions"]
    assert transcript.messages[4].content == second["output"]["output"][0]["content"][0]["text"]
    assert [t.name for t in transcript.tools] == [t["name"] for t in first["output"]["tools"]]
    assert result.tool_calls == 1 and result.decision_points == 2


def test_a_langgraph_run_reads_langchain_messages_and_tool_definitions() -> None:
    raw = json.loads(LANGGRAPH.read_text())
    generations = sorted((o for o in raw["observations"] if o["type"] == "GENERATION"), key=lambda o: o["startTime"])
    call = generations[0]["output"]["additional_kwargs"]["tool_calls"][0]
    tool_span = next(o for o in raw["observations"] if isinstance(o.get("output"), dict)
                     and o["output"].get("type") == "tool")
    transcript, = convert(LANGGRAPH).transcripts
    made = [c for m in transcript.messages for c in m.tool_calls]
    assert [(c.id, c.function.name) for c in made] == [(call["id"], call["function"]["name"])]
    assert canonical.equal(json.loads(made[0].function.arguments), call["function"]["arguments"])
    answer, = (m for m in transcript.messages if m.role == "tool")
    assert answer.tool_call_id == tool_span["output"]["tool_call_id"]
    assert canonical.equal(json.loads(answer.content), tool_span["output"]["content"])
    definition = next(m["content"] for m in generations[0]["input"] if m["role"] == "tool")
    assert [(t.name, t.parameters) for t in transcript.tools] == [
        (definition["function"]["name"], definition["function"]["parameters"])]
    assert transcript.messages[-1].content == generations[-1]["output"]["content"]


def test_an_export_without_messages_is_refused(tmp_path: Path) -> None:
    raw = json.loads(AGENTS.read_text())
    raw["observations"] = [o for o in raw["observations"] if o["type"] == "AGENT"]
    src = tmp_path / "agents-only.json"
    src.write_text(json.dumps(raw))
    assert convert(src).error_lines == [
        f"{src}:1: no GENERATION or TOOL observation with messages: expected Langfuse observations whose input / "
        "output hold chat messages or Responses API items"]
    raw["observations"] = {"not": "a list"}
    src.write_text(json.dumps(raw))
    assert convert(src, "langfuse").error_lines == [f"{src}:1: observations should be an array, got an object"]
