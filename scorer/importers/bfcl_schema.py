"""BFCL's function schemas in JSON Schema terms.

BFCL writes parameter types with Python names. ``dict`` -> ``object``, ``float`` -> ``number``,
``tuple`` -> ``array`` and ``any`` -> no ``type`` at all (any value); the mapping is applied wherever a
schema can nest (``properties``, ``items``, ``additionalProperties``, ``anyOf``/``oneOf``/``allOf``).
A parameter whose ``default`` is ``null`` also accepts ``null`` (its type becomes ``[<type>, "null"]``
and ``null`` joins its ``enum``):
BFCL's functions are Python signatures, where ``price_max: float = None`` means "a number or None",
and BFCL's answers do pass ``null`` for such parameters. Everything else -- descriptions, enums,
defaults, ``required``, BFCL's own ``optional`` flag -- is kept as written: unknown keywords are legal
JSON Schema and the labeling app shows them.
"""

from __future__ import annotations

from typing import Any

PSEUDO_TYPES = {"dict": "object", "float": "number", "tuple": "array"}
NESTED_SCHEMA = ("items", "additionalProperties", "not")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def json_schema(node: Any) -> Any:
    """``node`` with BFCL's pseudo-types mapped, recursively."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            mapped = _type(value)
            if mapped is not None:
                out[key] = mapped
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: json_schema(schema) for name, schema in value.items()}
        elif key in NESTED_SCHEMA and isinstance(value, dict):
            out[key] = json_schema(value)
        elif key in SCHEMA_LISTS and isinstance(value, list):
            out[key] = [json_schema(schema) for schema in value]
        else:
            out[key] = value
    if "default" in node and node["default"] is None:
        if isinstance(out.get("type"), str) and out["type"] != "null":
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def _type(value: Any) -> Any:
    if isinstance(value, str):
        return None if value == "any" else PSEUDO_TYPES.get(value, value)
    if isinstance(value, list):
        types = [PSEUDO_TYPES.get(t, t) for t in value if t != "any"]
        return types if len(types) == len(value) else None
    return value


def bfcl_type(schema: Any) -> str | None:
    """The BFCL type name written in a (not yet mapped) property schema."""
    return schema.get("type") if isinstance(schema, dict) and isinstance(schema.get("type"), str) else None
