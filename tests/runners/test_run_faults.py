"""`toolgold run` when things go wrong: an agent function that raises or returns NaN fails its case and the
run goes on; an endpoint that refuses connections fails at once, without retries; a reply with a negative
usage or a NaN is refused; an empty gold file is bad input."""

from __future__ import annotations

import json
import socket
import sys
import types
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.llm.anthropic_gateway import LLMUnavailable
from labeler.runners.openai_chat import OpenAIChatAgent
from labeler.runners.run import run_cases
from scorer.formats import dumps_record
from tests.runners.test_openai_chat import completion
from tests.runners.test_run import case


def toolgold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def gold_file(tmp_path: Path, *ids: str) -> Path:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(dumps_record(case(i)) + "\n" for i in ids))
    return gold


def python_agent(monkeypatch: pytest.MonkeyPatch, fn: Any) -> str:
    module = types.ModuleType("faulty_agent")
    module.agent = fn  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "faulty_agent", module)
    return "python:faulty_agent:agent"


def answer(messages: Any, tools: Any) -> dict[str, Any]:
    who = messages[-1].content.removeprefix("play ")
    if who == "b":
        raise ZeroDivisionError("division by zero\nin the agent")
    if who == "c":
        return {"calls": [{"name": "spotify.play", "arguments": {"artist": "c", "volume": float("nan")}}]}
    return {"calls": [{"name": "spotify.play", "arguments": {"artist": who}}]}


def test_an_agent_that_raises_or_returns_nan_fails_that_case_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gold, out = gold_file(tmp_path, "a", "b", "c", "d"), tmp_path / "runs.jsonl"
    code, stdout, err = toolgold("run", str(gold), "--agent", python_agent(monkeypatch, answer), "-o", str(out),
                                 "--run-id", "r1")
    assert code == 1
    assert stdout == "run r1: 2 records written, 2 failed — run the same command again to resume\n"
    assert sorted(err.splitlines()) == [
        "  b (trial 0): the agent raised ZeroDivisionError: division by zero in the agent",
        "  c (trial 0): the agent's arguments for 'spotify.play': NaN/Infinity is not JSON (found nan)"]
    assert sorted(json.loads(line)["case_id"] for line in out.read_text().splitlines()) == ["a", "d"]

    fixed = python_agent(monkeypatch, lambda m, t: [{"name": "spotify.play", "arguments": {"artist": "ok"}}])
    code, stdout, _ = toolgold("run", str(gold), "--agent", fixed, "-o", str(out))
    assert (code, stdout) == (0, "run r1: 2 records written, 2 already done (resumed)\n")


@pytest.mark.parametrize("content", ["", "\n\n"])
def test_empty_gold_is_bad_input_and_writes_nothing(content: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    gold, out = tmp_path / "gold.jsonl", tmp_path / "runs.jsonl"
    gold.write_text(content)
    code, _, err = toolgold("run", str(gold), "--agent", python_agent(monkeypatch, answer), "-o", str(out))
    assert (code, err) == (2, f"error: {gold}: no gold cases (it is empty)\n")
    assert not out.exists()


def test_a_refused_connection_is_not_retried() -> None:
    attempts: list[str] = []

    def refuse(request: httpx2.Request) -> httpx2.Response:
        attempts.append(str(request.url))
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    agent = OpenAIChatAgent("m", base_url="http://127.0.0.1:9/v1", api_key="k", backoff_s=30, retries=4,
                            client=httpx2.Client(transport=httpx2.MockTransport(refuse)))
    with pytest.raises(LLMUnavailable) as caught:
        agent(case("a").messages, case("a").tools)
    assert attempts == ["http://127.0.0.1:9/v1/chat/completions"]  # once: no backoff sleeps before failing
    assert caught.value.reason == "cannot connect to http://127.0.0.1:9/v1/chat/completions: connection refused"
    assert not caught.value.retryable


def test_a_real_closed_port_fails_each_case_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    gold, out = gold_file(tmp_path, "a", "b"), tmp_path / "runs.jsonl"
    code, stdout, err = toolgold("run", str(gold), "--agent", "openai", "--model", "m",
                                 "--base-url", f"http://127.0.0.1:{port}/v1", "-o", str(out))
    assert code == 1
    assert "0 records written, 2 failed" in stdout
    assert err.count(f"cannot connect to http://127.0.0.1:{port}/v1/chat/completions: connection refused") == 2


def endpoint(reply: httpx2.Response) -> OpenAIChatAgent:
    return OpenAIChatAgent("m", base_url="http://llm.test/v1", api_key="k", backoff_s=0,
                           client=httpx2.Client(transport=httpx2.MockTransport(lambda request: reply)))


@pytest.mark.parametrize("usage", [{"prompt_tokens": -120, "completion_tokens": 17},
                                   {"prompt_tokens": 120, "completion_tokens": -1},
                                   {"prompt_tokens": "12", "completion_tokens": 1},
                                   {"prompt_tokens": 1.5, "completion_tokens": 1}])
def test_invalid_usage_is_refused_not_a_negative_cost(usage: dict[str, Any], tmp_path: Path) -> None:
    body = {**completion(("spotify_play", {"artist": "a"})), "usage": usage}
    summary = run_cases([case("a")], endpoint(httpx2.Response(200, json=body)), tmp_path / "r.jsonl")
    assert summary.written == 0
    [(case_id, _, reason)] = summary.failures
    assert case_id == "a" and reason.startswith("the endpoint reported invalid token usage")
    assert (summary.usage.input_tokens, summary.usage.output_tokens) == (0, 0)


@pytest.mark.parametrize("body,words", [
    (b'{"choices": [], "usage": {"prompt_tokens": NaN}}', "NaN/Infinity is not JSON"),
    (b"<html>proxy</html>", "not valid JSON"),
    (b'{"choices": [{"message": {"content": "caf\\udc00"}}]}', "lone UTF-16 surrogate"),
])
def test_a_reply_that_is_not_strict_json_fails_the_case(body: bytes, words: str, tmp_path: Path) -> None:
    reply = httpx2.Response(200, content=body, headers={"content-type": "application/json"})
    summary = run_cases([case("a")], endpoint(reply), tmp_path / "r.jsonl")
    [(_, _, reason)] = summary.failures
    assert reason.startswith("the endpoint's reply is not usable JSON") and words in reason


def test_a_full_disk_stops_the_run_with_one_line_and_resume_goes_on(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(mount)], check=True)
    try:
        gold, out = gold_file(tmp_path, *[f"case{i:03d}" for i in range(60)]), mount / "runs.jsonl"
        agent = python_agent(monkeypatch, lambda m, t: {"text": "x" * 400})
        code, _, err = toolgold("run", str(gold), "--agent", agent, "-o", str(out), "--concurrency", "1")
        assert code == 2
        assert err == f"error: cannot write {out}: No space left on device\n"
        out.write_bytes(b"")  # free the space; what was written is kept or cut at a torn line on resume
        code, _, err = toolgold("run", str(gold), "--agent", agent, "-o", str(tmp_path / "again.jsonl"))
        assert code == 0, err
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)
