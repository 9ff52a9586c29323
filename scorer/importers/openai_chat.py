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

Produces transcripts only: the messages say what the agent did, not what it should have done.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import each_json_line, guard, metadata_of, need_dict, openai_messages, tool_specs
from scorer.model import ToolSpec, Transcript

NAME = "openai"
DESCRIPTION = "OpenAI chat JSON Lines ({messages, tools} per line)"

_MESSAGES = re.compile(rb'^\s*\{.*"messages"\s*:\s*\[', re.DOTALL)


def sniff(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return bool(_MESSAGES.match(first_line))


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    yield from each_json_line(path, lambda line, value: guard(
        source, line, transcript, value, f"{path.stem}:{line}", options.tools))


def transcript(value: Any, default_id: str, default_tools: tuple[ToolSpec, ...] | None = None) -> Transcript:
    record = need_dict(value, "the line")
    if "messages" not in record:
        raise InvalidRecord("no 'messages': expected {\"messages\": [...], \"tools\": [...]}")
    metadata = metadata_of(record)
    if isinstance(record.get("model"), str):
        metadata.setdefault("model", record["model"])
    tools = tool_specs(record.get("tools")) + tool_specs(record.get("functions"), "functions")
    if "tools" not in record and "functions" not in record:
        tools = default_tools or ()
    return Transcript(id=str(record.get("id") or default_id), messages=openai_messages(record["messages"]),
                      tools=tools, metadata=metadata)
