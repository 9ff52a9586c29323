"""OpenTelemetry GenAI spans and OpenInference spans: the spans of one trace become one conversation.

Accepted files (one document, a JSON array, or JSON Lines -- what the collector's file exporter writes):

- OTLP/JSON ``{"resourceSpans": [{"resource", "scopeSpans": [{"spans": [...]}]}]}``, attributes as
  ``[{"key", "value": {"stringValue": ...}}]``;
- span objects with an ``attributes`` map (the SDK console exporter, OpenInference's "logical" form:
  ``context.trace_id``, ``parent_id``, ``start_time``);
- bare attribute maps (one span's attributes, as exporters' tests and many log pipelines keep them).

Spans are grouped by trace id (a span without one is its own conversation) and ordered by start time,
a parent before its children. docs/importers.md lists the attribute names read, old and new.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import json_type, need_dict, need_list, tool_spec
from scorer.importers.jsondoc import DocumentLines
from scorer.importers.parts import Call, Part, Result, Text, Turn, messages_from_parts
from scorer.importers.records import each_record, loads_if_json
from scorer.model import ToolSpec, Transcript
from scorer.strict_json import NOT_FINITE

NAME = "otel"
DESCRIPTION = "OpenTelemetry GenAI / OpenInference spans (OTLP/JSON, span objects or attribute maps)"

_MARKERS = re.compile(rb'"resourceSpans"|"gen_ai\.(input|output)\.messages"|"gen_ai\.operation\.name"'
                      rb'|"gen_ai\.prompt|"openinference\.span\.kind"|"llm\.input_messages')

MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                  "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
PART_TYPES = "text, tool_call, tool_call_response, server_tool_call, server_tool_call_response, reasoning, " \
             "blob, uri, file"


def sniff(path: Path, head: bytes) -> bool:
    if b'"observations"' in head and b'"trace"' in head:  # a Langfuse export quotes span attributes
        return False
    return bool(_MARKERS.search(head))


# --------------------------------------------------------------------------------------------------
# Spans, whatever they were written as
# --------------------------------------------------------------------------------------------------


@dataclass
class Span:
    trace_id: str
    span_id: str | None
    parent_id: str | None
    name: str
    start: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    service: str | None = None
    error: bool = False
    line: int | None = None
    position: int = 0
    path: tuple[int, int, int] | None = None
    """Where an OTLP span sits in its record: ``resourceSpans[r].scopeSpans[s].spans[k]`` (its own line,
    when the record is an indented document, is looked up only when an error needs it)."""


def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` as a plain value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "bytesValue"):
        if key in value:
            return value[key]
    if "doubleValue" in value:
        return _double(value["doubleValue"])
    if "intValue" in value:
        return _int(value["intValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in need_list(need_dict(value["arrayValue"] or {}, "arrayValue").get("values") or [],
                                                "arrayValue.values")]
    if "kvlistValue" in value:
        return key_values(need_dict(value["kvlistValue"] or {}, "kvlistValue").get("values") or [], "kvlistValue.values")
    return None


def _double(raw: Any) -> float:
    """A ``doubleValue``: a JSON number, or a string as protobuf's JSON mapping may write one. Protobuf's
    ``MessageToDict`` (what ``toolgold serve`` decodes OTLP protobuf into) writes NaN and ±Infinity as the
    strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``: refused as the strict reader refuses them in a file,
    never kept as that string or stored as ``null``."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise InvalidRecord(f"doubleValue should be a number, got {json_type(raw)}")
    try:
        number = float(raw)
    except ValueError:
        raise InvalidRecord(f"doubleValue {raw!r} is not a number") from None
    if not math.isfinite(number):
        raise InvalidRecord(f"doubleValue: {NOT_FINITE} (found {raw!r})")
    return number


def _int(raw: Any) -> int:
    """An ``intValue``: a JSON integer, or the decimal string OTLP/JSON writes 64-bit integers as."""
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise InvalidRecord(f"intValue should be an integer, got {json_type(raw)}")
    try:
        return int(raw)
    except ValueError:
        raise InvalidRecord(f"intValue {raw!r} is not an integer") from None


def key_values(raw: Any, what: str = "attributes") -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    out = {}
    for i, entry in enumerate(need_list(raw or [], what)):
        entry = need_dict(entry, f"{what}[{i}]")
        if not isinstance(entry.get("key"), str):
            raise InvalidRecord(f"{what}[{i}] should be {{\"key\", \"value\"}}, got no key")
        out[entry["key"]] = any_value(entry.get("value"))
    return out


def _span_id(value: Any, what: str) -> str | None:
    """A span id: a string (hex in OTLP/JSON), None, or a number as its text; spans are looked up by it, so
    an object or array is refused here rather than failing as unhashable later."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidRecord(f"{what} should be a string, got {json_type(value)}")


def _time(value: Any) -> int:
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, str) and value:
        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
        except ValueError:
            raise InvalidRecord(f"start time {value!r} is neither nanoseconds nor an ISO 8601 time") from None
    return 0


def spans_of(value: Any, line: int | None, position: int) -> list[Span]:
    record = need_dict(value, "the record")
    if "resourceSpans" in record:
        spans: list[Span] = []
        for r, resource_spans in enumerate(need_list(record["resourceSpans"], "resourceSpans")):
            resource_spans = need_dict(resource_spans, f"resourceSpans[{r}]")
            resource = key_values(need_dict(resource_spans.get("resource") or {}, f"resourceSpans[{r}].resource"
                                            ).get("attributes"),
                                  f"resourceSpans[{r}].resource.attributes")
            scopes = resource_spans.get("scopeSpans", resource_spans.get("instrumentationLibrarySpans", []))
            for s, scope in enumerate(need_list(scopes, f"resourceSpans[{r}].scopeSpans")):
                where = f"resourceSpans[{r}].scopeSpans[{s}].spans"
                for k, raw in enumerate(need_list(need_dict(scope, where).get("spans", []), where)):
                    spans.append(_span(need_dict(raw, f"{where}[{k}]"), f"{where}[{k}]", resource, line,
                                       position + len(spans)))
                    spans[-1].path = (r, s, k)
        return spans
    if isinstance(record.get("attributes"), (dict, list)):
        return [_span(record, "the span", {}, line, position)]
    return [Span(trace_id="", span_id=None, parent_id=None, name="", start=0, attributes=record, line=line,
                 position=position)]


def _span(raw: dict[str, Any], where: str, resource: dict[str, Any], line: int | None, position: int) -> Span:
    context: dict[str, Any] = raw["context"] if isinstance(raw.get("context"), dict) else {}
    trace_id = raw.get("traceId", context.get("trace_id", raw.get("trace_id", "")))
    attributes = key_values(raw.get("attributes"), f"{where}.attributes")
    events = []
    for i, event in enumerate(need_list(raw.get("events") or [], f"{where}.events")):
        event = need_dict(event, f"{where}.events[{i}]")
        events.append((str(event.get("name", "")), key_values(event.get("attributes"), f"{where}.events[{i}]")
                       | ({"body": event["body"]} if "body" in event else {})))
    status: dict[str, Any] = raw["status"] if isinstance(raw.get("status"), dict) else {}
    code = status.get("code", status.get("status_code", raw.get("status_code")))
    own_resource: dict[str, Any] = raw["resource"] if isinstance(raw.get("resource"), dict) else {}
    resource = resource or key_values(own_resource.get("attributes") or {}, f"{where}.resource")
    return Span(
        trace_id=str(trace_id or ""),
        span_id=_span_id(raw.get("spanId", context.get("span_id", raw.get("span_id"))), f"{where}.spanId"),
        parent_id=_span_id(raw.get("parentSpanId", raw.get("parent_id")), f"{where}.parentSpanId") or None,
        name=str(raw.get("name", "")),
        start=_time(raw.get("startTimeUnixNano", raw.get("start_time"))), attributes=attributes, events=events,
        service=resource.get("service.name") if isinstance(resource.get("service.name"), str) else None,
        error=code in (2, "ERROR", "STATUS_CODE_ERROR") or "error.type" in attributes, line=line,
        position=position)


# --------------------------------------------------------------------------------------------------
# Messages of one span
# --------------------------------------------------------------------------------------------------

Msg = tuple[str, tuple[Part, ...]]
"""One message of a span: its role and its parts (compared across spans to drop repeated history)."""


def unflatten(value: Any) -> Any:
    """``{"a.0.b": 1}`` -> ``{"a": [{"b": 1}]}``, recursively (OpenInference's flattened attributes)."""
    if isinstance(value, list):
        return [unflatten(v) for v in value]
    if not isinstance(value, dict):
        return value
    tree: dict[str, Any] = {}
    for key, item in value.items():
        node = tree
        *path, last = str(key).split(".")
        for step in path:
            nxt = node.setdefault(step, {})
            if not isinstance(nxt, dict):
                nxt = node[step] = {"": nxt}
            node = nxt
        node[last] = unflatten(item)
    return _lists(tree)


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: _lists(v) for k, v in node.items()}
        if node and all(k.isdigit() for k in node):
            return [node[k] for k in sorted(node, key=int)]
    return node


def _prefixed(attributes: dict[str, Any], prefix: str) -> Any:
    """The value of ``prefix`` as one attribute (JSON or array) or as flattened ``prefix.N...`` keys."""
    if prefix in attributes:
        return unflatten(loads_if_json(attributes[prefix]))
    flat = {k[len(prefix) + 1:]: v for k, v in attributes.items() if k.startswith(prefix + ".")}
    return unflatten(flat) if flat else None


def genai_messages(raw: Any, where: str, skipped: dict[str, int]) -> list[Msg]:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` (parts), or OpenAI-shaped messages."""
    out = []
    for i, message in enumerate(need_list(loads_if_json(raw), where)):
        message = need_dict(message, f"{where}[{i}]")
        if "parts" in message:
            out.append(_parts_message(message, f"{where}[{i}]", skipped))
        else:
            out.append(openai_message(message, f"{where}[{i}]", message.get("role")))
    return out


def _parts_message(message: dict[str, Any], where: str, skipped: dict[str, int]) -> Msg:
    role = _role(message.get("role"), where)
    text_role: Literal["system", "user", "assistant"] = "assistant" if role in ("tool", "assistant") else (
        "system" if role == "system" else "user")
    parts: list[Part] = []
    for k, raw in enumerate(need_list(message["parts"], f"{where}.parts")):
        part = need_dict(raw, f"{where}.parts[{k}]")
        kind = part.get("type")
        if kind == "text":
            parts.append(Text(role=text_role, text=str(part.get("content", ""))))
        elif kind in ("tool_call", "server_tool_call"):
            arguments = part.get("arguments", part.get("server_tool_call"))
            parts.append(Call(name=str(part.get("name") or ""), arguments=arguments, id=part.get("id") or None))
        elif kind in ("tool_call_response", "server_tool_call_response"):
            content = next((part[key] for key in ("response", "result", "server_tool_call_response")
                            if key in part), "")
            parts.append(Result(content=content, id=part.get("id") or None, name=part.get("name")))
        elif kind == "reasoning":
            skipped["reasoning"] = skipped.get("reasoning", 0) + 1
        elif kind in ("blob", "uri", "file"):
            parts.append(Text(role=text_role, text=f"[{part.get('modality') or kind}]"))
        else:
            raise InvalidRecord(f"{where}.parts[{k}]: a {kind!r} part; expected one of {PART_TYPES}")
    return role, tuple(parts)


def _role(raw: Any, where: str) -> str:
    if raw in ("system", "user", "assistant", "tool"):
        return str(raw)
    if raw in ("developer",):
        return "system"
    if raw in ("model", "ai"):
        return "assistant"
    raise InvalidRecord(f"{where}.role should be system, user, assistant or tool, got {raw!r}")


def openai_message(message: dict[str, Any], where: str, role: Any) -> Msg:
    """An OpenAI-shaped message (the older per-message events, ``gen_ai.prompt.N`` attributes)."""
    role = _role(role, where)
    content = message.get("content")
    if isinstance(content, list) and all(isinstance(p, str) or (isinstance(p, dict) and "type" in p)
                                         for p in content):  # content parts; any other list is a JSON value
        content = "\n".join(p if isinstance(p, str) else str(p.get("text", f"[{p['type']}]")) for p in content)
    parts: list[Part] = []
    if role == "tool":
        parts.append(Result(content="" if content is None else content,
                            id=message.get("tool_call_id") or message.get("id") or None, name=message.get("name")))
        return role, tuple(parts)
    if content not in (None, ""):
        parts.append(Text(role=role, text=content if isinstance(content, str) else json.dumps(content)))
    for k, raw in enumerate(need_list(message.get("tool_calls") or [], f"{where}.tool_calls")):
        call = need_dict(raw, f"{where}.tool_calls[{k}]")
        call = call.get("tool_call", call)  # OpenInference nests the call under tool_call
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        if role != "assistant":
            raise InvalidRecord(f"{where}: a {role} message with tool_calls")
        parts.append(Call(name=str(function.get("name") or ""), arguments=function.get("arguments"),
                          id=call.get("id") or None))
    return role, tuple(parts)


def openinference_messages(raw: Any, where: str) -> list[Msg]:
    out = []
    for i, entry in enumerate(need_list(raw, where)):
        entry = need_dict(entry, f"{where}[{i}]")
        message = need_dict(entry.get("message", entry), f"{where}[{i}].message")
        if "contents" in message and "content" not in message:
            texts = [str(need_dict(c, f"{where}[{i}].contents").get("message_content", c).get("text", ""))
                     for c in need_list(message["contents"], f"{where}[{i}].message.contents")]
            message = {**message, "content": "\n".join(texts)}
        out.append(openai_message(message, f"{where}[{i}]", message.get("role")))
    return out


@dataclass
class SpanContent:
    inputs: list[Msg] = field(default_factory=list)
    outputs: list[Msg] = field(default_factory=list)
    system: list[Msg] = field(default_factory=list)
    execution: tuple[Call, Result] | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    model: str | None = None
    line: int | None = None
    """Which span (observation) this came from: its number, 1-based, as the caller counts them."""


def read_span(span: Span, skipped: dict[str, int]) -> SpanContent:
    """What one span says about the conversation: messages in and out, a tool execution, tools."""
    a = span.attributes
    content = SpanContent(model=next((a[k] for k in ("gen_ai.response.model", "gen_ai.request.model",
                                                      "llm.model_name") if isinstance(a.get(k), str)), None))
    if "gen_ai.system_instructions" in a:
        content.system = [("system", tuple(Text(role="system", text=str(p.get("content", "")))
                                           for p in need_list(loads_if_json(a["gen_ai.system_instructions"]),
                                                              "gen_ai.system_instructions")
                                           if isinstance(p, dict)))]
    if "gen_ai.input.messages" in a:
        content.inputs = genai_messages(a["gen_ai.input.messages"], "gen_ai.input.messages", skipped)
    if "gen_ai.output.messages" in a:
        content.outputs = genai_messages(a["gen_ai.output.messages"], "gen_ai.output.messages", skipped)
    for prefix, target in (("gen_ai.prompt", content.inputs), ("gen_ai.completion", content.outputs)):
        old = _prefixed(a, prefix) if prefix not in a or isinstance(loads_if_json(a[prefix]), list) else None
        if old is not None and not target:
            target += [openai_message(need_dict(m, f"{prefix}.{i}"), f"{prefix}.{i}", m.get("role", "assistant"))
                       for i, m in enumerate(need_list(old, prefix)) if m]
    for prefix, target in (("llm.input_messages", content.inputs), ("llm.output_messages", content.outputs)):
        found = _prefixed(a, prefix)
        if found is not None and not target:
            target += openinference_messages(found, prefix)
    _read_events(span, content, skipped)
    _read_tools(a, content)
    operation = a.get("gen_ai.operation.name")
    if operation == "execute_tool" or a.get("openinference.span.kind") == "TOOL":
        content.execution = _execution(span)
    return content


def _read_events(span: Span, content: SpanContent, skipped: dict[str, int]) -> None:
    """The older per-message events (``gen_ai.user.message`` ... ``gen_ai.choice``) and the oldest
    ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events."""
    inputs: list[Msg] = []
    outputs: list[Msg] = []
    for name, attrs in span.events:
        body = attrs.get("body", loads_if_json(attrs.get("gen_ai.event.content", attrs)))
        if name in MESSAGE_EVENTS:
            inputs.append(openai_message(need_dict(body, name), name, MESSAGE_EVENTS[name]))
        elif name == "gen_ai.choice":
            choice = need_dict(body, name)
            if choice.get("index", 0) == 0:
                message = need_dict(choice.get("message", {}), f"{name}.message")
                outputs.append(openai_message(message, name, message.get("role", "assistant")))
        elif name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if name.endswith("prompt") else "gen_ai.completion"
            target = inputs if key == "gen_ai.prompt" else outputs
            target += genai_messages(attrs.get(key, "[]"), f"{name}.{key}", skipped)
        elif name == "gen_ai.client.inference.operation.details":
            inputs += genai_messages(attrs.get("gen_ai.input.messages", "[]"), name, skipped)
            outputs += genai_messages(attrs.get("gen_ai.output.messages", "[]"), name, skipped)
    if not content.inputs:
        content.inputs = inputs
    if not content.outputs:
        content.outputs = outputs


def _read_tools(a: dict[str, Any], content: SpanContent) -> None:
    definitions = a.get("gen_ai.tool.definitions")
    if definitions is not None:
        for i, raw in enumerate(need_list(loads_if_json(definitions), "gen_ai.tool.definitions")):
            content.tools.append(tool_spec(raw, f"gen_ai.tool.definitions[{i}]"))
    found = _prefixed(a, "llm.tools")
    for i, raw in enumerate(found if isinstance(found, list) else []):
        schema = loads_if_json(need_dict(need_dict(raw, f"llm.tools.{i}").get("tool", raw),
                                         f"llm.tools.{i}.tool").get("json_schema"))
        content.tools.append(tool_spec(schema, f"llm.tools.{i}.tool.json_schema"))


def _execution(span: Span) -> tuple[Call, Result]:
    a = span.attributes
    name = next((a[k] for k in ("gen_ai.tool.name", "tool.name") if isinstance(a.get(k), str)), None)
    if not name:
        raise InvalidRecord("an execute_tool span without gen_ai.tool.name")
    call_id = next((str(a[k]) for k in ("gen_ai.tool.call.id", "tool_call.id", "tool.call.id") if a.get(k)), None)
    arguments = next((a[k] for k in ("gen_ai.tool.call.arguments", "input", "tool.parameters", "input.value")
                      if k in a), None)
    result = next((a[k] for k in ("gen_ai.tool.call.result", "output", "output.value") if k in a), "")
    return (Call(name=name, arguments=arguments, id=call_id),
            Result(content=result, id=call_id, name=name, is_error=span.error))


# --------------------------------------------------------------------------------------------------
# One trace -> one conversation
# --------------------------------------------------------------------------------------------------


def order_spans(spans: list[Span]) -> list[Span]:
    """By start time; at the same time a parent before its children; then as the file listed them."""
    by_id = {s.span_id: s for s in spans if s.span_id}

    def depth(span: Span) -> int:
        d, seen, parent = 0, set(), span.parent_id
        while parent in by_id and parent not in seen:
            seen.add(parent)
            d += 1
            parent = by_id[parent].parent_id
        return d

    return sorted(spans, key=lambda s: (s.start, depth(s), s.position))


@dataclass
class History:
    """A conversation merged from observations that each repeat the history before them."""

    messages: list[Msg] = field(default_factory=list)
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    """The line of the span (observation) each message first came from (parallel to ``messages``)."""


def merge(contents: list[SpanContent]) -> History:
    """The one conversation that spans (or any observations) in time order describe.

    A chat span's input repeats the history: what the conversation already holds is skipped (when a
    span's history diverges, only messages not seen yet are added). An ``execute_tool`` span adds its
    call and result when no chat span shows them: by call id, or -- for a tool span without one -- when
    no chat span calls a tool of that name."""
    chat = [p for c in contents for _, ps in c.inputs + c.outputs for p in ps]
    chat_calls = {p.id for p in chat if isinstance(p, Call) and p.id}
    chat_names = {p.name for p in chat if isinstance(p, Call)}
    chat_results = {p.id for p in chat if isinstance(p, Result) and p.id}
    history = History()
    for content in contents:
        for spec in content.tools:
            history.tools.setdefault(spec.name, spec)
        if content.model and content.model not in history.models:
            history.models.append(content.model)
        if content.execution is not None:
            call, result = content.execution
            if call.id is None and call.name in chat_names:
                continue
            if call.id is None or call.id not in chat_calls:
                history.messages += [("assistant", (call,)), ("tool", (result,))]
                history.lines += [content.line, content.line]
            elif call.id not in chat_results:
                history.messages.append(("tool", (result,)))
                history.lines.append(content.line)
            continue
        incoming = content.system + content.inputs
        if content.system and history.messages and history.messages[0][0] == "system":
            incoming = content.inputs
        known = history.messages
        common = 0
        while common < min(len(known), len(incoming)) and known[common] == incoming[common]:
            common += 1
        diverged = common < len(known)
        for message in incoming[common:] + content.outputs:
            if not (diverged and message in known):
                known.append(message)
                history.lines.append(content.line)
    return history


def history_parts(history: History) -> list[Part]:
    parts: list[Part] = []
    for _, message_parts in history.messages:
        parts += [*message_parts, Turn()]
    return parts


def history_lines(history: History) -> list[int | None]:
    """The line of each of ``history_parts(history)``: its message's."""
    lines: list[int | None] = []
    for (_, message_parts), line in zip(history.messages, history.lines, strict=True):
        lines += [line] * (len(message_parts) + 1)
    return lines


class SpanLines:
    """The line each span starts on: a span's record line, or, for an OTLP span in an indented document, the
    line of the span itself (the file read again with positions, only when an error asks)."""

    def __init__(self, path: Path) -> None:
        self.lines = DocumentLines(path)

    def __call__(self, span: Span) -> int | None:
        if span.path is None or span.line is None:
            return span.line
        r, s, k = span.path
        for scopes in ("scopeSpans", "instrumentationLibrarySpans"):
            found = self.lines.line(span.line, ("resourceSpans", r, scopes, s, "spans", k))
            if found is not None:
                return found
        return span.line


def conversation_error(err: InvalidRecord, ordered: list[Span], span_line: Callable[[Span], int | None]
                       ) -> InvalidRecord:
    """An error ``messages_from_parts`` placed at a span's number, placed at that span's line."""
    if err.line is None:
        return err
    return type(err)(err.message, source=err.source, line=span_line(ordered[err.line - 1]))


def conversation(spans: list[Span], conversation_id: str, default_tools: tuple[ToolSpec, ...] | None,
                 key: str = "", span_line: Callable[[Span], int | None] | None = None) -> Transcript:
    """The trace's transcript. An error in one span (a message, a part) names that span's line; an error about
    the trace as a whole (no messages, a rule of the transcript, renaming repeated ids) names none, and the
    caller places it at the trace's first line."""
    skipped: dict[str, int] = {}
    line_of: Callable[[Span], int | None] = span_line or (lambda span: span.line)
    ordered = order_spans(spans)
    contents = []
    for number, span in enumerate(ordered, start=1):
        try:
            content = read_span(span, skipped)
        except InvalidRecord as err:  # an error in one span names that span's line
            raise type(err)(err.message, source=err.source, line=line_of(span)) from None
        content.line = number
        contents.append(content)
    history = merge(contents)
    if not history.messages:
        raise InvalidRecord("no GenAI messages or tool executions in this trace: expected gen_ai.input.messages / "
                            "gen_ai.output.messages, gen_ai.*.message events, execute_tool spans or "
                            "OpenInference llm.input_messages")
    first = spans[0]
    metadata: dict[str, Any] = {"source": "otel"}
    if first.trace_id:
        metadata["trace_id"] = first.trace_id
    services = sorted({s.service for s in spans if s.service})
    if services:
        metadata["service"] = services[0] if len(services) == 1 else services
    if history.models:
        metadata["model"] = history.models[0]
    if skipped:
        metadata["skipped"] = dict(sorted(skipped.items()))
    try:
        messages = messages_from_parts(history_parts(history), lines=history_lines(history),
                                       rule=lambda exc: f"trace {key}: {describe_validation_error(exc)}")
    except InvalidRecord as err:
        raise conversation_error(err, ordered, line_of) from None
    return Transcript(id=conversation_id, messages=messages, metadata=metadata,
                      tools=tuple(history.tools.values()) or default_tools or ())


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    span_line = SpanLines(path)
    traces: dict[str, list[Span]] = {}
    for located in each_record(path):
        if isinstance(located, InvalidRecord):
            yield located
            continue
        line, value = located
        try:
            spans = spans_of(value, line, sum(len(v) for v in traces.values()))
        except InvalidRecord as err:
            yield err.located(source, line)
            continue
        for span in spans:
            key = span.trace_id or f"{path.stem}:{span.line}:{span.position}"
            traces.setdefault(key, []).append(span)
    for key, spans in traces.items():
        conversation_id = f"otel/{key}" if spans[0].trace_id else (
            f"{path.stem}:{spans[0].line}" if len(traces) > 1 else path.stem)
        first_line = min((s.line for s in spans if s.line is not None), default=None)
        try:
            yield Converted(conversation(spans, conversation_id, options.tools, key, span_line), first_line)
        except InvalidRecord as err:
            yield err.located(source, first_line)
        except ValidationError as exc:  # the assembled transcript breaks a rule of the format
            yield InvalidRecord(f"trace {key}: {describe_validation_error(exc)}", source=source, line=first_line)


__all__ = ["DESCRIPTION", "NAME", "convert", "sniff"]
