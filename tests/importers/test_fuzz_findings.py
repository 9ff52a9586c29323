"""One regression test per finding of the fuzz pass (tests/labeler/test_fuzz_inputs.py): each input here
crashed an importer (a traceback, exit 1) or let a NaN / Infinity through into what is stored. The rule
(README, "Formats"): one ``FILE:LINE: what`` line, exit 2, nothing written; never a silent ``null``."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from scorer.importers import otel
from scorer.strict_json import NOT_FINITE
from tests.conftest import TEST_DATA
from tests.importers.helpers import convert, write_lines

VALID = TEST_DATA.parent / "golden" / "valid"


def run_import(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stderr


def assert_refused(path: Path, line: int | None, *words: str, fmt: str | None = None) -> None:
    code, stderr = run_import(*(["--from", fmt] if fmt else []), str(path))
    where = f"{path}:{line}: " if line is not None else f"{path}"
    assert code == 2 and stderr.startswith(f"error: {where}") and len(stderr.strip().splitlines()) == 1, stderr
    for word in words:
        assert word in stderr, stderr


# --------------------------------------------------------------------------------------------------
# Crashes: a pydantic ValidationError or a TypeError escaped the importer (exit 1, a traceback)
# --------------------------------------------------------------------------------------------------

ANTHROPIC_REQUEST = {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "weather?"}]}


def test_anthropic_tool_whose_schema_is_not_a_schema_is_one_line(tmp_path: Path) -> None:
    """Found: a logged Anthropic request whose tool ``input_schema`` has ``"properties": {"city": null}``
    raised pydantic's ValidationError from ``tool_spec`` (exit 1, a traceback)."""
    tool = {"name": "weather", "input_schema": {"type": "object", "properties": {"city": None}}}
    path = write_lines(tmp_path / "claude.jsonl", [
        json.dumps({"request": {**ANTHROPIC_REQUEST, "tools": [tool]},
                    "response": {"role": "assistant", "content": [{"type": "text", "text": "sunny"}]}})])
    assert_refused(path, 1, "tools[0].parameters", "not a valid JSON Schema", fmt="anthropic")


@pytest.mark.parametrize("draft", [1, [], {}, None, True])
def test_a_tool_schema_whose_dollar_schema_is_not_a_string_is_one_line(tmp_path: Path, draft: Any) -> None:
    """Found: ``"$schema": 1`` (or a list, an object...) in a tool's parameters crashed jsonschema's lookup of
    the draft it names (AttributeError / TypeError from urlsplit: exit 1, a traceback)."""
    tool = {"name": "f", "parameters": {"$schema": draft, "type": "object"}}
    path = write_lines(tmp_path / "gold.jsonl", [json.dumps({
        "format": "toolgold.gold/1", "id": "c1", "tools": [tool], "messages": [{"role": "user", "content": "x"}],
        "expected": {"behavior": "no_call"}})])
    assert_refused(path, 1, "tools.0.parameters: parameters is not a valid JSON Schema", "is not of type 'string'",
                   "$schema")


def test_responses_tool_whose_schema_is_not_a_schema_is_one_line(tmp_path: Path) -> None:
    """Found: the same through the OpenAI Responses importer's ``tools``."""
    tool = {"type": "function", "name": "weather", "parameters": {"type": "object", "properties": ["city"]}}
    path = write_lines(tmp_path / "responses.jsonl", [
        json.dumps({"request": {"model": "gpt-x", "input": "weather?", "tools": [tool]}})])
    assert_refused(path, 1, "tools[0].parameters", fmt="openai-responses")


def test_responses_item_type_of_another_json_type_is_one_line(tmp_path: Path) -> None:
    """Found: an input item whose ``type`` is an array raised ``TypeError: unhashable type: 'list'``."""
    path = write_lines(tmp_path / "responses.jsonl", [
        json.dumps({"request": {"model": "gpt-x", "input": [{"type": ["message"], "role": "user", "content": "x"}]}})])
    assert_refused(path, 1, "input[0].type", fmt="openai-responses")


def test_otlp_int_value_that_is_not_an_integer_is_one_line(tmp_path: Path) -> None:
    """Found by reading ``any_value``: ``{"intValue": "12abc"}`` raised ValueError out of ``int()``."""
    span = otlp_span([{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12abc"}}])
    path = write_lines(tmp_path / "traces.jsonl", [json.dumps(span)])
    assert_refused(path, 1, "intValue", fmt="otel")


# --------------------------------------------------------------------------------------------------
# NaN / Infinity reaching what is stored, past the strict reader
# --------------------------------------------------------------------------------------------------

MESSAGES = [{"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
            {"role": "assistant", "parts": [{"type": "text", "content": "sunny"}]}]


def otlp_span(extra: list[dict[str, object]]) -> dict[str, object]:
    attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                  {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(MESSAGES[:1])}},
                  {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(MESSAGES[1:])}}, *extra]
    return {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "chat", "startTimeUnixNano": "1",
         "attributes": attributes}]}]}]}


def test_otlp_double_value_nan_as_protobuf_json_writes_it_is_refused(tmp_path: Path) -> None:
    """Found: OTLP JSON from protobuf's ``MessageToDict`` (what ``toolgold serve`` decodes protobuf into, and
    what a collector may write) carries a NaN double as the string ``"NaN"``: it became the string "NaN"."""
    for written in ("NaN", "Infinity", "-Infinity"):
        span = otlp_span([{"key": "gen_ai.request.temperature", "value": {"doubleValue": written}}])
        path = write_lines(tmp_path / f"traces-{written}.jsonl", [json.dumps(span)])
        assert_refused(path, 1, "doubleValue", NOT_FINITE, fmt="otel")


def test_otlp_double_value_as_a_decimal_string_is_a_number() -> None:
    """Protobuf's JSON mapping may write a double as a string: a finite one is read as the number."""
    assert otel.any_value({"doubleValue": "0.25"}) == 0.25
    assert otel.any_value({"doubleValue": 0.5}) == 0.5


def test_protobuf_nan_double_is_refused_by_the_receiver() -> None:
    """The same NaN sent to ``toolgold serve`` as OTLP protobuf: a 400 (BadPayload), nothing kept."""
    import pytest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    from labeler.receiver import BadPayload, TraceBuffer, decode

    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "chat"
    for key, text in (("gen_ai.operation.name", "chat"), ("gen_ai.input.messages", json.dumps(MESSAGES[:1])),
                      ("gen_ai.output.messages", json.dumps(MESSAGES[1:]))):
        attribute = span.attributes.add()
        attribute.key, attribute.value.string_value = key, text
    attribute = span.attributes.add()
    attribute.key, attribute.value.double_value = "gen_ai.request.temperature", float("nan")
    payload = decode(request.SerializeToString(), "application/x-protobuf", "")
    buffer = TraceBuffer(settle=0)
    with pytest.raises(BadPayload, match="NaN"):
        buffer.add(payload)
    assert buffer.traces == {}


def test_otel_json_text_attribute_with_nan_is_refused(tmp_path: Path) -> None:
    """Found: a JSON-text attribute (``gen_ai.output.messages``) holding ``Infinity`` was decoded by
    ``json.loads`` (which takes it) and imported with the value changed."""
    broken = json.dumps(MESSAGES[1:]).replace('"sunny"', "Infinity")
    span = otlp_span([])
    span["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"][2]["value"]["stringValue"] = broken  # type: ignore[index]
    path = write_lines(tmp_path / "traces.jsonl", [json.dumps(span)])
    assert_refused(path, 1, "JSON text: [0].parts[0].content: Infinity is not a JSON number", fmt="otel")


def test_otel_arguments_in_json_text_with_overflow_is_refused(tmp_path: Path) -> None:
    """``{"location": -1e400}`` in a tool call inside ``gen_ai.input.messages`` was already refused (by
    ``json_text``, when the arguments were written): the message stays the one ``json_text`` gives."""
    messages = [{"role": "assistant", "parts": [{"type": "tool_call", "id": "1", "name": "weather",
                                                 "arguments": {"location": "__X__"}}]}]
    text = json.dumps(messages).replace('"__X__"', "-1e400")
    span = {"name": "chat", "attributes": {"gen_ai.operation.name": "chat", "gen_ai.input.messages": text}}
    path = write_lines(tmp_path / "spans.jsonl", [json.dumps(span)])
    assert_refused(path, 1, "location: -Infinity is not a JSON number", fmt="otel")


def test_langfuse_json_text_with_nan_is_refused(tmp_path: Path) -> None:
    """Langfuse keeps observation input and output as JSON text too (``loads_if_json``): the same rule."""
    observation = {"id": "o1", "traceId": "t1", "type": "GENERATION", "startTime": "2025-01-01T00:00:00Z",
                   "input": '[{"role": "user", "content": NaN}]', "output": '{"role": "assistant", "content": "x"}'}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"trace": {"id": "t1", "name": "t"}, "observations": [observation]}, indent=1))
    code, stderr = run_import("--from", "langfuse", str(path))
    assert code == 2 and stderr.startswith(f"error: {path}:") and "NaN is not a JSON number" in stderr, stderr


def eval_archive(path: Path, sample: str) -> Path:
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("samples/1_epoch_1.json", sample)
    return path


SAMPLE = {"id": 1, "epoch": 1, "messages": [{"role": "user", "content": "hi"},
                                            {"role": "assistant", "content": "hello"}]}


def test_inspect_eval_sample_score_nan_is_refused(tmp_path: Path) -> None:
    """inspect_ai's .eval members were read with ``json.loads``: a score of NaN went into metadata (a
    non-argument field, never checked)."""
    sample = json.dumps({**SAMPLE, "scores": {"match": {"value": "__X__"}}}).replace('"__X__"', "NaN")
    path = eval_archive(tmp_path / "log.eval", sample)
    result = convert(path, "inspect-ai")
    assert not result.transcripts
    assert [e.source for e in result.errors] == [f"{path}/samples/1_epoch_1.json"]
    assert NOT_FINITE in result.errors[0].message
    assert_refused(path, None, NOT_FINITE, fmt="inspect-ai")


def test_inspect_eval_sample_id_overflow_is_refused(tmp_path: Path) -> None:
    """An id of ``1e400`` became ``inf`` inside the transcript id (``inspect/t/inf/epoch-1``)."""
    path = eval_archive(tmp_path / "log.eval", json.dumps(SAMPLE).replace('"id": 1', '"id": 1e400'))
    result = convert(path, "inspect-ai")
    assert not result.transcripts and NOT_FINITE in result.errors[0].message


def test_vercel_ai_stream_chunk_with_nan_is_refused(tmp_path: Path) -> None:
    """Vercel AI's UI message stream (``data: {...}`` lines) was read with ``json.loads``."""
    path = tmp_path / "stream.txt"
    path.write_text('data: {"type": "start"}\n'
                    'data: {"type": "tool-input-available", "toolCallId": "c1", "toolName": "w", "input": {"n": NaN}}\n'
                    "data: [DONE]\n")
    result = convert(path, "vercel-ai")
    assert not result.transcripts
    assert [(e.line, NOT_FINITE in e.message) for e in result.errors] == [(2, True)]


def test_bfcl_multi_turn_function_doc_with_nan_is_refused(tmp_path: Path) -> None:
    """BFCL's multi_turn_func_doc/ files were read with ``json.loads``: a NaN default in a doc got in."""
    import shutil

    from tests.importers.helpers import REAL

    folder = tmp_path / "bfcl"
    shutil.copytree(REAL / "bfcl", folder)
    doc = folder / "multi_turn_func_doc" / "gorilla_file_system.json"
    lines = doc.read_text().splitlines()
    record = json.loads(lines[0])
    record["parameters"]["properties"] = {**record["parameters"].get("properties", {}), "n": {"default": "__X__"}}
    lines[0] = json.dumps(record).replace('"__X__"', "NaN")
    doc.write_text("\n".join(lines) + "\n")
    result = convert(folder / "BFCL_v4_multi_turn_base.json", "bfcl")
    bad = [e for e in result.errors if NOT_FINITE in e.message]
    assert bad and all(e.source == str(doc) and e.line == 1 for e in bad), [str(e) for e in result.errors]


def test_synthesize_from_an_empty_gold_file_is_bad_input(tmp_path: Path) -> None:
    """Found: ``toolgold synthesize --gold EMPTY -o OUT`` exited 0 and wrote an empty OUT ("0 candidates"),
    where ``lint`` and ``score`` say of the same file that it holds no gold cases (exit 2)."""
    for name, text in (("empty.jsonl", ""), ("blank.jsonl", "\n \n"),
                       ("transcripts.jsonl", (VALID / "transcript-v1.jsonl").read_text())):
        gold, out = tmp_path / name, tmp_path / f"out-{name}"
        gold.write_text(text)
        result = CliRunner().invoke(cli, ["synthesize", "--gold", str(gold), "-o", str(out)])
        assert result.exit_code == 2, result.stderr
        assert result.stderr == f"error: {gold}: no gold cases in this file\n"
        assert not out.exists()



def test_anthropic_block_type_of_another_json_type_is_one_line(tmp_path: Path) -> None:
    """Found (a wider fuzz round): a response content block whose ``type`` is an object raised
    ``TypeError: unhashable type: 'dict'`` (looked up in the set of skipped block types)."""
    for block_type in ({"fz": 1}, ["text"]):
        response = {"type": "message", "role": "assistant", "content": [{"type": block_type, "text": "x"}]}
        path = write_lines(tmp_path / "claude.jsonl", [json.dumps({"request": ANTHROPIC_REQUEST, "response": response})])
        assert_refused(path, 1, "content[0].type", fmt="anthropic")
        conversation = {**ANTHROPIC_REQUEST, "messages": [{"role": "user", "content": [{"type": block_type}]}]}
        path = write_lines(tmp_path / "conversation.jsonl", [json.dumps(conversation)])
        assert_refused(path, 1, "content[0].type", fmt="anthropic")


def test_vercel_ai_first_item_type_of_another_json_type_is_not_a_crash(tmp_path: Path) -> None:
    """A Vercel AI file whose first item's ``type`` is an object was looked up in a frozenset (TypeError)."""
    for text in (json.dumps([{"type": {"a": 1}, "id": "x"}]), json.dumps({"type": ["start"], "toolCallId": "c"})):
        path = tmp_path / "messages.json"
        path.write_text(text + "\n")
        code, stderr = run_import("--from", "vercel-ai", str(path))
        assert code == 2 and stderr.startswith(f"error: {path}:1: ") and len(stderr.splitlines()) == 1, stderr


def gold_line(**changes: object) -> str:
    record = json.loads((VALID / "gold-v1.jsonl").read_text().splitlines()[0])
    return json.dumps({**record, **changes})


def test_a_gold_turn_beyond_64_bits_is_one_line(tmp_path: Path) -> None:
    """Found (a wider fuzz round): ``"turn": 10**29`` validated (an int >= 0) and crashed the store's insert
    (``OverflowError: Python int too large to convert to SQLite INTEGER``, exit 1)."""
    path = write_lines(tmp_path / "gold.jsonl", [gold_line(turn=10**29)])
    assert_refused(path, 1, "turn")
    assert run_import(str(write_lines(tmp_path / "ok.jsonl", [gold_line(turn=2**63 - 1)])))[0] == 0


def test_tools_nested_deeper_than_orjson_writes_are_refused_not_a_crash(tmp_path: Path) -> None:
    """Found (a wider fuzz round): a gold line whose tool schema nests 250 levels raised ``TypeError:
    Recursion limit reached`` from orjson in the import's fast path, before the strict reader refused it."""
    deep = "[" * 250 + "1" + "]" * 250
    line = gold_line(tools=[{"name": "t", "description": "", "parameters": {"type": "object", "x": "__X__"}}])
    path = write_lines(tmp_path / "gold.jsonl", [line.replace('"__X__"', deep)])
    assert_refused(path, 1, "nested deeper than 200 levels")


def test_otlp_containers_of_another_json_type_are_one_line(tmp_path: Path) -> None:
    """Found (fuzz round 6): ``"resource": [...]`` raised ``AttributeError: 'list' object has no attribute
    'get'``; so did an ``arrayValue`` or ``kvlistValue`` that is not an object."""
    spans = []
    span = otlp_span([])
    span["resourceSpans"][0]["resource"] = [{"attributes": []}]  # type: ignore[index]
    spans.append((span, "resource"))
    for kind in ("arrayValue", "kvlistValue"):
        spans.append((otlp_span([{"key": "x", "value": {kind: ["a"]}}]), kind))
    for n, (span, word) in enumerate(spans):
        path = write_lines(tmp_path / f"traces-{n}.jsonl", [json.dumps(span)])
        assert_refused(path, 1, word, fmt="otel")


def test_a_tool_call_id_of_another_json_type_is_one_line_and_a_number_is_its_text(tmp_path: Path) -> None:
    """Found (fuzz round 7): an OTel ``tool_call`` part whose ``id`` is an object raised ``TypeError:
    unhashable type: 'dict'`` (the ids are gathered in a set). Call and result ids of every parts-based
    importer are checked where the part is made: a string, a number (kept as its text) or nothing."""
    def span_with(call_id: object) -> Path:
        messages = [{"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
                    {"role": "assistant", "parts": [{"type": "tool_call", "id": call_id, "name": "w",
                                                     "arguments": {"city": "Paris"}}]}]
        span = {"name": "chat", "attributes": {"gen_ai.operation.name": "chat",
                                               "gen_ai.input.messages": json.dumps(messages)}}
        return write_lines(tmp_path / f"span-{type(call_id).__name__}.jsonl", [json.dumps(span)])

    for bad in ({"fz": 1}, ["c1"], True):
        assert_refused(span_with(bad), 1, "id should be a string", fmt="otel")
    result = convert(span_with(7), "otel")
    assert not result.errors
    assert [c.id for m in result.transcripts[0].messages for c in m.tool_calls] == ["7"]


def test_an_otlp_span_id_of_another_json_type_is_one_line(tmp_path: Path) -> None:
    """Found (fuzz round 9): ``"spanId": {...}`` (or ``parentSpanId``) raised ``TypeError: unhashable type:
    'dict'`` when the spans were ordered by their ids."""
    for key in ("spanId", "parentSpanId"):
        span = otlp_span([])
        span["resourceSpans"][0]["scopeSpans"][0]["spans"][0][key] = {"fz": 1}  # type: ignore[index]
        path = write_lines(tmp_path / f"traces-{key}.jsonl", [json.dumps(span)])
        assert_refused(path, 1, key, fmt="otel")
