"""``model.json_schema_problem``: why a tool's ``parameters`` are not a JSON Schema. An everyday schema made of
plain JSON values is told valid from the value itself; anything else goes through the JSON text as before, so a
verdict and its message never change (a BFCL gold case's tools are its own: each is checked once, on import and
on scoring)."""

from __future__ import annotations

import json
import math
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import model, strict_json

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def _before(schema: Any) -> str | None:
    """The verdict through the JSON text (what ``json_schema_problem`` asked for every schema before)."""
    model._schema_problem.cache_clear()
    return model._schema_problem(json.dumps(schema, sort_keys=True))


def _now(schema: Any) -> str | None:
    model._SCHEMA_PROBLEMS.clear()
    model._schema_problem.cache_clear()
    return model.json_schema_problem(schema)


EVERYDAY = {"type": "object", "properties": {"q": {"type": "string", "description": "é 1.0, 8.854e-12"},
                                             "k": {"type": "number", "minimum": 0.5, "default": 1.0},
                                             "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["q"]}


def test_an_everyday_schema_of_plain_values_is_told_valid_without_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(text: str) -> str | None:
        raise AssertionError(f"the JSON text was checked: {text[:40]}")

    model._SCHEMA_PROBLEMS.clear()
    monkeypatch.setattr(model, "_schema_problem", refused)
    assert model.json_schema_problem(EVERYDAY) is None


class Kind(StrEnum):
    OBJECT = "object"


NOT_PLAIN = [
    {"type": "number", "maximum": math.nan},  # NaN: no JSON number
    {"type": "number", "minimum": -math.inf},
    {"type": "string", "description": "\ud800"},  # a lone surrogate
    {"type": "object", "properties": {"\udfff": {"type": "string"}}},
    {"type": "object", "required": ("a",)},  # a tuple: written as a list
    {"type": Kind.OBJECT},  # a str subclass
    {"type": "object", "default": True, "x": 2 ** 70},  # plain, valid: a long integer is JSON
    {"type": "object", "properties": {"a": {"type": "nope"}}},  # plain, invalid
]


@pytest.mark.parametrize("schema", NOT_PLAIN, ids=range(len(NOT_PLAIN)))
def test_a_schema_not_made_of_plain_values_gets_the_verdict_and_message_it_got(schema: dict[str, Any]) -> None:
    assert _now(schema) == _before(schema)


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize("depth", [90, 99, 100, 101, 150])  # two levels a step: 200 is strict_json's limit
def test_a_deep_schema_gets_the_verdict_it_got(depth: int) -> None:
    assert _now(_nested(depth)) == _before(_nested(depth))


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, 1.0, -0.0, 1e-7, math.nan, math.inf])
    | st.sampled_from(["object", "string", "integer", "array", "number", "x", "\ud800", "é"]),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner)
    | st.dictionaries(st.sampled_from(["type", "properties", "required", "items", "enum", "default", "minimum",
                                       "anyOf", "description", "x"]), inner, max_size=3),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_any_value_gets_the_verdict_and_message_it_got(value: Any) -> None:
    if not isinstance(value, dict):
        value = {"type": "object", "properties": {"v": value}}
    assert _now(value) == _before(value)


@pytest.mark.skipif(not (SHARED / "bfcl").is_dir(), reason="no BFCL data here")
def test_every_bfcl_tool_schema_gets_the_verdict_it_got() -> None:
    schemas = []
    for path in sorted((SHARED / "bfcl").glob("BFCL_v4_*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            functions = json.loads(line).get("function") or []
            schemas += [f["parameters"] for f in functions if isinstance(f, dict) and isinstance(f.get("parameters"), dict)]
    assert len(schemas) > 3000
    for schema in schemas:
        assert _now(schema) == _before(schema)


def test_plain_json_is_what_the_text_gives_back_alike() -> None:
    assert strict_json.plain_json(EVERYDAY)
    for value in NOT_PLAIN[:6]:
        assert not strict_json.plain_json(value)
    assert strict_json.plain_json(NOT_PLAIN[6]) and strict_json.plain_json(NOT_PLAIN[7])
    assert strict_json.plain_json(_nested(99)) and not strict_json.plain_json(_nested(101))
