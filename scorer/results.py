"""What scoring one case gives: frozen result types, the per-case part of ``toolgold.report/1``."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field
from pydantic_core import PydanticUndefined

from scorer.codes import ErrorCode
from scorer.model import Behavior, CaseKind, Frozen, MatchKind, Split

Status = Literal["pass", "fail", "needs_review"]
Matched = Literal["expected"] | int | None
"""Which answer the case matched: ``"expected"``, the index of an alternative, or None (it failed)."""
ActualBehavior = Literal["call", "no_call"]
JudgeVerdict = Literal["equivalent", "not_equivalent", "gold_wrong", "ambiguous", "needs_review"]


class CaseError(Frozen):
    """One error in a case, with a sentence a person can act on."""

    code: ErrorCode
    note: str
    tool: str | None = None
    """The tool the agent called (or, for a missing call or step, the tool expected)."""
    arg: str | None = None
    expected: Any = None
    """What the gold wanted: a value, or for ``wrong_tool`` the expected tool (the confused pair)."""
    actual: Any = None
    step: int | None = None
    """Index of the expected call (trajectory step or parallel call) the error is about."""


class Review(Frozen):
    """An argument no deterministic rule can settle (``semantic``): the judge's verdict, or none yet."""

    tool: str
    arg: str
    match: MatchKind = "semantic"
    intent: str
    expected: Any = None
    actual: Any = None
    verdict: JudgeVerdict = "needs_review"
    reason: str = ""


class Verdicts(Frozen):
    """Per-dimension outcome of a case: True passed, False failed, None not scored for this case."""

    selection: bool | None = None
    arguments: bool | None = None
    sequencing: bool | None = None
    abstention: bool | None = None
    grounding: bool | None = None


class PartialCredit(Frozen):
    """Graded scores beside the strict verdict (docs/scoring.md, "Partial credit"); None where undefined."""

    argument_accuracy: float | None = None
    """Gold arguments matched over gold arguments, in the answer compared with (an argument of an expected
    call no same-tool call realized counts as missed)."""
    call_precision: float | None = None
    """Correct calls (the right tool for an expected call, no argument error) over calls made."""
    call_recall: float | None = None
    """Correct calls over expected calls."""
    call_f1: float | None = None
    sequence_alignment: float | None = None
    """Trajectories: 2 × the longest common subsequence of the tool names over the two lengths summed."""


class SequenceMetrics(Frozen):
    """Trajectory metrics over the sequence of tool names."""

    exact: bool
    """The agent's call names equal the expected names, in order."""
    edit_distance: float = Field(ge=0, le=1)
    """Levenshtein distance between the name sequences, divided by the longer length."""
    expected: tuple[str, ...]
    actual: tuple[str, ...]


class CaseResult(Frozen):
    """The score of one run (one trial) of one gold case."""

    case_id: str
    trial: int = 0
    kind: CaseKind = "turn"
    status: Status
    matched: Matched = None
    compared_with: Literal["expected"] | int = "expected"
    """The answer the errors refer to (the matched one, or the closest when none matched)."""
    errors: tuple[CaseError, ...] = ()
    reviews: tuple[Review, ...] = ()
    verdicts: Verdicts = Verdicts()
    expected_behavior: Behavior = "call"
    actual_behavior: ActualBehavior = "call"
    expected_tools: tuple[str, ...] = ()
    actual_tools: tuple[str, ...] = ()
    confusion: tuple[tuple[str, str], ...] = ()
    """(gold tool, actual tool) pairs of a turn, ``NO_CALL`` standing for a missing side."""
    sequence: SequenceMetrics | None = None
    partial: PartialCredit | None = None
    """Partial credit, for call answers (None for no-call and ask answers, and tool-only answers)."""
    calls: int = 0
    redundant_calls: int = 0
    tags: tuple[str, ...] = ()
    split: Split = "regression"
    toolkit_size: int = 0

    @property
    def codes(self) -> tuple[ErrorCode, ...]:
        return tuple(e.code for e in self.errors)


M = TypeVar("M", bound=BaseModel)
_SPECS: dict[type[BaseModel], tuple[dict[str, Any], frozenset[str]]] = {}
_new = object.__new__
_set = object.__setattr__


def _spec(cls: type[BaseModel]) -> tuple[dict[str, Any], frozenset[str]]:
    defaults: dict[str, Any] = {}
    required = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            raise TypeError(f"{cls.__name__}.{name} has a default factory")
        defaults[name] = None if info.default is PydanticUndefined else info.default
        if info.default is PydanticUndefined:
            required.append(name)
    found = _SPECS[cls] = (defaults, frozenset(required))
    return found


def trusted(cls: type[M], /, **values: Any) -> M:
    """An instance of a result type built from values the scorer already knows are valid, without
    validating them again: the same object as ``cls(**values)`` (same fields, field order and fields set),
    at a fraction of the cost (validation was a third of scoring a failing case). Only for values the
    scorer made itself; anything read from outside goes through validation."""
    defaults, required = _SPECS.get(cls) or _spec(cls)
    fields = {**defaults, **values}  # field order kept: the values only replace defaults
    if len(fields) != len(defaults) or not required <= values.keys():
        raise TypeError(f"{cls.__name__}: unknown or missing fields in {sorted(values)}")
    instance = _new(cls)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(values))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


def trusted_fields(cls: type[M], fields: dict[str, Any]) -> M:
    """``trusted`` for a dict that already holds every field of ``cls`` in field order (the caller writes
    it as a literal; tests/scorer/test_trusted_results.py checks the result equals its validated copy)."""
    defaults = (_SPECS.get(cls) or _spec(cls))[0]
    if len(fields) != len(defaults):
        raise TypeError(f"{cls.__name__}: expected every field, got {sorted(fields)}")
    instance = _new(cls)
    _set(instance, "__dict__", fields)
    _set(instance, "__pydantic_fields_set__", set(fields))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


__all__ = [
    "ActualBehavior",
    "CaseError",
    "CaseResult",
    "JudgeVerdict",
    "Matched",
    "PartialCredit",
    "Review",
    "SequenceMetrics",
    "Status",
    "Verdicts",
    "trusted",
    "trusted_fields",
]
