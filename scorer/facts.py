"""Per-case lookups the scorers share, computed at most once per case and only when needed."""

from __future__ import annotations

import marshal
from datetime import datetime
from typing import Any

from scorer.grounding import Context, gold_texts
from scorer.matchers import ABSENT, Verdict, match_value
from scorer.model import MARSHAL_VALUE_VERSION, Answer, ArgRule, Call, GoldCase, ToolSpec
from scorer.schemas import ArgumentSchema, SchemaProblem, compiled

_NO_RULES: dict[str, ArgRule] = {}
_SCALARS = frozenset({str, int, bool, type(None)})
_ABSENT_KEY = ("absent",)


def _value_key(value: Any) -> Any:
    """A dict key equal only for values every matcher and schema check treats alike: a scalar with its
    type (``1``, ``1.0`` and ``True`` apart; a float by its exact bits, so ``-0.0``, which a schema problem
    shows as such, is not ``0.0``), None for anything else (not memoized)."""
    kind = type(value)
    if kind is float:
        return (float, value.hex())
    return (kind, value) if kind in _SCALARS else None


class CaseFacts:
    """A gold case with lazy, cached views: tool specs by name, compiled schemas, the context text."""

    __slots__ = ("_any_from_call", "_arg_rules", "_call_keys", "_compile", "_context", "_from_call",
                 "_from_call_rules", "_gold_texts", "_matches", "_memoize", "_plans", "_problems", "_reference_time",
                 "_required", "_required_args", "_schemas", "_specs", "_tools", "_tz", "_zoned", "case", "expected_calls", "fields")

    def __init__(self, case: GoldCase, *, compiled: bool = True) -> None:
        """``compiled=False`` checks every call on the general path (the reference the compiled checks are
        tested against)."""
        self.case = case
        self.fields: dict[str, Any] = case.__dict__
        """The case's fields (its ``__dict__``): read here without a pydantic attribute lookup each."""
        # The fields read on every path, read once: each read of a pydantic field is a generic attribute
        # lookup (its class defines ``__getattr__``), the fields themselves are in the instance's dict.
        fields = self.fields
        self._tools: tuple[ToolSpec, ...] = fields["tools"]
        self._arg_rules: dict[str, dict[str, ArgRule]] = fields["arg_rules"]
        self._tz: str | None = fields["tz"]
        self._reference_time: datetime | None = fields["reference_time"]
        self._required_args: dict[str, tuple[str, ...]] | None = fields["required_args"]
        expected: Answer = fields["expected"]
        self._compile = compiled
        self._plans: dict[int, Any] | None = None
        self._specs: dict[str, ToolSpec | None] | None = None
        # The memos below are made when first needed (most cases need few of them; each empty dict made and
        # freed per case, and tracked by the collector, cost more than the check that used it).
        self._schemas: dict[str, ArgumentSchema | None] | None = None
        self._required: dict[str, tuple[str, ...]] | None = None
        self._context: Context | None = None
        self._gold_texts: frozenset[str] | None = None
        self._call_keys: dict[int, tuple[str, bytes]] | None = None
        self._zoned: dict[str, dict[str, ArgRule]] | None = None
        self._from_call: dict[int, bool] = {}
        self._from_call_rules: dict[str, tuple[tuple[str, int], ...]] | None = None
        self._any_from_call: bool | None = None
        self._matches: dict[tuple[int, Any, Any], tuple[ArgRule, Verdict]] | None = None
        # Only several expected calls (or answers) ask the same question twice: one call against one is
        # checked once, and the memo would only cost.
        self.expected_calls: tuple[Call, ...] = expected.calls
        self._memoize = len(self.expected_calls) > 1 or bool(fields["alternatives"]) or fields["kind"] == "trajectory"
        self._problems: dict[tuple[int, str, Any], tuple[ArgumentSchema, SchemaProblem | None]] | None = None

    @property
    def compiled(self) -> bool:
        """Whether calls are checked through compiled plans (False: the general path only)."""
        return self._compile

    @property
    def reference_time(self) -> datetime | None:
        return self._reference_time

    def spec(self, tool: str) -> ToolSpec | None:
        """The offered tool named ``tool`` (the first, as ``GoldCase.tool``), found once per name: a case
        offers dozens of tools and its calls name one or two."""
        specs = self._specs
        if specs is None:
            specs = self._specs = {}
        elif tool in specs:
            return specs[tool]
        found = None
        for spec in self._tools:  # ``GoldCase.tool``, here: no Python frame
            if spec.name == tool:
                found = spec
                break
        specs[tool] = found
        return found

    def offered(self, tool: str) -> bool:
        """Whether the agent had ``tool`` (a case listing no tools offers any)."""
        return not self._tools or self.spec(tool) is not None

    def schema(self, tool: str) -> ArgumentSchema | None:
        schemas = self._schemas
        if schemas is None:
            schemas = self._schemas = {}
        elif tool in schemas:
            return schemas[tool]
        spec = self.spec(tool)
        found = schemas[tool] = compiled(spec.parameters) if spec is not None else None
        return found

    def rules(self, tool: str) -> dict[str, ArgRule]:
        rules = self._arg_rules.get(tool, _NO_RULES)
        tz = self._tz
        if tz is None or not rules:
            return rules
        zoned = self._zoned
        if zoned is None:
            zoned = self._zoned = {}
        if tool not in zoned:
            zoned[tool] = _in_zone(rules, tz)
        return zoned[tool]

    def call_rules(self, call: Call) -> dict[str, ArgRule]:
        """The rules for one expected call: the case's for its tool, with the call's own on top."""
        fields = call.__dict__  # two fields: one attribute lookup, then dict lookups
        return self.rules_with(fields["name"], fields["arg_rules"])

    def rules_with(self, tool: str, own: dict[str, ArgRule]) -> dict[str, ArgRule]:
        """The case's rules for ``tool`` with an expected call's own rules ``own`` on top."""
        rules = self.rules(tool)
        if not own:
            return rules
        if self._tz:
            own = _in_zone(own, self._tz)
        return {**rules, **own}

    def match(self, rule: ArgRule, gold: Any, actual: Any) -> Verdict:
        """``match_value(rule, gold, actual, reference_time)``, decided once per rule and pair of scalar
        values: parallel calls are costed against every expected call, and their values repeat."""
        if not self._memoize:
            return match_value(rule, gold, actual, self._reference_time)
        gold_key = _ABSENT_KEY if gold is ABSENT else _value_key(gold)
        actual_key = _value_key(actual)
        if gold_key is None or actual_key is None:
            return match_value(rule, gold, actual, self._reference_time)
        key = (id(rule), gold_key, actual_key)
        matches = self._matches
        if matches is None:
            matches = self._matches = {}
        hit = matches.get(key)
        if hit is not None and hit[0] is rule:  # the rule is kept alive here: its id is not reused
            return hit[1]
        found = match_value(rule, gold, actual, self._reference_time)
        matches[key] = (rule, found)
        return found

    def problem(self, schema: ArgumentSchema, arg: str, value: Any) -> SchemaProblem | None:
        """``schema.problem(arg, value)`` (a ``per_argument`` schema), decided once per scalar value."""
        value_key = _value_key(value) if self._memoize else None
        if value_key is None:
            return schema.problem(arg, value)
        key = (id(schema), arg, value_key)
        problems = self._problems
        if problems is None:
            problems = self._problems = {}
        hit = problems.get(key)
        if hit is not None and hit[0] is schema:
            return hit[1]
        found = schema.problem(arg, value)
        problems[key] = (schema, found)
        return found

    @property
    def any_from_call(self) -> bool:
        """Whether any of the case's rules for its tools is ``from_call`` (most cases have none: then only a
        call's own rules can be)."""
        found = self._any_from_call
        if found is None:
            found = False
            for rules in self._arg_rules.values():  # loops, not a generator: asked once per scored case
                for rule in rules.values():
                    if rule.match == "from_call":
                        found = True
                        break
            self._any_from_call = found
        return found

    def has_from_call(self, call: Call) -> bool:
        """Whether any argument of this expected call has a ``from_call`` rule (cached by identity): its own
        rules, or the case's for its tool that it does not override (only that tool's rules are read; a zone
        put on a rule never changes its kind)."""
        known = self._from_call
        found = known.get(id(call))
        if found is None:
            found = False
            own = call.arg_rules
            if own:
                for rule in own.values():
                    if rule.match == "from_call":
                        found = True
                        break
            if not found:
                rules = self._arg_rules.get(call.name)
                if rules:
                    for key, rule in rules.items():
                        if rule.match == "from_call" and key not in own:
                            found = True
                            break
            known[id(call)] = found
        return found

    def from_call_rules(self, tool: str) -> tuple[tuple[str, int], ...]:
        """``(key, index of the expected call)`` of the case's ``from_call`` rules for ``tool``, by key."""
        known = self._from_call_rules
        if known is None:
            if not self.any_from_call:
                return ()
            known = self._from_call_rules = {}
        found = known.get(tool)
        if found is None:
            found = known[tool] = tuple(
                (k, r.from_call) for k, r in sorted(self.rules(tool).items())
                if r.match == "from_call" and r.from_call is not None)
        return found

    def required(self, tool: str) -> tuple[str, ...]:
        """``GoldCase.required_for(tool)``, through the spec already found."""
        required = self._required
        if required is None:
            required = self._required = {}
        found = required.get(tool)
        if found is None:
            schema = self.schema(tool)  # None: no such tool
            keys: tuple[str, ...] = ()
            if schema is not None:  # ``ToolSpec.required``, read straight from the spec's parameters
                listed = schema.parameters.get("required")
                if isinstance(listed, list):
                    keys = tuple(listed)
                    for key in keys:
                        if not isinstance(key, str):
                            keys = self.spec(tool).required
                            break
            required_args = self._required_args
            if required_args is not None:
                keys += tuple(k for k in required_args.get(tool, ()) if k not in keys)
            found = required[tool] = keys
        return found

    def call_key(self, call: Call) -> tuple[str, bytes]:
        """A key equal for equal calls of this case (tool name, argument values and the call's own rules): checks against one
        are checks against the other. Cached by identity; the case keeps its calls alive."""
        keys = self._call_keys
        if keys is None:
            keys = self._call_keys = {}
        key = keys.get(id(call))
        if key is None:
            try:
                value = marshal.dumps(call.arguments, MARSHAL_VALUE_VERSION)
                if call.arg_rules:  # the call's own accept lists change what its checks say
                    value += marshal.dumps({k: r.model_dump(mode="json") for k, r in sorted(call.arg_rules.items())},
                                           MARSHAL_VALUE_VERSION)
            except ValueError:  # not plain JSON values: never equal to another call
                value = str(id(call)).encode()
            key = keys[id(call)] = (call.name, value)
        return key

    @property
    def plans(self) -> dict[int, Any]:
        """The compiled checks of this case's expected calls so far, by the call's identity (made and kept
        by ``arguments.plan_for``)."""
        plans = self._plans
        if plans is None:
            plans = self._plans = {}
        return plans

    def required_by_gold(self, tool: str) -> tuple[str, ...]:
        """The keys the gold's ``required_args`` names for ``tool`` (beyond what the schema requires)."""
        required_args = self._required_args
        return required_args.get(tool, ()) if required_args is not None else ()

    @property
    def several_messages(self) -> bool:
        """Whether the case's context has more than one message (a value can be superseded only then)."""
        return len(self.fields["messages"]) > 1

    @property
    def context(self) -> Context:
        """The text of the case's context (system, user and tool messages)."""
        if self._context is None:
            self._context = Context(self.fields["messages"])
        return self._context

    @property
    def gold_texts(self) -> frozenset[str]:
        """Every scalar the gold uses (all answers and accepted values): grounded by definition."""
        if self._gold_texts is None:
            values: list[Any] = [c.arguments for a in (self.case.expected, *self.case.alternatives)
                                 for c in a.calls]
            values += [r.accept for rules in self.case.arg_rules.values() for r in rules.values() if r.accept]
            values += [r.accept for a in (self.case.expected, *self.case.alternatives) for c in a.calls
                       for r in c.arg_rules.values() if r.accept]
            self._gold_texts = gold_texts(values)
        return self._gold_texts


_TIME_KINDS = frozenset({"date", "datetime"})


def _in_zone(rules: dict[str, ArgRule], tz: str) -> dict[str, ArgRule]:
    """The case's zone on its date and time rules that name none (a rule's own ``tz`` wins)."""
    if not any(r.match in _TIME_KINDS and r.tz is None for r in rules.values()):
        return rules
    return {k: r.model_copy(update={"tz": tz}) if r.match in _TIME_KINDS and r.tz is None else r
            for k, r in rules.items()}


__all__ = ["CaseFacts"]
