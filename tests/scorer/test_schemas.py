"""Argument validation: the compiled fast checker agrees with jsonschema; other schemas go to jsonschema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.schemas import METASCHEMA_KEYWORDS, SchemaProblem, compiled, forget_compiled, surely_valid_schema

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
    assert checker.per_argument
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
    assert not checker.per_argument
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


def test_a_schema_dict_is_compiled_once_and_an_equal_one_checks_alike() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"enum": [1, 2]}}}
    assert compiled(schema) is compiled(schema)
    reordered = compiled({"properties": {"b": {"enum": [1, 2]}, "a": {"type": "string"}}, "type": "object"})
    args = {"a": 3, "b": 5}
    assert reordered.problems(args) == compiled(schema).problems(args) == [
        SchemaProblem("a", "3 is not of type 'string'"), SchemaProblem("b", "5 is not one of [1, 2]")]
    forget_compiled()
    assert compiled(schema) is not compiled({**schema})


def test_schema_parts_in_messages_are_shown_with_sorted_keys_whatever_the_order_given() -> None:
    enum_of_objects = compiled({"type": "object", "properties": {"o": {"enum": [{"z": 1, "a": 2}]}}})
    assert enum_of_objects.problems({"o": 1}) == [SchemaProblem("o", "1 is not one of [{'a': 2, 'z': 1}]")]
    negated = compiled({"type": "object", "properties": {"s": {"not": {"type": "string", "maxLength": 3}}}})
    assert negated.problems({"s": "ab"}) == [
        SchemaProblem("s", "'ab' should not be valid under {'maxLength': 3, 'type': 'string'}")]


# -- is it a JSON Schema at all (surely_valid_schema, before jsonschema's check_schema) ----------------------


def _check_schema_accepts(schema: Any) -> bool:
    """What a tool's ``parameters`` must pass (``scorer.model.json_schema_problem``), by jsonschema alone."""
    named = isinstance(schema, dict) and "$schema" in schema
    validator = (jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                 if not named or isinstance(schema["$schema"], str) else jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


def test_the_keywords_left_to_jsonschema_are_every_keyword_of_the_2020_12_meta_schema() -> None:
    from jsonschema_specifications import REGISTRY

    base = "https://json-schema.org/draft/2020-12/"
    found: set[str] = set(REGISTRY.contents(base + "schema")["properties"])
    for vocabulary in ("core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation",
                       "content"):
        found |= set(REGISTRY.contents(f"{base}meta/{vocabulary}")["properties"])
    assert METASCHEMA_KEYWORDS == found


ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from([0.5, 1.0, -1.5]) |
    st.sampled_from(["", "a", "string", "object", "integer", "[", "(", "#/x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["type", "a", "x"]), inner,
                                                                 max_size=2),
    max_leaves=4)
KEYWORD = st.sampled_from(sorted(METASCHEMA_KEYWORDS | {"x-extension", "nullable", "example", "Type"}))
META_SCHEMA = st.recursive(
    st.booleans() | st.dictionaries(KEYWORD, ANY_VALUE, max_size=3) | LEAF,
    lambda inner: st.one_of(
        st.dictionaries(st.sampled_from(["properties", "$defs", "patternProperties", "dependentSchemas"]),
                        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2), max_size=1),
        st.dictionaries(st.sampled_from(["items", "additionalProperties", "not", "contains", "if"]), inner,
                        max_size=2),
        st.dictionaries(st.sampled_from(["anyOf", "oneOf", "allOf", "prefixItems"]), st.lists(inner, max_size=2),
                        max_size=1),
        st.builds(lambda a, b: {**a, **b}, inner.filter(lambda s: isinstance(s, dict)),
                  st.dictionaries(KEYWORD, ANY_VALUE, max_size=2))),
    max_leaves=6)


@settings(max_examples=1500, deadline=None)
@given(META_SCHEMA)
def test_a_schema_surely_valid_is_one_jsonschema_accepts(schema: Any) -> None:
    if surely_valid_schema(schema):
        assert _check_schema_accepts(schema), schema


def test_everyday_schemas_are_surely_valid_and_broken_ones_are_left_to_jsonschema() -> None:
    good = [{"type": "object", "properties": {"n": {"type": ["integer", "null"], "minimum": 0, "default": 1},
                                              "s": {"type": "string", "enum": ["a", "b"], "format": "date",
                                                    "maxLength": 9, "description": "d", "title": "t"},
                                              "l": {"type": "array", "items": {"anyOf": [{"type": "string"}, True]},
                                                    "uniqueItems": True, "minItems": 0},
                                              "x": {"nullable": True, "x-extension": {"type": 5}}},
             "required": ["n"], "additionalProperties": False, "examples": [{}]}, {}, True]
    broken = [{"type": "dict"}, {"type": []}, {"type": ["string", "string"]}, {"required": ["a", "a"]},
              {"required": "a"}, {"properties": {"a": 3}}, {"minimum": "1"}, {"minLength": -1}, {"anyOf": []},
              {"items": [{"type": "string"}]}, {"description": None}, {"uniqueItems": 1}, {"enum": "a"}]
    for schema in good:
        assert surely_valid_schema(schema) and _check_schema_accepts(schema), schema
    for schema in broken:
        assert not surely_valid_schema(schema) and not _check_schema_accepts(schema), schema
    # not sure: left to jsonschema, valid or not
    for schema in ({"pattern": "^a"}, {"pattern": "("}, {"$ref": "#/$defs/a", "$defs": {"a": {}}}, {"minimum": True},
                   {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, {"minLength": 1.0}):
        assert not surely_valid_schema(schema), schema


def _real_parameters() -> list[Any]:
    """Every distinct ``parameters`` object in the public datasets and the repository's real data (as their
    files write them: BFCL's own ``"type": "dict"`` is not JSON Schema, and stays in)."""
    from scorer import canonical
    from tests.conftest import SHARED_DATA, TEST_DATA

    found: dict[str, Any] = {}

    def walk(value: Any) -> None:
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                schema = item.get("parameters")
                if isinstance(schema, dict):
                    found.setdefault(canonical.dumps(schema), schema)
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)

    files = [p for root in (SHARED_DATA, TEST_DATA / "real") for p in sorted(root.rglob("*"))
             if p.suffix in (".json", ".jsonl")]
    assert len(files) > 10, "the public datasets are missing: set TOOLGOLD_SHARED_DATA"
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            walk(json.loads(text))
        except ValueError:
            for line in text.splitlines():
                try:
                    walk(json.loads(line))
                except ValueError:
                    continue
    return list(found.values())


def test_every_real_tool_schema_gets_the_verdict_jsonschema_gives() -> None:
    schemas = _real_parameters()
    assert len(schemas) > 1000
    sure = [s for s in schemas if surely_valid_schema(s)]
    for schema in sure:
        assert _check_schema_accepts(schema), schema
    valid = [s for s in schemas if _check_schema_accepts(s)]
    assert len(sure) >= 0.95 * len(valid)  # the everyday schema needs no jsonschema


FAST_PATH = [
    {}, {"type": "object"}, {"type": ["string", "null"], "description": "d", "default": None},
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]},
                                      "b": {"type": "array", "items": {"type": "integer"}}},
     "required": ["a"], "additionalProperties": False},
    {"properties": {"a": True}}, {"items": {}}, {"type": None}, {"title": "t", "$comment": "c", "format": "date"},
    # keys no draft gives a meaning to (BFCL's "optional", OpenAPI's "nullable" and "example", vendor "x-" keys):
    # every validator ignores them, so they are annotations, whatever their value
    {"type": "object", "optional": True, "properties": {"a": {"type": "string", "optional": "True", "x-unit": {}}}},
    {"properties": {"a": {"type": "array", "items": {"type": "integer", "nullable": True, "example": [1]}}}},
    {"Type": "dict", "optional": []},
]
JSONSCHEMA_PATH = [
    {"type": "dict"}, {"type": []}, {"type": ["string", "map"]}, {"type": 3}, {"type": "string", "minLength": 1},
    {"properties": {"a": {"pattern": "x"}}}, {"items": {"anyOf": [{"type": "string"}]}}, {"required": "a"},
    {"required": [1]}, {"enum": "a"}, {"additionalProperties": {}}, {"additionalProperties": None},
    {"properties": []}, {"properties": {"a": {"type": "string"}, "b": {"const": 1}}}, {"$ref": "#/x"},
    {"type": "object", "properties": {"a": {"items": {"type": "integer", "maximum": 3}}}},
    {"properties": {"a": {"type": "string", "optional": True, "minLength": 1}}},
    {"items": [{"type": "string"}], "additionalItems": False},  # a keyword of drafts 6 to 2019-09 only
]


def test_only_the_everyday_keywords_take_the_fast_path() -> None:
    # Which checker a schema gets decides its messages; a faster walk of the schema must not move one.
    forget_compiled()
    assert [compiled(dict(s)).per_argument for s in FAST_PATH] == [True] * len(FAST_PATH)
    assert [compiled(dict(s)).per_argument for s in JSONSCHEMA_PATH] == [False] * len(JSONSCHEMA_PATH)


ENUM_OF_VALUES = st.builds(lambda e: {"enum": e}, st.lists(
    st.sampled_from(["a", 1, 1.0, None, [1, "a"], {"z": 1, "a": [2]}, {"a": 1.0}]), min_size=1, max_size=3))


@settings(max_examples=400, deadline=None)
@given(st.one_of(SCHEMA, ENUM_OF_VALUES, st.builds(lambda i: {"type": "array", "items": i}, ENUM_OF_VALUES)),
       st.lists(VALUE, min_size=1, max_size=4))
def test_an_argument_reads_the_same_problem_checked_once_or_again(prop: dict[str, Any], values: list[Any]) -> None:
    # The first check of an argument reads its schema; later ones run the compiled checker: the same message.
    for value in values:
        first = compiled({"type": "object", "properties": {"p": prop}})
        once = first.problem("p", value)
        again = [first.problem("p", value) for _ in range(3)]
        assert again == [once] * 3, (prop, value)
        # and what problems() says of it, on a schema seen for the first time and on this one
        assert compiled({"type": "object", "properties": {"p": prop}}).problems({"p": value}) == \
            first.problems({"p": value}) == ([once] if once else [])


def test_every_keyword_a_fast_drafts_validator_acts_on_is_one_the_fast_path_reads_or_refuses() -> None:
    """A key outside ``DRAFT_KEYWORDS`` is taken for an annotation: that holds only if no validator of a draft the
    fast path serves gives it a meaning (``additionalItems``, gone from 2020-12, still counts)."""
    from scorer.schemas import DRAFT_KEYWORDS

    for validator in (jsonschema.Draft202012Validator, jsonschema.Draft201909Validator, jsonschema.Draft7Validator,
                      jsonschema.Draft6Validator):
        assert set(validator.VALIDATORS) <= DRAFT_KEYWORDS, validator
    assert DRAFT_KEYWORDS == METASCHEMA_KEYWORDS | {"additionalItems"}


UNKNOWN_KEYS = st.dictionaries(st.sampled_from(["optional", "nullable", "example", "x-unit", "Type", "hint"]),
                               ANY_VALUE, min_size=1, max_size=2)


def _with_unknown_keys(schema: Any, extra: dict[str, Any]) -> Any:
    """``schema`` with ``extra`` merged into every object schema in it (properties and items included)."""
    if not isinstance(schema, dict):
        return schema
    out = {**schema, **{k: v for k, v in extra.items() if k not in schema}}
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _with_unknown_keys(v, extra) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = _with_unknown_keys(schema["items"], extra)
    return out


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["p", "q"]), SCHEMA, min_size=1, max_size=2), UNKNOWN_KEYS,
       st.dictionaries(st.sampled_from(["p", "q"]), VALUE, max_size=2))
def test_keys_no_draft_knows_leave_a_schema_on_the_fast_path_with_jsonschemas_verdicts(
        props: dict[str, Any], extra: dict[str, Any], args: dict[str, Any]) -> None:
    """Every schema of ``SCHEMA`` with unknown keys at every level stays on the fast checker, which still says of
    each argument what jsonschema says (valid or not), and finds the same problems as for the schema without them."""
    plain = {"type": "object", "properties": props}
    schema = _with_unknown_keys(plain, extra)
    checker = compiled(schema)
    assert checker.per_argument, schema
    assert checker.root_says_nothing
    assert checker.problems(args) == compiled(plain).problems(args)
    for key, value in args.items():
        if key in props:
            fast_ok = not [p for p in checker.problems({key: value}) if p.arg == key]
            assert fast_ok is jsonschema.Draft202012Validator(schema["properties"][key]).is_valid(value), (schema, value)
