"""Argument validation: the compiled fast checker agrees with jsonschema; other schemas go to jsonschema."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.schemas import SchemaProblem, compiled

TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]

LEAF = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(TYPES)),
    st.builds(lambda ts: {"type": ts}, st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
    st.builds(lambda e: {"enum": e}, st.lists(st.sampled_from(["a", "b", 1, 1.5, True, None]), min_size=1, max_size=3)),
    st.just({}),
    st.just({"description": "free", "default": 3, "format": "date"}),
)
SCHEMA = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda p, closed: {"type": "object", "properties": p, "required": sorted(p)[:1],
                                     "additionalProperties": not closed},
                  st.dictionaries(st.sampled_from(["x", "y"]), inner, max_size=2), st.booleans())),
    max_leaves=5)
VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([1.0, 1.5, -0.0]) | st.sampled_from(["a", "b", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
    max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["p", "q"]), SCHEMA, min_size=1, max_size=2),
       st.dictionaries(st.sampled_from(["p", "q"]), VALUE, max_size=2))
def test_the_fast_checker_agrees_with_jsonschema(props: dict[str, Any], args: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": props}
    checker = compiled(schema)
    assert checker._fast is not None
    for key, value in args.items():
        if key not in props:
            continue  # an unknown key is the caller's hallucinated_param, not a type problem
        fast_ok = not [p for p in checker.problems({key: value}) if p.arg == key]
        reference_ok = jsonschema.Draft202012Validator(props[key]).is_valid(value)
        assert fast_ok is reference_ok, (props[key], value)


def test_rich_schemas_are_validated_by_jsonschema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                                               "s": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}
    checker = compiled(schema)
    assert checker._fast is None
    assert checker.problems({"n": 0, "s": 3}) == [
        SchemaProblem("n", "0 is less than the minimum of 1"),
        SchemaProblem("s", "3 is not valid under any of the given schemas")]
    assert checker.problems({"n": 1, "s": None}) == []


def test_draft_4_schemas_keep_their_own_integer_rule() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
              "properties": {"n": {"type": "integer"}}}
    assert compiled(draft4).problems({"n": 1.0}) == [SchemaProblem("n", "1.0 is not of type 'integer'")]
    assert compiled({"type": "object", "properties": {"n": {"type": "integer"}}}).problems({"n": 1.0}) == []


def test_root_required_and_unknown_keys_are_left_to_the_caller() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
              "additionalProperties": False}
    checker = compiled(schema)
    assert checker.problems({"b": 1}) == []
    assert (checker.is_known("a"), checker.is_known("b")) == (True, False)
    open_schema = compiled({"type": "object", "properties": {}, "additionalProperties": True})
    assert open_schema.is_known("anything")
    patterned = compiled({"type": "object", "patternProperties": {"^x_": {}}})
    assert (patterned.is_known("x_1"), patterned.is_known("y")) == (True, False)


def test_problems_are_sorted_by_argument_whatever_the_key_order() -> None:
    checker = compiled({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}})
    assert checker.problems({"b": 1, "a": 2}) == checker.problems({"a": 2, "b": 1})
    assert [p.arg for p in checker.problems({"b": 1, "a": 2})] == ["a", "b"]


def test_validators_are_cached_by_canonical_schema() -> None:
    one = compiled({"type": "object", "properties": {"a": {"type": "string"}}})
    two = compiled({"properties": {"a": {"type": "string"}}, "type": "object"})
    assert one is two
