"""MCP JSON-RPC logs: the ``tools/call`` requests a client sent and the responses it got, one message
per line (or a JSON array of them); each file is one session and becomes one transcript.

- A ``tools/call`` request ``{"id", "method": "tools/call", "params": {"name", "arguments"}}`` is a
  call with the JSON-RPC id as its call id; requests sent before any response came back are one turn of
  parallel calls.
- Its response answers it by id: ``structuredContent`` when present (kept as JSON), else the
  ``content`` blocks' text (images and audio as ``[image]``..., ``resource_link`` as its uri). A result
  with ``isError: true`` and a JSON-RPC ``error`` (``-32602: Unknown tool ...``) are shown as
  ``Error: ...``.
- A ``tools/list`` response gives the transcript its tools (annotations and outputSchema kept).
- Other methods (``initialize``, notifications, ``resources/*``...) are not tool calls: skipped and
  counted in ``metadata.skipped``. A response whose request is not in the log is an error naming its id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict, need_list
from scorer.importers.parts import Call, Part, Result, Skipped, messages_from_parts, skipped_counts
from scorer.importers.records import each_record
from scorer.importers.tools_file import tools_from_json
from scorer.model import ToolSpec, Transcript

NAME = "mcp"
DESCRIPTION = "MCP JSON-RPC logs (tools/call requests and their responses)"

_MARKERS = re.compile(rb'"jsonrpc"\s*:\s*"2\.0"')


def sniff(path: Path, head: bytes) -> bool:
    return bool(_MARKERS.search(head))


def result_content(result: dict[str, Any], where: str) -> Any:
    if result.get("structuredContent") is not None:
        return result["structuredContent"]
    texts = []
    for k, raw in enumerate(need_list(result.get("content") or [], f"{where}.content")):
        block = need_dict(raw, f"{where}.content[{k}]")
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "resource_link":
            texts.append(f"[resource_link {block.get('uri', '')}]")
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "text" in block["resource"]:
            texts.append(str(block["resource"]["text"]))
        else:
            texts.append(f"[{kind}]")
    return "\n".join(texts)


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    parts: list[Part] = []
    lines: list[int] = []  # the line of each part: an error at a part names the message it came from
    tools: list[ToolSpec] = []
    methods: dict[str, str] = {}  # JSON-RPC id -> method of the request
    first_line: int | None = None
    failed = False
    for located in each_record(path):
        if isinstance(located, InvalidRecord):
            failed = True
            yield located
            continue
        line, value = located
        first_line = first_line or line
        try:
            new = _message(need_dict(value, "the message"), methods, tools)
            parts += new
            lines += [line] * len(new)
        except InvalidRecord as err:
            failed = True
            yield err.located(source, line)
    if failed:
        return
    if not any(isinstance(p, Call) for p in parts):
        yield InvalidRecord("no tools/call requests in this log: expected JSON-RPC messages "
                            "{\"jsonrpc\": \"2.0\", \"id\", \"method\": \"tools/call\", \"params\": {\"name\", "
                            "\"arguments\"}} and their responses (a tools/list result is a tools file: "
                            "pass it with --tools)", source=source, line=first_line)
        return
    metadata: dict[str, Any] = {"source": "mcp"}
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    try:
        yield Converted(Transcript(id=path.stem, messages=messages_from_parts(parts, "log", lines), metadata=metadata,
                                   tools=tuple(tools) or options.tools or ()), first_line)
    except InvalidRecord as err:  # a part's error names its line; one about the session as a whole, the first
        yield err.located(source, first_line)
    except ValidationError as exc:  # a rule of the transcript: about the session as a whole
        yield InvalidRecord(describe_validation_error(exc), source=source, line=first_line)


def _message(message: dict[str, Any], methods: dict[str, str], tools: list[ToolSpec]) -> list[Part]:
    if message.get("jsonrpc") != "2.0":
        raise InvalidRecord("not a JSON-RPC 2.0 message (no \"jsonrpc\": \"2.0\")")
    rpc_id = None if message.get("id") is None else json.dumps(message["id"]) if not isinstance(
        message["id"], str) else message["id"]
    if "method" in message:
        requested = str(message["method"])
        if rpc_id is not None:
            methods[rpc_id] = requested
        if requested != "tools/call":
            return [Skipped(requested)]
        params = need_dict(message.get("params"), "params")
        return [Call(name=str(params.get("name") or ""), arguments=params.get("arguments") or {}, id=rpc_id)]
    if "result" not in message and "error" not in message:
        raise InvalidRecord("a JSON-RPC message with neither method, result nor error")
    method = methods.get(rpc_id) if rpc_id is not None else None
    if method is None:
        raise InvalidRecord(f"a response to request {rpc_id!r}, which is not in this log before it")
    if method == "tools/list" and "result" in message:
        tools.extend(tools_from_json(message))
        return []
    if method != "tools/call":
        return []
    if "error" in message:
        error = need_dict(message["error"], "error")
        return [Result(content=f"{error.get('code')}: {error.get('message', '')}", id=rpc_id, is_error=True)]
    result = need_dict(message["result"], "result")
    return [Result(content=result_content(result, "result"), id=rpc_id, is_error=result.get("isError") is True)]
