"""inspect_ai eval logs: ``.json`` (``{"version", "eval", "samples": [...]}``) and ``.eval`` (a zip with
``header.json`` and ``samples/<id>_epoch_<n>.json``, read with the standard library).

- One transcript per sample and epoch, id ``inspect/<task>/<sample id>/epoch-<epoch>``; metadata: source
  ``inspect_ai``, task, model, sample id, epoch, target, and the sample's score values.
- ``messages`` are inspect's ChatMessages: ``tool_calls`` carry ``function`` (the name) and ``arguments``
  already as objects (stored as the JSON string OpenAI sends); a tool message's ``error`` (``{type,
  message}``: parsing, timeout, approval...) makes the result ``Error: <type>: <message>``, followed by
  whatever output the tool still returned. Content lists keep their text; ``reasoning`` parts are skipped
  and counted, images become ``[image]``.
- Large content is stored as ``attachment://<hash>`` and resolved from the sample's ``attachments``; a
  sample without ``messages`` is rebuilt from its ``message_pool`` (inspect's de-duplicated messages).
- Tools: the ``tools`` of the sample's last ``model`` event (the messages do not carry them).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict, need_list, tool_spec
from scorer.importers.jsondoc import JsonDocument, member_items, starts_with
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
from scorer.model import ToolSpec, Transcript

NAME = "inspect-ai"
DESCRIPTION = "inspect_ai eval logs (.json or .eval)"
ATTACHMENT = "attachment://"


def sniff(path: Path, head: bytes) -> bool:
    if head.startswith(b"PK") and path.suffix == ".eval":
        return True
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return body.startswith(b"{") and b'"eval"' in head and (b'"samples"' in head or b'"plan"' in head) \
        and b'"version"' in head


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    if zipfile.is_zipfile(path):
        yield from _eval_zip(path, options)
    else:
        yield from _eval_json(path, options)


def _eval_json(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    # As inspect writes it (eval before samples), a block at a time: memory for a sample, not the log.
    streamed = member_items(path, "samples", ("eval",)) if starts_with(path, b"{") else None
    if streamed is not None:
        head, items = streamed
        try:
            for line, sample in items:
                yield from _guarded(lambda s=sample: sample_transcript(s, head, options), source, line)
        except InvalidRecord as err:
            yield err.located(source, None)
        return
    try:
        doc = JsonDocument.read(path)
        root = doc.root()
        if doc.kind(root) != "object":
            raise InvalidRecord("expected an inspect_ai eval log {\"version\", \"eval\", \"samples\": [...]}",
                                source=source, line=doc.line(root))
        header: dict[str, Any] = {}
        samples: list[tuple[int, Any]] = []
        for key, pos, value in doc.members(root):
            if key == "samples" and doc.kind(pos) == "array":
                samples = [(item_line, item) for item_line, _, item in doc.items(pos)]
            else:
                header[key] = value
    except InvalidRecord as err:
        yield err
        return
    if "eval" not in header:
        yield InvalidRecord("no 'eval': expected an inspect_ai eval log {\"version\", \"eval\", \"samples\": [...]}",
                            source=source, line=1)
        return
    for line, sample in samples:
        yield from _guarded(lambda s=sample: sample_transcript(s, header, options), source, line)


def sample_converter(path: Path, options: ImportOptions) -> Callable[[int, Any], list[Item]] | None:
    """How one sample of the ``.json`` eval log ``path`` converts (alone: an import may convert them in several
    processes), its ``eval`` read a block at a time; None when the log is not laid out as inspect writes it
    (``convert`` reads it whole then)."""
    streamed = member_items(path, "samples", ("eval",)) if starts_with(path, b"{") else None
    if streamed is None:
        return None
    head, source = streamed[0], str(path)

    def convert(line: int, sample: Any) -> list[Item]:
        return _guarded(lambda: sample_transcript(sample, head, options), source, line)

    return convert


def _eval_zip(path: Path, options: ImportOptions) -> Iterator[Item]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        yield InvalidRecord(f"not a readable .eval archive ({exc})", source=str(path))
        return
    with archive:
        names = archive.namelist()
        if "header.json" not in names:
            yield InvalidRecord("no header.json: expected an inspect_ai .eval archive", source=str(path))
            return
        try:  # the strict reader, as for every file: no NaN / Infinity / 1e400 in a sample's scores or ids
            header = need_dict(strict_json.loads(archive.read("header.json")), "header.json")
        except InvalidRecord as exc:
            yield InvalidRecord(f"header.json is not a JSON object ({exc.message})", source=f"{path}/header.json")
            return
        members = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
        for member in members:
            where = f"{path}/{member}"
            try:
                sample = strict_json.loads(archive.read(member), source=where)
            except InvalidRecord as exc:
                yield exc
                continue
            yield from _guarded(lambda s=sample: sample_transcript(s, header, options), where, None)


def _guarded(build: Any, source: str, line: int | None) -> list[Item]:
    try:
        return [Converted(build(), line)]
    except InvalidRecord as err:
        return [err.located(source, line)]
    except ValidationError as exc:
        return [InvalidRecord(describe_validation_error(exc), source=source, line=line)]


def sample_transcript(value: Any, header: dict[str, Any], options: ImportOptions) -> Transcript:
    sample = need_dict(value, "the sample")
    attachments: dict[str, Any] = sample["attachments"] if isinstance(sample.get("attachments"), dict) else {}
    messages = sample.get("messages")
    if not messages and sample.get("message_pool"):
        messages = sample["message_pool"]
    parts: list[Part] = []
    for i, raw in enumerate(need_list(messages, "messages")):
        parts += _message_parts(need_dict(raw, f"messages[{i}]"), f"messages[{i}]", attachments)
    eval_info: dict[str, Any] = header["eval"] if isinstance(header.get("eval"), dict) else {}
    task = str(eval_info.get("task") or "task")
    sample_id = sample.get("id")
    if sample_id is None:
        raise InvalidRecord("a sample without an id")
    epoch = sample.get("epoch", 1)
    metadata: dict[str, Any] = {"source": "inspect_ai", "task": task, "sample_id": sample_id, "epoch": epoch}
    if isinstance(eval_info.get("model"), str):
        metadata["model"] = eval_info["model"]
    if isinstance(sample.get("target"), (str, list)):
        metadata["target"] = sample["target"]
    scores = sample.get("scores")
    if isinstance(scores, dict) and scores:
        metadata["scores"] = {name: s.get("value") for name, s in scores.items() if isinstance(s, dict)}
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    return Transcript(id=f"inspect/{task}/{sample_id}/epoch-{epoch}", messages=messages_from_parts(parts, "messages"),
                      tools=_tools(sample) or options.tools or (), metadata=metadata)


def _resolve(text: Any, attachments: dict[str, Any]) -> Any:
    if isinstance(text, str) and text.startswith(ATTACHMENT):
        return attachments.get(text[len(ATTACHMENT):], text)
    return text


def _content(content: Any, where: str, attachments: dict[str, Any], parts: list[Part]) -> str:
    content = _resolve(content, attachments)
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for k, raw in enumerate(need_list(content, where)):
        block = need_dict(raw, f"{where}[{k}]")
        kind = block.get("type")
        if kind == "text":
            texts.append(str(_resolve(block.get("text", ""), attachments)))
        elif kind == "reasoning":
            parts.append(Skipped("reasoning"))
        else:
            texts.append(f"[{kind}]")
    return "\n".join(texts)


def _message_parts(message: dict[str, Any], where: str, attachments: dict[str, Any]) -> list[Part]:
    role = message.get("role")
    parts: list[Part] = []
    text = _content(message.get("content"), f"{where}.content", attachments, parts)
    if role in ("system", "user"):
        return [*parts, Text(role=role, text=text)]
    if role == "assistant":
        if text:
            parts.append(Text(role="assistant", text=text))
        for k, raw in enumerate(need_list(message.get("tool_calls") or [], f"{where}.tool_calls")):
            call = need_dict(raw, f"{where}.tool_calls[{k}]")
            arguments = call.get("arguments", {})
            parts.append(Call(name=str(call.get("function") or ""),
                              arguments=_resolve(arguments, attachments), id=call.get("id") or None))
        return [*parts, Turn()] if parts else [Text(role="assistant", text=""), Turn()]
    if role == "tool":
        error = message.get("error")
        if isinstance(error, dict):
            described = f"{error.get('type')}: {error.get('message', '')}"
            text = described if not text or text == error.get("message") else f"{described}\n{text}"
        return [*parts, Result(content=text, id=message.get("tool_call_id") or None,
                               name=message.get("function"), is_error=isinstance(error, dict))]
    raise InvalidRecord(f"{where}.role should be system, user, assistant or tool, got {role!r}")


def _tools(sample: dict[str, Any]) -> tuple[ToolSpec, ...]:
    tools: Any = None
    for event in sample.get("events") or []:
        if isinstance(event, dict) and event.get("event") == "model" and event.get("tools"):
            tools = event["tools"]
    if not tools:
        return ()
    return tuple(tool_spec({k: v for k, v in need_dict(t, f"tools[{i}]").items()
                            if k in ("name", "description", "parameters")}, f"tools[{i}]")
                 for i, t in enumerate(need_list(tools, "tools")))
