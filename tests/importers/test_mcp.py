"""MCP: tools/list results wherever a tools file goes, and tools/call JSON-RPC logs -> transcripts.

The samples are the MCP specification's own examples (2026-07-28 schema files and the 2025-11-25 tools
page) and real tool snapshots of github-mcp-server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from labeler.cli import cli
from labeler.cli.data import load_tools
from labeler.store import Store
from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.importers import detect
from tests.importers.helpers import REAL, convert, write_lines

MCP = REAL / "traces" / "mcp"
SPEC = MCP / "modelcontextprotocol"
GITHUB = MCP / "github-mcp-server"
TOOLS_PAGE = SPEC / "tools-2025-11-25.mdx"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def page_messages() -> list[dict[str, Any]]:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", TOOLS_PAGE.read_text(), re.DOTALL)]
    return [b for b in blocks if isinstance(b, dict) and b.get("jsonrpc") == "2.0"]


# --------------------------------------------------------------------------------------------------
# tools/list as a tools file
# --------------------------------------------------------------------------------------------------


def test_a_tools_list_response_a_bare_result_and_one_tool_snapshot_are_tools_files(tmp_path: Path) -> None:
    response = json.loads((SPEC / "list-tools-result-response.json").read_text())
    listed = response["result"]["tools"][0]
    tool, = load_tools(SPEC / "list-tools-result-response.json")
    assert (tool.name, tool.description, tool.parameters) == (
        listed["name"], listed["description"], listed["inputSchema"])
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(response["result"]))
    assert load_tools(bare) == (tool,)
    snap = json.loads((GITHUB / "delete_file.snap").read_text())
    deleting, = load_tools(GITHUB / "delete_file.snap")
    assert (deleting.parameters, deleting.annotations) == (snap["inputSchema"], snap["annotations"])
    assert deleting.annotations["destructiveHint"] is True
    shaped = json.loads((SPEC / "with-output-schema-for-structured-content.json").read_text())
    structured, = load_tools(SPEC / "with-output-schema-for-structured-content.json")
    assert structured.output_schema == shaped["outputSchema"]
    several = tmp_path / "github.json"
    several.write_text(json.dumps({"tools": [json.loads((GITHUB / n).read_text())
                                             for n in ("get_file_contents.snap", "delete_file.snap")]}))
    assert [(t.name, t.annotations.get("readOnlyHint")) for t in load_tools(several)] == [
        ("get_file_contents", True), ("delete_file", False)]


def test_a_file_that_is_no_tools_file_is_refused_naming_what_was_expected() -> None:
    for name, got in (("call-tool-request.json", "id, jsonrpc, method, params"),
                      ("invalid-tool-input-error.json", "content, isError, resultType")):
        try:
            load_tools(SPEC / name)
        except InvalidRecord as err:
            assert str(err) == (f"{SPEC / name}: expected a JSON array of tool schemas, an MCP tools/list result "
                                f"({{\"tools\": [...]}} or its JSON-RPC response) or one MCP tool; got an object "
                                f"with {got}")
        else:
            raise AssertionError(f"{name} was taken for a tools file")


def test_import_score_and_drift_take_an_mcp_tools_list(store: Store, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"  # the spec's tools/list response with a real server's annotated tool
    response = json.loads((SPEC / "list-tools-result-response.json").read_text())
    response["result"]["tools"].append(json.loads((GITHUB / "delete_file.snap").read_text()))
    tools.write_text(json.dumps(response))
    conversation = write_lines(tmp_path / "chat.jsonl", [json.dumps({"id": "w1", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]}]})])
    code, _, err = run("import", str(conversation), "--tools", str(tools))
    assert code == 0, err
    stored = store.get_transcript("w1").transcript
    assert [(t.name, t.annotations.get("destructiveHint")) for t in stored.tools] == [
        ("get_weather", None), ("delete_file", True)]  # annotations survive the store
    code, out, err = run("drift", "--tools", str(tools))
    assert code == 0, (out, err)
    gold = tmp_path / "gold.jsonl"
    runs = tmp_path / "runs.jsonl"
    gold.write_text(json.dumps({"format": "toolgold.gold/1", "id": "w1#1", "turn": 1, "tools": [
        {"name": "get_weather", "parameters": response["result"]["tools"][0]["inputSchema"]}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "expected": {"behavior": "call", "calls": [{"name": "get_weather", "arguments": {"location": "Paris"}}]}})
        + "\n")
    runs.write_text(json.dumps({"format": "toolgold.run/1", "case_id": "w1#1", "calls": [
        {"name": "get_weather", "arguments": {"location": "Paris"}}]}) + "\n")
    code, out, err = run("score", str(gold), str(runs), "--tools", str(tools))
    assert code == 0 and "stale" not in err, (out, err)


# --------------------------------------------------------------------------------------------------
# tools/call logs
# --------------------------------------------------------------------------------------------------


def test_a_tools_call_request_and_its_response_are_a_call_and_its_result(tmp_path: Path) -> None:
    request = json.loads((SPEC / "call-tool-request.json").read_text())
    response = json.loads((SPEC / "call-tool-result-response.json").read_text())
    src = write_lines(tmp_path / "session.jsonl", [json.dumps(request), json.dumps(response)])
    result = convert(src)
    assert detect(src).NAME == "mcp"
    assert result.errors == []
    transcript, = result.transcripts
    call_message, answer = transcript.messages
    call, = call_message.tool_calls
    assert (call.id, call.function.name) == (request["id"], request["params"]["name"])
    assert canonical.equal(json.loads(call.function.arguments), request["params"]["arguments"])
    assert (answer.tool_call_id, answer.content) == (request["id"], response["result"]["content"][0]["text"])


def test_a_session_log_keeps_tools_errors_and_structured_content(tmp_path: Path) -> None:
    messages = page_messages()  # the spec page's JSON-RPC examples, in page order
    by_id = {m["id"]: m for m in messages if "id" in m and "method" not in m}
    requests = [  # the page shows these responses without their requests
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "invalid_tool_name", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "book_flight",
                                                                       "arguments": {"date": "2025-08-01"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_weather_data",
                                                                       "arguments": {"location": "Paris"}}}]
    log = [*messages[:5], requests[0], by_id[3], requests[1], by_id[4], requests[2], by_id[5]]
    src = write_lines(tmp_path / "session.jsonl", [json.dumps(m) for m in log])
    result = convert(src)
    assert result.errors == []
    transcript, = result.transcripts
    calls = [c for m in transcript.messages for c in m.tool_calls]
    assert [c.function.name for c in calls] == ["get_weather", "invalid_tool_name", "book_flight", "get_weather_data"]
    results = {m.tool_call_id: m.content for m in transcript.messages if m.role == "tool"}
    assert results["2"] == by_id[2]["result"]["content"][0]["text"]
    assert results["3"] == f"Error: {by_id[3]['error']['code']}: {by_id[3]['error']['message']}"
    assert results["4"] == f"Error: {by_id[4]['result']['content'][0]['text']}"
    assert canonical.equal(json.loads(results["5"]), by_id[5]["result"]["structuredContent"])
    assert [t.name for t in transcript.tools] == [t["name"] for t in by_id[1]["result"]["tools"]]
    assert transcript.metadata == {"source": "mcp", "skipped": {"notifications/tools/list_changed": 1,
                                                                "tools/list": 1}}


def test_a_result_without_its_request_and_a_log_without_calls_are_refused(tmp_path: Path) -> None:
    response = json.loads((SPEC / "call-tool-result-response.json").read_text())
    orphan = write_lines(tmp_path / "orphan.jsonl", [json.dumps(response)])
    assert convert(orphan).error_lines == [
        f"{orphan}:1: a response to request 'call-tool-example', which is not in this log before it"]
    listing = SPEC / "list-tools-result-response.json"
    only_tools = write_lines(tmp_path / "list.jsonl", [json.dumps(
        {"jsonrpc": "2.0", "id": "list-tools-example", "method": "tools/list"}), json.dumps(
        json.loads(listing.read_text()))])
    assert convert(only_tools).error_lines == [
        f"{only_tools}:1: no tools/call requests in this log: expected JSON-RPC messages {{\"jsonrpc\": \"2.0\", "
        "\"id\", \"method\": \"tools/call\", \"params\": {\"name\", \"arguments\"}} and their responses "
        "(a tools/list result is a tools file: pass it with --tools)"]
