"""Importers of files that are one JSON array (tau-bench trajectories and tasks, tau2-bench tasks, Anthropic
conversations, logged records) or one object whose bulk is an array (tau2-bench results: their simulations;
inspect_ai ``.json`` logs: their samples; ADK eval sets: their eval cases) read
them a block at a time (``jsondoc.array_items``, ``member_items``), never as a whole document, and convert
exactly what the whole document gave: the same records at the same lines, the same errors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorer import importers
from scorer.errors import InvalidRecord
from scorer.importers import Converted, jsondoc
from tests.importers.test_anthropic_messages import CONVERSATION

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _converted(path: Path, fmt: str) -> list[Any]:
    out: list[Any] = []
    for item in importers.convert(path, fmt):
        if isinstance(item, InvalidRecord):
            out.append((item.message, item.source, item.line))
        else:
            assert isinstance(item, Converted)
            out.append((item.record, item.line))
    return out


def _files(tmp_path: Path) -> list[tuple[Path, str]]:
    trajectories = tmp_path / "historical_trajectories" / "gpt-4o-airline.json"
    trajectories.parent.mkdir()
    shutil.copy(REAL / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json", trajectories)
    shutil.copytree(REAL / "tau-bench" / "converted", tmp_path / "converted")
    tasks = json.loads((REAL / "tau2-bench" / "results" / "gpt-4.1_airline_default_gpt-4.1_1trials.json")
                       .read_text(encoding="utf-8"))["tasks"]
    tau2 = tmp_path / "airline" / "tasks.json"
    tau2.parent.mkdir()
    tau2.write_text(json.dumps(tasks, indent=2), encoding="utf-8")
    anthropic = tmp_path / "conversations.json"
    anthropic.write_text(json.dumps([CONVERSATION, {**CONVERSATION, "id": "second"}], indent=1), encoding="utf-8")
    bad = tmp_path / "bad" / "gpt-4o-airline.json"
    bad.parent.mkdir()
    text = trajectories.read_text(encoding="utf-8")
    at = text.index('"reward"', len(text) // 2)
    bad.write_text(text[:at] + '"reward": NaN, "was"' + text[at + len('"reward"'):], encoding="utf-8")
    shutil.copy(tmp_path / "converted" / "airline_tools.json", bad.parent / "airline_tools.json")
    mcp = tmp_path / "mcp.json"  # logged records as one array (``records.each_record``)
    logged = [json.loads((REAL / "traces" / "mcp" / "modelcontextprotocol" / name).read_text(encoding="utf-8"))
              for name in ("list-tools-result-response.json", "call-tool-request.json",
                           "call-tool-result-response.json")]
    asked = {"jsonrpc": "2.0", "id": logged[0]["id"], "method": "tools/list"}
    mcp.write_text(json.dumps([asked, *logged], indent=2), encoding="utf-8")
    otel = tmp_path / "spans.json"
    otel.write_text(json.dumps([json.loads(path.read_text(encoding="utf-8")) for path in sorted(
        (REAL / "traces" / "otel-genai" / "openinference-genai").glob("*.json"))], indent=2), encoding="utf-8")
    results = [(path, "tau2-bench") for path in sorted((REAL / "tau2-bench" / "results").glob("*.json"))]
    inspect_logs = [(path, "inspect-ai") for path in sorted((REAL / "traces" / "inspect-ai").glob("*.json"))]
    inspect_logs.append((REAL / "traces" / "adk-evalset" / "order_query.test.json", "adk"))  # eval_cases streamed
    return [(trajectories, "tau-bench"), (tmp_path / "converted" / "airline_tasks_test.json", "tau-bench"),
            (tau2, "tau2-bench"), (anthropic, "anthropic"), (bad, "tau-bench"), (mcp, "mcp"), (otel, "otel"),
            *results, *inspect_logs]


def test_array_files_are_read_a_block_at_a_time_into_what_the_whole_document_gave(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(tmp_path)
    assert len(files) == 13
    with monkeypatch.context() as patch:  # the whole document, as every one of these was read before
        patch.setattr(jsondoc.ArrayStream, "__iter__", _irregular)
        patch.setattr(jsondoc.MemberStream, "__iter__", _irregular)
        whole = [_converted(path, fmt) for path, fmt in files]
    read_whole: list[Path] = []
    real_read = jsondoc.JsonDocument.read.__func__  # type: ignore[attr-defined]

    def noted(cls: type[jsondoc.JsonDocument], path: Path) -> jsondoc.JsonDocument:
        read_whole.append(path)
        return real_read(cls, path)

    monkeypatch.setattr(jsondoc.JsonDocument, "read", classmethod(noted))
    streamed = [_converted(path, fmt) for path, fmt in files]
    assert streamed == whole
    for (path, _), got in zip(files, streamed, strict=True):
        assert got
        # The bad file, and a real inspect log whose tool result answers a call no message made (a sample's error).
        faulty = path.parent.name == "bad" or path.name == "log_tool_call_error.json"
        assert any(isinstance(entry[0], str) for entry in got) == faulty, (path, got)
    # Only the bad file was read whole: to say where and what is wrong, as before. (Tool files beside the
    # trajectories are small documents of their own.)
    assert [path for path in read_whole if path.name != "airline_tools.json"] == [files[4][0]], read_whole


def _whole_and_streamed(path: Path, text: str, fmt: str, monkeypatch: pytest.MonkeyPatch,
                        ) -> tuple[list[Any], list[Any]]:
    """``text`` written to ``path``, converted as the whole document (every stream irregular) and as streamed."""
    path.write_text(text, encoding="utf-8")
    with monkeypatch.context() as patch:
        patch.setattr(jsondoc.MemberStream, "__iter__", _irregular)
        whole = _converted(path, fmt)
    return whole, _converted(path, fmt)


def _irregular(self: jsondoc.ArrayStream) -> Iterator[Any]:
    raise jsondoc._Irregular  # what the stream leaves to the whole document: here, everything
    yield


def test_inspect_logs_of_every_shape_read_as_the_whole_document_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = json.loads((REAL / "traces" / "inspect-ai" / "2025-05-12T20-27-36-04-00_browser.json")
                     .read_text(encoding="utf-8"))
    sample = log["samples"][0]
    two = {**log, "samples": [sample, {**sample, "id": "second"}]}
    variants: dict[str, str] = {
        "indented": json.dumps(two, indent=2),
        "minified": json.dumps(two, separators=(",", ":")),
        "eval after the samples": json.dumps({k: two[k] for k in ("version", "samples", "eval")}),
        "no eval": json.dumps({k: v for k, v in two.items() if k != "eval"}),
        "samples not a list": json.dumps({**two, "samples": {"a": sample}}),
        "no samples": json.dumps({k: v for k, v in two.items() if k != "samples"}),
        "NaN in the second sample": json.dumps(two, indent=1).replace('"second"', "NaN", 1),
        "cut short": json.dumps(two, indent=1)[:-40],
    }
    for name, text in variants.items():
        whole, streamed = _whole_and_streamed(tmp_path / f"{name}.json", text, "inspect-ai", monkeypatch)
        if name in ("NaN in the second sample", "cut short"):
            # Streamed, the samples before the flaw come first, then the same error (the default import stops at
            # it and writes nothing; --skip-invalid keeps those before it, as for tau2-bench results).
            before = 1 if name.startswith("NaN") else 2  # the log cut short loses its end, after both samples
            assert len(whole) == 1 and isinstance(whole[0][0], str), name
            assert len(streamed) == before + 1 and streamed[-1] == whole[0], name
            assert [entry[0].id for entry in streamed[:-1]] == [
                f"inspect/browser/{sample['id']}/epoch-1", "inspect/browser/second/epoch-1"][:before], name
        else:
            assert streamed == whole, name


def test_adk_eval_sets_of_every_shape_read_as_the_whole_document_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evalset = json.loads((REAL / "traces" / "adk-evalset" / "order_query.test.json").read_text(encoding="utf-8"))
    case = evalset["eval_cases"][0]
    two = {**evalset, "eval_cases": [case, {**case, "eval_id": "second"}]}
    variants = {
        "indented": json.dumps(two, indent=2),
        "id after the cases": json.dumps({"eval_cases": two["eval_cases"], "eval_set_id": "late"}),
        "no id": json.dumps({"eval_cases": two["eval_cases"]}),
        "null id": json.dumps({**two, "eval_set_id": None}),
        "cases not a list": json.dumps({**two, "eval_cases": {"a": case}}),
        "NaN in the second case": json.dumps(two, indent=1).replace('"second"', "NaN", 1),
    }
    for name, text in variants.items():
        whole, streamed = _whole_and_streamed(tmp_path / f"{name}.test.json", text, "adk", monkeypatch)
        if name.startswith("NaN"):  # the first case's records come first, then the same error
            assert len(whole) == 1 and isinstance(whole[0][0], str), name
            assert streamed[-1] == whole[0] and streamed[:-1] and not any(
                isinstance(entry[0], str) for entry in streamed[:-1]), name
        else:
            assert streamed == whole and streamed, name
