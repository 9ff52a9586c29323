"""Tool schemas given with ``--tools`` (``import``, ``score``, ``drift``), in every shape teams keep them:

- a JSON array of tools: OpenAI ``{"type": "function", "function": {...}}``, plain ``{name, description,
  parameters}``, Anthropic ``{name, description, input_schema}`` or MCP ``{name, description,
  inputSchema, outputSchema?, annotations?}`` entries;
- an MCP ``tools/list`` result, bare (``{"tools": [...]}``) or as the JSON-RPC response
  (``{"jsonrpc": "2.0", "id", "result": {"tools": [...]}}``);
- one MCP tool definition (a server's tool snapshot).

MCP ``annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``,
``title``) and ``outputSchema`` are kept on the tool; ``title`` and ``icons`` beside them are display
details and are left out.
"""

from __future__ import annotations

from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.common import json_type, need_dict, need_list, tool_spec
from scorer.model import ToolSpec

EXPECTED = ("expected a JSON array of tool schemas, an MCP tools/list result ({\"tools\": [...]} or its "
            "JSON-RPC response) or one MCP tool")


def tool_from_any(raw: Any, what: str) -> ToolSpec:
    """One tool in any of the shapes above."""
    entry = need_dict(raw, what)
    if "inputSchema" not in entry and "outputSchema" not in entry and "annotations" not in entry:
        return tool_spec(entry, what)
    spec = {"name": entry.get("name"), "description": entry.get("description") or "",
            "parameters": entry.get("inputSchema")}
    tool = tool_spec({k: v for k, v in spec.items() if v is not None}, what)
    update: dict[str, Any] = {}
    if entry.get("annotations") is not None:
        update["annotations"] = dict(need_dict(entry["annotations"], f"{what}.annotations"))
    if entry.get("outputSchema") is not None:
        update["output_schema"] = dict(need_dict(entry["outputSchema"], f"{what}.outputSchema"))
    return ToolSpec.model_validate({**tool.model_dump(), **update}) if update else tool


def tools_from_json(value: Any) -> tuple[ToolSpec, ...]:
    """The tools of a parsed tools file; ``InvalidRecord`` naming the entry that is wrong."""
    if isinstance(value, dict):
        if "error" in value and "result" not in value:
            raise InvalidRecord(f"this is a JSON-RPC error response ({value['error']}), not a tools/list result")
        listed = value.get("result", value)
        if isinstance(listed, dict) and "tools" in listed:
            entries = need_list(listed["tools"], "tools")
            return tuple(tool_from_any(e, f"tools[{i}]") for i, e in enumerate(entries))
        if "name" in value:
            return (tool_from_any(value, "the tool"),)
        raise InvalidRecord(f"{EXPECTED}; got an object with {', '.join(sorted(value)) or 'no keys'}")
    if isinstance(value, list):
        return tuple(tool_from_any(e, f"tool {i}") for i, e in enumerate(value))
    raise InvalidRecord(f"{EXPECTED}; got {json_type(value)}")
