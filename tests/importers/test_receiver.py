"""`toolgold serve`: the real opentelemetry-sdk OTLP/HTTP exporter sends GenAI spans from this process
to the receiver on 127.0.0.1, and they land in the store as one transcript per trace, in the queue."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from labeler.cli import cli
from labeler.receiver import Receiver
from labeler.store import Store
from tests.importers.test_otel import otlp_batch, otlp_span, tool_call_example


@pytest.fixture
def receiver(store: Store) -> Iterator[Receiver]:
    running = Receiver(store, "127.0.0.1", 0, settle=0.3, log=lambda line: None)
    running.start()
    yield running
    running.stop()


def endpoint(receiver: Receiver) -> str:
    host, port = receiver.address
    return f"http://{host}:{port}/v1/traces"


def wait_for(condition: Any, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def post(url: str, body: bytes, content_type: str = "application/json",
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def agent_run(exporter: OTLPSpanExporter, captured: InMemorySpanExporter) -> None:
    """One weather-bot run as an instrumented app emits it: chat, execute_tool, chat, each span exported on
    its own as it ends (SimpleSpanProcessor), so the trace reaches the receiver in several requests."""
    ex = tool_call_example()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(captured))
    tracer = provider.get_tracer("weather-bot")
    with tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat gpt-4", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4",
                "gen_ai.input.messages": json.dumps(ex["input1"]), "gen_ai.output.messages": json.dumps(ex["output1"]),
                "gen_ai.tool.definitions": json.dumps(ex["tools"])}):
            pass
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": ex["output1"][0]["parts"][0]["id"]}):
            pass
        with tracer.start_as_current_span("chat gpt-4", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(ex["input2"]),
                "gen_ai.output.messages": json.dumps(ex["output2"])}):
            pass
    provider.shutdown()


def test_spans_sent_by_the_sdk_exporter_in_several_batches_become_one_queued_transcript(
        store: Store, receiver: Receiver) -> None:
    captured = InMemorySpanExporter()
    agent_run(OTLPSpanExporter(endpoint=endpoint(receiver)), captured)
    spans = captured.get_finished_spans()
    assert len(spans) == 4 and len({s.context.trace_id for s in spans}) == 1
    trace_id = f"{spans[0].context.trace_id:032x}"
    wait_for(lambda: store.count_transcripts() == 1)
    detail = store.get_transcript(f"otel/{trace_id}")
    ex = tool_call_example()
    assert [m.role for m in detail.transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert detail.transcript.messages[2].content == ex["input2"][2]["parts"][0]["response"]
    assert detail.transcript.metadata["service"] == "weather-bot"
    assert [t.id for t in store.list_transcripts(source="weather-bot")] == [f"otel/{trace_id}"]
    store.add_user("ann", "annotator")
    assert [q.transcript_id for q in store.queue("ann")] == [f"otel/{trace_id}"]

    before = store.stats()
    resend = OTLPSpanExporter(endpoint=endpoint(receiver))
    assert resend.export(spans).name == "SUCCESS"  # the same spans again: nothing new
    time.sleep(0.8)
    receiver.write(everything=True)
    assert store.stats() == before


def test_otlp_json_is_received_and_bad_payloads_get_400_and_change_nothing(store: Store, receiver: Receiver) -> None:
    ex = tool_call_example()
    good = otlp_batch("support-bot", [otlp_span("ab" * 16, "0000000000000001", "chat", 1, {
        "gen_ai.input.messages": json.dumps(ex["input2"]), "gen_ai.output.messages": json.dumps(ex["output2"])})])
    assert post(endpoint(receiver), good.encode()) == (200, {})
    bad_part = otlp_batch("support-bot", [otlp_span("cd" * 16, "0000000000000002", "chat", 1, {
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "hologram"}]}])})])
    status, body = post(endpoint(receiver), bad_part.encode())
    assert status == 400 and body["message"] == (
        f"trace {'cd' * 16}: gen_ai.input.messages[0].parts[0]: a 'hologram' part; expected one of text, tool_call, "
        "tool_call_response, server_tool_call, server_tool_call_response, reasoning, blob, uri, file")
    assert post(endpoint(receiver), b"{not json")[0] == 400
    assert post(endpoint(receiver), b'{"spans": []}')[1]["message"] == (
        'expected an OTLP ExportTraceServiceRequest {"resourceSpans": [...]}')
    assert post(endpoint(receiver), good.encode(), "text/plain")[1]["message"] == (
        "Content-Type text/plain: expected application/json or application/x-protobuf")
    assert post(endpoint(receiver), b"\x0a\xff\xff", "application/x-protobuf")[0] == 400
    wait_for(lambda: store.count_transcripts() == 1)
    receiver.write(everything=True)
    assert [t.id for t in store.list_transcripts()] == [f"otel/{'ab' * 16}"]


def test_a_token_is_required_when_set_and_to_listen_beyond_this_machine(store: Store) -> None:
    guarded = Receiver(store, "127.0.0.1", 0, token="s3cret", settle=0.1, log=lambda line: None)
    guarded.start()
    try:
        batch = otlp_batch("svc", [otlp_span("ef" * 16, "0000000000000003", "chat", 1, {
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])})])
        assert post(endpoint(guarded), batch.encode())[0] == 401
        exporter = OTLPSpanExporter(endpoint=endpoint(guarded), headers={"Authorization": "Bearer s3cret"})
        agent_run(exporter, InMemorySpanExporter())
        wait_for(lambda: store.count_transcripts() == 1)
    finally:
        guarded.stop()
    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2
    assert result.stderr == ("error: listening on 0.0.0.0 lets other machines write to the store: set --token (or "
                             "TOOLGOLD_SERVE_TOKEN) and send it as 'Authorization: Bearer <token>'\n")
