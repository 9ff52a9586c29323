"""Format detection: every real file is claimed by its own importer, and only by it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import UnrecognizedInput
from scorer.formats import dumps_record
from scorer.importers import IMPORTERS, SNIFF_BYTES, detect
from scorer.model import Message, Transcript
from tests.importers.helpers import REAL, write_lines

REAL_FILES = {
    "tau-bench/historical_trajectories/gpt-4o-airline.json": "tau-bench",
    "tau-bench/converted/airline_tasks_test.json": "tau-bench",
    "tau2-bench/results/gpt-4.1_airline_default_gpt-4.1_1trials.json": "tau2-bench",
    "tau2-bench/results/gpt-4.1_telecom_no-user_gpt-4.1_1trials.json": "tau2-bench",
    "bfcl/BFCL_v4_parallel.json": "bfcl",
    "bfcl/BFCL_v4_live_irrelevance.json": "bfcl",
    "tooltalk/data/easy/AddAlarm-easy.json": "tooltalk",
    "tooltalk/data/tooltalk/golden_conversation_2.json": "tooltalk",
    "traces/otel-genai/openinference-genai/otel_genai_client_span_tool_calls.json": "otel",
    "traces/otel-genai/openinference-genai/otel_genai_tool_execution_span.json": "otel",
    "traces/openinference/openinference_client_span_tool_calls.json": "otel",
    "traces/inspect-ai/2025-05-12T20-27-36-04-00_browser.json": "inspect-ai",
    "traces/inspect-ai/log_message_deduplication.eval": "inspect-ai",
    "traces/openai-responses/openai-agents-python/v1_13_pending_tool_approval.json": "openai-responses",
    "bfcl/BFCL_v4_multi_turn_base.json": "bfcl",
    "traces/adk-evalset/order_query.test.json": "adk",
    "traces/adk-evalset/sample.session.json": "adk",
    "traces/langfuse/openai-agents-2025-09-30.json": "langfuse",
    "traces/langfuse/langgraph-2025-08-22.json": "langfuse",
    "traces/vercel-ai-sdk/react-agent-tool-calling.json": "vercel-ai",
    "traces/vercel-ai-sdk/langgraph-hitl-request-1.json": "vercel-ai",
}


def test_the_registry_names_and_describes_each_importer_as_its_module_does() -> None:
    import importlib
    import pkgutil

    import scorer.importers

    modules = {info.name for info in pkgutil.iter_modules(scorer.importers.__path__)
               if hasattr(importlib.import_module(f"scorer.importers.{info.name}"), "sniff")}
    assert {i.module_name.rpartition(".")[2] for i in IMPORTERS} == modules  # type: ignore[attr-defined]
    for importer in IMPORTERS:
        module = importlib.import_module(importer.module_name)  # type: ignore[attr-defined]
        assert (importer.NAME, importer.DESCRIPTION) == (module.NAME, module.DESCRIPTION)


def test_the_registry_lists_native_first_and_every_format_once() -> None:
    names = [i.NAME for i in IMPORTERS]
    assert names == ["toolgold", "inspect-ai", "tau-bench", "tau2-bench", "tooltalk", "bfcl", "seed", "langfuse", "mcp",
                     "otel", "adk", "vercel-ai", "gemini", "openai-responses", "anthropic", "openai"]


@pytest.mark.parametrize("relative", sorted(REAL_FILES))
def test_each_real_file_is_claimed_by_exactly_its_importer(relative: str) -> None:
    path = REAL / relative
    head = path.read_bytes()[:SNIFF_BYTES]
    assert [i.NAME for i in IMPORTERS if i.sniff(path, head)] == [REAL_FILES[relative]]
    assert detect(path).NAME == REAL_FILES[relative]


@pytest.mark.parametrize(("first_line", "expected"), [
    (dumps_record(Transcript(id="t", messages=(Message(role="user", content="hi"),))), "toolgold"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}]}), "openai"),
    (json.dumps({"messages": [{"role": "user", "content": "x"}], "system": "s"}), "anthropic"),
    (json.dumps({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f",
                                                                   "input": {}}]}]}), "anthropic"),
    (json.dumps({"turn_id": "1", "conversation": [], "expected_tool": None}), "seed"),
])
def test_line_formats_are_told_apart_by_their_first_line(tmp_path: Path, first_line: str, expected: str) -> None:
    assert detect(write_lines(tmp_path / "x.jsonl", [first_line])).NAME == expected


def test_a_system_key_nested_in_metadata_does_not_make_an_openai_line_anthropic(tmp_path: Path) -> None:
    line = json.dumps({"messages": [{"role": "system", "content": "s"}], "metadata": {"system": "crm"}})
    assert detect(write_lines(tmp_path / "x.jsonl", [line])).NAME == "openai"


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "{path}: cannot tell which format this is: the file is empty"),
    (b"\n  \n", "{path}: cannot tell which format this is: the file is empty"),
    (b"hello\n", "{path}:1: cannot tell which format this is: line 1 is not JSON (Expecting value)"),
    (b"\n\n{\"foo\": 1}\n", '{path}:3: cannot tell which format this is: line 3 is an object with keys "foo", '
                             "not a record of any known format"),
    (b'{"b": 1, "a": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7}\n',
     '{path}:1: cannot tell which format this is: line 1 is an object with keys "a", "b", "c", "d", "e", "f" and 1 '
     "more, not a record of any known format"),
    (b"[1, 2]\n", "{path}:1: cannot tell which format this is: line 1 is an array, not a record of any known format"),
    (b'{\n  "zz": []\n}\n', '{path}:1: cannot tell which format this is: the file is one JSON document, an object '
                           'with keys "zz", not a file of any known format'),
    (b"\xc3\x28 x\n", "{path}:1: cannot tell which format this is: line 1 is not JSON (not UTF-8)"),
])
def test_a_file_no_format_claims_is_reported_at_the_line_formats_are_told_by(
        tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_bytes(content)
    with pytest.raises(UnrecognizedInput) as caught:
        detect(path)
    message = str(caught.value)
    assert message.startswith(expected.format(path=path) + "; pass --from (one of: toolgold, ")
    assert "\n" not in message


def test_a_first_line_longer_than_the_sniffed_head_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"zz": "' + b"x" * SNIFF_BYTES + b'"}\n')
    with pytest.raises(UnrecognizedInput, match=rf"^{path}:1: cannot tell which format this is: line 1 is over "
                                                rf"{SNIFF_BYTES // 1024} KB and starts like no format's records; "):
        detect(path)


def test_every_format_is_documented_with_how_to_import_it() -> None:
    from tests.conftest import REPO

    docs = (REPO / "docs" / "importers.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Importing from your stack", 1)[1].split("\n## ", 1)[0]
    for importer in IMPORTERS:
        assert f"| `{importer.NAME}` |" in docs, importer.NAME
        assert f"`{importer.NAME}`" in readme, importer.NAME
    assert len([row for row in table.splitlines() if row.startswith("| ") and "how to import" not in row]) >= 12
