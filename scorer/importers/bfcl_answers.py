"""BFCL ``ground_truth`` -> toolgold's expected calls, argument rules and alternatives.

A BFCL answer lists, per call, each argument's acceptable values: ``{"tool": {"arg": [v1, v2, ...]}}``.
Mapping decisions:

- The first acceptable value is the expected argument value. With more than one value the argument
  gets ``match: one_of`` and ``accept`` = every acceptable value (the first included).
- ``""`` in the list means "may be omitted": the argument gets ``optional: true`` and ``""`` is not an
  accepted value. If ``""`` is the only value, the expected call leaves the argument out.
- A value of a ``dict`` parameter is itself a pattern ``{"key": [acceptable values]}`` (and an
  ``array`` of dicts a list of such patterns), as BFCL's checker reads it. Each pattern is expanded into
  the concrete values it accepts -- the first values of each key first, a key whose list holds ``""``
  also left out -- so the expected value is a plain dict and the others are in ``accept``.
- Strings: BFCL's checker compares them standardized (lower-cased, spaces and ``,./-_*^`` dropped) for
  parameters declared string, any, array, tuple or dict, so such an argument whose acceptable values hold a
  string gets ``match: normalized`` (with its ``accept`` list): imported BFCL gold scores as BFCL does.
- ``arg_rules`` are per tool, but a parallel answer may call one tool twice with different acceptable
  values per call (``resistivity`` ``["", "copper"]`` in one call, ``["aluminum"]`` in the other). Such
  an argument gets no per-tool rule: each call carries its own (``Call.arg_rules``), so one call can never
  borrow another's values, and no combination is expanded into alternatives.
- Expansion of dict patterns stops at ``MAX_VARIANTS`` values per argument; a case cut short is tagged
  ``bfcl:truncated`` and says so in its rationale. In BFCL v4 no argument reaches it (the largest has 128
  values).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.importers.bfcl_schema import bfcl_type
from scorer.importers.common import need_dict, need_list
from scorer.model import Answer, ArgRule, Call

MAX_VARIANTS = 256
OMIT: Any = object()  # "leave the argument out", as one of an argument's options


@dataclass(frozen=True)
class Slot:
    """One argument of one expected call: its acceptable values (the expected one first) and whether
    it may be left out."""

    values: tuple[Any, ...]
    may_omit: bool
    truncated: bool = False
    lenient: bool = False
    """BFCL standardizes strings for this parameter's declared type (string, array, tuple, dict)."""

    def key(self) -> str:
        return canonical.dumps([list(self.values), self.may_omit])

    def rule(self) -> ArgRule | None:
        if self.lenient and any(_holds_string(v) for v in self.values):
            return ArgRule(match="normalized", accept=self.values if len(self.values) > 1 else (),
                           optional=self.may_omit)
        if len(self.values) > 1:
            return ArgRule(match="one_of", accept=self.values, optional=self.may_omit)
        return ArgRule(optional=True) if self.may_omit and self.values else None


@dataclass(frozen=True)
class GoldAnswer:
    expected: Answer
    alternatives: tuple[Answer, ...]
    arg_rules: dict[str, dict[str, ArgRule]]
    truncated: bool = False


_LENIENT_TYPES = frozenset({"string", "any", "array", "tuple", "dict"})
"""The declared types whose string values BFCL's checker standardizes (its string, list and dict checkers;
``any`` is read as a string);
a string given for, say, an ``integer`` or ``boolean`` parameter is compared exactly."""


def _holds_string(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, list | tuple):
        return any(_holds_string(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_string(v) for v in value.values())
    return False


def slot(possible: Any, schema: Any, where: str) -> Slot:
    """The slot for one argument from BFCL's list of acceptable values."""
    values = need_list(possible, where)
    concrete: list[Any] = []
    seen: set[str] = set()
    truncated = False
    for value in values:
        if value == "":
            continue
        for variant in _variants(value, schema):
            key = canonical.dumps(variant)
            if key in seen:
                continue
            if len(concrete) == MAX_VARIANTS:
                truncated = True
                break
            seen.add(key)
            concrete.append(variant)
    return Slot(values=tuple(concrete), may_omit="" in values, truncated=truncated,
                lenient=bfcl_type(schema) in _LENIENT_TYPES)


def _variants(value: Any, schema: Any) -> Iterator[Any]:
    kind = bfcl_type(schema)
    if kind == "dict" and _is_pattern(value):
        yield from _pattern_variants(value)
    elif kind in ("array", "tuple") and isinstance(value, list) and value and all(_is_pattern(v) for v in value) \
            and bfcl_type(schema.get("items")) == "dict":
        yield from (list(combo) for combo in itertools.product(*(list(_pattern_variants(v)) for v in value)))
    else:
        yield value


def _is_pattern(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, list) for v in value.values())


def _pattern_variants(pattern: dict[str, list[Any]]) -> Iterator[dict[str, Any]]:
    keys = list(pattern)
    options = [[v for v in pattern[k] if v != ""] + ([OMIT] if "" in pattern[k] else []) for k in keys]
    for combo in itertools.product(*options):
        yield {k: v for k, v in zip(keys, combo, strict=True) if v is not OMIT}


def gold_answer(ground_truth: Any, schemas: dict[str, Any]) -> GoldAnswer:
    """Expected calls, per-tool rules and alternatives for one BFCL answer (``schemas``: BFCL parameter
    schemas by tool name, before pseudo-type mapping)."""
    calls: list[tuple[str, dict[str, Slot]]] = []
    for i, raw in enumerate(need_list(ground_truth, "ground_truth")):
        entry = need_dict(raw, f"ground_truth[{i}]")
        if len(entry) != 1:
            raise InvalidRecord(f"ground_truth[{i}] should name exactly one function, got {len(entry)}")
        (tool, args), = entry.items()
        args = need_dict(args, f"ground_truth[{i}].{tool}")
        properties = (schemas.get(tool) or {}).get("properties") or {}
        calls.append((tool, {arg: slot(values, properties.get(arg), f"ground_truth[{i}].{tool}.{arg}")
                             for arg, values in args.items()}))
    arg_rules, varying = _rules(calls)
    expected = Answer(behavior="call", calls=tuple(
        Call(name=tool, arguments={arg: s.values[0] for arg, s in slots.items() if s.values},
             arg_rules=_own_rules(tool, slots, varying))
        for tool, slots in calls))
    truncated = any(s.truncated for _, slots in calls for s in slots.values())
    return GoldAnswer(expected=expected, alternatives=(), arg_rules=arg_rules, truncated=truncated)


def _own_rules(tool: str, slots: dict[str, Slot], varying: set[tuple[str, str]]) -> dict[str, ArgRule]:
    """The call's own rules: for its arguments whose slot differs between the tool's calls."""
    own = {}
    for arg, s in sorted(slots.items()):
        rule = s.rule() if (tool, arg) in varying else None
        if rule is not None:
            own[arg] = rule
    return own


def _rules(calls: Sequence[tuple[str, dict[str, Slot]]]) -> tuple[dict[str, dict[str, ArgRule]],
                                                                   set[tuple[str, str]]]:
    """Per-tool rules for arguments whose slot is the same in every call of the tool; the others vary."""
    by_tool: dict[str, list[dict[str, Slot]]] = {}
    for tool, slots in calls:
        by_tool.setdefault(tool, []).append(slots)
    rules: dict[str, dict[str, ArgRule]] = {}
    varying: set[tuple[str, str]] = set()
    for tool, slot_maps in by_tool.items():
        for arg in sorted({a for slots in slot_maps for a in slots}):
            keys = {slots[arg].key() if arg in slots else "absent" for slots in slot_maps}
            if len(keys) > 1:
                varying.add((tool, arg))
                continue
            rule = slot_maps[0][arg].rule()
            if rule is not None:
                rules.setdefault(tool, {})[arg] = rule
    return rules, varying
