"""Anthropic Messages conversations: JSON Lines (one conversation per line) or a JSON array of them.

Each conversation is ``{"system"?, "messages": [...], "tools"?: [...], "id"?, "metadata"?}`` -- the body
of a Messages API request, optionally with the final assistant reply appended. Mapping decisions:

- ``system`` (a string or a list of text blocks) becomes the first message, role ``system``.
- An assistant message's ``text`` blocks become its content (joined by newlines) and its ``tool_use``
  blocks its ``tool_calls`` -- several tool_use blocks in one message stay one assistant message with
  several (parallel) calls, as the model produced them. ``thinking`` blocks are the model's scratchpad,
  not part of the conversation, and are left out.
- A user message's ``tool_result`` blocks become ``tool`` messages (in block order, before anything
  else); its remaining text becomes one ``user`` message after them. A result with ``is_error: true``
  is prefixed ``Error: `` so the failure stays visible. Images become the placeholder ``[image]``.
- ``tools`` ``{name, description, input_schema}`` become ``{name, description, parameters}``; a
  conversation without ``tools`` gets ``ImportOptions.tools`` (``toolgold import --tools``), if given.
- ``id`` defaults to ``<file stem>:<line>`` for JSON Lines and ``<file stem>:<n>`` (the 1-based position)
  for an array, where several conversations may share a line. ``model`` goes into ``metadata``.
- Any other block type is an error naming it, rather than content silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.importers import logged
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import (
    dumps_arguments,
    each_json_line,
    guard,
    json_type,
    metadata_of,
    need_dict,
    need_list,
    need_str,
    result_text,
    tool_specs,
    type_of,
    unique_call_ids,
)
from scorer.importers.jsondoc import array_items, starts_with
from scorer.importers.parts import Call, Part, Result, Skipped, Text, Turn
from scorer.importers.records import each_record
from scorer.model import FunctionCall, Message, ToolCallRef, ToolSpec, Transcript

NAME = "anthropic"
DESCRIPTION = "Anthropic Messages conversations (JSON Lines or a JSON array)"

_MARKERS = re.compile(rb'"type"\s*:\s*"(tool_use|tool_result)"|"input_schema"\s*:|"system"\s*:')
_RESPONSE = re.compile(rb'"type"\s*:\s*"message"\s*,\s*"role"\s*:\s*"assistant"|"stop_reason"\s*:')
SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if body.startswith(b"["):
        return b'"messages"' in body and bool(_MARKERS.search(body))
    first_line = body.split(b"\n", 1)[0]
    response_line = first_line.startswith(b"{") and bool(_RESPONSE.search(first_line))
    if not (first_line.startswith(b"{") and (b'"messages"' in first_line or response_line)):
        return False
    try:
        record = strict_json.loads(first_line)
    except InvalidRecord:  # a line longer than the head (or bad JSON, reported by convert): judge by the markers
        return bool(_MARKERS.search(first_line))
    return isinstance(record, dict) and _looks_anthropic(record)


def _looks_anthropic(record: dict[str, Any]) -> bool:
    """A top-level ``system``, a tool with ``input_schema`` or a tool_use / tool_result block (in the
    request of a logged pair too), or a Messages API response body."""
    response = record.get("response")
    if isinstance(response, dict) and response.get("type") == "message":
        return True
    if isinstance(record.get("request"), dict):
        record = record["request"]
    if record.get("type") == "message" and record.get("role") == "assistant":
        return True
    if "system" in record:
        return True
    tools = record.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return True
    messages = record.get("messages")
    return isinstance(messages, list) and any(
        isinstance(m, dict) and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in m["content"])
        for m in messages)


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    if _is_api_log(path):
        yield from logged.convert(path, options, PROVIDER)
        return
    if starts_with(path, b"["):
        try:  # a block at a time: memory for a conversation, not the file
            for n, (line, value) in enumerate(array_items(path), start=1):
                yield from guard(source, line, transcript, value, f"{path.stem}:{n}", options.tools)
        except InvalidRecord as err:
            yield err
        return
    yield from each_json_line(path, lambda line, value: guard(
        source, line, transcript, value, f"{path.stem}:{line}", options.tools))


def transcript(value: Any, default_id: str, default_tools: tuple[ToolSpec, ...] | None = None) -> Transcript:
    record = need_dict(value, "the conversation")
    if "messages" not in record:
        raise InvalidRecord("no 'messages': expected {\"system\", \"messages\": [...], \"tools\": [...]}")
    messages: list[Message] = []
    system = record.get("system")
    if system:
        messages.append(Message(role="system", content=_joined_text(system, "system")))
    for index, entry in enumerate(need_list(record["messages"], "messages")):
        messages += _convert_message(need_dict(entry, f"messages[{index}]"), f"messages[{index}]")
    metadata = metadata_of(record)
    if isinstance(record.get("model"), str):
        metadata.setdefault("model", record["model"])
    tools = tool_specs(record["tools"]) if "tools" in record else default_tools or ()
    return Transcript(id=str(record.get("id") or default_id), messages=unique_call_ids(messages),
                      tools=tools, metadata=metadata)


def _convert_message(entry: dict[str, Any], where: str) -> list[Message]:
    role = entry.get("role")
    if role not in ("user", "assistant"):
        raise InvalidRecord(f"{where}.role should be 'user' or 'assistant', got {role!r}")
    content = entry.get("content")
    if isinstance(content, str):
        return [Message(role=role, content=content)]
    blocks = need_list(content, f"{where}.content")
    texts: list[str] = []
    calls: list[ToolCallRef] = []
    results: list[Message] = []
    for k, raw in enumerate(blocks):
        block_where = f"{where}.content[{k}]"
        block = need_dict(raw, block_where)
        kind = type_of(block, block_where)
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            texts.append("[image]")
        elif kind in SKIPPED_BLOCKS:
            continue
        elif kind == "tool_use" and role == "assistant":
            calls.append(ToolCallRef(
                id=need_str(block.get("id"), f"{block_where}.id"),
                function=FunctionCall(name=need_str(block.get("name"), f"{block_where}.name"),
                                      arguments=dumps_arguments(block.get("input", {})))))
        elif kind == "tool_result" and role == "user":
            text = _result_content(block.get("content", ""), block_where)
            if block.get("is_error") and not text.startswith("Error"):
                text = f"Error: {text}"
            results.append(Message(role="tool", tool_call_id=need_str(block.get("tool_use_id"),
                                                                       f"{block_where}.tool_use_id"),
                                   content=text))
        else:
            raise InvalidRecord(f"{block_where}: a {kind!r} block is not expected in a {role} message")
    joined = "\n".join(texts) if texts else None
    if role == "assistant":
        return [Message(role="assistant", content=joined, tool_calls=tuple(calls))]
    return results + ([Message(role="user", content=joined)] if joined is not None or not results else [])


def _joined_text(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    parts = []
    for k, block in enumerate(need_list(value, where)):
        block = need_dict(block, f"{where}[{k}]")
        if block.get("type") != "text":
            raise InvalidRecord(f"{where}[{k}] should be a text block, got {block.get('type')!r}")
        parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def _result_content(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for k, block in enumerate(value):
            block = need_dict(block, f"{where}.content[{k}]")
            parts.append(str(block.get("text", "")) if block.get("type") == "text" else f"[{block.get('type')}]")
        return "\n".join(parts)
    if value is None:
        return ""
    if isinstance(value, (dict, int, float, bool)):
        return result_text(value)
    raise InvalidRecord(f"{where}.content should be a string or a list of blocks, got {json_type(value)}")


# --------------------------------------------------------------------------------------------------
# Logged API traffic: request/response pairs and response bodies (see ``logged``)
# --------------------------------------------------------------------------------------------------


def _is_api_log(path: Path) -> bool:
    for located in each_record(path):
        if isinstance(located, tuple) and isinstance(located[1], dict):
            value = located[1]
            return "request" in value or "response" in value or value.get("type") == "message"
        return False
    return False


def request_parts(body: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    if body.get("system"):
        parts.append(Text(role="system", text=_joined_text(body["system"], "system")))
    for index, entry in enumerate(need_list(body.get("messages", []), "messages")):
        parts += _message_parts(need_dict(entry, f"messages[{index}]"), f"messages[{index}]")
    return parts


def _message_parts(entry: dict[str, Any], where: str) -> list[Part]:
    role = entry.get("role")
    if role not in ("user", "assistant"):
        raise InvalidRecord(f"{where}.role should be 'user' or 'assistant', got {role!r}")
    content = entry.get("content")
    if isinstance(content, str):
        return [Text(role=role, text=content), *([Turn()] if role == "assistant" else [])]
    parts: list[Part] = []
    texts: list[str] = []
    for k, raw in enumerate(need_list(content, f"{where}.content")):
        block_where = f"{where}.content[{k}]"
        block = need_dict(raw, block_where)
        kind = type_of(block, block_where)
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            texts.append("[image]")
        elif kind in SKIPPED_BLOCKS:
            parts.append(Skipped(str(kind)))
        elif kind == "tool_use" and role == "assistant":
            parts.append(Call(name=need_str(block.get("name"), f"{block_where}.name"),
                              arguments=block.get("input", {}), id=need_str(block.get("id"), f"{block_where}.id")))
        elif kind == "tool_result" and role == "user":
            parts.append(Result(content=_result_content(block.get("content", ""), block_where),
                                id=need_str(block.get("tool_use_id"), f"{block_where}.tool_use_id"),
                                is_error=block.get("is_error") is True))
        else:
            raise InvalidRecord(f"{block_where}: a {kind!r} block is not expected in a {role} message")
    text = [Text(role=role, text="\n".join(texts))] if texts else []
    if role == "assistant":
        return [*text, *parts, Turn()]
    return [*parts, *text]


def read_request(body: dict[str, Any]) -> logged.Body:
    return logged.Body(parts=request_parts(body), tools=list(tool_specs(body.get("tools"))),
                       model=body.get("model") if isinstance(body.get("model"), str) else None)


def read_response(body: dict[str, Any]) -> logged.Body:
    return logged.Body(parts=_message_parts({"role": "assistant", "content": body.get("content", [])}, "content"),
                       model=body.get("model") if isinstance(body.get("model"), str) else None)


PROVIDER = logged.Provider(
    source="anthropic", is_request=lambda b: "messages" in b, read_request=read_request,
    is_response=lambda b: b.get("type") == "message", read_response=read_response,
    expected="Messages API request ({\"messages\": [...]}), response ({\"type\": \"message\", \"content\": "
             "[...]}) or {\"request\", \"response\"} pair")
