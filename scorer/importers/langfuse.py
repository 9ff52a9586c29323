"""Langfuse trace exports: ``{"trace": {...}, "observations": [...]}`` (one per file, a JSON array of
them, or one per line). The observation tree becomes one conversation, in start-time order (a parent
before its children), merged the way OpenTelemetry spans are (``otel.merge``):

- ``GENERATION`` observations are model calls: ``input`` is the history sent -- OpenAI chat messages
  (LangChain's ``additional_kwargs.tool_calls`` too) or Responses API items -- and ``output`` the reply:
  a chat message, a list of them, a Responses object (``"object": "response"``) or text. LangChain's
  callback lists tool *definitions* among the input messages (role ``tool``, content ``{"type":
  "function", ...}``): they become the transcript's tools, not messages.
- ``TOOL`` observations, and ``SPAN`` s whose output is a LangChain ToolMessage (``"type": "tool"``,
  ``tool_call_id``), are tool executions: added only when no generation shows the call and its result.
- Other observations (``AGENT``, ``SPAN``, ``EVENT``...) structure the run and carry no new messages.
- Transcript ``langfuse/<trace id>``; metadata: source ``langfuse``, trace name, session and user ids
  when set, and the trace's tags.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict, need_list, tool_spec
from scorer.importers.jsondoc import DocumentLines
from scorer.importers.openai_responses import item_parts, response_tools
from scorer.importers.otel import Msg, SpanContent, history_lines, history_parts, merge, openai_message
from scorer.importers.parts import Call, Part, Result, Skipped, Text, messages_from_parts, skipped_counts
from scorer.importers.records import each_record, loads_if_json
from scorer.model import ToolSpec, Transcript

NAME = "langfuse"
DESCRIPTION = "Langfuse trace exports ({trace, observations})"

_MARKERS = re.compile(rb'"observations"\s*:\s*\[')


def sniff(path: Path, head: bytes) -> bool:
    return bool(_MARKERS.search(head)) and b'"trace"' in head


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    lines = DocumentLines(path)
    for located in each_record(path):
        if isinstance(located, InvalidRecord):
            yield located
            continue
        line, value = located
        try:
            yield Converted(trace_transcript(value, options, _ObservationLines(lines, line)), line)
        except InvalidRecord as err:
            yield err.located(source, line)
        except ValidationError as exc:
            yield InvalidRecord(describe_validation_error(exc), source=source, line=line)


def _start(observation: dict[str, Any]) -> float:
    value = observation.get("startTime")
    if not isinstance(value, str):
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise InvalidRecord(f"observation {observation.get('id')!r}: startTime {value!r} is not ISO 8601") from None


def ordered(observations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {o.get("id"): o for o in observations}

    def depth(o: dict[str, Any]) -> int:
        d, seen, parent = 0, set(), o.get("parentObservationId")
        while parent in by_id and parent not in seen:
            seen.add(parent)
            d += 1
            parent = by_id[parent].get("parentObservationId")
        return d

    return [o for _, _, _, o in sorted((_start(o), depth(o), i, o) for i, o in enumerate(observations))]


class _ObservationLines:
    """The line observation N of the export at ``line`` starts on, found only when an error needs it (the
    file read again with positions); in JSON Lines every observation is on the export's line."""

    def __init__(self, lines: DocumentLines, line: int) -> None:
        self.lines, self.line = lines, line

    def __call__(self, index: int) -> int:
        return self.lines.line(self.line, ("observations", index)) or self.line


def _at(err: InvalidRecord, line: int) -> InvalidRecord:
    """``err`` placed at ``line``, whatever line it named (an observation's index, not yet a line)."""
    return type(err)(err.message, source=err.source, line=line)


def trace_transcript(value: Any, options: ImportOptions,
                     observation_line: Callable[[int], int] | None = None) -> Transcript:
    """The export's transcript. With ``observation_line`` (the line of observation N), an error in one
    observation (a message, an item, a part) names that observation's line; errors about the export as a
    whole (no messages, no trace id, the transcript's rules, renaming repeated ids) name the export's."""
    record = need_dict(value, "the export")
    trace = need_dict(record.get("trace"), "trace")
    observations = [need_dict(o, f"observations[{i}]")
                    for i, o in enumerate(need_list(record.get("observations"), "observations"))]
    index = {id(o): i for i, o in enumerate(observations)}
    contents: list[SpanContent] = []
    for o in ordered(observations):
        try:
            content = observation_content(o)
        except InvalidRecord as err:
            raise err if observation_line is None else _at(err, observation_line(index[id(o)])) from None
        if content is not None:
            content.line = index[id(o)] + 1  # the observation's number: its line is looked up on an error only
            contents.append(content)
    history = merge(contents)
    if not history.messages:
        raise InvalidRecord("no GENERATION or TOOL observation with messages: expected Langfuse observations "
                            "whose input / output hold chat messages or Responses API items")
    parts = history_parts(history)
    metadata: dict[str, Any] = {"source": "langfuse"}
    for key, target in (("name", "trace_name"), ("sessionId", "session_id"), ("userId", "user_id")):
        if isinstance(trace.get(key), str) and trace[key] not in ("", "None"):
            metadata[target] = trace[key]
    tags = loads_if_json(trace.get("tags"))
    if isinstance(tags, list) and tags:
        metadata["tags"] = tags
    if history.models:
        metadata["model"] = history.models[0]
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    trace_id = str(trace.get("id") or "")
    if not trace_id:
        raise InvalidRecord("trace has no 'id'")
    try:
        messages = messages_from_parts(parts, "observations", history_lines(history))
    except InvalidRecord as err:
        if err.line is None:  # about the conversation as a whole
            raise
        if observation_line is None:  # an observation's number, and no lines to name: the export's line
            raise type(err)(err.message, source=err.source) from None
        raise _at(err, observation_line(err.line - 1)) from None
    return Transcript(id=f"langfuse/{trace_id}", messages=messages,
                      metadata=metadata, tools=tuple(history.tools.values()) or options.tools or ())


def observation_content(observation: dict[str, Any]) -> SpanContent | None:
    kind = observation.get("type")
    where = f"observation {observation.get('id')!r}"
    if kind == "GENERATION":
        content = SpanContent()
        content.inputs = _messages(observation.get("input"), f"{where}.input", content.tools)
        content.outputs = _output(observation.get("output"), f"{where}.output", content)
        model = observation.get("model") or observation.get("providedModelName")
        content.model = content.model or (model if isinstance(model, str) else None)
        return content
    output = loads_if_json(observation.get("output"))
    tool_message = isinstance(output, dict) and output.get("type") == "tool" and "tool_call_id" in output
    if kind == "TOOL" or tool_message:
        name = output.get("name") if tool_message else observation.get("name")
        call_id = output.get("tool_call_id") if tool_message else None
        result = output.get("content") if tool_message else ("" if output is None else output)
        failed = observation.get("level") == "ERROR" or (tool_message and output.get("status") == "error")
        return SpanContent(execution=(Call(name=str(name or ""), arguments=loads_if_json(observation.get("input")),
                                           id=call_id),
                                      Result(content=result, id=call_id, name=str(name or ""), is_error=failed)))
    return None


def _is_tool_definition(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return message.get("role") == "tool" and "tool_call_id" not in message and isinstance(content, dict) \
        and content.get("type") == "function"


def _chat_message(message: dict[str, Any], where: str) -> Msg:
    extra = message.get("additional_kwargs")
    if "tool_calls" not in message and isinstance(extra, dict) and extra.get("tool_calls"):
        message = {**message, "tool_calls": extra["tool_calls"]}
    return openai_message(message, where, message.get("role"))


def _messages(raw: Any, where: str, tools: list[ToolSpec]) -> list[Msg]:
    raw = loads_if_json(raw)
    if raw is None:
        return []
    if isinstance(raw, str):
        return [("user", (Text(role="user", text=raw),))]
    if isinstance(raw, dict) and "messages" in raw:
        raw = raw["messages"]
    if isinstance(raw, dict):
        raw = [raw]
    out: list[Msg] = []
    items: list[Part] = []
    for i, entry in enumerate(need_list(raw, where)):
        entry = need_dict(entry, f"{where}[{i}]")
        if _is_tool_definition(entry):
            tools.append(tool_spec(entry["content"], f"{where}[{i}].content"))
        elif ("type" in entry and "role" not in entry) or entry.get("type") in ("message", "function_call",
                                                                                "function_call_output"):
            items += item_parts(entry, f"{where}[{i}]", tools)
            continue
        else:
            out += _grouped(items)
            items = []
            out.append(_chat_message(entry, f"{where}[{i}]"))
    return out + _grouped(items)


def _grouped(parts: list[Part]) -> list[Msg]:
    """Responses items as messages: consecutive assistant text and calls are one assistant message."""
    out: list[Msg] = []
    for part in parts:
        role = "tool" if isinstance(part, Result) else "assistant" if isinstance(part, (Call, Skipped)) else (
            part.role if isinstance(part, Text) else "assistant")
        if out and out[-1][0] == role and role in ("assistant", "tool"):
            out[-1] = (role, (*out[-1][1], part))
        else:
            out.append((role, (part,)))
    return out


def _output(raw: Any, where: str, content: SpanContent) -> list[Msg]:
    raw = loads_if_json(raw)
    if raw is None:
        return []
    if isinstance(raw, str):
        return [("assistant", (Text(role="assistant", text=raw),))]
    if isinstance(raw, dict) and raw.get("object") == "response":
        if isinstance(raw.get("model"), str):
            content.model = raw["model"]
        if isinstance(raw.get("instructions"), str) and raw["instructions"]:
            content.system = [("system", (Text(role="system", text=raw["instructions"]),))]
        content.tools += response_tools(raw.get("tools"))
        parts: list[Part] = []
        for i, item in enumerate(need_list(raw.get("output") or [], f"{where}.output")):
            parts += item_parts(need_dict(item, f"{where}.output[{i}]"), f"{where}.output[{i}]", content.tools)
        return _grouped(parts)
    if isinstance(raw, dict) and "role" not in raw and "messages" not in raw:
        return [("assistant", (Text(role="assistant", text=json.dumps(raw, ensure_ascii=False)),))]
    return _messages(raw, where, content.tools)
