"""Vercel AI SDK: ``ModelMessage`` lists, persisted ``UIMessage`` lists, and UI message streams.

- **ModelMessage lists** (what ``generateText`` / ``streamText`` take and return): ``{role, content}``
  with ``text``, ``tool-call`` (``toolCallId``, ``toolName``, v4 ``args`` / v5 ``input``) and
  ``tool-result`` parts (v4 ``result``; v5 ``output`` ``{type: text|json|error-text|error-json|content,
  value}``, the ``error-*`` types shown as ``Error: ...``). ``reasoning`` parts are skipped and
  counted; ``image`` / ``file`` become ``[image]`` / ``[file]``. One conversation per line, a JSON
  array of messages, or ``{"messages": [...]}``.
- **UIMessage lists** (``useChat`` state): ``{id, role, parts}`` with ``tool-<name>`` / ``dynamic-tool``
  parts (``toolCallId``, ``input``, ``state``, ``output`` / ``errorText``).
- **UI message streams** (a JSON array of chunks, JSON Lines, or the SSE ``data: {...}`` lines as sent):
  ``text-delta`` s joined per text part; ``tool-input-start`` + ``tool-input-delta`` s re-assembled into
  the arguments string (``tool-input-available`` gives them whole); ``tool-output-available`` /
  ``tool-output-error`` are results; each ``start-step`` begins a new assistant message. A
  ``tool-approval-request`` leaves its call unanswered and lists it in ``metadata.pending_approvals``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict, need_list, need_str, type_of
from scorer.importers.jsondoc import JsonDocument
from scorer.importers.parts import (
    Call,
    Part,
    Result,
    Skipped,
    Text,
    Turn,
    messages_from_parts,
    skipped_counts,
)
from scorer.importers.records import each_record
from scorer.model import Transcript

NAME = "vercel-ai"
DESCRIPTION = "Vercel AI SDK ModelMessage / UIMessage lists and UI message streams"

_MARKERS = re.compile(rb'"type"\s*:\s*"(tool-call|tool-result|tool-input-start|tool-input-available|'
                      rb'tool-output-available|text-delta|start-step|dynamic-tool|tool-[A-Za-z0-9_-]+)"')
STREAM_KINDS = frozenset({"start", "finish", "start-step", "finish-step", "text-start", "text-delta", "text-end",
                          "reasoning-start", "reasoning-delta", "reasoning-end", "tool-input-start",
                          "tool-input-delta", "tool-input-available", "tool-input-error", "tool-output-available",
                          "tool-output-error", "tool-approval-request", "error", "abort", "message-metadata",
                          "source-url", "source-document", "file"})
PART_KINDS = "text, tool-call, tool-result, reasoning, image, file"


def sniff(path: Path, head: bytes) -> bool:
    return bool(_MARKERS.search(head)) and (b'"toolCallId"' in head or b'"text-delta"' in head)


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    data = path.read_bytes()
    if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"data:"):
        try:  # undecodable bytes are refused where they are, never replaced by U+FFFD
            text = data.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as exc:
            yield InvalidRecord(f"not valid UTF-8 (byte {exc.start})", source=source,
                                line=data.count(b"\n", 0, exc.start) + 1)
            return
        yield from _guarded(lambda: stream_transcript(_sse_chunks(text, source), path.stem, options), source, 1)
        return
    first = next(iter(each_record(path, split_arrays=False)), None)
    if isinstance(first, tuple) and isinstance(first[1], list) and first[1] and isinstance(first[1][0], dict) \
            and _stream_kind(first[1][0]):
        try:
            doc = JsonDocument.read(path)
            chunks = [(line, value) for line, _, value in doc.items(doc.root())]
        except InvalidRecord as err:
            yield err
            return
        yield from _guarded(lambda: stream_transcript(chunks, path.stem, options), source, first[0])
        return
    if isinstance(first, tuple) and isinstance(first[1], dict) and _stream_kind(first[1]):
        records = list(each_record(path))
        bad = next((c for c in records if isinstance(c, InvalidRecord)), None)
        if bad is not None:  # a chunk that is not JSON is refused, never left out of the stream
            yield bad
            return
        chunks = [c for c in records if isinstance(c, tuple)]
        yield from _guarded(lambda: stream_transcript(chunks, path.stem, options), source, first[0])
        return
    for located in each_record(path, split_arrays=False):
        if isinstance(located, InvalidRecord):
            yield located
            continue
        line, value = located
        yield from _guarded(lambda v=value, n=line: conversation(v, f"{path.stem}:{n}", options), source, line)


def _stream_kind(item: dict[str, Any]) -> bool:
    """Whether ``item`` is a UI message stream chunk (its ``type`` one of ``STREAM_KINDS``)."""
    kind = item.get("type")
    return isinstance(kind, str) and kind in STREAM_KINDS


def _guarded(build: Any, source: str, line: int | None) -> list[Item]:
    try:
        return [Converted(build(), line)]
    except InvalidRecord as err:
        return [err.located(source, line)]
    except ValidationError as exc:
        return [InvalidRecord(describe_validation_error(exc), source=source, line=line)]


def _sse_chunks(text: str, source: str) -> list[tuple[int, Any]]:
    chunks = []
    for n, line in enumerate(text.splitlines(), start=1):
        payload = line.removeprefix("data:").strip() if line.startswith("data:") else None
        if not payload or payload == "[DONE]":
            continue
        try:
            chunks.append((n, strict_json.loads(payload, source=source, line=n)))
        except InvalidRecord as exc:
            raise InvalidRecord(f"after 'data:': {exc.message}", source=source, line=n) from None
    return chunks


# --------------------------------------------------------------------------------------------------
# UI message streams
# --------------------------------------------------------------------------------------------------


def stream_transcript(chunks: list[tuple[int, Any]], stem: str, options: ImportOptions) -> Transcript:
    parts: list[Part] = []
    lines: list[int] = []  # the line of the chunk each part starts at: an error at a part names that chunk
    step: list[tuple[str, str, int]] = []  # the current step's pieces in order: ("text"|"call", id, line)
    texts: dict[str, list[str]] = {}
    calls: dict[str, dict[str, Any]] = {}
    results: list[tuple[Result, int]] = []
    pending: list[str] = []

    def end_step(line: int) -> None:
        nonlocal step, results
        for kind, key, at in step:
            if kind == "text":
                parts.append(Text(role="assistant", text="".join(texts.pop(key, []))))
            else:
                call = calls[key]
                arguments = call["input"] if "input" in call else "".join(call["deltas"]) or "{}"
                parts.append(Call(name=call["name"], arguments=arguments, id=key))
            lines.append(at)
        parts.extend(result for result, _ in results)
        lines.extend(at for _, at in results)
        if step or results:
            parts.append(Turn())
            lines.append(line)
        step, results = [], []

    for line, raw in chunks:
        try:
            chunk = need_dict(raw, f"chunk at line {line}")
            kind = type_of(chunk, f"chunk at line {line}")
            if kind == "start-step":
                end_step(line)
            elif kind == "text-start":
                texts[str(chunk.get("id"))] = []
                step.append(("text", str(chunk.get("id")), line))
            elif kind == "text-delta":
                key = str(chunk.get("id"))
                if key not in texts:
                    texts[key] = []
                    step.append(("text", key, line))
                texts[key].append(str(chunk.get("delta", chunk.get("textDelta", ""))))
            elif kind == "reasoning-start":
                parts.append(Skipped("reasoning"))
                lines.append(line)
            elif kind in ("tool-input-start", "tool-input-available"):
                key = need_str(chunk.get("toolCallId"), "toolCallId")
                if key not in calls:
                    calls[key] = {"name": need_str(chunk.get("toolName"), "toolName"), "deltas": []}
                    step.append(("call", key, line))
                if kind == "tool-input-available":
                    calls[key]["input"] = chunk.get("input", {})
            elif kind == "tool-input-delta":
                key = need_str(chunk.get("toolCallId"), "toolCallId")
                if key not in calls:
                    raise InvalidRecord(f"tool-input-delta for {key!r} before its tool-input-start")
                calls[key]["deltas"].append(str(chunk.get("inputTextDelta", "")))
            elif kind in ("tool-output-available", "tool-output-error"):
                key = need_str(chunk.get("toolCallId"), "toolCallId")
                failed = kind == "tool-output-error"
                results.append((Result(content=chunk.get("errorText", "") if failed else chunk.get("output", ""),
                                       id=key, is_error=failed), line))
            elif kind == "tool-approval-request":
                pending.append(need_str(chunk.get("toolCallId"), "toolCallId"))
            elif kind not in STREAM_KINDS:
                raise InvalidRecord(f"a {kind!r} chunk; expected a UI message stream chunk (text-delta, "
                                    "tool-input-start, tool-input-delta, tool-output-available, start-step ...)")
        except InvalidRecord as err:
            raise err.located(None, line) from None
    end_step(chunks[-1][0] if chunks else 0)
    metadata: dict[str, Any] = {"source": "vercel-ai"}
    if pending:
        metadata["pending_approvals"] = pending
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    # the stream's own rules (the transcript's) are about it as a whole: the caller names its first line
    return Transcript(id=stem, messages=messages_from_parts(parts, "stream", lines), metadata=metadata,
                      tools=options.tools or ())


# --------------------------------------------------------------------------------------------------
# ModelMessage and UIMessage lists
# --------------------------------------------------------------------------------------------------


def conversation(value: Any, default_id: str, options: ImportOptions) -> Transcript:
    record_id = default_id
    if isinstance(value, dict):
        record_id = str(value.get("id") or default_id)
        value = value.get("messages")
    parts: list[Part] = []
    for i, raw in enumerate(need_list(value, "messages")):
        parts += message_parts(need_dict(raw, f"messages[{i}]"), f"messages[{i}]")
    metadata: dict[str, Any] = {"source": "vercel-ai"}
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    return Transcript(id=record_id, messages=messages_from_parts(parts, "messages"), metadata=metadata,
                      tools=options.tools or ())


def message_parts(message: dict[str, Any], where: str) -> list[Part]:
    role = message.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        raise InvalidRecord(f"{where}.role should be system, user, assistant or tool, got {role!r}")
    content = message.get("parts", message.get("content"))
    if isinstance(content, str):
        return [Text(role="user" if role == "tool" else role, text=content), *([Turn()] if role == "assistant" else [])]
    out: list[Part] = []
    deferred: list[Part] = []  # a UIMessage tool part's result waits until its step's calls are all made
    for k, raw in enumerate(need_list(content, f"{where}.content")):
        pieces = _part(need_dict(raw, f"{where}.content[{k}]"), f"{where}.content[{k}]", role)
        if "parts" in message and pieces and isinstance(pieces[0], Call):
            out.append(pieces[0])
            deferred += pieces[1:]
            continue
        out += deferred + pieces
        deferred = []
    out += deferred
    return [*out, Turn()] if role == "assistant" else out


def _part(part: dict[str, Any], where: str, role: str) -> list[Part]:
    kind = str(part.get("type"))
    speaker = "assistant" if role in ("assistant", "tool") else role
    if kind == "text":
        return [Text(role=speaker, text=str(part.get("text", "")))]  # type: ignore[arg-type]
    if kind in ("reasoning", "step-start", "source-url", "source-document"):
        return [Skipped(kind)]
    if kind in ("image", "file"):
        return [Text(role=speaker, text=f"[{kind}]")]  # type: ignore[arg-type]
    if kind == "tool-call":
        arguments = part.get("input", part.get("args", {}))
        return [Call(name=need_str(part.get("toolName"), f"{where}.toolName"), arguments=arguments,
                     id=need_str(part.get("toolCallId"), f"{where}.toolCallId"))]
    if kind == "tool-result":
        call_id = need_str(part.get("toolCallId"), f"{where}.toolCallId")
        if "output" in part:
            output = need_dict(part["output"], f"{where}.output")
            kind_of = str(output.get("type", "json"))
            return [Result(content=output.get("value", ""), id=call_id, name=part.get("toolName"),
                           is_error=kind_of.startswith("error"))]
        return [Result(content=part.get("result", ""), id=call_id, name=part.get("toolName"),
                       is_error=part.get("isError") is True)]
    if kind in ("tool-approval-request", "tool-approval-response"):
        return [Skipped(kind)]
    if kind == "dynamic-tool" or (kind.startswith("tool-") and "toolCallId" in part):  # a UIMessage tool part
        name = part.get("toolName") if kind == "dynamic-tool" else kind.removeprefix("tool-")
        call = Call(name=need_str(name, f"{where}.toolName"), arguments=part.get("input", {}),
                    id=need_str(part.get("toolCallId"), f"{where}.toolCallId"))
        state = part.get("state")
        if state == "output-available":
            return [call, Result(content=part.get("output", ""), id=call.id, name=call.name)]
        if state == "output-error":
            return [call, Result(content=part.get("errorText", ""), id=call.id, name=call.name, is_error=True)]
        return [call]
    raise InvalidRecord(f"{where}: a {kind!r} part; expected one of {PART_KINDS} (or a UIMessage tool part)")
