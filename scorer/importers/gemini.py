"""Gemini / google-genai ``generateContent`` traffic as logged (see ``logged``): a request body
(``contents``, ``systemInstruction``, ``tools``), a response body (``candidates``), a
``{"request", "response"}`` pair, one per line or a JSON array. camelCase (REST) and snake_case
(the Python SDK's dumps) are both read.

- ``systemInstruction`` is the first system message; role ``model`` is the assistant; a content's
  ``text`` parts are joined; ``thought: true`` parts are the model's scratchpad: skipped and counted.
- ``functionCall`` parts are calls (several in one content are parallel calls); ``functionResponse``
  parts are results. The API gives calls no ids: a response without one answers the oldest unanswered
  call of its name. A response ``{"error": ...}`` (without ``output`` / ``result``) is a failed call,
  shown as ``Error: ...``; any other response is kept as its JSON.
- ``functionDeclarations`` become tools; ``parameters`` (OpenAPI subset, ``"type": "OBJECT"``) get
  lower-case types, ``parametersJsonSchema`` is kept as it is.
- ``inlineData`` / ``fileData`` become ``[inline_data]`` / ``[file_data]``; ``executableCode`` and
  ``codeExecutionResult`` (the hosted code tool) are skipped and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from scorer.errors import InvalidRecord
from scorer.importers import logged
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import need_dict, need_list, tool_spec
from scorer.importers.parts import Call, Part, Result, Skipped, Text, Turn
from scorer.model import ToolSpec

NAME = "gemini"
DESCRIPTION = "Gemini / google-genai generateContent bodies (request, response or pairs)"

_MARKERS = re.compile(rb'"(contents|candidates)"\s*:\s*\[')
PART_KINDS = "text, functionCall, functionResponse, inlineData, fileData, executableCode, codeExecutionResult"


def sniff(path: Path, head: bytes) -> bool:
    return bool(_MARKERS.search(head)) and (b'"parts"' in head)


def _get(obj: dict[str, Any], camel: str) -> Any:
    """``obj[camel]``, or its snake_case spelling."""
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower())


def content_parts(content: dict[str, Any], where: str) -> list[Part]:
    role = content.get("role") or "user"
    speaker: Literal["system", "user", "assistant"] = "assistant" if role == "model" else (
        "system" if role == "system" else "user")
    if role not in ("user", "model", "system", "function", "tool"):
        raise InvalidRecord(f"{where}.role should be user or model, got {role!r}")
    parts: list[Part] = []
    texts: list[str] = []
    for k, raw in enumerate(need_list(content.get("parts") or [], f"{where}.parts")):
        part = need_dict(raw, f"{where}.parts[{k}]")
        call, response = _get(part, "functionCall"), _get(part, "functionResponse")
        if part.get("thought") is True:
            parts.append(Skipped("thought"))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(call, dict):
            parts.append(Call(name=str(call.get("name") or ""), arguments=call.get("args") or {},
                              id=call.get("id") or None))
        elif isinstance(response, dict):
            parts.append(_result(response))
        elif _get(part, "inlineData") is not None or _get(part, "fileData") is not None:
            texts.append("[inline_data]" if _get(part, "inlineData") is not None else "[file_data]")
        elif _get(part, "executableCode") is not None or _get(part, "codeExecutionResult") is not None:
            parts.append(Skipped("code_execution"))
        elif {k for k in part if part[k] is not None} <= {"thoughtSignature", "thought_signature"}:
            parts.append(Skipped("thought"))
        else:
            keys = ", ".join(sorted(k for k in part if part[k] is not None)) or "nothing"
            raise InvalidRecord(f"{where}.parts[{k}] has {keys}; expected one of {PART_KINDS}")
    text = [Text(role=speaker, text="\n".join(texts))] if texts else []
    if speaker == "assistant":
        return [*text, *parts, Turn()]
    return [*parts, *text]


def _result(response: dict[str, Any]) -> Result:
    body = response.get("response")
    failed = isinstance(body, dict) and "error" in body and not ({"output", "result"} & body.keys())
    return Result(content=body["error"] if failed and isinstance(body, dict) else ({} if body is None else body),
                  id=response.get("id") or None, name=response.get("name"), is_error=failed)


def _lower_types(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


def _tools(raw: Any) -> list[ToolSpec]:
    tools = []
    for i, entry in enumerate(need_list(raw or [], "tools")):
        entry = need_dict(entry, f"tools[{i}]")
        for k, decl in enumerate(need_list(_get(entry, "functionDeclarations") or [],
                                           f"tools[{i}].functionDeclarations")):
            decl = need_dict(decl, f"tools[{i}].functionDeclarations[{k}]")
            schema = _get(decl, "parametersJsonSchema")
            if schema is None and decl.get("parameters") is not None:
                schema = _lower_types(decl["parameters"])
            spec = {"name": decl.get("name"), "description": decl.get("description") or ""}
            tools.append(tool_spec({**spec, "parameters": schema} if schema is not None else spec,
                                   f"tools[{i}].functionDeclarations[{k}]"))
    return tools


def read_request(body: dict[str, Any]) -> logged.Body:
    parts: list[Part] = []
    system = _get(body, "systemInstruction")
    if isinstance(system, str):
        parts.append(Text(role="system", text=system))
    elif isinstance(system, dict):
        texts = [str(p.get("text", "")) for p in need_list(system.get("parts") or [], "systemInstruction.parts")
                 if isinstance(p, dict)]
        parts.append(Text(role="system", text="\n".join(texts)))
    for i, content in enumerate(need_list(body.get("contents"), "contents")):
        parts += content_parts(need_dict(content, f"contents[{i}]"), f"contents[{i}]")
    return logged.Body(parts=parts, tools=_tools(body.get("tools")),
                       model=body.get("model") if isinstance(body.get("model"), str) else None)


def read_response(body: dict[str, Any]) -> logged.Body:
    candidates = need_list(body.get("candidates"), "candidates")
    parts: list[Part] = []
    if candidates:  # the first candidate is the one a client continues with
        content = need_dict(need_dict(candidates[0], "candidates[0]").get("content") or {"role": "model"},
                            "candidates[0].content")
        parts = content_parts({"role": "model", **content}, "candidates[0].content")
    model = _get(body, "modelVersion")
    return logged.Body(parts=parts, model=model if isinstance(model, str) else None)


PROVIDER = logged.Provider(
    source="gemini", is_request=lambda b: "contents" in b, read_request=read_request,
    is_response=lambda b: "candidates" in b, read_response=read_response,
    expected="Gemini request ({\"contents\": [...]}), response ({\"candidates\": [...]}) or "
             "{\"request\", \"response\"} pair")


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    yield from logged.convert(path, options, PROVIDER)
