"""The domain model: transcripts, gold cases and run records, as frozen pydantic types.

These types are the public contract of toolgold's JSON Lines formats. Each top-level record carries a
``format`` tag with a version (``toolgold.gold/1``); readers reject versions they do not know. The JSON
Schemas under ``docs/schema/`` are generated from these classes (``toolgold schema``).

Values carry no storage identity: ids here are the dataset's own ids, never database keys.
"""

from __future__ import annotations

import json
import marshal
from datetime import datetime
from functools import lru_cache
from typing import Any, ClassVar, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.schemas import surely_valid_schema

TRANSCRIPT_FORMAT: Final = "toolgold.transcript/1"
GOLD_FORMAT: Final = "toolgold.gold/1"
RUN_FORMAT: Final = "toolgold.run/1"

Role = Literal["system", "user", "assistant", "tool"]
Behavior = Literal["call", "no_call", "clarify"]
Split = Literal["regression", "rolling"]
CaseKind = Literal["turn", "trajectory"]
OrderMode = Literal["strict", "unordered", "subset", "superset"]
LabelStatus = Literal["draft", "submitted", "approved", "rejected"]
MatchKind = Literal[
    "exact",
    "one_of",
    "any",
    "ci",
    "normalized",
    "number",
    "date",
    "datetime",
    "currency",
    "phone",
    "regex",
    "semantic",
    "from_call",
]
MATCH_KINDS: tuple[str, ...] = MatchKind.__args__  # type: ignore[attr-defined]


class Frozen(BaseModel):
    """Base of every domain type: immutable, and unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Extended(Frozen):
    """A type that gained optional fields after its format version was published: an unset addition is
    left out when written, so files (and content hashes) of records that do not use it stay byte-identical.
    Each addition is declared ``Field(..., exclude_if=unset)``: checked by pydantic's serializer in Rust, not
    by a Python wrap serializer that built every record's dict in Python (a third of an import's time)."""

    ADDED: ClassVar[tuple[str, ...]] = ()


def unset(value: Any) -> bool:
    """Whether an optional addition is unset (None, or an empty mapping or list): then it is not written."""
    return value is None or ((type(value) is dict or type(value) is list) and not value)


# --------------------------------------------------------------------------------------------------
# Tools and messages (OpenAI chat shape, the lingua franca every importer converts into)
# --------------------------------------------------------------------------------------------------


class ToolSpec(Extended):
    """A tool offered to the agent: its name, description and JSON Schema for the arguments."""

    ADDED = ("annotations",)

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    annotations: dict[str, Any] = Field(default_factory=dict, exclude_if=unset)
    """MCP tool annotations as the server declared them (``readOnlyHint``, ``destructiveHint``...); hints
    for the annotator, never a reason to fail a call: scoring reads them only to tell whether a repeated
    read follows a write (``writes``), which makes it a confirmation instead of a redundant call."""
    output_schema: dict[str, Any] | None = Field(default=None, exclude_if=unset)
    """MCP ``outputSchema``: the JSON Schema of the tool's structured result, when the server gives one."""

    @property
    def writes(self) -> bool | None:
        """Whether the tool changes state: from its MCP annotations (``readOnlyHint: false`` or
        ``destructiveHint: true`` says it does, ``readOnlyHint: true`` that it does not); None when unknown."""
        if self.annotations.get("readOnlyHint") is True:
            return False
        if self.annotations.get("readOnlyHint") is False or self.annotations.get("destructiveHint") is True:
            return True
        return None

    @field_validator("parameters")
    @classmethod
    def _valid_json_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        problem = json_schema_problem(value)
        if problem:
            raise ValueError(f"parameters is not a valid JSON Schema: {problem}")
        return value

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties")
        return props if isinstance(props, dict) else {}

    @property
    def required(self) -> tuple[str, ...]:
        req = self.parameters.get("required")
        return tuple(r for r in req if isinstance(r, str)) if isinstance(req, list) else ()


class FunctionCall(Frozen):
    """``function`` of an OpenAI tool call: arguments stay the JSON string the model produced."""

    name: str = Field(min_length=1)
    arguments: str = "{}"

    @field_validator("arguments")
    @classmethod
    def _storable(cls, value: str) -> str:
        # Malformed arguments are kept (agents produce them), but not ones that parse into a value no
        # store or hash can hold: a lone surrogate, or nesting that crashes whatever walks it.
        problem = strict_json.embedded_problem(value)
        if problem:
            raise ValueError(problem)
        return value


class ToolCallRef(Frozen):
    """One tool call inside an assistant message."""

    id: str = Field(min_length=1)
    type: Literal["function"] = "function"
    function: FunctionCall

    def parsed_arguments(self) -> dict[str, Any] | str:
        """The arguments as a dict, or the raw string when it is not a JSON object."""
        return parse_arguments(self.function.arguments)


class Message(Frozen):
    """A chat message. Assistant messages may carry ``tool_calls``; tool messages a ``tool_call_id``."""

    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCallRef, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _role_fields(self) -> Message:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry tool_calls (this one is {self.role!r})")
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs the tool_call_id it answers")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError(f"tool_call_id belongs on tool messages, not {self.role!r}")
        return self


def _check_tool_call_links(messages: tuple[Message, ...]) -> None:
    """Tool call ids are unique, and every tool result answers a call made before it."""
    seen: set[str] = set()
    for index, message in enumerate(messages):
        for call in message.tool_calls:
            if call.id in seen:
                raise ValueError(f"messages[{index}]: duplicate tool_call id {call.id!r}")
            seen.add(call.id)
        if message.role == "tool" and message.tool_call_id not in seen:
            raise ValueError(
                f"messages[{index}]: tool result answers {message.tool_call_id!r}, "
                "which no earlier assistant message called"
            )


def _check_unique_tools(tools: tuple[ToolSpec, ...]) -> None:
    names = [t.name for t in tools]
    if len(set(names)) == len(names):  # the usual answer, without counting each name (15 tools: 5 us a case)
        return
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"tools are listed twice: {', '.join(dupes)}")


class Transcript(Frozen):
    """A conversation as it happened, with the tools the agent had. ``format: toolgold.transcript/1``.

    Every assistant message is a decision point that can be labeled; a transcript with no assistant
    message, or with ``metadata.awaiting_reply: true`` (a benchmark question), also has one after its
    last message.
    """

    format: Literal["toolgold.transcript/1"] = TRANSCRIPT_FORMAT
    id: str = Field(min_length=1)
    messages: tuple[Message, ...] = Field(min_length=1)
    tools: tuple[ToolSpec, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _links(self) -> Transcript:
        _check_tool_call_links(self.messages)
        _check_unique_tools(self.tools)
        return self

    @property
    def awaiting_reply(self) -> bool:
        """The conversation stops where the agent must answer next (a benchmark question, say)."""
        return bool(self.metadata.get("awaiting_reply")) and self.messages[-1].role != "assistant"

    def decision_points(self) -> tuple[int, ...]:
        """Message indexes where the agent decided (or must decide) what to do: every assistant message,
        plus the end of a conversation that awaits the agent's reply (``metadata.awaiting_reply``) or has
        no assistant message at all."""
        points = tuple(i for i, m in enumerate(self.messages) if m.role == "assistant")
        if not points or self.awaiting_reply:
            points = (*points, len(self.messages))
        return points


# --------------------------------------------------------------------------------------------------
# Gold cases
# --------------------------------------------------------------------------------------------------


def known_zone(name: str | None) -> str | None:
    """``name`` when it is an IANA time zone the standard library knows (``zoneinfo``)."""
    if name is not None:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {name!r} (an IANA name such as America/New_York)") from exc
    return name


class ArgRule(Extended):
    """How one argument of the actual call is compared with the gold value."""

    ADDED = ("tz",)

    match: MatchKind = "exact"
    accept: tuple[Any, ...] = ()
    """Further acceptable values (``one_of``; also honoured by the other matchers)."""
    optional: bool = False
    """The argument may be omitted; when present it is still compared."""
    tolerance: float | None = Field(default=None, ge=0)
    """Absolute tolerance for ``number`` (and amount tolerance for ``currency``)."""
    pattern: str | None = None
    """Regular expression for ``regex`` (full match)."""
    intent: str | None = None
    """What the value must capture, in words, for ``semantic`` (asked of the judge)."""
    from_call: int | None = Field(default=None, ge=0)
    """For ``from_call``: index of the expected call whose result must contain the value."""
    currency: str | None = None
    """Default ISO currency for ``currency`` when a value names none."""
    region: str | None = None
    """Default region for ``phone`` numbers written without a country code (e.g. ``US``)."""
    grounded: bool | None = None
    """Force (true) or waive (false) the check that the value appears in the context."""
    tz: str | None = Field(default=None, exclude_if=unset)
    """IANA time zone (``America/New_York``) for ``date`` / ``datetime``: naive values are read in the offset
    in force on their own date (daylight saving time included); overrides the case's ``tz``."""

    @field_validator("tz")
    @classmethod
    def _zone_known(cls, value: str | None) -> str | None:
        return known_zone(value)

    @model_validator(mode="after")
    def _parameters_fit_kind(self) -> ArgRule:
        if self.match == "regex" and not self.pattern:
            raise ValueError("match 'regex' needs a pattern")
        if self.match == "semantic" and not self.intent:
            raise ValueError("match 'semantic' needs an intent sentence")
        if self.match == "one_of" and not self.accept:
            raise ValueError("match 'one_of' needs the accepted values in 'accept'")
        if self.pattern is not None:
            import re

            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regular expression: {exc}") from exc
        return self


class Call(Extended):
    """A tool call with parsed arguments (what the gold expects)."""

    ADDED = ("arg_rules",)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    arg_rules: dict[str, ArgRule] = Field(default_factory=dict, exclude_if=unset)
    """Rules for this call alone, over the case's ``arg_rules`` for the tool: two parallel calls to one tool
    that accept different values ("copper" or left out in one, "aluminum" in the other)."""


class Answer(Frozen):
    """What the agent should do at a decision point: call tools, make no call, or ask the user."""

    behavior: Behavior
    calls: tuple[Call, ...] = ()
    tool_only: bool = False
    """When true only the tool names are checked (an alternative that accepts any arguments)."""

    @model_validator(mode="after")
    def _calls_fit_behavior(self) -> Answer:
        if self.behavior == "call" and not self.calls:
            raise ValueError("behavior 'call' needs at least one call")
        if self.behavior != "call" and self.calls:
            raise ValueError(f"behavior {self.behavior!r} takes no calls")
        return self


class Dependency(Frozen):
    """In a trajectory, expected call ``step`` may only happen after every call in ``requires``."""

    step: int = Field(ge=0)
    requires: tuple[int, ...] = Field(min_length=1)


class ForbiddenCall(Frozen):
    """A call that must not happen in the trajectory (any arguments, or only these)."""

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None
    reason: str = ""


class Provenance(Frozen):
    """Who made the label and where it came from."""

    annotators: tuple[str, ...] = ()
    reviewer: str | None = None
    status: LabelStatus = "approved"
    labeled_at: datetime | None = None
    source: str | None = None
    gold_version: str | None = None


class GoldCase(Extended):
    """The expected behaviour at one decision point (``kind: turn``) or over a whole conversation
    (``kind: trajectory``). ``format: toolgold.gold/1``.

    For a turn case ``messages`` is the context the agent saw and ``turn`` the index of the decision
    point in the conversation (so ``len(messages) == turn`` when the context is complete). Several calls
    in ``expected.calls`` of a turn case are parallel calls, matched without regard to order.
    """

    ADDED = ("tz",)

    format: Literal["toolgold.gold/1"] = GOLD_FORMAT
    id: str = Field(min_length=1)
    conversation_id: str | None = None
    turn: int | None = Field(default=None, ge=0, le=2**63 - 1)  # stored as a 64-bit INTEGER
    split: Split = "regression"
    kind: CaseKind = "turn"
    tools: tuple[ToolSpec, ...] = ()
    messages: tuple[Message, ...] = ()
    reference_time: datetime | None = None
    tz: str | None = Field(default=None, exclude_if=unset)
    """IANA time zone of the case (``America/New_York``): naive date/time values, in the gold and from the
    agent, are read in the offset in force on their own date, and relative gold phrases move by wall-clock
    days in it. Without it naive values take the reference time's fixed offset."""
    expected: Answer
    alternatives: tuple[Answer, ...] = ()
    arg_rules: dict[str, dict[str, ArgRule]] = Field(default_factory=dict)
    required_args: dict[str, tuple[str, ...]] | None = None
    order: OrderMode | None = None
    after: tuple[Dependency, ...] = ()
    forbidden: tuple[ForbiddenCall, ...] = ()
    tags: tuple[str, ...] = ()
    rationale: str = ""
    provenance: Provenance = Field(default_factory=Provenance)

    @field_validator("tz")
    @classmethod
    def _zone_known(cls, value: str | None) -> str | None:
        return known_zone(value)

    @field_validator("reference_time")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("needs a timezone (e.g. 2024-05-15T15:00:00-05:00 or ...Z)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GoldCase:
        _check_tool_call_links(self.messages)
        _check_unique_tools(self.tools)
        n = len(self.expected.calls)
        if self.kind == "turn":
            if self.order is not None or self.after or self.forbidden:
                raise ValueError("order / after / forbidden belong to trajectory cases (kind: trajectory)")
        else:
            for dep in self.after:
                bad = [i for i in (dep.step, *dep.requires) if i >= n]
                if bad:
                    raise ValueError(f"after: step {bad[0]} does not exist ({n} expected calls)")
                if dep.step in dep.requires:
                    raise ValueError(f"after: step {dep.step} cannot require itself")
        for tool, rules in self.arg_rules.items():
            for arg, rule in rules.items():
                if rule.match == "from_call" and rule.from_call is not None and rule.from_call >= n:
                    raise ValueError(f"arg_rules.{tool}.{arg}: from_call {rule.from_call} is not an expected call")
        return self

    @property
    def order_mode(self) -> OrderMode:
        return self.order or "strict"

    def tool(self, name: str) -> ToolSpec | None:
        for spec in self.tools:
            if spec.name == name:
                return spec
        return None

    def required_for(self, tool: str) -> tuple[str, ...]:
        """Argument keys the call to ``tool`` must carry: the schema's ``required`` ∪ ``required_args``."""
        spec = self.tool(tool)
        keys = list(spec.required if spec else ())
        if self.required_args is not None:
            keys += [k for k in self.required_args.get(tool, ()) if k not in keys]
        return tuple(keys)

    def rule_for(self, tool: str, arg: str) -> ArgRule:
        return self.arg_rules.get(tool, {}).get(arg) or ArgRule()


# --------------------------------------------------------------------------------------------------
# Run records: what the agent under test did
# --------------------------------------------------------------------------------------------------


class RunCall(Frozen):
    """A call the agent made. ``arguments`` may arrive as a JSON string (as OpenAI returns them); an
    unparseable string is kept as-is and reported as ``malformed_arguments``, never dropped."""

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> Any:
        if isinstance(value, str):
            return parse_arguments(value)
        return value

    @property
    def malformed(self) -> bool:
        return isinstance(self.arguments, str)

    @property
    def args(self) -> dict[str, Any]:
        return self.arguments if isinstance(self.arguments, dict) else {}


class RunRecord(Frozen):
    """What the agent did for one gold case (``format: toolgold.run/1``).

    A turn case gets ``calls`` (empty = no call) and optional ``text``; a trajectory case gets the full
    ``messages`` of the run.
    """

    format: Literal["toolgold.run/1"] = RUN_FORMAT
    case_id: str = Field(min_length=1)
    calls: tuple[RunCall, ...] | None = None
    text: str | None = None
    messages: tuple[Message, ...] | None = None
    run_id: str | None = None
    model: str | None = None
    trial: int = Field(default=0, ge=0)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_shape(self) -> RunRecord:
        if self.calls is not None and self.messages is not None:
            raise ValueError("a run record has either calls (turn case) or messages (trajectory), not both")
        if self.messages is not None:
            _check_tool_call_links(self.messages)
        return self

    def actual_calls(self) -> tuple[RunCall, ...]:
        """The calls of a turn record, or every call in a trajectory's messages, in order."""
        if self.calls is not None:
            return self.calls
        return tuple(
            RunCall(name=c.function.name, arguments=c.function.arguments)
            for m in self.messages or ()
            for c in m.tool_calls
        )


@lru_cache(maxsize=4096)
def _schema_problem(schema_json: str) -> str | None:
    try:  # stored as JSON: a NaN bound would come back as null, a schema that could never be loaded again
        schema = strict_json.loads(schema_json)
    except InvalidRecord as exc:
        return exc.message
    if surely_valid_schema(schema):  # the everyday schema: no need of jsonschema, nor of its import
        return None
    import jsonschema

    named = isinstance(schema, dict) and "$schema" in schema
    # A $schema that is not a string names no draft (jsonschema's lookup of it would crash): 2020-12 says why.
    validator = (jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
                 if not named or isinstance(schema["$schema"], str) else jsonschema.Draft202012Validator)
    try:
        validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"{exc.message}" + (f" (at {where})" if where else "")
    return None


_SCHEMA_PROBLEMS: dict[bytes, str | None] = {}
MARSHAL_VALUE_VERSION: Final = 2
"""The newest ``marshal`` format without object references: equal JSON values give equal bytes."""


def json_schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None. Cached: the same tools recur in every transcript.

    The memo key is ``marshal`` bytes, several times cheaper to build than sorted JSON (scoring reads every
    tool of every gold case); the same schema written with another key order is only a cache miss. Version
    2 of the marshal format, which writes equal values as equal bytes: later versions write a reference
    when an object recurs, so the bytes depended on whether the JSON parser shared its key strings.
    """
    try:
        key = marshal.dumps(schema, MARSHAL_VALUE_VERSION)
    except ValueError:  # not plain JSON values
        return _schema_problem(json.dumps(schema, sort_keys=True))
    if key not in _SCHEMA_PROBLEMS:
        if len(_SCHEMA_PROBLEMS) >= 4096:
            _SCHEMA_PROBLEMS.clear()
        # Plain JSON values come back alike from their text, so ``_schema_problem`` would find the everyday
        # schema valid too: told from the value, without writing and parsing it (~7 us of a BFCL tool's 8.5).
        _SCHEMA_PROBLEMS[key] = None if strict_json.plain_json(schema) and surely_valid_schema(schema) \
            else _schema_problem(json.dumps(schema, sort_keys=True))
    return _SCHEMA_PROBLEMS[key]


def parse_arguments(raw: str) -> dict[str, Any] | str:
    """Parse a JSON-object argument string; return the raw string when it is not one."""
    try:
        value = strict_json.loads(raw) if raw.strip() else {}
    except InvalidRecord:  # not JSON, or NaN / a lone surrogate / too deep: kept as malformed
        return raw
    return value if isinstance(value, dict) else raw


__all__ = [
    "GOLD_FORMAT",
    "MATCH_KINDS",
    "RUN_FORMAT",
    "TRANSCRIPT_FORMAT",
    "Answer",
    "ArgRule",
    "Behavior",
    "Call",
    "CaseKind",
    "Dependency",
    "ForbiddenCall",
    "FunctionCall",
    "GoldCase",
    "LabelStatus",
    "MatchKind",
    "Message",
    "OrderMode",
    "Provenance",
    "RunCall",
    "RunRecord",
    "Split",
    "ToolCallRef",
    "ToolSpec",
    "Transcript",
    "json_schema_problem",
    "parse_arguments",
]
