"""OpenAI Responses API traffic as logged, and OpenAI Agents SDK run-state files.

Records (see ``logged``): a request body (``input``, ``instructions``, ``tools``), a response body
(``"object": "response"``, ``output``), or a ``{"request", "response"}`` pair; one per line or a JSON
array. Items:

- ``message`` (or a bare ``{role, content}``): text; ``input_text`` / ``output_text`` parts are joined,
  images and files become ``[input_image]``...; ``developer`` is ``system``; ``instructions`` is the first
  system message;
- ``function_call`` (``call_id``, JSON-string ``arguments`` kept byte for byte) and
  ``function_call_output``; ``custom_tool_call`` (free-text ``input``, stored as ``{"input": text}``) and
  ``custom_tool_call_output``;
- ``mcp_call``: a call carrying its own ``output`` (or ``error``, shown as ``Error: ...``);
  ``mcp_list_tools``: its tools join the transcript's tools (with their MCP ``annotations``);
  ``mcp_approval_request``: a call still waiting for approval;
- ``reasoning``, ``mcp_approval_response``, ``item_reference`` and the hosted tools' own items
  (``web_search_call``...) are not conversation: skipped and counted in ``metadata.skipped``.

Run-state files (``$schemaVersion`` + ``generated_items``): ``original_input`` then every generated
item's ``raw_item``, in order; ``tool_approval_item`` s repeat a call already made and are listed in
``metadata.pending_approvals`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers import logged
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import need_dict, need_list, tool_spec, type_of
from scorer.importers.jsondoc import DocumentLines
from scorer.importers.parts import Call, Part, Result, Skipped, Text, messages_from_parts, skipped_counts
from scorer.importers.records import each_record
from scorer.model import ToolSpec, Transcript

NAME = "openai-responses"
DESCRIPTION = "OpenAI Responses API bodies (request, response or pairs) and Agents SDK run states"

_MARKERS = re.compile(rb'"type"\s*:\s*"(function_call|function_call_output|mcp_call|mcp_list_tools|'
                      rb'custom_tool_call)"|"object"\s*:\s*"response"|"generated_items"\s*:')
_REQUEST = re.compile(rb'^\s*\{\s*"(request|input|instructions|model)"\s*:')
SKIPPED_ITEMS = frozenset({"reasoning", "mcp_approval_response", "item_reference", "web_search_call",
                           "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call",
                           "image_generation_call", "local_shell_call", "local_shell_call_output",
                           "shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output"})
ITEM_TYPES = ("message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, "
              "mcp_call, mcp_list_tools, mcp_approval_request, reasoning")
ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}


def sniff(path: Path, head: bytes) -> bool:
    if b'"messages"' in head[:4096] or b'"contents"' in head[:4096]:
        return False
    if b'"observations"' in head and b'"trace"' in head:  # a Langfuse export holds Responses objects
        return False
    if _MARKERS.search(head):
        return True
    # a log of plain requests: the first record starts with a request's own keys and has an input list
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n[").split(b"\n", 1)[0]
    return bool(_REQUEST.match(first)) and b'"input"' in first


def items_parts(items: Any, where: str, tools: list[ToolSpec]) -> list[Part]:
    if isinstance(items, str):
        return [Text(role="user", text=items)]
    parts: list[Part] = []
    for i, raw in enumerate(need_list(items, where)):
        parts += item_parts(need_dict(raw, f"{where}[{i}]"), f"{where}[{i}]", tools)
    return parts


def item_parts(item: dict[str, Any], where: str, tools: list[ToolSpec]) -> list[Part]:
    kind = type_of(item, where, "message" if "role" in item else None)
    if kind == "message":
        role = ROLES.get(str(item.get("role")))
        if role is None:
            raise InvalidRecord(f"{where}.role should be user, system, developer or assistant, "
                                f"got {item.get('role')!r}")
        return [Text(role=role, text=_text(item.get("content"), f"{where}.content"))]  # type: ignore[arg-type]
    if kind == "function_call":
        return [Call(name=str(item.get("name") or ""), arguments=item.get("arguments"), id=_call_id(item, where))]
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [Result(content=_output(item.get("output", "")), id=_call_id(item, where))]
    if kind == "custom_tool_call":
        return [Call(name=str(item.get("name") or ""), arguments={"input": item.get("input", "")},
                     id=_call_id(item, where))]
    if kind == "mcp_call":
        call = Call(name=str(item.get("name") or ""), arguments=item.get("arguments"), id=item.get("id") or None)
        error = item.get("error")
        if error:
            return [call, Result(content=error, id=call.id, name=call.name, is_error=True)]
        if item.get("output") is None:  # not answered (yet): a call without its result
            return [call]
        return [call, Result(content=_output(item["output"]), id=call.id, name=call.name)]
    if kind == "mcp_approval_request":
        return [Call(name=str(item.get("name") or ""), arguments=item.get("arguments"), id=item.get("id") or None)]
    if kind == "mcp_list_tools":
        for k, raw in enumerate(need_list(item.get("tools") or [], f"{where}.tools")):
            tools.append(mcp_tool(need_dict(raw, f"{where}.tools[{k}]"), f"{where}.tools[{k}]"))
        return [Skipped("mcp_list_tools")]
    if kind in SKIPPED_ITEMS:
        return [Skipped(str(kind))]
    raise InvalidRecord(f"{where}: an item of type {kind!r}; expected one of {ITEM_TYPES}")


def mcp_tool(raw: dict[str, Any], where: str) -> ToolSpec:
    """An MCP tool (``inputSchema`` / ``input_schema``), keeping its annotations."""
    spec = {"name": raw.get("name"), "description": raw.get("description"),
            "parameters": raw.get("inputSchema", raw.get("input_schema"))}
    tool = tool_spec({k: v for k, v in spec.items() if v is not None}, where)
    annotations = raw.get("annotations")
    if isinstance(annotations, dict) and annotations:
        tool = tool.model_copy(update={"annotations": dict(annotations)})
    return tool


def _call_id(item: dict[str, Any], where: str) -> str:
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str) or not call_id:
        raise InvalidRecord(f"{where}: a {item.get('type')} item without its call_id")
    return call_id


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for k, raw in enumerate(need_list(content or [], where)):
        part = need_dict(raw, f"{where}[{k}]")
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
        elif kind == "refusal":
            texts.append(str(part.get("refusal", "")))
        else:
            texts.append(f"[{kind}]")
    return "\n".join(texts)


def _output(output: Any) -> Any:
    """A function output: a string as it is; a list of content parts as its text."""
    if isinstance(output, list) and all(isinstance(p, dict) and "type" in p for p in output):
        return _text(output, "output")
    return output


def response_tools(raw: Any) -> list[ToolSpec]:
    tools = []
    for i, entry in enumerate(need_list(raw or [], "tools")):
        entry = need_dict(entry, f"tools[{i}]")
        if entry.get("type", "function") == "function":
            tools.append(tool_spec(entry, f"tools[{i}]"))
        elif entry.get("type") == "custom":
            tools.append(ToolSpec(name=str(entry.get("name")), description=str(entry.get("description") or ""),
                                  parameters={"type": "object", "properties": {"input": {"type": "string"}},
                                              "required": ["input"]}))
        # hosted tools (mcp servers, web_search...) have no schema of their own: mcp_list_tools lists them
    return tools


def read_request(body: dict[str, Any]) -> logged.Body:
    tools = response_tools(body.get("tools"))
    parts: list[Part] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        parts.append(Text(role="system", text=body["instructions"]))
    parts += items_parts(body.get("input", []), "input", tools)
    return logged.Body(parts=parts, tools=tools, model=body.get("model") if isinstance(body.get("model"), str)
                       else None)


def read_response(body: dict[str, Any]) -> logged.Body:
    tools: list[ToolSpec] = []
    parts = items_parts(body.get("output", []), "output", tools)
    return logged.Body(parts=parts, tools=tools + response_tools(body.get("tools")),
                       model=body.get("model") if isinstance(body.get("model"), str) else None)


PROVIDER = logged.Provider(
    source="openai-responses", is_request=lambda b: "input" in b, read_request=read_request,
    is_response=lambda b: b.get("object") == "response" or "output" in b, read_response=read_response,
    expected="Responses API request ({\"input\": ...}), response ({\"object\": \"response\", \"output\": [...]}) "
             "or {\"request\", \"response\"} pair")


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    first = next(iter(each_record(path, split_arrays=False)), None)
    if isinstance(first, tuple) and isinstance(first[1], dict) and "generated_items" in first[1]:
        yield from _run_states(path, options)
        return
    yield from logged.convert(path, options, PROVIDER)


def _run_states(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    lines = DocumentLines(path)
    for located in each_record(path):
        if isinstance(located, InvalidRecord):
            yield located
            continue
        line, value = located
        try:
            yield Converted(run_state(need_dict(value, "the run state"), f"{path.stem}:{line}", options), line)
        except _ItemError as err:  # an error in one generated item: named at that item's line
            at = lines.line(line, ("generated_items", err.index))
            yield InvalidRecord(err.error.message, source=source, line=at or line)
        except InvalidRecord as err:
            yield err.located(source, line)
        except ValidationError as exc:
            yield InvalidRecord(describe_validation_error(exc), source=source, line=line)


class _ItemError(Exception):
    """An ``InvalidRecord`` found in generated item ``index`` of a run state (its line is found by the caller)."""

    def __init__(self, error: InvalidRecord, index: int) -> None:
        super().__init__(str(error))
        self.error, self.index = error, index


def run_state(state: dict[str, Any], default_id: str, options: ImportOptions) -> Transcript:
    """An Agents SDK ``RunState``: the original input, then each generated item's raw item. An error in one
    generated item (or at a part it gave) is an ``_ItemError`` naming the item; one in ``original_input`` or
    about the run as a whole (the transcript's own rules) is an ``InvalidRecord`` for the run state's line."""
    tools: list[ToolSpec] = []
    parts = items_parts(state.get("original_input", []), "original_input", tools)
    numbers: list[int | None] = [None] * len(parts)  # generated item of each part, 1-based (None: the input)
    pending = []
    seen_calls: set[str] = set()
    for i, raw in enumerate(need_list(state.get("generated_items"), "generated_items")):
        where = f"generated_items[{i}]"
        try:
            item = need_dict(raw, where)
            raw_item = need_dict(item.get("raw_item"), f"{where}.raw_item")
            if item.get("type") == "tool_approval_item":
                pending.append(str(raw_item.get("call_id") or raw_item.get("id")))
                if (raw_item.get("call_id") or raw_item.get("id")) in seen_calls:
                    continue
            if item.get("type") == "handoff_call_item" and "type" not in raw_item:
                raw_item = {**raw_item, "type": "function_call"}
            new = item_parts(raw_item, f"{where}.raw_item", tools)
        except InvalidRecord as err:
            raise _ItemError(err, i) from None
        seen_calls |= {p.id for p in new if isinstance(p, Call) and p.id}
        parts += new
        numbers += [i + 1] * len(new)
    metadata: dict[str, Any] = {"source": "openai-agents", "schema_version": state.get("$schemaVersion")}
    agent = state.get("current_agent")
    if isinstance(agent, dict) and isinstance(agent.get("name"), str):
        metadata["agent"] = agent["name"]
    if pending:
        metadata["pending_approvals"] = pending
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    try:
        messages = messages_from_parts(parts, "generated_items", numbers)
    except InvalidRecord as err:
        if err.line is None:  # in original_input, or about the run as a whole
            raise
        raise _ItemError(type(err)(err.message), err.line - 1) from None
    return Transcript(id=default_id, messages=messages, metadata=metadata, tools=tuple(tools) or options.tools or ())
