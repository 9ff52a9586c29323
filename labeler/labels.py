"""A label in the making: what one annotator decided at one decision point, and how it becomes gold.

``LabelBody`` is the draft an annotator edits; it is saved on every change, so it must accept incomplete
work (a ``regex`` rule whose pattern is not typed yet, arguments that do not satisfy the schema yet).
``problems`` says what stands between a draft and a gold case, and ``gold_case`` builds the
``scorer.model.GoldCase`` once there is nothing left, which is what *Submit* stores and exports.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scorer import canonical
from scorer.errors import ToolgoldError
from scorer.formats import describe_validation_error
from scorer.model import (
    Answer,
    ArgRule,
    Behavior,
    Call,
    Dependency,
    ForbiddenCall,
    GoldCase,
    MatchKind,
    OrderMode,
    Provenance,
    Split,
    ToolSpec,
    Transcript,
)

Decision = Literal["no_call", "same", "different", "clarify"]
DECISIONS: Final[dict[Decision, str]] = {
    "no_call": "No tool call",
    "same": "Same as observed",
    "different": "Different call",
    "clarify": "Should ask the user",
}
BEHAVIOR_OF: Final[dict[Decision, Behavior]] = {
    "no_call": "no_call", "same": "call", "different": "call", "clarify": "clarify",
}


class LabelIncomplete(ToolgoldError):
    """A label cannot become a gold case yet; ``problems`` lists what is missing or wrong."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("the label is not complete: " + "; ".join(problems))


class _Draft(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RuleDraft(_Draft):
    """An ``ArgRule`` as it is being written: same fields, checked only when the label is submitted."""

    match: MatchKind = "exact"
    accept: tuple[Any, ...] = ()
    optional: bool = False
    tolerance: float | None = Field(default=None, ge=0)
    pattern: str | None = None
    intent: str | None = None
    from_call: int | None = Field(default=None, ge=0)
    currency: str | None = None
    region: str | None = None
    grounded: bool | None = None

    def to_rule(self) -> ArgRule:
        """The checked rule; raises ``ValueError`` naming what is missing (e.g. a regex without pattern)."""
        try:
            return ArgRule.model_validate(self.model_dump(exclude_defaults=True))
        except ValidationError as exc:
            raise ValueError(describe_validation_error(exc)) from None

    @property
    def is_default(self) -> bool:
        return self == RuleDraft()


class _LabelCommon(_Draft):
    """What every label carries besides the expected behaviour."""

    tags: tuple[str, ...] = ()
    rationale: str = ""
    unsure: bool = False
    reference_time: datetime | None = None
    split: Split = "regression"

    @field_validator("reference_time")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("needs a timezone (e.g. 2024-05-15T15:00:00-05:00 or ...Z)")
        return value

    @field_validator("tags")
    @classmethod
    def _unique_tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(value))

    def to_json(self) -> dict[str, Any]:
        """The body as JSON values; ``NonFiniteNumber`` for a NaN or ±Infinity in it (``model_dump`` would
        turn it into ``None``, and a null would be saved in its place)."""
        canonical.refuse_non_finite(self.model_dump(exclude_defaults=True))
        return self.model_dump(mode="json", exclude_defaults=True)

    def canonical(self) -> str:
        return canonical.dumps_stored(self.to_json())


class _CallsCommon(_LabelCommon):
    """What the call editor edits in either kind of label: the expected calls, each tool's required keys and
    each argument's match rule."""

    calls: tuple[Call, ...] = ()
    arg_rules: dict[str, dict[str, RuleDraft]] = Field(default_factory=dict)
    required_args: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Per tool, the keys the call must carry (absent: the schema's ``required``)."""

    def required_for(self, spec: ToolSpec) -> tuple[str, ...]:
        return self.required_args.get(spec.name, spec.required)

    def rule(self, tool: str, arg: str) -> RuleDraft | None:
        return self.arg_rules.get(tool, {}).get(arg)


class LabelBody(_CallsCommon):
    """The label payload saved as a draft (canonical JSON in the store) and submitted as gold."""

    decision: Decision | None = None
    # ``calls`` are kept when the decision moves to no-call or clarify, so switching back loses nothing.
    alternatives: tuple[Answer, ...] = ()

    @property
    def behavior(self) -> Behavior | None:
        return BEHAVIOR_OF[self.decision] if self.decision else None

    @property
    def expects_calls(self) -> bool:
        return self.behavior == "call"


# --------------------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------------------


def argument_errors(spec: ToolSpec, arguments: dict[str, Any],
                    required: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """``(argument, message)`` for each way ``arguments`` break the tool's JSON Schema.

    ``required`` replaces the schema's own list (the annotator may waive or add required keys). An error
    about the whole object has argument ``""``.
    """
    import jsonschema  # on first use: reading labels (the store, the CLI) needs none of it

    schema = dict(spec.parameters)
    if required is not None:
        schema["required"] = list(required)
    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    out = []
    for err in validator_cls(schema).iter_errors(arguments):
        path = list(err.absolute_path)
        if path:
            out.append((str(path[0]), err.message if len(path) == 1 else f"{'/'.join(map(str, path[1:]))}: {err.message}"))
        elif err.validator == "required":
            missing = err.message.split("'")[1] if "'" in err.message else ""
            out.append((missing, "required, but missing"))
        else:
            out.append(("", err.message))
    return sorted(out)


def problems(body: LabelBody, tools: tuple[ToolSpec, ...]) -> list[str]:
    """What keeps ``body`` from being submitted; empty when it can become a gold case."""
    if body.decision is None:
        return ["choose a decision (0 no call, 1 same as observed, 2 different call, 3 ask the user)"]
    found: list[str] = []
    by_name = {t.name: t for t in tools}
    if body.expects_calls:
        if not body.calls:
            found.append("add the expected call")
        for n, call in enumerate(body.calls, start=1):
            spec = by_name.get(call.name)
            if spec is None:
                found.append(f"call {n}: {call.name!r} is not among the tools offered at this turn")
                continue
            for arg, message in argument_errors(spec, call.arguments, body.required_for(spec)):
                found.append(f"call {n} {call.name}" + (f".{arg}" if arg else "") + f": {message}")
        for tool, rules in body.arg_rules.items():
            for arg, draft in rules.items():
                try:
                    rule = draft.to_rule()
                except ValueError as exc:
                    found.append(f"rule for {tool}.{arg}: {exc}")
                    continue
                if rule.match == "from_call" and (rule.from_call is None or rule.from_call >= len(body.calls)):
                    found.append(f"rule for {tool}.{arg}: 'comes from call' needs the number of an expected call "
                                 f"(0 to {len(body.calls) - 1})")
    for n, alt in enumerate(body.alternatives, start=1):
        for call in alt.calls:
            if call.name not in by_name:
                found.append(f"alternative {n}: {call.name!r} is not among the tools offered at this turn")
    return found


# --------------------------------------------------------------------------------------------------
# Gold
# --------------------------------------------------------------------------------------------------


def gold_case_id(transcript_id: str, message_index: int) -> str:
    """The id of the gold case labels of one decision point become."""
    return f"{transcript_id}#t{message_index}"


def gold_case(body: LabelBody, *, transcript: Transcript, message_index: int, annotators: tuple[str, ...],
              labeled_at: datetime, source: str | None = None) -> GoldCase:
    """The turn gold case for ``body`` at ``message_index``; raises ``LabelIncomplete`` when it is not ready."""
    found = problems(body, transcript.tools)
    if found:
        raise LabelIncomplete(found)
    return _turn_case(body, transcript=transcript, message_index=message_index, annotators=annotators,
                      labeled_at=labeled_at, source=source)


def _gold_rules(body: _CallsCommon, calls: tuple[Call, ...], tools: tuple[ToolSpec, ...]) -> tuple[
        dict[str, dict[str, ArgRule]], dict[str, tuple[str, ...]]]:
    """The gold's ``arg_rules`` and ``required_args`` for the tools ``calls`` use (the tools are offered)."""
    specs = {t.name: t for t in tools}
    arg_rules: dict[str, dict[str, ArgRule]] = {}
    required_args: dict[str, tuple[str, ...]] = {}
    for tool in sorted({c.name for c in calls}):
        spec = specs[tool]
        chosen = body.required_for(spec)
        rules = {arg: d.to_rule() for arg, d in body.arg_rules.get(tool, {}).items() if not d.is_default}
        # Keys the schema requires but the annotator waived: the format says so with ``optional``.
        for arg in spec.required:
            if arg not in chosen:
                rules[arg] = (rules.get(arg) or ArgRule()).model_copy(update={"optional": True})
        if rules:
            arg_rules[tool] = dict(sorted(rules.items()))
        extra = tuple(k for k in chosen if k not in spec.required)
        if extra:
            required_args[tool] = extra
    return arg_rules, required_args


def _turn_case(body: LabelBody, *, transcript: Transcript, message_index: int, annotators: tuple[str, ...],
               labeled_at: datetime, source: str | None = None) -> GoldCase:
    assert body.behavior is not None  # problems() refuses a label without a decision
    calls = body.calls if body.expects_calls else ()
    arg_rules, required_args = _gold_rules(body, calls, transcript.tools)
    return GoldCase(
        id=gold_case_id(transcript.id, message_index),
        conversation_id=transcript.id,
        turn=message_index,
        split=body.split,
        kind="turn",
        tools=transcript.tools,
        messages=transcript.messages[:message_index],
        reference_time=body.reference_time,
        expected=Answer(behavior=body.behavior, calls=calls),
        alternatives=body.alternatives,
        arg_rules=arg_rules,
        required_args=required_args or None,
        tags=body.tags,
        rationale=body.rationale,
        provenance=Provenance(annotators=annotators, status="submitted", labeled_at=labeled_at, source=source),
    )


def _rule_draft(rule: ArgRule) -> RuleDraft | None:
    """The editor's draft of a gold rule; None when the rule has fields the editor does not show (``tz``)."""
    fields = rule.model_dump(exclude_defaults=True)
    if set(fields) - set(RuleDraft.model_fields):
        return None
    return RuleDraft.model_validate(fields)


def _drafts_of(case: GoldCase) -> tuple[dict[str, dict[str, RuleDraft]], dict[str, tuple[str, ...]]]:
    """The editor's match rules and required keys of a gold case (the inverse of ``_gold_rules``)."""
    specs = {t.name: t for t in case.tools}
    rules: dict[str, dict[str, RuleDraft]] = {}
    required: dict[str, tuple[str, ...]] = {}
    for tool, per in case.arg_rules.items():
        drafts = {arg: d for arg, rule in per.items() if (d := _rule_draft(rule)) is not None}
        if drafts:
            rules[tool] = drafts
    for tool in {c.name for c in case.expected.calls}:
        spec = specs.get(tool)
        if spec is None:
            continue
        keys = tuple(k for k in case.required_for(tool) if not case.rule_for(tool, k).optional)
        if keys != spec.required:
            required[tool] = keys
    return rules, required


def _kept_rules(base: GoldCase, built: dict[str, dict[str, ArgRule]], calls: tuple[Call, ...]) -> dict[
        str, dict[str, ArgRule]]:
    """``built`` plus the rules of ``base`` the editor could not show (``tz``), for the tools still called."""
    arg_rules = {tool: dict(per) for tool, per in built.items()}
    for tool, per in base.arg_rules.items():
        for arg, rule in per.items():
            if _rule_draft(rule) is None and tool in {c.name for c in calls}:
                arg_rules.setdefault(tool, {})[arg] = rule
    return arg_rules


def body_from_case(case: GoldCase) -> LabelBody:
    """A turn gold case as a label body, for the labeling editor (a reviewer's *edit and accept*): the inverse
    of ``gold_case`` on what the editor shows."""
    behavior = case.expected.behavior
    rules, required = _drafts_of(case)
    return LabelBody(decision="different" if behavior == "call" else behavior, calls=case.expected.calls,
                     arg_rules=rules, required_args=required, alternatives=case.alternatives, tags=case.tags,
                     rationale=case.rationale, reference_time=case.reference_time, split=case.split)


def case_from_body(body: LabelBody, base: GoldCase) -> GoldCase:
    """``base`` with what the editor changed: the answer, rules, alternatives, tags and rationale, checked
    against the tool schemas (``LabelIncomplete`` lists what the edit breaks; what ``base`` already broke,
    as some imported gold does, is not the reviewer's to fix first). Who labeled it (provenance), the id and
    the context stay ``base``'s; a rule the editor could not show (``tz``) is kept as it was."""
    before = set(problems(body_from_case(base), base.tools))  # imported gold may break its schema already
    if found := [p for p in problems(body, base.tools) if p not in before]:
        raise LabelIncomplete(found)
    context = Transcript(id=base.conversation_id or base.id, messages=base.messages, tools=base.tools)
    built = _turn_case(body, transcript=context, message_index=len(base.messages),
                       annotators=base.provenance.annotators, labeled_at=base.provenance.labeled_at or datetime.now(UTC))
    arg_rules = _kept_rules(base, built.arg_rules, built.expected.calls)
    # The editor has no "tool only" switch: an answer left as it was keeps it (and anything else it said).
    expected = base.expected if (built.expected.behavior, built.expected.calls) == (
        base.expected.behavior, base.expected.calls) else built.expected
    return base.model_copy(update={
        "expected": expected, "alternatives": built.alternatives, "arg_rules": arg_rules,
        "required_args": built.required_args, "rationale": built.rationale,
        "tags": base.tags if built.tags == tuple(dict.fromkeys(base.tags)) else built.tags,
        "reference_time": built.reference_time})


def schema_problems(case: GoldCase) -> list[str]:
    """How the expected calls and alternatives of ``case`` break the tool schemas it carries (a call to a
    tool it does not offer, an argument of the wrong type, a required key missing); empty when they fit."""
    specs = {t.name: t for t in case.tools}
    found = []
    for label, answer in [("", case.expected), *((f"alternative {n} ", a) for n, a in
                                                 enumerate(case.alternatives, start=1))]:
        for n, call in enumerate(answer.calls, start=1):
            spec = specs.get(call.name)
            if spec is None:
                found.append(f"{label}call {n}: {call.name!r} is not among the tools offered at this turn")
                continue
            if answer.tool_only:  # any arguments will do: there are none to check
                continue
            required = tuple(k for k in case.required_for(call.name)
                             if not (case.rule_for(call.name, k).optional))
            for arg, message in argument_errors(spec, call.arguments, required):
                found.append(f"{label}call {n} {call.name}" + (f".{arg}" if arg else "") + f": {message}")
    return found


# --------------------------------------------------------------------------------------------------
# Trajectory labels: the expected call sequence of a whole transcript
# --------------------------------------------------------------------------------------------------

ORDER_MODES: Final[dict[OrderMode, str]] = {
    "strict": "strict: exactly these calls, in this order",
    "unordered": "unordered: exactly these calls, any order",
    "subset": "subset: no call outside these (some may be skipped)",
    "superset": "superset: all of these, extra calls allowed",
}


class TrajectoryBody(_CallsCommon):
    """The label of a whole transcript: which calls should happen, in what order, and which must not."""

    no_action: bool = False
    """The agent should change nothing (no expected calls; forbidden calls still apply)."""
    order: OrderMode = "strict"
    after: tuple[Dependency, ...] = ()
    forbidden: tuple[ForbiddenCall, ...] = ()

    def requires(self, step: int) -> tuple[int, ...]:
        return next((d.requires for d in self.after if d.step == step), ())


def trajectory_problems(body: TrajectoryBody, tools: tuple[ToolSpec, ...]) -> list[str]:
    """What keeps a trajectory label from being submitted; empty when it can become a gold case."""
    found: list[str] = []
    by_name = {t.name: t for t in tools}
    if not body.calls and not body.no_action:
        found.append("add the expected calls, or mark that no action is expected")
    if body.no_action and body.calls:
        found.append("no action is expected, yet calls are listed: remove them or untick 'no action'")
    for n, call in enumerate(body.calls):
        spec = by_name.get(call.name)
        if spec is None:
            found.append(f"step {n}: {call.name!r} is not among the tools offered")
            continue
        for arg, message in argument_errors(spec, call.arguments, body.required_for(spec)):
            found.append(f"step {n} {call.name}" + (f".{arg}" if arg else "") + f": {message}")
    for dep in body.after:
        bad = [i for i in (dep.step, *dep.requires) if i >= len(body.calls)]
        if bad:
            found.append(f"step {dep.step} depends on step {bad[0]}, which does not exist")
    for forbidden in body.forbidden:
        if forbidden.name not in by_name:
            found.append(f"forbidden call {forbidden.name!r} is not among the tools offered")
    for tool, rules in body.arg_rules.items():
        for arg, draft in rules.items():
            try:
                rule = draft.to_rule()
            except ValueError as exc:
                found.append(f"rule for {tool}.{arg}: {exc}")
                continue
            if rule.match == "from_call" and rule.from_call is not None and rule.from_call >= len(body.calls):
                found.append(f"rule for {tool}.{arg}: comes from step {rule.from_call}, which does not exist")
    return found


def trajectory_case_id(transcript_id: str) -> str:
    return f"{transcript_id}#trajectory"


def trajectory_case(body: TrajectoryBody, *, transcript: Transcript, annotators: tuple[str, ...],
                    labeled_at: datetime, source: str | None = None) -> GoldCase:
    """The trajectory gold case; raises ``LabelIncomplete`` when the label is not ready. ``messages`` is the
    context before the agent's first decision (where a replay starts)."""
    found = trajectory_problems(body, transcript.tools)
    if found:
        raise LabelIncomplete(found)
    rules, required_args = _gold_rules(body, body.calls, transcript.tools)
    start = transcript.decision_points()[0]
    return GoldCase(
        id=trajectory_case_id(transcript.id), conversation_id=transcript.id, split=body.split, kind="trajectory",
        tools=transcript.tools, messages=transcript.messages[:start], reference_time=body.reference_time,
        expected=Answer(behavior="call", calls=body.calls) if body.calls else Answer(behavior="no_call"),
        arg_rules=rules, required_args=required_args or None, order=body.order, after=body.after,
        forbidden=body.forbidden, tags=body.tags, rationale=body.rationale,
        provenance=Provenance(annotators=annotators, status="submitted", labeled_at=labeled_at, source=source),
    )


def trajectory_body_from_case(case: GoldCase) -> TrajectoryBody:
    """A trajectory gold case as a trajectory label body, for the step editor (a reviewer's *edit and
    accept*): the inverse of ``trajectory_case`` on what the editor shows."""
    rules, required = _drafts_of(case)
    return TrajectoryBody(calls=case.expected.calls, no_action=case.expected.behavior != "call",
                          order=case.order_mode, after=case.after, forbidden=case.forbidden, arg_rules=rules,
                          required_args=required, tags=case.tags, rationale=case.rationale,
                          reference_time=case.reference_time, split=case.split)


def trajectory_case_from_body(body: TrajectoryBody, base: GoldCase) -> GoldCase:
    """``base`` with what the step editor changed (the steps, their order mode and dependencies, forbidden
    calls, rules, required keys, tags and rationale), checked like a trajectory label (``LabelIncomplete``
    lists what the edit breaks; what ``base`` already broke is not the reviewer's to fix first). The id,
    the context, who labeled it and the alternatives stay ``base``'s, and so does a rule the editor cannot
    show (``tz``)."""
    before = set(trajectory_problems(trajectory_body_from_case(base), base.tools))
    if found := [p for p in trajectory_problems(body, base.tools) if p not in before]:
        raise LabelIncomplete(found)
    built, required_args = _gold_rules(body, body.calls, base.tools)
    expected = Answer(behavior="call", calls=body.calls) if body.calls else Answer(behavior="no_call")
    if (expected.behavior, expected.calls) == (base.expected.behavior, base.expected.calls):
        expected = base.expected  # the editor has no "tool only" switch: an unchanged answer keeps it
    return base.model_copy(update={
        "expected": expected, "arg_rules": _kept_rules(base, built, body.calls),
        "required_args": required_args or None, "order": body.order, "after": body.after,
        "forbidden": body.forbidden, "rationale": body.rationale,
        "tags": base.tags if body.tags == tuple(dict.fromkeys(base.tags)) else body.tags,
        "reference_time": body.reference_time})


# --------------------------------------------------------------------------------------------------
# Suggestions and diffs, for the label panel
# --------------------------------------------------------------------------------------------------

_FREE_TEXT = ("summary", "message", "note", "reason", "description", "comment", "query", "text", "content",
              "body", "instructions", "subject", "title", "feedback", "explanation")


def suggest_match(name: str, schema: dict[str, Any]) -> MatchKind:
    """A first guess at how an argument should be compared, from its name and JSON Schema."""
    kind = schema.get("type")
    fmt = schema.get("format")
    hint = f"{name} {schema.get('description', '')}".lower()
    if "enum" in schema or kind == "boolean":
        return "exact"
    if fmt == "date":
        return "date"
    if fmt == "date-time":
        return "datetime"
    if kind == "number":
        return "number"
    if kind == "string":
        if "phone" in hint:
            return "phone"
        if any(w in name.lower() for w in ("price", "amount", "cost", "currency")):
            return "currency"
        if any(w in name.lower() for w in _FREE_TEXT):
            return "semantic"
        if "date" in name.lower() and "yyyy-mm-dd" in hint:
            return "date"
        if "email" in hint or "name" in name.lower():
            return "ci"
    return "exact"


def describe_value(value: Any) -> str:
    return canonical.dumps(value)


def call_diff(observed: list[dict[str, Any]], expected: tuple[Call, ...]) -> list[str]:
    """What the expected calls change compared with what the agent did, one line per difference."""
    lines: list[str] = []
    for n in range(max(len(observed), len(expected))):
        seen = observed[n] if n < len(observed) else None
        want = expected[n] if n < len(expected) else None
        label = f"call {n + 1}"
        if seen is None and want is not None:
            lines.append(f"+ {label}: {want.name}({describe_value(want.arguments)})")
            continue
        if want is None and seen is not None:
            lines.append(f"- {label}: {seen['name']} (the agent's call is not expected)")
            continue
        assert seen is not None and want is not None
        if seen["name"] != want.name:
            lines.append(f"~ {label}: tool {seen['name']} → {want.name}")
        seen_args = seen["arguments"] if isinstance(seen["arguments"], dict) else {}
        for arg in sorted(set(seen_args) | set(want.arguments)):
            if arg not in want.arguments:
                lines.append(f"- {label} {arg}: {describe_value(seen_args[arg])}")
            elif arg not in seen_args:
                lines.append(f"+ {label} {arg}: {describe_value(want.arguments[arg])}")
            elif not canonical.equal(seen_args[arg], want.arguments[arg]):
                lines.append(f"~ {label} {arg}: {describe_value(seen_args[arg])} → "
                             f"{describe_value(want.arguments[arg])}")
    return lines


def same_as_observed(observed: list[dict[str, Any]], calls: tuple[Call, ...]) -> bool:
    return bool(observed) and not call_diff(observed, calls)


def observed_as_calls(observed: list[dict[str, Any]]) -> tuple[Call, ...]:
    """The agent's calls as expected calls (malformed argument strings become empty arguments)."""
    return tuple(Call(name=c["name"], arguments=c["arguments"] if isinstance(c["arguments"], dict) else {})
                 for c in observed)


__all__ = [
    "BEHAVIOR_OF",
    "DECISIONS",
    "ORDER_MODES",
    "Decision",
    "LabelBody",
    "LabelIncomplete",
    "RuleDraft",
    "TrajectoryBody",
    "argument_errors",
    "body_from_case",
    "call_diff",
    "case_from_body",
    "gold_case",
    "gold_case_id",
    "observed_as_calls",
    "problems",
    "same_as_observed",
    "schema_problems",
    "suggest_match",
    "trajectory_case",
    "trajectory_case_id",
    "trajectory_problems",
]
