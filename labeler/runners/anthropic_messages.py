"""Translate a gold case's context (OpenAI chat shape) into an Anthropic Messages request.

``system`` messages become the top-level ``system``; assistant tool calls become ``tool_use`` blocks;
tool results become ``tool_result`` blocks in the following user turn; consecutive turns of the same role
merge, because the Messages API wants user and assistant to alternate.
"""

from __future__ import annotations

import json
from typing import Any

from scorer.model import Message, ToolSpec


def tools_for_anthropic(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        schema = dict(tool.parameters)
        schema.setdefault("type", "object")
        out.append({"name": _tool_name(tool.name), "description": tool.description, "input_schema": schema})
    return out


def _tool_name(name: str) -> str:
    # Anthropic tool names allow [a-zA-Z0-9_-]; BFCL names such as "spotify.play" carry dots.
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:128]


def tool_name_map(tools: tuple[ToolSpec, ...]) -> dict[str, str]:
    """API-safe name -> the tool's real name, to translate the model's calls back."""
    return {_tool_name(t.name): t.name for t in tools}


def to_anthropic(messages: tuple[Message, ...]) -> tuple[str | None, list[dict[str, Any]]]:
    """(system, messages) for ``messages.create``."""
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []

    def push(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    for m in messages:
        if m.role == "system":
            if m.content:
                system_parts.append(m.content)
        elif m.role == "user":
            push("user", [{"type": "text", "text": m.content or "(empty)"}])
        elif m.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for call in m.tool_calls:
                args = call.parsed_arguments()
                blocks.append({"type": "tool_use", "id": _tool_id(call.id), "name": _tool_name(call.function.name),
                               "input": args if isinstance(args, dict) else {"_raw": args}})
            push("assistant", blocks or [{"type": "text", "text": "(no content)"}])
        else:  # tool
            push("user", [{"type": "tool_result", "tool_use_id": _tool_id(m.tool_call_id or ""),
                           "content": m.content if m.content is not None else ""}])
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(conversation start)"}]})
    return ("\n\n".join(system_parts) or None), turns


def _tool_id(call_id: str) -> str:
    # tool_use ids must match ^[a-zA-Z0-9_-]+$; keep readable ids, rewrite the rest deterministically.
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in call_id)
    return safe or "call"


def arguments_json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)
