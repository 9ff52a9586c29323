"""The OTLP/HTTP trace receiver behind ``toolgold serve``: point an OpenTelemetry exporter at it and the
agent's GenAI spans arrive in the store as transcripts, ready for the labeling queue.

- ``POST /v1/traces`` takes OTLP JSON (``application/json``) and OTLP protobuf
  (``application/x-protobuf``, decoded with the ``opentelemetry-proto`` package), gzip or not.
- A whole request is checked before anything is kept: a payload that is not OTLP, or whose GenAI spans
  cannot be read, gets ``400`` with the reason and changes nothing.
- Spans are buffered per trace and a trace is written once it has been quiet for ``settle`` seconds,
  so a trace whose spans come in several batches becomes one transcript (``otel/<trace id>``, converted
  by ``scorer.importers.otel``; source = the service name). Spans already received (same trace, span id
  and content) are ignored, and the store adds nothing for content it holds: re-sending is harmless.
- Traces without GenAI content (HTTP, database spans) are counted and not written.
- Writes go through ``Store.import_items``; a later span that changes a trace already written is
  reported (the store keeps the first version: ids are immutable) rather than silently merged.
"""

from __future__ import annotations

import base64
import gzip
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import ValidationError

from labeler.store import ImportItem, Store
from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers import otel
from scorer.model import Transcript

MAX_BODY = 32 * 1024 * 1024
NO_GENAI = "no GenAI messages or tool executions"


class BadPayload(Exception):
    """The request is not an OTLP trace export toolgold can read (answered with 400)."""


def decode(body: bytes, content_type: str, content_encoding: str) -> dict[str, Any]:
    """An OTLP/HTTP request body as OTLP JSON (protobuf decoded, ids as hex as OTLP JSON writes them)."""
    if content_encoding.strip().lower() == "gzip":
        try:
            body = gzip.decompress(body)
        except OSError as exc:
            raise BadPayload(f"Content-Encoding gzip, but the body is not gzip ({exc})") from None
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            value = json.loads(body)
        except ValueError as exc:
            raise BadPayload(f"not valid JSON ({exc})") from None
        if not isinstance(value, dict) or "resourceSpans" not in value:
            raise BadPayload("expected an OTLP ExportTraceServiceRequest {\"resourceSpans\": [...]}")
        return value
    if kind == "application/x-protobuf":
        from google.protobuf.json_format import MessageToDict
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        try:
            request = ExportTraceServiceRequest.FromString(body)
        except DecodeError as exc:
            raise BadPayload(f"not an OTLP ExportTraceServiceRequest protobuf ({exc})") from None
        return _hex_ids(MessageToDict(request))
    raise BadPayload(f"Content-Type {content_type or 'missing'}: expected application/json or "
                     "application/x-protobuf")


def _hex_ids(payload: dict[str, Any]) -> dict[str, Any]:
    """Protobuf JSON writes ids as base64; OTLP JSON (and the importer) use hex."""
    for resource in payload.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return payload


@dataclass
class TraceState:
    spans: dict[str, tuple[str, otel.Span]] = field(default_factory=dict)  # span key -> (content hash, span)
    last_seen: float = 0.0
    pending: bool = False
    written: bool = False


class TraceBuffer:
    """Spans by trace; a trace quiet for ``settle`` seconds is due to be written. Thread-safe."""

    def __init__(self, settle: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.settle = settle
        self.clock = clock
        self.traces: dict[str, TraceState] = {}
        self.lock = threading.Lock()
        self.ignored_traces = 0

    def add(self, payload: dict[str, Any]) -> int:
        """Check and keep the spans of one request; returns how many were new. ``BadPayload`` (nothing
        kept) when the payload or any of its GenAI spans cannot be read."""
        try:
            spans = otel.spans_of(payload, None, 0)
        except InvalidRecord as err:
            raise BadPayload(err.message) from None
        raw = [s for r in payload.get("resourceSpans", []) for sc in r.get("scopeSpans", [])
               for s in sc.get("spans", [])]
        with self.lock:
            incoming: dict[str, dict[str, tuple[str, otel.Span]]] = {}
            for span, original in zip(spans, raw, strict=True):
                if not span.trace_id:
                    raise BadPayload("a span without a traceId")
                key = str(span.span_id or canonical.content_hash(original))
                incoming.setdefault(span.trace_id, {})[key] = (canonical.content_hash(original), span)
            changed = {}
            for trace_id, new in incoming.items():
                known = self.traces.get(trace_id, TraceState()).spans
                fresh = {k: v for k, v in new.items() if known.get(k, ("",))[0] != v[0]}
                if fresh:
                    merged = {**known, **fresh}
                    self._check(trace_id, [s for _, s in merged.values()])
                    changed[trace_id] = (merged, len(fresh))
            now = self.clock()
            for trace_id, (merged, _) in changed.items():
                state = self.traces.setdefault(trace_id, TraceState())
                state.spans, state.last_seen, state.pending = merged, now, True
            return sum(n for _, n in changed.values())

    @staticmethod
    def _check(trace_id: str, spans: list[otel.Span]) -> None:
        try:
            otel.conversation(otel.order_spans(spans), f"otel/{trace_id}", None)
        except InvalidRecord as err:
            if NO_GENAI not in err.message:
                raise BadPayload(f"trace {trace_id}: {err.message}") from None
        except ValidationError as exc:
            raise BadPayload(f"trace {trace_id}: {describe_validation_error(exc)}") from None

    def due(self, *, everything: bool = False) -> list[Transcript]:
        """The transcripts of the traces quiet long enough (all pending ones with ``everything``)."""
        now = self.clock()
        out = []
        with self.lock:
            for trace_id, state in self.traces.items():
                if not state.pending or (not everything and now - state.last_seen < self.settle):
                    continue
                state.pending = False
                transcript = received_transcript(trace_id, [s for _, s in state.spans.values()])
                if transcript is None:
                    self.ignored_traces += 1
                    continue
                out.append(transcript)
        return out


def received_transcript(trace_id: str, spans: list[otel.Span]) -> Transcript | None:
    try:
        transcript = otel.conversation(otel.order_spans(spans), f"otel/{trace_id}", None)
    except InvalidRecord as err:
        if NO_GENAI in err.message:
            return None
        raise
    service = transcript.metadata.get("service")
    source = service if isinstance(service, str) else "otel"
    return transcript.model_copy(update={"metadata": {**transcript.metadata, "source": source,
                                                      "received_via": "otlp/http"}})


class Receiver:
    """The HTTP server, its buffer and the thread that writes due traces to the store."""

    def __init__(self, store: Store, host: str = "127.0.0.1", port: int = 4318, *, token: str | None = None,
                 settle: float = 2.0, log: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.token = token
        self.buffer = TraceBuffer(settle)
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.written = 0
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self._stop = threading.Event()
        self._writer = threading.Thread(target=self._write_loop, name="toolgold-receiver-writer", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._writer.start()
        threading.Thread(target=self.server.serve_forever, name="toolgold-receiver-http", daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._stop.set()
        self._writer.join()
        self.write(everything=True)

    def write(self, *, everything: bool = False) -> int:
        transcripts = self.buffer.due(everything=everything)
        if not transcripts:
            return 0
        result = self.store.import_items([ImportItem(record=t, source="otlp") for t in transcripts],
                                         actor="otlp-receiver", skip_invalid=True)
        for reject in result.rejects:
            self.log(f"warning: {reject.message}; the late spans of this trace were not added")
        self.written += result.transcripts_added
        return result.transcripts_added

    def _write_loop(self) -> None:
        while not self._stop.wait(min(0.5, max(self.buffer.settle / 4, 0.05))):
            try:
                self.write()
            except Exception as exc:  # keep receiving; the next round tries again
                self.log(f"error: writing received traces failed: {exc}")


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "toolgold-otlp"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: HTTPStatus, reason: str) -> None:
            self._reply(status, json.dumps({"code": status.value, "message": reason}).encode(), "application/json")

        def do_GET(self) -> None:
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "send traces with POST /v1/traces")

        def do_POST(self) -> None:
            if self.path.split("?")[0] != "/v1/traces":
                self._error(HTTPStatus.NOT_FOUND, f"{self.path}: toolgold receives traces at POST /v1/traces")
                return
            if receiver.token is not None and self.headers.get("Authorization") != f"Bearer {receiver.token}":
                self._error(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"{length} bytes; the limit is {MAX_BODY}")
                return
            content_type = self.headers.get("Content-Type", "")
            try:
                payload = decode(self.rfile.read(length), content_type, self.headers.get("Content-Encoding", ""))
                receiver.buffer.add(payload)
            except BadPayload as exc:
                self._error(HTTPStatus.BAD_REQUEST, str(exc))
                return
            if content_type.startswith("application/x-protobuf"):
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                    ExportTraceServiceResponse,
                )

                self._reply(HTTPStatus.OK, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")
            else:
                self._reply(HTTPStatus.OK, b"{}", "application/json")

    return Handler
