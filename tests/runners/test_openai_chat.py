"""The OpenAI-compatible runner against a scripted /chat/completions endpoint (httpx2.MockTransport)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.llm.anthropic_gateway import LLMUnavailable, Usage
from labeler.runners.agents import AgentError, AgentTurn
from labeler.runners.openai_chat import OpenAIChatAgent
from labeler.runners.run import run_cases
from scorer.api import score
from scorer.model import Answer, Call, GoldCase, Message, RunCall, RunRecord, ToolCallRef, ToolSpec

PLAY = ToolSpec(name="spotify.play", description="Play an artist",
                parameters={"type": "object", "properties": {"artist": {"type": "string"}}, "required": ["artist"]})
CONTEXT = (
    Message(role="system", content="Be brief."),
    Message(role="user", content="play something by the band I asked about"),
    Message(role="assistant", tool_calls=(ToolCallRef(id="c1", function={"name": "spotify.play",
                                                                         "arguments": '{"artist": "?"}'}),)),
    Message(role="tool", tool_call_id="c1", content=None),
    Message(role="user", content="play Queen"),
)


def completion(*calls: tuple[str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    tool_calls = [{"id": f"call_{n}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(args)}} for n, (name, args) in enumerate(calls)]
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "served-model",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": {"role": "assistant", "content": text, "tool_calls": tool_calls or None}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 17, "total_tokens": 137}}


class Endpoint:
    """Serves scripted replies in order and keeps every request body."""

    def __init__(self, *replies: httpx2.Response | Callable[[dict[str, Any]], httpx2.Response]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return reply(body) if callable(reply) else reply

    def agent(self, **kw: Any) -> OpenAIChatAgent:
        return OpenAIChatAgent("gpt-test", base_url="http://llm.test/v1", api_key="sk-test", backoff_s=0,
                               client=httpx2.Client(transport=httpx2.MockTransport(self)), **kw)


def test_the_context_goes_in_chat_shape_and_calls_come_back_under_their_real_names() -> None:
    api = Endpoint(httpx2.Response(200, json=completion(("spotify_play", {"artist": "Queen"}), text="On it.")))
    turn = api.agent(temperature=0.0)(CONTEXT, (PLAY,))
    assert turn == AgentTurn(calls=(RunCall(name="spotify.play", arguments={"artist": "Queen"}),), text="On it.",
                             usage=Usage(120, 17), model="served-model")
    [body] = api.requests
    assert body == {
        "model": "gpt-test", "max_tokens": 1024, "temperature": 0.0,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "play something by the band I asked about"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "spotify_play", "arguments": '{"artist": "?"}'}}]},
            {"role": "tool", "content": "", "tool_call_id": "c1"},
            {"role": "user", "content": "play Queen"}],
        "tools": [{"type": "function", "function": {
            "name": "spotify_play", "description": "Play an artist",
            "parameters": {"type": "object", "properties": {"artist": {"type": "string"}}, "required": ["artist"]}}}]}
    assert api.headers[0]["authorization"] == "Bearer sk-test"


def test_rate_limits_and_server_errors_are_retried_and_client_errors_are_not() -> None:
    api = Endpoint(httpx2.Response(429, json={"error": {"message": "slow down"}}),
                   httpx2.Response(503, text="busy"), httpx2.Response(200, json=completion(text="No call needed.")))
    assert api.agent()(CONTEXT, (PLAY,)) == AgentTurn(calls=(), text="No call needed.", usage=Usage(120, 17),
                                                      model="served-model")
    assert len(api.requests) == 3
    bad = Endpoint(httpx2.Response(400, json={"error": {"message": "unknown model"}}))
    with pytest.raises(LLMUnavailable, match=re.escape("HTTP 400 from http://llm.test/v1/chat/completions")) as info:
        bad.agent()(CONTEXT, (PLAY,))
    assert (info.value.retryable, len(bad.requests)) == (False, 1)
    down = Endpoint(httpx2.Response(500, text="down"))
    with pytest.raises(LLMUnavailable, match=r"HTTP 500 .* \(after 2 retries\)"):
        down.agent(retries=2)(CONTEXT, (PLAY,))
    assert len(down.requests) == 3
    odd = Endpoint(httpx2.Response(200, json={"choices": []}))
    with pytest.raises(AgentError, match="not a chat completion"):
        odd.agent()(CONTEXT, (PLAY,))


def test_a_run_through_the_endpoint_scores_and_failures_are_left_for_the_resume(tmp_path: Path) -> None:
    cases = [GoldCase(id=f"c{n}", tools=(PLAY,), messages=(Message(role="user", content=f"play artist {n}"),),
                      expected=Answer(behavior="call", calls=(Call(name="spotify.play", arguments={"artist": f"A{n}"}),)))
             for n in range(6)]

    def answer(body: dict[str, Any]) -> httpx2.Response:
        n = int(body["messages"][-1]["content"].rsplit(" ", 1)[1])
        if n == 5:
            return httpx2.Response(500, text="flaky")
        return httpx2.Response(200, json=completion(("spotify_play", {"artist": f"A{n}" if n else "B0"})))

    out = tmp_path / "runs.jsonl"
    summary = run_cases(cases, Endpoint(answer).agent(retries=1), out, concurrency=2, model="gpt-test")
    assert (summary.written, [f[0] for f in summary.failures]) == (5, ["c5"])
    runs = [RunRecord.model_validate_json(line) for line in out.read_text().splitlines()]
    report = score(cases, runs)
    assert (report.totals.passed, report.totals.failed, report.unscored.cases_without_run) == (4, 1, 1)
    assert summary.usage == Usage(5 * 120, 5 * 17)


def test_the_cli_needs_a_model_for_the_openai_agent(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("", encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(gold), "--agent", "openai", "-o", str(tmp_path / "r.jsonl")])
    assert (result.exit_code, result.stderr.strip()) == (
        2, "error: --agent openai needs --model (the name the endpoint serves)")
