"""inspect_ai eval logs (.json and the .eval zip) -> one transcript per sample and epoch."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from scorer import canonical
from scorer.importers import detect
from tests.importers.helpers import REAL, convert

INSPECT = REAL / "traces" / "inspect-ai"
BROWSER = INSPECT / "2025-05-12T20-27-36-04-00_browser.json"
ERRORS = INSPECT / "log_tool_call_error.json"
DEDUP = INSPECT / "log_message_deduplication.eval"


def check_fidelity(raw_messages: list[dict[str, Any]], transcript: Any) -> None:
    """Every call and result of the raw sample, in order, byte-exact after canonical JSON."""
    raw_calls = [c for m in raw_messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    calls = [c for m in transcript.messages for c in m.tool_calls]
    assert [(c.id, c.function.name) for c in calls] == [(c["id"], c["function"]) for c in raw_calls]
    for call, raw in zip(calls, raw_calls, strict=True):
        assert canonical.dumps(json.loads(call.function.arguments)) == canonical.dumps(raw["arguments"])
    raw_results = [m for m in raw_messages if m["role"] == "tool"]
    results = [m for m in transcript.messages if m.role == "tool"]
    assert [(m.tool_call_id, m.content) for m in results] == [(r["tool_call_id"], r["content"]) for r in raw_results]


def test_a_recorded_browser_eval_keeps_every_call_result_and_tool() -> None:
    raw = json.loads(BROWSER.read_text())
    sample = raw["samples"][0]
    result = convert(BROWSER)
    assert detect(BROWSER).NAME == "inspect-ai"
    assert result.errors == []
    transcript, = result.transcripts
    assert transcript.id == f"inspect/{raw['eval']['task']}/{sample['id']}/epoch-{sample['epoch']}"
    assert (len(result.transcripts), result.tool_calls, result.decision_points) == (1, 4, 5)
    check_fidelity(sample["messages"], transcript)
    model_events = [e for e in sample["events"] if e["event"] == "model"]
    assert [t.name for t in transcript.tools] == [t["name"] for t in model_events[-1]["tools"]]
    assert transcript.metadata["model"] == raw["eval"]["model"]
    assert transcript.metadata["scores"] == {k: v["value"] for k, v in sample["scores"].items()}


def test_an_eval_zip_is_read_with_the_standard_library() -> None:
    with zipfile.ZipFile(DEDUP) as archive:
        sample = json.loads(archive.read("samples/0_epoch_1.json"))
    result = convert(DEDUP)
    assert detect(DEDUP).NAME == "inspect-ai"
    assert result.errors == []
    transcript, = result.transcripts
    assert (result.tool_calls, len([m for m in transcript.messages if m.role == "tool"])) == (5, 5)
    check_fidelity(sample["messages"], transcript)
    assert transcript.metadata["target"] == sample["target"]


def test_a_sample_rebuilt_from_its_message_pool_reads_the_same(tmp_path: Path) -> None:
    with zipfile.ZipFile(DEDUP) as archive:
        entries = {n: archive.read(n) for n in archive.namelist()}
    sample = json.loads(entries["samples/0_epoch_1.json"])
    sample["messages"] = []
    pooled = tmp_path / "pooled.eval"
    with zipfile.ZipFile(pooled, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, json.dumps(sample) if name == "samples/0_epoch_1.json" else data)
    transcript, = convert(pooled).transcripts
    check_fidelity(sample["message_pool"], transcript)


def test_tool_errors_are_kept_with_their_type() -> None:
    raw = json.loads(ERRORS.read_text())
    results = [m for m in raw["samples"][0]["messages"] if m["role"] == "tool"]
    assert len(results) == 11 and all("error" in m for m in results)
    # the fixture keeps only the tool messages (their calls were cut): refused, at the sample's line
    assert convert(ERRORS).error_lines == [
        f"{ERRORS}:87: messages: a tool result answers 'bash_1', which no earlier assistant message called"]


def test_tool_errors_become_error_results_once_their_calls_are_there(tmp_path: Path) -> None:
    raw = json.loads(ERRORS.read_text())
    sample = raw["samples"][0]
    results = [m for m in sample["messages"] if m["role"] == "tool"]
    sample["messages"] = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": [
        {"id": m["tool_call_id"], "function": m["function"], "arguments": {"cmd": "ls"}} for m in results]},
        *results]
    src = tmp_path / "errors.json"
    src.write_text(json.dumps(raw, indent=2))
    transcript, = convert(src).transcripts
    tool_messages = [m for m in transcript.messages if m.role == "tool"]
    for message, raw_result in zip(tool_messages, results, strict=True):
        error = raw_result["error"]
        expected = f"Error: {error['type']}: {error['message']}"
        if raw_result["content"] != error["message"]:
            expected += f"\n{raw_result['content']}"
        assert message.content == expected


def test_an_archive_without_its_header_and_a_sample_that_is_not_json_are_named(tmp_path: Path) -> None:
    headless = tmp_path / "headless.eval"
    with zipfile.ZipFile(headless, "w") as archive:
        archive.writestr("samples/1_epoch_1.json", "{}")
    assert convert(headless, "inspect-ai").error_lines == [
        f"{headless}: no header.json: expected an inspect_ai .eval archive"]
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(DEDUP) as source, zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("header.json", source.read("header.json"))
        archive.writestr("samples/0_epoch_1.json", "{not json")
    assert convert(broken).error_lines == [
        f"{broken}/samples/0_epoch_1.json:1: not valid JSON: Expecting property name enclosed in double quotes "
        "(column 2)"]
