"""Turning the scores of each acceptable answer into one case result.

A case passes when the agent's calls match the expected answer or any alternative; the result names the
one matched. When none matches, the errors shown are those against the closest answer (the right tools
first, then the fewest errors, then the gold's own order), so a note always compares with something the
annotator wrote. Semantic arguments are put to the judge only for answers that have no other error.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel

from scorer.codes import DIMENSION_OF, ErrorCode
from scorer.facts import CaseFacts
from scorer.judging import ArgumentQuestion, Judge
from scorer.matchers import show
from scorer.model import Answer, GoldCase
from scorer.results import (
    ActualBehavior,
    CaseError,
    CaseResult,
    PartialCredit,
    Review,
    SequenceMetrics,
    Status,
    Verdicts,
    trusted,
)

Label = Literal["expected"] | int
M = TypeVar("M", bound=BaseModel)
_new: Final = object.__new__
# What pydantic keeps of an instance, each set through BaseModel's own slot descriptor, bound once: a third
# cheaper per value than ``object.__setattr__``, which takes a slice of its arguments and looks the name up
# on the type again (the models' __setattr__ is pydantic's frozen check, a Python frame).
_set_dict: Final = BaseModel.__dict__["__dict__"].__set__
_set_fields_set: Final = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra: Final = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private: Final = BaseModel.__dict__["__pydantic_private__"].__set__
_EVERY_FIELD: Final[dict[type[BaseModel], frozenset[str]]] = {}
"""Each result type's field names, the fields set of an instance ``built`` with every field."""


def built(cls: type[M], fields: dict[str, Any], given: frozenset[str] | None = None) -> M:
    """``results.trusted_fields`` in the compiled core (no Python frame): an instance of ``cls`` from a dict
    of every field in field order, the values the scorer made itself, not validated again. ``given``: the
    fields set (``model_fields_set``), as ``trusted`` records the keywords it was passed; None for all."""
    if given is None:
        # Copying a frozenset is a third cheaper than collecting a 20-key dict's keys into a set.
        given = _EVERY_FIELD.get(cls)
        if given is None:
            given = _EVERY_FIELD[cls] = frozenset(cls.model_fields)
    instance = _new(cls)
    _set_dict(instance, fields)
    _set_fields_set(instance, set(given))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def case_error(given: frozenset[str], code: ErrorCode, note: str, tool: str | None = None, arg: str | None = None,
               expected: Any = None, actual: Any = None, step: int | None = None) -> CaseError:
    """``trusted(CaseError, ...)`` of the keywords named in ``given``, the others at their defaults."""
    return built(CaseError, {"code": code, "note": note, "tool": tool, "arg": arg, "expected": expected,
                             "actual": actual, "step": step}, given)


class AnswerScore:
    """How the agent's calls fare against one acceptable answer. A plain class, not a dataclass: a
    generated ``__init__`` is interpreted Python, entered once per answer scored."""

    __slots__ = ("confusion", "errors", "expected_tools", "label", "paired", "redundant_calls", "reviews",
                 "selection_ok", "sequence")

    def __init__(self, label: Label, errors: list[CaseError] | None = None, reviews: list[Review] | None = None,
                 selection_ok: bool = True, expected_tools: tuple[str, ...] = (),
                 confusion: list[tuple[str, str]] | None = None, sequence: SequenceMetrics | None = None,
                 redundant_calls: int = 0, paired: tuple[int, ...] = ()) -> None:
        self.label: Label = label
        self.errors: list[CaseError] = [] if errors is None else errors
        self.reviews: list[Review] = [] if reviews is None else reviews
        self.selection_ok = selection_ok
        self.expected_tools = expected_tools
        self.confusion: list[tuple[str, str]] = [] if confusion is None else confusion
        self.sequence = sequence
        self.redundant_calls = redundant_calls
        self.paired = paired
        """Expected calls (by index) that a call to the same tool realized."""

    def __repr__(self) -> str:
        return (f"AnswerScore(label={self.label!r}, errors={self.errors!r}, reviews={self.reviews!r}, "
                f"selection_ok={self.selection_ok!r}, expected_tools={self.expected_tools!r}, "
                f"confusion={self.confusion!r}, sequence={self.sequence!r}, "
                f"redundant_calls={self.redundant_calls!r}, paired={self.paired!r})")

    @property
    def clean(self) -> bool:
        return not self.errors and not self.reviews

    def closeness(self) -> tuple[int, int, int]:
        return (0 if self.selection_ok else 1, len(self.errors), -1 if self.label == "expected" else int(self.label))


def resolve_reviews(score: AnswerScore, facts: CaseFacts, judge: Judge | None) -> None:
    """Ask the judge about the pending semantic arguments of ``score`` (in place)."""
    if judge is None or not score.reviews:
        return
    case = facts.case
    kept = []
    for review in score.reviews:
        if review.match != "semantic":
            kept.append(review)
            continue
        answer = judge.judge_argument(ArgumentQuestion(
            case_id=case.id, tool=review.tool, arg=review.arg, intent=review.intent, expected=review.expected,
            actual=review.actual, context=case.messages, rationale=case.rationale))
        if answer.verdict == "equivalent":
            continue
        if answer.verdict == "not_equivalent":
            why = f" ({answer.reason})" if answer.reason else ""
            score.errors.append(trusted(CaseError,
                code=ErrorCode.WRONG_ARG_VALUE, tool=review.tool, arg=review.arg, actual=review.actual,
                expected=review.expected,
                note=f"called {review.tool} with {review.arg} {show(review.actual)}; the judge found it does not "
                     f"capture: {review.intent}{why}"))
            continue
        kept.append(review.model_copy(update={"verdict": answer.verdict, "reason": answer.reason}))
    score.reviews = kept


def choose(scores: Iterable[AnswerScore], facts: CaseFacts, judge: Judge | None) -> tuple[AnswerScore, Status]:
    """The answer the case is judged by, and the case status. ``scores`` may be lazy: answers after the
    first clean one are never scored."""
    seen = []
    for score in scores:
        if not score.errors and score.reviews:
            resolve_reviews(score, facts, judge)
        if score.clean:
            return score, "pass"
        seen.append(score)
    pending = [s for s in seen if not s.errors]
    if pending:
        return pending[0], "needs_review"
    return min(seen, key=AnswerScore.closeness), "fail"


@lru_cache(maxsize=256)
def verdicts_of(selection: bool | None, arguments: bool | None, sequencing: bool | None,
                abstention: bool | None, grounding: bool | None) -> Verdicts:
    """Shared instances (they are frozen): there are only a few dozen distinct verdict combinations."""
    return Verdicts(selection=selection, arguments=arguments, sequencing=sequencing, abstention=abstention,
                    grounding=grounding)


def dimension_ok(errors: Sequence[CaseError], dimension: str) -> bool:
    return not any(DIMENSION_OF[e.code] == dimension for e in errors)


_ARGUMENT_CODES = frozenset(code for code, dimension in DIMENSION_OF.items() if dimension == "arguments")


def partial_credit(case: GoldCase, answer: Answer, best: AnswerScore, actual_tools: tuple[str, ...],
                   calls: int) -> PartialCredit | None:
    """Argument accuracy, call precision / recall / F1 and (trajectories) sequence alignment."""
    if answer.behavior != "call" or answer.tool_only:
        return None
    expected = answer.calls
    if not best.errors and not best.reviews and case.kind == "turn":  # every paired call fully right
        gold_args = sum(len(c.arguments) for c in expected)
        correct = len(best.paired)
        matched_args = sum(len(expected[i].arguments) for i in best.paired)
        return _partial(matched_args / gold_args if gold_args else None, correct / calls if calls else None,
                        correct / len(expected), 2 * correct / (calls + len(expected)), None)
    single = case.kind == "turn" and len(expected) == 1
    missed: dict[int, set[str]] = {}  # per expected call, the gold arguments it got wrong
    for e in best.errors:
        step = 0 if single else e.step
        if e.code not in _ARGUMENT_CODES or step is None:
            continue
        if e.code == ErrorCode.MALFORMED_ARGUMENTS:
            keys = set(expected[step].arguments) | {"\0"}  # nothing could be read
        elif e.code == ErrorCode.SWAPPED_ARGS and isinstance(e.expected, dict):
            keys = set(e.expected)
        else:
            keys = {"\0" if e.arg is None else e.arg}
        missed.setdefault(step, set()).update(keys)
    for review in best.reviews:  # an argument only a judge or a person can settle is not matched yet
        for i in best.paired:
            if expected[i].name == review.tool and review.arg in expected[i].arguments:
                missed.setdefault(i, set()).add(review.arg)
    gold_args = sum(len(c.arguments) for c in expected)
    matched_args = sum(len(expected[i].arguments.keys() - missed.get(i, set())) for i in best.paired)
    correct = sum(1 for i in best.paired if i not in missed)
    precision = correct / calls if calls else None
    recall = correct / len(expected)
    f1 = 2 * correct / (calls + len(expected))
    alignment = None
    if case.kind == "trajectory":
        names = tuple(c.name for c in expected)
        alignment = 2 * _common_subsequence(names, actual_tools) / (len(names) + len(actual_tools))
    return _partial(matched_args / gold_args if gold_args else None, precision, recall, f1, alignment)


def partial_ratios(matched_args: int, gold_args: int, correct: int, calls: int, expected: int) -> PartialCredit:
    """The partial credit of a turn answer from its counts, as ``partial_credit`` computes it (shared per
    counts: found by five integers, not by four ratios made and hashed through ``_partial``'s cache)."""
    counts = (matched_args, gold_args, correct, calls, expected)
    found = _BY_COUNTS.get(counts)
    if found is None:
        if len(_BY_COUNTS) >= 4096:
            _BY_COUNTS.clear()
        found = _BY_COUNTS[counts] = _partial(matched_args / gold_args if gold_args else None,
                                              correct / calls if calls else None, correct / expected,
                                              2 * correct / (calls + expected), None)
    return found


_BY_COUNTS: Final[dict[tuple[int, int, int, int, int], PartialCredit]] = {}


@lru_cache(maxsize=1024)
def _partial(argument_accuracy: float | None, call_precision: float | None, call_recall: float,
             call_f1: float, sequence_alignment: float | None) -> PartialCredit:
    """Shared instances (they are frozen): most cases score one of a few dozen ratios."""
    return trusted(PartialCredit, argument_accuracy=argument_accuracy, call_precision=call_precision,
                   call_recall=call_recall, call_f1=call_f1, sequence_alignment=sequence_alignment)


def _common_subsequence(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (dynamic programming, one row at a time)."""
    row = [0] * (len(b) + 1)
    for x in a:
        previous = 0
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], previous + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def build_result(case: GoldCase, trial: int, best: AnswerScore, status: Status, *, actual_tools: tuple[str, ...],
                 verdicts: Verdicts, calls: int) -> CaseResult:
    answer = case.expected if best.label == "expected" else case.alternatives[best.label]
    actual_behavior: ActualBehavior = "call" if calls else "no_call"
    return built(CaseResult, {  # every field, in field order
        "case_id": case.id, "trial": trial, "kind": case.kind, "status": status,
        "matched": best.label if status == "pass" else None, "compared_with": best.label,
        "errors": tuple(best.errors), "reviews": tuple(best.reviews), "verdicts": verdicts,
        "expected_behavior": answer.behavior, "actual_behavior": actual_behavior,
        "expected_tools": best.expected_tools, "actual_tools": actual_tools, "confusion": tuple(best.confusion),
        "sequence": best.sequence, "partial": partial_credit(case, answer, best, actual_tools, calls),
        "calls": calls, "redundant_calls": best.redundant_calls, "tags": case.tags, "split": case.split,
        "toolkit_size": len(case.tools)})

__all__ = ["AnswerScore", "Label", "build_result", "built", "case_error", "choose", "dimension_ok", "partial_credit", "partial_ratios", "resolve_reviews", "verdicts_of"]
