"""Every importer through `toolgold import` on a temp database: counts, idempotence, all-or-nothing on a
bad record (exit 2, FILE:LINE, database unchanged) and --skip-invalid with its rejects file."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from scorer import canonical
from tests.importers.helpers import REAL, convert, write_lines


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def element_start(path: Path, prefix: str, index: int, *, after: str | None = None) -> int:
    """The line where the index-th JSON element indented by ``prefix`` starts."""
    lines = path.read_text().splitlines()
    first = lines.index(after) if after else 0
    return [n for n, text in enumerate(lines, start=1) if text == prefix + "{" and n > first][index]


def chat_lines(tmp: Path, name: str, records: list[dict[str, object]]) -> Path:
    return write_lines(tmp / name, [json.dumps(r) for r in records])


HELLO = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def openai_good(tmp: Path) -> list[Path]:
    return [chat_lines(tmp, "chat.jsonl", [{"messages": HELLO}, {"messages": HELLO[:1]}])]


def openai_bad(tmp: Path) -> tuple[Path, int]:
    return chat_lines(tmp, "bad.jsonl", [{"messages": HELLO, "id": "x"}, {"messages": [{"role": "bot"}]}]), 2


ANTHROPIC = {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"},
                                                 {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]}


def anthropic_good(tmp: Path) -> list[Path]:
    return [chat_lines(tmp, "claude.jsonl", [ANTHROPIC, {**ANTHROPIC, "id": "second"}])]


def anthropic_bad(tmp: Path) -> tuple[Path, int]:
    broken = {**ANTHROPIC, "messages": [{"role": "user", "content": [{"type": "video"}]}]}
    return chat_lines(tmp, "bad.jsonl", [{**ANTHROPIC, "id": "ok"}, broken]), 2


SEED = {"turn_id": "s1", "conversation": [{"role": "user", "content": "cancel order 7"}],
        "expected_tool": "cancel_order", "expected_args": {"order_id": "7"}, "required_arg_keys": ["order_id"]}


def seed_good(tmp: Path) -> list[Path]:
    return [chat_lines(tmp, "seed.jsonl", [SEED, {**SEED, "turn_id": "s2", "expected_tool": None,
                                                  "expected_args": {}, "required_arg_keys": []}])]


def seed_bad(tmp: Path) -> tuple[Path, int]:
    return chat_lines(tmp, "bad.jsonl", [{**SEED, "turn_id": "ok"}, {**SEED, "turn_id": "b", "expected": "x"}]), 2


def copied(tmp: Path, dataset: str) -> Path:
    target = tmp / dataset
    if not target.exists():
        shutil.copytree(REAL / dataset, target)
    return target


def tau_good(tmp: Path) -> list[Path]:
    return [copied(tmp, "tau-bench") / "historical_trajectories" / "gpt-4o-airline.json"]


def tau_bad(tmp: Path) -> tuple[Path, int]:
    src = tau_good(tmp)[0]
    runs = json.loads(src.read_text())
    runs[2]["traj"][3]["role"] = "narrator"
    src.write_text(json.dumps(runs, indent=1))
    return src, element_start(src, " ", 2)


def tau2_good(tmp: Path) -> list[Path]:
    return [copied(tmp, "tau2-bench") / "results" / "gpt-4.1_airline_default_gpt-4.1_1trials.json"]


def tau2_bad(tmp: Path) -> tuple[Path, int]:
    src = tau2_good(tmp)[0]
    raw = json.loads(src.read_text())
    del raw["simulations"][1]["messages"][0]["role"]
    src.write_text(json.dumps(raw, indent=2))
    return src, element_start(src, "    ", 1, after='  "simulations": [')


def bfcl_good(tmp: Path) -> list[Path]:
    folder = copied(tmp, "bfcl")
    return [folder / "BFCL_v4_parallel.json", folder / "BFCL_v4_irrelevance.json"]


def bfcl_bad(tmp: Path) -> tuple[Path, int]:
    src = bfcl_good(tmp)[0]
    lines = src.read_text().splitlines()
    lines[1] = lines[1].replace('"function": [', '"function": [7, ', 1)
    write_lines(src, lines)
    return src, 2


def tooltalk_good(tmp: Path) -> list[Path]:
    return sorted((copied(tmp, "tooltalk") / "data").glob("*/*.json"))


def tooltalk_bad(tmp: Path) -> tuple[Path, int]:
    src = tooltalk_good(tmp)[0]
    raw = json.loads(src.read_text())
    raw["conversation"][1]["role"] = "robot"
    src.write_text(json.dumps(raw, indent=4))
    return src, element_start(src, "        ", 1)


def expected_stats(files: list[Path]) -> dict[str, int]:
    """What the store should hold after importing ``files``, from the converted records themselves."""
    results = [convert(path) for path in files]
    transcripts = {t.id: t for r in results for t in r.transcripts}
    return {"transcripts": len(transcripts),
            "turns": sum(len(t.decision_points()) for t in transcripts.values()),
            "gold_cases": len({c.id for r in results for c in r.gold}),
            "tool_schemas": len({canonical.dumps(tool.model_dump()) for t in transcripts.values() for tool in t.tools})}


TRACES = REAL / "traces"


def _copies(tmp: Path, *relative: str) -> list[Path]:
    out = []
    for rel in relative:
        target = tmp / "traces" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TRACES / rel, target)
        out.append(target)
    return out


def otel_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "otel-genai/openinference-genai/otel_genai_client_span_tool_calls.json",
                   "openinference/openinference_client_span_tool_calls.json")


def otel_bad(tmp: Path) -> tuple[Path, int]:
    span = {"traceId": "ab" * 16, "spanId": "01", "name": "chat", "attributes": [
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(
            [{"role": "user", "parts": [{"type": "hologram"}]}])}}]}
    good = json.loads(json.dumps(span).replace("ab" * 16, "cd" * 16).replace("hologram", "text"))
    batch = lambda s: {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [s]}]}]}  # noqa: E731
    return chat_lines(tmp, "spans.jsonl", [batch(good), batch(span)]), 2


def responses_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "openai-responses/openai-agents-python/v1_13_pending_tool_approval.json")


def responses_bad(tmp: Path) -> tuple[Path, int]:
    return chat_lines(tmp, "responses.jsonl", [{"input": [{"role": "user", "content": "hi"}]},
                                               {"input": [{"type": "telepathy"}]}]), 2


def gemini_bad(tmp: Path) -> tuple[Path, int]:
    return chat_lines(tmp, "bad-gemini.jsonl", [{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                                            {"contents": [{"role": "user", "parts": [{"hologram": 1}]}]}]), 2


def gemini_good(tmp: Path) -> list[Path]:
    return [chat_lines(tmp, "gemini.jsonl", [{"contents": [
        {"role": "user", "parts": [{"text": "Capital of France?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_capital", "args": {"country": "France"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_capital", "response": {"output": "Paris"}}}]}]}])]


def inspect_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "inspect-ai/log_message_deduplication.eval")


def inspect_bad(tmp: Path) -> tuple[Path, int]:
    return _copies(tmp, "inspect-ai/log_tool_call_error.json")[0], 87


def langfuse_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "langfuse/openai-agents-2025-09-30.json", "langfuse/langgraph-2025-08-22.json")


def langfuse_bad(tmp: Path) -> tuple[Path, int]:
    export = json.loads((TRACES / "langfuse/openai-agents-2025-09-30.json").read_text())
    return chat_lines(tmp, "exports.jsonl", [export, {**export, "observations": "none"}]), 2


def vercel_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "vercel-ai-sdk/react-agent-tool-calling.json", "vercel-ai-sdk/langgraph-hitl-request-1.json")


def vercel_bad(tmp: Path) -> tuple[Path, int]:
    return write_lines(tmp / "messages.jsonl", [
        json.dumps([{"role": "user", "content": [{"type": "text", "text": "hi"}]}]),
        json.dumps([{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t",
                                                       "input": {}}, {"type": "telepathy"}]}])]), 2


def adk_good(tmp: Path) -> list[Path]:
    return _copies(tmp, "adk-evalset/order_query.test.json", "adk-evalset/sample.session.json")


def adk_bad(tmp: Path) -> tuple[Path, int]:
    raw = json.loads((TRACES / "adk-evalset/order_query.test.json").read_text())
    raw["eval_cases"][0]["conversation"][0]["intermediate_data"]["tool_uses"][0]["name"] = None
    src = tmp / "bad.test.json"
    src.write_text(json.dumps(raw))
    return src, 1


def mcp_good(tmp: Path) -> list[Path]:
    request, response = _copies(tmp, "mcp/modelcontextprotocol/call-tool-request.json",
                                "mcp/modelcontextprotocol/call-tool-result-response.json")
    return [write_lines(tmp / "session.jsonl", [json.dumps(json.loads(request.read_text())),
                                                json.dumps(json.loads(response.read_text()))])]


def mcp_bad(tmp: Path) -> tuple[Path, int]:
    response = json.loads((TRACES / "mcp/modelcontextprotocol/call-tool-result-response.json").read_text())
    return write_lines(tmp / "orphan.jsonl", [json.dumps(response)]), 1


@dataclass(frozen=True)
class Format:
    name: str
    good: Callable[[Path], list[Path]]
    bad: Callable[[Path], tuple[Path, int]]
    stats: dict[str, int]
    error: str


FORMATS = [
    Format("openai", openai_good, openai_bad, {"transcripts": 2, "turns": 2, "gold_cases": 0, "tool_schemas": 0},
           "messages[0].role 'bot' is not one of system, developer, user, assistant, tool"),
    Format("anthropic", anthropic_good, anthropic_bad,
           {"transcripts": 2, "turns": 2, "gold_cases": 0, "tool_schemas": 0},
           "messages[0].content[0]: a 'video' block is not expected in a user message"),
    Format("seed", seed_good, seed_bad, {"transcripts": 2, "turns": 2, "gold_cases": 2, "tool_schemas": 0},
           "unknown field 'expected'"),
    Format("tau-bench", tau_good, tau_bad, {"transcripts": 6, "turns": 60, "gold_cases": 4, "tool_schemas": 14},
           "traj[3].role 'narrator' is not one of"),
    Format("tau2-bench", tau2_good, tau2_bad, {"transcripts": 3, "turns": 27, "gold_cases": 3, "tool_schemas": 0},
           "messages[0].role should be assistant, user, tool or system, got None"),
    Format("bfcl", bfcl_good, bfcl_bad, {"transcripts": 6, "turns": 6, "gold_cases": 6, "tool_schemas": 6},
           "function[0] should be an object, got a number"),
    Format("tooltalk", tooltalk_good, tooltalk_bad, {"transcripts": 3, "turns": 6, "gold_cases": 6, "tool_schemas": 28},
           "conversation[1].role should be 'user' or 'assistant', got 'robot'"),
    Format("otel", otel_good, otel_bad, {"transcripts": 2, "turns": 4, "gold_cases": 0, "tool_schemas": 0},
           "gen_ai.input.messages[0].parts[0]: a 'hologram' part"),
    Format("openai-responses", responses_good, responses_bad,
           {"transcripts": 1, "turns": 1, "gold_cases": 0, "tool_schemas": 0},
           "input[0]: an item of type 'telepathy'"),
    Format("gemini", gemini_good, gemini_bad, {"transcripts": 1, "turns": 1, "gold_cases": 0, "tool_schemas": 0},
           "contents[0].parts[0] has hologram"),
    Format("inspect-ai", inspect_good, inspect_bad, {"transcripts": 1, "turns": 6, "gold_cases": 0, "tool_schemas": 2},
           "messages: a tool result answers 'bash_1'"),
    Format("langfuse", langfuse_good, langfuse_bad, {"transcripts": 2, "turns": 4, "gold_cases": 0, "tool_schemas": 2},
           "observations should be an array"),
    Format("vercel-ai", vercel_good, vercel_bad, {"transcripts": 2, "turns": 3, "gold_cases": 0, "tool_schemas": 0},
           "messages[0].content[1]: a 'telepathy' part"),
    Format("adk", adk_good, adk_bad, {"transcripts": 2, "turns": 17, "gold_cases": 4, "tool_schemas": 0},
           "conversation[0].intermediate_data.tool_uses[0].name should be a non-empty string"),
    Format("mcp", mcp_good, mcp_bad, {"transcripts": 1, "turns": 1, "gold_cases": 0, "tool_schemas": 0},
           "a response to request 'call-tool-example'"),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_import_counts_and_a_second_import_adds_nothing(fmt: Format, tmp_path: Path, isolated_db: Path) -> None:
    files = [str(p) for p in fmt.good(tmp_path)]
    code, out, err = run("import", *files)
    # ToolTalk's CreateEvent enum sits on `event_type` now (its API docs put it on `name`): no gold fails its schema
    assert (code, err) == (0, "")
    assert Store(isolated_db).stats() == fmt.stats == expected_stats(fmt.good(tmp_path))
    before = Store(isolated_db).dump()
    code, out, _ = run("import", *files, "--from", fmt.name)
    assert code == 0
    assert out.startswith("0 transcripts added (0 decision points), 0 gold cases added, ")
    assert Store(isolated_db).dump() == before


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_a_bad_record_aborts_with_its_file_and_line_and_writes_nothing(fmt: Format, tmp_path: Path,
                                                                       isolated_db: Path) -> None:
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    assert run("import", *map(str, seed_good(earlier)))[0] == 0
    before = Store(isolated_db).dump()
    bad, line = fmt.bad(tmp_path)
    code, _, err = run("import", str(bad))
    assert code == 2
    assert err.startswith(f"error: {bad}:{line}: {fmt.error}")
    assert Store(isolated_db).dump() == before


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_skip_invalid_imports_the_rest_and_lists_the_rejects(fmt: Format, tmp_path: Path, isolated_db: Path) -> None:
    bad, line = fmt.bad(tmp_path)
    others = [str(p) for p in fmt.good(tmp_path) if p != bad]
    rejects = tmp_path / "rejects.txt"
    code, out, _ = run("import", str(bad), *others, "--skip-invalid", "--rejects", str(rejects))
    assert code == 0
    assert rejects.read_text().splitlines()[0].startswith(f"{bad}:{line}: {fmt.error}")
    assert len(rejects.read_text().splitlines()) == 1
    assert "1 rejected" in out
    assert Store(isolated_db).stats() == expected_stats([bad, *map(Path, others)])


@pytest.mark.parametrize("tag", ["acme.log/1", "sharegpt"])
def test_a_messages_line_tagged_with_a_foreign_format_is_refused_not_read_as_openai(
        tmp_path: Path, isolated_db: Path, tag: str) -> None:
    path = chat_lines(tmp_path, "foreign.jsonl", [{"id": "a", "messages": HELLO},
                                                  {"format": tag, "id": "b", "messages": HELLO}])
    code, out, err = run("import", str(path))
    assert (code, out, err) == (2, "", f"error: {path}:2: unknown format {tag!r}\n")
    assert Store(isolated_db).stats()["transcripts"] == 0  # all or nothing


def test_an_ollama_json_mode_line_is_still_openai_chat(tmp_path: Path, isolated_db: Path) -> None:
    # Ollama's chat requests carry "format": "json" (its JSON mode), not a record format.
    path = chat_lines(tmp_path, "ollama.jsonl", [{"model": "llama3", "format": "json", "messages": HELLO}])
    code, out, err = run("import", str(path))
    assert code == 0 and out.startswith("1 transcripts added"), err
