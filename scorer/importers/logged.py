"""Provider API traffic as it is logged: a request body per line, a ``{"request": ..., "response": ...}``
pair per line, or a JSON array of either.

A provider module says how to read one request body and one response body into parts
(``scorer.importers.parts``); this module does the rest the same way for every provider:

- a pair is the request's history followed by the response's reply;
- calls of one conversation repeat its history: a record whose history starts with everything an earlier
  conversation already holds (its request and its reply) *continues* that conversation, so the last
  request of a conversation -- the fullest history -- and its response make one transcript;
- the transcript id is ``<file stem>:<line of the conversation's first record>``;
- each part keeps the line of the record that first held it, so an error in the conversation (a result
  answering no call) names that record's line; an error about the conversation as a whole (no messages,
  a rule of the transcript) names its first record's line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict
from scorer.importers.parts import Call, Part, Result, Text, messages_from_parts, skipped_counts
from scorer.importers.records import each_record
from scorer.model import ToolSpec, Transcript


@dataclass
class Body:
    """What one logged body says: its parts, the tools offered, the model, and what was skipped."""

    parts: list[Part] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)
    model: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Provider:
    source: str
    """``metadata.source`` of the transcripts."""
    is_request: Callable[[dict[str, Any]], bool]
    read_request: Callable[[dict[str, Any]], Body]
    is_response: Callable[[dict[str, Any]], bool]
    read_response: Callable[[dict[str, Any]], Body]
    expected: str
    """What a record should look like, for the error on anything else."""


@dataclass
class Thread:
    line: int
    parts: list[Part]
    lines: list[int]
    """The line of the record each part first came from (parallel to ``parts``)."""
    tools: dict[str, ToolSpec]
    model: str | None
    metadata: dict[str, Any]


def read_record(provider: Provider, value: Any) -> Body:
    """One logged record (a request, a response, or a pair) as one body of parts."""
    record = need_dict(value, "the record")
    if "request" in record or "response" in record:
        request = provider.read_request(need_dict(record.get("request", {}), "request")) \
            if record.get("request") is not None else Body()
        response = provider.read_response(need_dict(record["response"], "response")) \
            if record.get("response") is not None else Body()
        return Body(parts=request.parts + response.parts, tools=request.tools + response.tools,
                    model=response.model or request.model, metadata={**request.metadata, **response.metadata})
    if provider.is_request(record):
        return provider.read_request(record)
    if provider.is_response(record):
        return provider.read_response(record)
    raise InvalidRecord(f"not a {provider.expected}")


def convert(path: Path, options: ImportOptions, provider: Provider) -> Iterator[Item]:
    """Every conversation of the file and every bad record, in the order of their first line."""
    source = str(path)
    threads: list[Thread] = []
    out: list[tuple[int, Item]] = []
    for located in each_record(path):
        if isinstance(located, InvalidRecord):
            out.append((located.line or 0, located))
            continue
        line, value = located
        try:
            body = read_record(provider, value)
        except InvalidRecord as err:
            out.append((line, err.located(source, line)))
            continue
        except ValidationError as exc:  # a part that breaks a rule of the model: one line, never a traceback
            out.append((line, InvalidRecord(describe_validation_error(exc), source=source, line=line)))
            continue
        _add(threads, body, line)
    for thread in threads:
        try:
            item: Item = Converted(_transcript(thread, f"{path.stem}:{thread.line}", provider, options), thread.line)
        except InvalidRecord as err:
            item = err.located(source, thread.line)
        except ValidationError as exc:
            item = InvalidRecord(describe_validation_error(exc), source=source, line=thread.line)
        out.append((thread.line, item))
    out.sort(key=lambda entry: entry[0])
    yield from (item for _, item in out)


def _add(threads: list[Thread], body: Body, line: int) -> None:
    parts = [p for p in body.parts if not (isinstance(p, Text) and not p.text)]
    for thread in reversed(threads):
        continued = _continued(thread.parts, thread.lines, parts, line)
        if continued is not None:
            thread.parts, thread.lines = continued
            for spec in body.tools:
                thread.tools.setdefault(spec.name, spec)
            thread.model = body.model or thread.model
            thread.metadata.update(body.metadata)
            return
    threads.append(Thread(line=line, parts=parts, lines=[line] * len(parts), tools={t.name: t for t in body.tools}, model=body.model,
                          metadata=dict(body.metadata)))


def _continued(old: list[Part], old_lines: list[int], new: list[Part],
               line: int) -> tuple[list[Part], list[int]] | None:
    """``new`` with what only ``old`` knew, when ``new`` continues ``old``; else None. With the parts, their
    lines: a part ``old`` held keeps its line, a part only ``new`` holds gets ``line``.

    Clients replaying history sometimes leave out a result the provider produced itself (pydantic-ai
    replays an ``mcp_call`` without its ``output``): such results are ignored when comparing and kept
    in the merged conversation, after their call."""
    if not old:
        return None
    answered = {p.id for p in new if isinstance(p, Result) and p.id}
    dropped = {p.id: (p, n) for p, n in zip(old, old_lines, strict=True)
               if isinstance(p, Result) and p.id and p.id not in answered}
    kept = [(p, n) for p, n in zip(old, old_lines, strict=True) if not (isinstance(p, Result) and p.id in dropped)]
    if len(new) < len(kept) or not all(_same(a, b) for (a, _), b in zip(kept, new, strict=False)):
        return None
    merged: list[Part] = []
    lines: list[int] = []
    for index, part in enumerate(new):
        merged.append(part)
        lines.append(kept[index][1] if index < len(kept) else line)
        if isinstance(part, Call) and part.id in dropped:
            result, result_line = dropped.pop(part.id)
            merged.append(result)
            lines.append(result_line)
    return merged, lines


def _same(old: Part, new: Part) -> bool:
    """Equal parts; a call or result the provider sent without an id matches the same one replayed with
    the id the client gave it (Gemini's function calls have none; clients add their own)."""
    if isinstance(old, (Call, Result)) and type(old) is type(new) and (old.id is None or new.id is None):
        return old == replace(new, id=old.id)
    return old == new


def _transcript(thread: Thread, default_id: str, provider: Provider, options: ImportOptions) -> Transcript:
    if not thread.parts:
        raise InvalidRecord(f"no messages in this record: expected a {provider.expected}")
    metadata: dict[str, Any] = {"source": provider.source, **thread.metadata}
    if thread.model:
        metadata["model"] = thread.model
    skipped = skipped_counts(thread.parts)
    if skipped:
        metadata["skipped"] = skipped
    return Transcript(id=default_id, messages=messages_from_parts(thread.parts, "messages", thread.lines),
                      metadata=metadata,
                      tools=tuple(thread.tools.values()) or options.tools or ())
