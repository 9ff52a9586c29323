"""`toolgold run`: context translation, the real anthropic client against a scripted API, resume."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.llm.anthropic_gateway import AnthropicGateway, LLMUnavailable, MissingAPIKey
from labeler.runners.agents import AgentError, AnthropicAgent, load_python_agent
from labeler.runners.anthropic_messages import to_anthropic, tools_for_anthropic
from labeler.runners.run import read_finished, run_cases
from scorer.formats import dumps_record
from scorer.model import Answer, Call, GoldCase, Message, RunRecord, ToolCallRef, ToolSpec
from tests.fakes.anthropic_api import (
    OVERLOADED,
    RATE_LIMITED,
    FakeMessagesAPI,
    error,
    message,
    text,
    tool_use,
)

PLAY = ToolSpec(name="spotify.play", description="Play an artist",
                parameters={"type": "object", "properties": {"artist": {"type": "string"}}, "required": ["artist"]})
LOOKUP = ToolSpec(name="search_orders", parameters={"type": "object", "properties": {"q": {"type": "string"}}})


def case(cid: str, **kw: object) -> GoldCase:
    base: dict[str, object] = dict(
        id=cid, tools=(PLAY, LOOKUP),
        messages=(Message(role="system", content="Be brief."), Message(role="user", content=f"play {cid}")),
        expected=Answer(behavior="call", calls=(Call(name="spotify.play", arguments={"artist": cid}),)))
    base.update(kw)
    return GoldCase.model_validate(base)


def gateway(api: FakeMessagesAPI) -> AnthropicGateway:
    return AnthropicGateway(api_key="test-key", http_client=api.client(), max_retries=2)


def test_context_translation_separates_system_and_pairs_tool_results() -> None:
    msgs = (
        Message(role="system", content="Policy"),
        Message(role="user", content="where is my order"),
        Message(role="assistant", content="Looking.", tool_calls=(
            ToolCallRef(id="call.1", function={"name": "search_orders", "arguments": '{"q": "x"}'}),
            ToolCallRef(id="call_2", function={"name": "spotify.play", "arguments": "not json"}))),
        Message(role="tool", tool_call_id="call.1", content="[]"),
        Message(role="tool", tool_call_id="call_2", content="ok"),
        Message(role="user", content="thanks"),
    )
    system, turns = to_anthropic(msgs)
    assert system == "Policy"
    assert turns == [
        {"role": "user", "content": [{"type": "text", "text": "where is my order"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "call_1", "name": "search_orders", "input": {"q": "x"}},
            {"type": "tool_use", "id": "call_2", "name": "spotify_play", "input": {"_raw": "not json"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "[]"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "ok"},
            {"type": "text", "text": "thanks"}]},
    ]
    assert tools_for_anthropic((PLAY,))[0] == {
        "name": "spotify_play", "description": "Play an artist", "input_schema": PLAY.parameters}


def test_anthropic_agent_records_the_models_calls_with_real_tool_names(tmp_path: Path) -> None:
    api = FakeMessagesAPI([message([text("Playing."), tool_use("spotify_play", {"artist": "a"})], model="claude-x")])
    out = tmp_path / "runs.jsonl"
    summary = run_cases([case("a")], AnthropicAgent(gateway(api), "claude-x"), out, run_id="r1")
    assert (summary.written, summary.failures) == (1, [])
    [request] = api.requests
    assert (request["model"], request["system"]) == ("claude-x", "Be brief.")
    assert [t["name"] for t in request["tools"]] == ["spotify_play", "search_orders"]
    record = RunRecord.model_validate_json(out.read_text())
    assert record.model_dump(exclude={"metadata"}) == RunRecord(
        case_id="a", calls=({"name": "spotify.play", "arguments": {"artist": "a"}},), text="Playing.",
        run_id="r1", model="claude-x", trial=0).model_dump(exclude={"metadata"})
    assert record.metadata["usage"] == {"input_tokens": 120, "output_tokens": 30}


def test_rate_limit_then_success_is_retried_by_the_sdk(tmp_path: Path) -> None:
    api = FakeMessagesAPI([error(*RATE_LIMITED), error(*OVERLOADED), message([tool_use("search_orders", {"q": "1"})])])
    summary = run_cases([case("a")], AnthropicAgent(gateway(api), "m"), tmp_path / "r.jsonl")
    assert (summary.written, len(api.requests)) == (1, 3)


def test_persistent_overload_leaves_the_case_for_resume_then_resume_asks_only_for_it(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    api = FakeMessagesAPI([message([tool_use("spotify_play", {"artist": "a"})]),
                           *[error(*OVERLOADED)] * 3])
    first = run_cases([case("a"), case("b")], AnthropicAgent(gateway(api), "m"), out, concurrency=1)
    assert first.written == 1
    assert first.failures == [("b", 0, "HTTP 529 from the API: Overloaded")]
    api.extend([message([])])
    second = run_cases([case("a"), case("b")], AnthropicAgent(gateway(api), "m"), out, concurrency=1)
    assert (second.written, second.already_done, second.failures) == (1, 1, [])
    assert [RunRecord.model_validate_json(x).case_id for x in out.read_text().splitlines()] == ["a", "b"]
    assert [r["messages"][0]["content"][0]["text"] for r in api.requests] == ["play a", "play b", "play b",
                                                                              "play b", "play b"]


def test_a_timeout_becomes_llm_unavailable() -> None:
    api = FakeMessagesAPI(default=lambda body: httpx2.ReadTimeout("slow"))
    with pytest.raises(LLMUnavailable, match="timed out after retries"):
        gateway(api).create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert len(api.requests) == 3  # the first try and two SDK retries


def test_resume_cuts_a_torn_last_line_and_keeps_the_run_id(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text(dumps_record(RunRecord(case_id="a", calls=(), run_id="r-old")) + "\n"
                   + '{"format": "toolgold.run/1", "case_id": "b", "ca')
    assert read_finished(out) == ({("a", 0)}, "r-old")
    seen: list[str] = []

    def agent(messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> list[dict[str, object]]:
        seen.append(messages[-1].content or "")
        return [{"name": "search_orders", "arguments": '{"q": "z"}'}]

    summary = run_cases([case("a"), case("b")], agent, out, trials=2)
    assert sorted(seen) == ["play a", "play b", "play b"]
    records = [RunRecord.model_validate_json(x) for x in out.read_text().splitlines()]
    assert sorted((r.case_id, r.trial, r.run_id) for r in records) == [
        ("a", 0, "r-old"), ("a", 1, "r-old"), ("b", 0, "r-old"), ("b", 1, "r-old")]
    assert summary.already_done == 1


def test_trajectory_cases_are_skipped_and_counted(tmp_path: Path) -> None:
    traj = case("t", kind="trajectory", order="strict")
    summary = run_cases([traj], lambda m, t: None, tmp_path / "r.jsonl")
    assert (summary.written, summary.skipped_trajectories) == (0, 1)


def test_python_agents_load_by_module_and_function(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("my_agent")
    module.answer = lambda messages, tools: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "my_agent", module)
    assert load_python_agent("python:my_agent:answer") is module.answer  # type: ignore[attr-defined]
    with pytest.raises(AgentError, match="has no callable 'nope'"):
        load_python_agent("python:my_agent:nope")
    with pytest.raises(AgentError, match="write it as python:module:function"):
        load_python_agent("python:my_agent")


def test_an_agent_returning_garbage_is_a_failure_not_a_record(tmp_path: Path) -> None:
    summary = run_cases([case("a")], lambda m, t: 42, tmp_path / "r.jsonl")
    assert summary.written == 0
    assert summary.failures == [("a", 0, "agent returned int; expected None, a list of calls, "
                                        "or {'calls': [...], 'text': ...}")]


def test_cli_without_a_key_says_how_to_set_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(dumps_record(case("a")) + "\n")
    result = CliRunner().invoke(cli, ["run", str(gold), "-o", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no Anthropic API key: set ANTHROPIC_API_KEY")
    with pytest.raises(MissingAPIKey):
        AnthropicGateway()


def test_cli_runs_a_python_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("echo_agent")
    module.agent = lambda messages, tools: {"calls": [{"name": tools[0].name,  # type: ignore[attr-defined]
                                                        "arguments": {"artist": "x"}}], "text": "ok"}
    monkeypatch.setitem(sys.modules, "echo_agent", module)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(dumps_record(case("a")) + "\n" + dumps_record(case("b")) + "\n")
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(cli, ["run", str(gold), "--agent", "python:echo_agent:agent", "-o", str(out),
                                      "--trials", "2", "--run-id", "ci-1"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "run ci-1: 4 records written"
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted((x["case_id"], x["trial"]) for x in lines) == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]
    assert {x["calls"][0]["name"] for x in lines} == {"spotify.play"}
