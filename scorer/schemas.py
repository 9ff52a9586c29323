"""Validating call arguments against a tool's JSON Schema, with compiled validators cached by schema.

A schema dict is compiled once (the gold readers share one dict per distinct tool), and only as far as it
is used: an argument's checker is made when that argument is first checked. Schemas that use only the
everyday keywords (``type``, ``enum``, ``properties``, ``required``, ``items``, ``additionalProperties: bool``
and annotations) compile to a small Python checker, about ten times faster than jsonschema and identical in
verdict for that subset (tests/scorer/test_schemas.py checks them against jsonschema on generated schemas and
values); every other schema goes to jsonschema (Draft 2020-12 unless its ``$schema`` names another draft).

The root ``required`` and ``additionalProperties`` are left to the caller, which reports them as
``missing_required_arg`` and ``hallucinated_param``; everything else is a type problem of one argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from scorer import canonical


class SchemaProblem:
    """One type problem of a call's arguments. A plain class with read-only attributes, not a frozen
    dataclass: its generated ``__init__`` is interpreted Python, two ``object.__setattr__`` calls per problem
    on the compiled core's path."""

    __slots__ = ("arg", "message")

    def __init__(self, arg: str | None, message: str) -> None:
        self.arg: Final = arg
        """The top-level argument the problem is in (None: the arguments as a whole)."""
        self.message: Final = message

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SchemaProblem):
            return NotImplemented
        return self.arg == other.arg and self.message == other.message

    def __hash__(self) -> int:
        return hash((self.arg, self.message))

    def __repr__(self) -> str:
        return f"SchemaProblem(arg={self.arg!r}, message={self.message!r})"


Check = Callable[[Any, str], str | None]
"""A compiled subschema: ``(value, path) -> first problem or None``."""

_ANNOTATIONS: Final = frozenset({"description", "title", "default", "examples", "$comment", "format",
                                 "deprecated", "readOnly", "writeOnly", "$schema", "$id"})
_FAST_DRAFTS: Final = frozenset({
    None,
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-06/schema",
})
"""Drafts where 1.0 is an integer and the simple keywords mean the same (not draft 3/4)."""


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    raise KeyError(name)


_TYPE_NAMES: Final = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})


def _is_simple(schema: Any) -> bool:
    """Whether ``schema`` uses only the everyday keywords, with values of the kinds the fast checker reads, and
    annotations (keys outside ``DRAFT_KEYWORDS`` among them).

    One pass over its keys (every tool schema of a gold case is walked once, on its first check: a key-set
    comparison and a lookup per keyword cost several times more)."""
    if schema is True:
        return True
    if type(schema) is not dict:
        return isinstance(schema, dict) and _is_simple(dict(schema))
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            if value is None:  # no type named: nothing to check
                continue
            if isinstance(value, str):
                if value not in _TYPE_NAMES:
                    return False
            elif not isinstance(value, list) or not value:
                return False
            else:
                for name in value:
                    if name not in _TYPE_NAMES:
                        return False
        elif key == "properties":
            if not isinstance(value, dict):
                return False
            for prop in value.values():
                if not _is_simple(prop):
                    return False
        elif key == "required":
            if not isinstance(value, list):
                return False
            for name in value:
                if not isinstance(name, str):
                    return False
        elif key == "items":
            if not _is_simple(value):
                return False
        elif key == "enum":
            if not isinstance(value, list):
                return False
        elif key == "additionalProperties":
            if not isinstance(value, bool):
                return False
        elif key in DRAFT_KEYWORDS:
            return False
        # any other key no draft gives a meaning to (BFCL's "optional", OpenAPI's "nullable", "x-" keys): every
        # validator ignores it, so it is an annotation, whatever its value
    return True


def _compile_simple(schema: Any) -> Check:
    if schema is True or schema == {}:
        return lambda value, path: None
    checks: list[Check] = []
    types = schema.get("type")
    if types is not None:
        names = (types,) if isinstance(types, str) else tuple(types)
        shown = ", ".join(repr(t) for t in names)

        def check_type(value: Any, path: str) -> str | None:
            if any(_is_type(value, n) for n in names):
                return None
            return f"{path}{value!r} is not of type {shown}"
        checks.append(check_type)
    if "enum" in schema:
        members = schema["enum"]
        if any(isinstance(m, (dict, list)) for m in members):  # shown as a sorted-keys copy, as ever
            members = json.loads(json.dumps(members, sort_keys=True))
        allowed = {canonical.dumps(m) for m in members}

        def check_enum(value: Any, path: str) -> str | None:
            return None if canonical.dumps(value) in allowed else f"{path}{value!r} is not one of {members!r}"
        checks.append(check_enum)
    props = {k: _compile_simple(v) for k, v in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    closed = schema.get("additionalProperties") is False
    if props or required or closed:
        def check_object(value: Any, path: str) -> str | None:
            if not isinstance(value, dict):
                return None
            for key in required:
                if key not in value:
                    return f"{path}{key!r} is a required property"
            for key, item in value.items():
                sub = props.get(key)
                if sub is not None:
                    problem = sub(item, f"{path}{key}: ")
                    if problem:
                        return problem
                elif closed:
                    return f"{path}additional property {key!r} is not allowed"
            return None
        checks.append(check_object)
    if "items" in schema:
        item_check = _compile_simple(schema["items"])

        def check_items(value: Any, path: str) -> str | None:
            if not isinstance(value, list):
                return None
            for index, item in enumerate(value):
                problem = item_check(item, f"{path}[{index}]: ")
                if problem:
                    return problem
            return None
        checks.append(check_items)
    if len(checks) == 1:
        return checks[0]

    def check_all(value: Any, path: str) -> str | None:
        for check in checks:
            problem = check(value, path)
            if problem:
                return problem
        return None
    return check_all


def _simple_problem(schema: Any, value: Any, path: str) -> str | None:
    """What ``_compile_simple(schema)(value, path)`` says, read straight from the schema: an argument checked
    once (a tool seen in one case, as BFCL's are) costs less this way than compiled (tests/scorer/
    test_schemas.py holds the two to the same message on generated schemas and values)."""
    if schema is True or schema == {}:
        return None
    spec: dict[str, Any] = schema  # the fast path's schemas are objects: read as a dict, not generically
    types = spec.get("type")
    if types is not None:
        names = (types,) if isinstance(types, str) else tuple(types)
        if not any(_is_type(value, n) for n in names):
            return f"{path}{value!r} is not of type {', '.join(repr(t) for t in names)}"
    if "enum" in spec:
        members = spec["enum"]
        text = canonical.dumps(value)
        if not any(canonical.dumps(m) == text for m in members):
            if any(isinstance(m, (dict, list)) for m in members):  # shown as a sorted-keys copy, as compiled
                members = json.loads(json.dumps(members, sort_keys=True))
            return f"{path}{value!r} is not one of {members!r}"
    props = spec.get("properties", {})
    required = spec.get("required", ())
    closed = spec.get("additionalProperties") is False
    if (props or required or closed) and isinstance(value, dict):
        for key in required:
            if key not in value:
                return f"{path}{key!r} is a required property"
        for key, item in value.items():
            if key in props:
                problem = _simple_problem(props[key], item, f"{path}{key}: ")
                if problem:
                    return problem
            elif closed:
                return f"{path}additional property {key!r} is not allowed"
    if "items" in spec and isinstance(value, list):
        items = spec["items"]
        for index, item in enumerate(value):
            problem = _simple_problem(items, item, f"{path}[{index}]: ")
            if problem:
                return problem
    return None


class ArgumentSchema:
    """One tool's parameter schema, compiled as far as it is used: which keys it knows and the type problems
    of arguments. The checker of an argument is made the first time that argument is checked (a failing call
    asks about one or two of a tool's arguments; a case's schema is seen once in a gold set whose tools are
    its own, as BFCL's are), and whether the schema takes the fast path is decided the first time it matters."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.parameters: dict[str, Any] = schema
        """The schema compiled (a tool spec's ``parameters``): to be read, never written."""
        props = schema.get("properties")
        self._props: dict[str, Any] = props if isinstance(props, dict) else {}
        self.known: frozenset[str] = frozenset(self._props)
        extra = schema.get("additionalProperties")
        patterns = schema.get("patternProperties")
        self._patterns = tuple(re.compile(p) for p in patterns) if isinstance(patterns, dict) else ()
        # Keys outside `properties` are hallucinated unless the schema explicitly lets them in.
        self.open: bool = bool(extra) or extra == {}
        self._simple: bool | None = None
        self._root_says_nothing: bool | None = None
        self._checks: dict[str, Check | None] = {}
        """An argument's compiled checker, made on its second check (None: checked once, read from the schema)."""
        self._validator: Any = None

    def _is_fast(self) -> bool:
        simple = self._simple
        if simple is None:
            schema = self.parameters
            simple = self._simple = schema.get("$schema") in _FAST_DRAFTS and _is_simple(schema)
            if not simple:
                import jsonschema  # on first use: most tool schemas take the fast path, and it costs 0.1 s to import

                # Built from the sorted-keys copy: jsonschema's messages can show parts of the schema.
                ordered = json.loads(json.dumps(schema, sort_keys=True, separators=(",", ":")))
                cls = jsonschema.validators.validator_for(ordered, default=jsonschema.Draft202012Validator)
                self._validator = cls(ordered)
        return simple

    def _problem(self, key: str, value: Any) -> str | None:
        """The fast checker's problem with one argument (None for a key the schema does not describe): read
        from the schema the first time the argument is checked, compiled for the second and later ones."""
        checks = self._checks
        if key not in checks:
            if key not in self._props:
                return None
            checks[key] = None
            return _simple_problem(self._props[key], value, "")
        check = checks[key]
        if check is None:
            check = checks[key] = _compile_simple(self._props[key])
        return check(value, "")

    @property
    def root_says_nothing(self) -> bool:
        """Whether the schema's own keywords say nothing of the arguments as a whole beyond what the caller
        reports (``required``, ``additionalProperties``): only ``type: object``, ``properties``, ``required``,
        a boolean ``additionalProperties`` and annotations (keys outside ``DRAFT_KEYWORDS`` too). Then every
        problem it can find is one argument's, under that argument's property, whichever checker finds it:
        arguments that are not checked need no decision on the checker, and no walk of the properties. Read
        from the root's keys alone."""
        found = self._root_says_nothing
        if found is None:
            found = True
            for key, value in self.parameters.items():
                if key in _ANNOTATIONS:
                    continue
                if key == "type":
                    found = value == "object"
                elif key == "properties":
                    found = type(value) is dict
                elif key == "required":
                    found = type(value) is list
                    if found:
                        for name in value:
                            if type(name) is not str:
                                found = False
                                break
                elif key == "additionalProperties":
                    found = type(value) is bool
                elif key in DRAFT_KEYWORDS:
                    found = False
                if not found:
                    break
            self._root_says_nothing = found
        return found

    def clean_alone(self, key: str, value: Any) -> bool:
        """Whether no checker can find a problem with this argument, decided without deciding which checker
        the schema takes (a walk of every property): for a schema whose root says nothing
        (``root_says_nothing``) and a draft the fast checker reads, a key it does not describe, or one whose
        property the fast checker reads and finds nothing in (it and jsonschema agree on every verdict there:
        tests/scorer/test_schemas.py). False is "maybe": ask ``per_argument`` and its checker."""
        props = self._props
        if key not in props:
            return True
        prop = props[key]
        return self.parameters.get("$schema") in _FAST_DRAFTS and _is_simple(prop) \
            and _simple_problem(prop, value, "") is None

    @property
    def closed(self) -> bool:
        """Whether exactly the keys in ``known`` are known (no ``additionalProperties``, no patterns)."""
        return not self.open and not self._patterns

    @property
    def per_argument(self) -> bool:
        """Whether each argument's problems depend on that argument alone (``problem`` may be asked)."""
        return self._is_fast()

    def problem(self, key: str, value: Any) -> SchemaProblem | None:
        """The type problem of one argument, for a schema ``per_argument``: the one ``problems`` reports."""
        if not self._is_fast():
            raise ValueError("this schema checks the arguments together: use problems()")
        found = self._problem(key, value)
        return SchemaProblem(key, found) if found else None

    def is_known(self, key: str) -> bool:
        return self.open or key in self.known or any(p.search(key) for p in self._patterns)

    def problems(self, args: dict[str, Any]) -> list[SchemaProblem]:
        """Type problems, at most one per argument, sorted by argument (so key order never matters)."""
        if self._is_fast():
            found = []
            for key in sorted(args):
                problem = self._problem(key, args[key])
                if problem:
                    found.append(SchemaProblem(key, problem))
            return found
        return self._jsonschema_problems(args)

    def _jsonschema_problems(self, args: dict[str, Any]) -> list[SchemaProblem]:
        first: dict[str | None, tuple[str, str]] = {}
        for error in self._validator.iter_errors(args):
            if not error.path and error.validator in ("required", "additionalProperties",
                                                      "unevaluatedProperties"):
                continue
            arg = str(error.path[0]) if error.path else None
            where = ".".join(str(p) for p in list(error.path)[1:])
            message = f"{where}: {error.message}" if where else error.message
            key = (where, message)
            if arg not in first or key < first[arg]:
                first[arg] = key
        return [SchemaProblem(arg, first[arg][1]) for arg in sorted(first, key=lambda a: (a is not None, a or ""))]


# -- is it a JSON Schema at all? --------------------------------------------------------------------------

METASCHEMA_KEYWORDS: Final = frozenset({
    "$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id", "$recursiveAnchor", "$recursiveRef",
    "$ref", "$schema", "$vocabulary", "additionalProperties", "allOf", "anyOf", "const", "contains",
    "contentEncoding", "contentMediaType", "contentSchema", "default", "definitions", "dependencies",
    "dependentRequired", "dependentSchemas", "deprecated", "description", "else", "enum", "examples",
    "exclusiveMaximum", "exclusiveMinimum", "format", "if", "items", "maxContains", "maxItems", "maxLength",
    "maxProperties", "maximum", "minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf",
    "not", "oneOf", "pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "readOnly",
    "required", "then", "title", "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems", "writeOnly"})
"""Every keyword Draft 2020-12's meta-schema (with its vocabularies) says anything of; it says nothing of any
other key, whatever its value (tests/scorer/test_schemas.py reads them from jsonschema's own copy)."""
DRAFT_KEYWORDS: Final = METASCHEMA_KEYWORDS | {"additionalItems"}
"""Every keyword a validator of the drafts the fast path serves (6, 7, 2019-09, 2020-12) acts on or the 2020-12
meta-schema names: the fast path reads the everyday ones and leaves the others to jsonschema. Any other key is an
annotation to every one of them (tests/scorer/test_schemas.py checks jsonschema's validators against it)."""
_ANY_VALUE: Final = frozenset({"default", "const"})
_STRING_VALUE: Final = frozenset({"description", "title", "$comment", "format"})
_NUMBER_VALUE: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT_VALUE: Final = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                                 "maxProperties"})
_FLAG_VALUE: Final = frozenset({"uniqueItems", "deprecated", "readOnly", "writeOnly"})
_SCHEMA_VALUE: Final = frozenset({"items", "additionalProperties", "not"})
_SCHEMAS_VALUE: Final = frozenset({"anyOf", "oneOf", "allOf"})


def surely_valid_schema(schema: Any) -> bool:
    """Whether ``schema`` is a valid JSON Schema for sure: what ``jsonschema``'s ``check_schema`` accepts
    (Draft 2020-12, which applies when no ``$schema`` names another), told without importing it (a tenth of
    a second of every command that reads tools). Only the everyday keywords are looked at: ``type``,
    ``properties``, ``required``, ``enum``, annotations, bounds and counts, ``items``, ``additionalProperties``,
    ``anyOf`` / ``oneOf`` / ``allOf`` / ``not``, each with the value the meta-schema asks of it, and keys the
    meta-schema says nothing of. False is "not sure", never "invalid": a ``$ref``, a ``pattern`` (checked as a
    regular expression), ``$schema`` or any other keyword, or a value that may be wrong, goes to ``jsonschema``,
    whose verdict and message stand (tests/scorer/test_schemas.py checks the two agree on generated schemas
    and on every real tool's)."""
    if type(schema) is bool:
        return True
    if type(schema) is not dict:
        return False
    for key, value in schema.items():
        kind = type(value)
        if key == "type":
            ok = value in _TYPE_NAMES if kind is str else (
                kind is list and bool(value) and all(type(t) is str and t in _TYPE_NAMES for t in value)
                and len(set(value)) == len(value))
        elif key == "properties":
            ok = kind is dict and all(surely_valid_schema(v) for v in value.values())
        elif key == "required":
            ok = kind is list and all(type(r) is str for r in value) and len(set(value)) == len(value)
        elif key in _STRING_VALUE:
            ok = kind is str
        elif key == "enum" or key == "examples":
            ok = kind is list
        elif key in _ANY_VALUE:
            ok = True
        elif key in _SCHEMA_VALUE:
            ok = surely_valid_schema(value)
        elif key in _NUMBER_VALUE:
            ok = kind is int or kind is float
        elif key in _COUNT_VALUE:
            ok = kind is int and value >= 0
        elif key in _FLAG_VALUE:
            ok = kind is bool
        elif key in _SCHEMAS_VALUE:
            ok = kind is list and bool(value) and all(surely_valid_schema(v) for v in value)
        else:
            ok = key not in METASCHEMA_KEYWORDS
        if not ok:
            return False
    return True


_BY_IDENTITY: dict[int, tuple[dict[str, Any], ArgumentSchema]] = {}
"""Compiled schemas by the identity of the schema dict (kept alive here, so its id is not reused): the gold
readers share one ``ToolSpec`` per distinct tool (``engine.ToolCache``, ``formats.fast_record``), so a toolkit
that recurs in every case is compiled once; a schema seen once costs only what its checks use."""


def compiled(schema: dict[str, Any]) -> ArgumentSchema:
    """The compiled schema of this schema dict, shared by every tool spec that holds the same dict."""
    hit = _BY_IDENTITY.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    result = ArgumentSchema(schema)
    if len(_BY_IDENTITY) >= 4096:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(schema)] = (schema, result)
    return result


def forget_compiled() -> None:
    """Drop every compiled schema (a benchmark's pass starts as a first read of its gold does)."""
    _BY_IDENTITY.clear()


__all__ = ["DRAFT_KEYWORDS", "METASCHEMA_KEYWORDS", "ArgumentSchema", "SchemaProblem", "compiled", "forget_compiled",
           "surely_valid_schema"]
