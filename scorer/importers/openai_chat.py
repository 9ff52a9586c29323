"""OpenAI chat JSON Lines: one conversation per line.

Each line is ``{"messages": [...], "tools": [...], "id"?, "metadata"?}`` -- the shape of chat-completion
requests, fine-tuning files and most agent logs. Mapping decisions:

- ``tools`` may be OpenAI ``{"type": "function", "function": {...}}`` entries or plain
  ``{name, description, parameters}``; the legacy ``functions`` key is read the same way. Vendor extras
  such as ``strict`` are dropped.
- ``developer`` messages become ``system`` messages; legacy ``function_call`` / ``role: function``
  messages become tool calls and tool results (a result answers the latest unanswered call of its name).
- Content given as a list of parts keeps its text parts (joined by newlines); other parts (images,
  audio) become a placeholder such as ``[image_url]`` -- the transcript never fetches anything.
- ``arguments`` given as an object (some loggers do) are stored as the JSON string OpenAI would send.
- Repeated tool-call ids are renamed ``<id>~2``... and each tool result is linked to the latest call
  with its id (toolgold needs unique ids; real logs reuse them).
- A line without ``tools`` gets ``ImportOptions.tools`` (``toolgold import --tools``), if given.
- ``id`` defaults to ``<file stem>:<line>``; ``metadata`` is kept, plus ``model`` when the line has one.
  Other request fields (``temperature``, ``tool_choice`` ...) are not part of the conversation and are
  left out.
- A line with a top-level ``format`` string names another record format (``{"format": "acme.log/1",
  "messages": [...]}``): it is refused with ``unknown format 'acme.log/1'``, not read as chat. Ollama's
  ``"format": "json"`` (its JSON mode) is the one exception.

Produces transcripts only: the messages say what the agent did, not what it should have done.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers import logged
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import (
    each_json_line,
    guard,
    metadata_of,
    need_dict,
    need_list,
    openai_messages,
    tool_specs,
)
from scorer.importers.parts import Call, Part, Result, Text, Turn
from scorer.importers.records import each_record
from scorer.model import ToolSpec, Transcript

NAME = "openai"
DESCRIPTION = "OpenAI chat JSON Lines ({messages, tools} per line)"

NOT_A_RECORD_FORMAT = frozenset({"json"})
"""``format`` values that say how the agent should answer, not what the line is: Ollama's JSON mode."""
_MESSAGES = re.compile(rb'^\s*\{.*"messages"\s*:\s*\[', re.DOTALL)
_LOGGED = re.compile(rb'^\s*\[?\s*\{.*("object"\s*:\s*"chat\.completion"|"choices"\s*:\s*\[)', re.DOTALL)


def sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    first_line = body.split(b"\n", 1)[0]
    return bool(_MESSAGES.match(first_line) or _LOGGED.match(first_line)
                or (body.startswith(b"[") and b'"messages"' in body and b'"role"' in body))


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    if is_api_log(path):
        yield from logged.convert(path, options, PROVIDER)
        return
    source = str(path)
    yield from each_json_line(path, lambda line, value: guard(
        source, line, transcript, value, f"{path.stem}:{line}", options.tools))


def is_api_log(path: Path) -> bool:
    """Whether the file holds logged API traffic (request/response pairs, response bodies, or a JSON
    array of bodies) rather than one conversation per line."""
    first = next(iter(each_record(path, split_arrays=False)), None)
    if not isinstance(first, tuple):
        return False
    value = first[1]
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and ("request" in value or "response" in value or "choices" in value)


def chat_parts(raw: Any, what: str = "messages") -> list[Part]:
    """OpenAI chat messages as parts (legacy ``function_call`` and ``role: function`` included)."""
    parts: list[Part] = []
    for message in openai_messages(raw, what):
        if message.role == "tool":
            parts.append(Result(content=message.content or "", id=message.tool_call_id))
        elif message.role == "assistant":
            if message.content:
                parts.append(Text(role="assistant", text=message.content))
            parts += [Call(name=c.function.name, arguments=c.function.arguments, id=c.id) for c in message.tool_calls]
            parts.append(Turn())
        else:
            parts.append(Text(role=message.role, text=message.content or ""))
    return parts


def read_request(body: dict[str, Any]) -> logged.Body:
    tools = [*tool_specs(body.get("tools")), *tool_specs(body.get("functions"), "functions")]
    return logged.Body(parts=chat_parts(body.get("messages", [])), tools=tools,
                       model=body.get("model") if isinstance(body.get("model"), str) else None)


def read_response(body: dict[str, Any]) -> logged.Body:
    choices = need_list(body.get("choices"), "choices")
    parts = chat_parts([need_dict(need_dict(choices[0], "choices[0]").get("message"), "choices[0].message")],
                       "choices[0].message") if choices else []
    return logged.Body(parts=parts, model=body.get("model") if isinstance(body.get("model"), str) else None)


PROVIDER = logged.Provider(
    source="openai", is_request=lambda b: "messages" in b, read_request=read_request,
    is_response=lambda b: "choices" in b, read_response=read_response,
    expected="chat completion request ({\"messages\": [...]}), response ({\"choices\": [...]}) or "
             "{\"request\", \"response\"} pair")


def transcript(value: Any, default_id: str, default_tools: tuple[ToolSpec, ...] | None = None) -> Transcript:
    record = need_dict(value, "the line")
    if "messages" not in record:
        raise InvalidRecord("no 'messages': expected {\"messages\": [...], \"tools\": [...]}")
    tag = record.get("format")
    if isinstance(tag, str) and tag not in NOT_A_RECORD_FORMAT:
        # A line that names its own format is in that format, not OpenAI chat (which has no such field):
        # reading it as chat would import it silently wrong.
        raise InvalidRecord(f"unknown format {tag!r}")
    metadata = metadata_of(record)
    if isinstance(record.get("model"), str):
        metadata.setdefault("model", record["model"])
    tools = tool_specs(record.get("tools")) + tool_specs(record.get("functions"), "functions")
    if "tools" not in record and "functions" not in record:
        tools = default_tools or ()
    return Transcript(id=str(record.get("id") or default_id), messages=openai_messages(record["messages"]),
                      tools=tools, metadata=metadata)
