"""Scoring a whole trajectory: the expected steps against the calls the agent made, in order.

Which call realizes which expected step is decided per tool by optimal assignment (fewest argument
errors; ties go to the pairing that keeps the agent's order), so a repeated or reordered call never
shifts the blame onto the wrong step. Then, by ``order``:

- ``strict``: every step, nothing else, in the expected order
- ``unordered``: every step, nothing else, any order
- ``subset``: nothing but expected steps (some may be left out)
- ``superset``: every step, other calls allowed

In every mode ``after`` dependencies, ``from_call`` sources and ``forbidden`` calls are checked, and a
call repeating an earlier one (same tool, same canonical arguments) that no step accounts for is a
``redundant_call``. Tool results count as failed when they are a JSON object with a truthy ``error``,
``"success": false`` or ``"status": "error"|"failed"``, or text starting with "error".
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from scorer import canonical, strict_json
from scorer.arguments import ARGUMENT_CODES, PairCheck, check_pair, from_call_errors
from scorer.assignment import optimal_pairs
from scorer.codes import ErrorCode
from scorer.errors import InvalidRecord
from scorer.facts import CaseFacts
from scorer.grounding import Context, scalar_texts, ungrounded
from scorer.judging import Judge
from scorer.matchers import show
from scorer.model import Answer, Call, ForbiddenCall, GoldCase, Message, RunCall, RunRecord
from scorer.results import CaseError, CaseResult, SequenceMetrics
from scorer.turn import GROUNDING_CODES, fabricated
from scorer.verdict import AnswerScore, Label, build_result, choose, dimension_ok, verdicts_of

_ORDER_TIE_BREAK = 1e-3
"""Added per position of distance between a step and a call: far below one argument error."""


@dataclass(frozen=True, slots=True)
class Made:
    """A call the agent made: its position in the run, the message it came in and its result."""

    call: RunCall
    position: int
    message: int | None
    result: str | None

    @property
    def key(self) -> str:
        return self.call.name + "\0" + canonical.dumps(self.call.arguments)


def calls_made(run: RunRecord) -> list[Made]:
    if run.messages is None:
        return [Made(c, i, None, None) for i, c in enumerate(run.calls or ())]
    results = {m.tool_call_id: m.content or "" for m in run.messages if m.role == "tool"}
    made: list[Made] = []
    for index, message in enumerate(run.messages):
        for ref in message.tool_calls:
            call = RunCall(name=ref.function.name, arguments=ref.function.arguments)
            made.append(Made(call, len(made), index, results.get(ref.id)))
    return made


def failed_result(text: str | None) -> bool:
    if text is None:
        return False
    stripped = text.strip()
    if stripped.casefold().startswith("error"):
        return True
    try:
        value = strict_json.loads(stripped)
    except InvalidRecord:  # not JSON (or too deep, or NaN): judged as text
        return False
    if not isinstance(value, dict):
        return False
    status = value.get("status")
    return bool(value.get("error")) or value.get("success") is False or (
        isinstance(status, str) and status.casefold() in ("error", "failed", "failure"))


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def sequence_metrics(expected: Sequence[str], actual: Sequence[str]) -> SequenceMetrics:
    longest = max(len(expected), len(actual))
    distance = levenshtein(expected, actual) / longest if longest else 0.0
    return SequenceMetrics(exact=tuple(expected) == tuple(actual), edit_distance=distance,
                           expected=tuple(expected), actual=tuple(actual))


def longest_increasing(values: Sequence[int]) -> set[int]:
    """Indexes of one longest strictly increasing subsequence of ``values`` (the first found)."""
    tails: list[int] = []
    tail_index: list[int] = []
    parent = [-1] * len(values)
    for i, v in enumerate(values):
        at = bisect_left(tails, v)
        if at == len(tails):
            tails.append(v)
            tail_index.append(i)
        else:
            tails[at] = v
            tail_index[at] = i
        parent[i] = tail_index[at - 1] if at else -1
    keep: set[int] = set()
    i = tail_index[-1] if tail_index else -1
    while i >= 0:
        keep.add(i)
        i = parent[i]
    return keep


def _scalars(call: RunCall) -> frozenset[str]:
    """The string and integer values of a call's arguments, casefolded (what the call is about)."""
    if isinstance(call.arguments, str):
        return frozenset()
    return frozenset(text.casefold() for value in call.arguments.values() for text in scalar_texts(value))


class _Trajectory:
    """One run of a trajectory case, with the per-call contexts built lazily."""

    def __init__(self, case: GoldCase, run: RunRecord, facts: CaseFacts) -> None:
        self.case, self.run, self.facts = case, run, facts
        self.made = calls_made(run)
        self._contexts: dict[int | None, Context] = {}

    def context(self, made: Made) -> Context:
        """What the agent had seen when it made the call: the case's messages and the run's up to it
        (a run that starts by repeating the case's messages is not counted twice)."""
        if made.message not in self._contexts:
            run_messages: tuple[Message, ...] = (
                self.run.messages[:made.message] if self.run.messages is not None and made.message is not None
                else ())
            given = self.case.messages
            repeats = run_messages[:len(given)] == given if len(run_messages) >= len(given) else False
            self._contexts[made.message] = Context(run_messages if repeats else (*given, *run_messages))
        return self._contexts[made.message]

    def _touched_since(self, earlier: int, made: Made) -> bool:
        """Whether a write between call ``earlier`` and ``made`` touched what ``made`` reads: a call to a
        tool whose annotations say it writes, sharing a value with ``made`` (or naming none), so reading
        again (``get_order`` -> ``cancel_order`` -> ``get_order``) confirms the change."""
        values = _scalars(made.call)
        for between in self.made[earlier + 1:made.position]:
            spec = self.facts.spec(between.call.name)
            if spec is None or not spec.writes:
                continue
            written = _scalars(between.call)
            if not written or written & values:
                return True
        return False

    def forbidden(self, made: Made) -> ForbiddenCall | None:
        for rule in self.case.forbidden:
            if rule.name != made.call.name:
                continue
            args = made.call.args
            if rule.arguments is None or all(k in args and canonical.equal(args[k], v)
                                             for k, v in rule.arguments.items()):
                return rule
        return None

    def assign(self, expected: Sequence[Call], candidates: list[Made], tool_only: bool,
               checks: dict[tuple[int, int], PairCheck]) -> dict[int, int]:
        """step -> index into ``candidates``, per tool by optimal assignment."""
        steps_of: dict[str, list[int]] = {}
        for i, call in enumerate(expected):
            steps_of.setdefault(call.name, []).append(i)
        calls_of: dict[str, list[int]] = {}
        for j, made in enumerate(candidates):
            calls_of.setdefault(made.call.name, []).append(j)
        matched: dict[int, int] = {}
        for tool, steps in steps_of.items():
            calls = calls_of.get(tool, [])
            if not calls:
                continue
            cost = []
            for rank_i, i in enumerate(steps):
                row = []
                for rank_j, j in enumerate(calls):
                    made = candidates[j]
                    pair = check_pair(self.facts, expected[i], made.call, tool_only=tool_only, step=i,
                                      context=lambda made=made: self.context(made))  # type: ignore[misc]
                    checks[i, j] = pair
                    row.append(pair.cost + _ORDER_TIE_BREAK * abs(rank_i - rank_j))
                cost.append(row)
            for r, c in optimal_pairs(cost):
                matched[steps[r]] = calls[c]
        return matched

    def score_calls(self, label: Label, answer: Answer, forbidden_errors: list[CaseError],
                    candidates: list[Made]) -> AnswerScore:
        expected = answer.calls
        is_expected = label == "expected"
        mode = self.case.order_mode
        score = AnswerScore(label, expected_tools=tuple(c.name for c in expected))
        score.errors.extend(forbidden_errors)
        checks: dict[tuple[int, int], PairCheck] = {}
        matched = self.assign(expected, candidates, answer.tool_only, checks)
        score.paired = tuple(sorted(matched))
        position = {i: candidates[j].position for i, j in matched.items()}
        errors = score.errors

        def describe_step(k: int) -> str:
            return f"{expected[k].name} (step {k})"

        for i in range(len(expected)):
            j = matched.get(i)
            if j is None:
                if mode != "subset":
                    errors.append(CaseError(code=ErrorCode.MISSING_STEP, tool=expected[i].name, step=i,
                                            note=f"{describe_step(i)} was never called"))
                continue
            made = candidates[j]
            pair = checks[i, j]
            errors.extend(pair.errors)
            score.reviews.extend(pair.reviews)
            if is_expected and not answer.tool_only:
                errors.extend(from_call_errors(self.facts, made.call, step=i, code=ErrorCode.DEPENDENCY_VIOLATION,
                                               source=self._source(expected, matched, candidates, made)))
        used = set(matched.values())
        seen: dict[str, int] = {}
        for j, made in enumerate(candidates):
            earlier = seen.setdefault(made.key, made.position)
            if earlier != made.position and self._touched_since(earlier, made):
                earlier = seen[made.key] = made.position  # a confirmation after a write, not a repeat
            if j in used:
                continue
            if earlier != made.position:
                score.redundant_calls += 1
                errors.append(CaseError(
                    code=ErrorCode.REDUNDANT_CALL, tool=made.call.name,
                    note=f"called {made.call.name} again with the same arguments (call {made.position} "
                         f"repeats call {earlier})"))
            elif mode != "superset":
                errors.append(CaseError(code=ErrorCode.EXTRA_STEP, tool=made.call.name,
                                        note=f"called {made.call.name} (call {made.position}), which the "
                                             "trajectory does not expect"))
        misordered: set[int] = set()
        if is_expected:
            errors.extend(self._dependencies(expected, matched, candidates, position, misordered))
        if mode == "strict":
            errors.extend(_order_errors(expected, position, misordered))
        score.selection_ok = not any(e.code in (ErrorCode.MISSING_STEP, ErrorCode.EXTRA_STEP) for e in errors)
        return score

    def _source(self, expected: Sequence[Call], matched: dict[int, int], candidates: list[Made],
                made: Made) -> Callable[[int], tuple[str, str | None]]:
        def source(k: int) -> tuple[str, str | None]:
            origin = f"{expected[k].name} (step {k})"
            j = matched.get(k)
            if j is None or candidates[j].position >= made.position:
                return origin, None
            return origin, candidates[j].result or ""
        return source

    def _dependencies(self, expected: Sequence[Call], matched: dict[int, int], candidates: list[Made],
                      position: dict[int, int], misordered: set[int]) -> Iterator[CaseError]:
        for dep in self.case.after:
            s = dep.step
            if s not in position:
                continue
            for r in dep.requires:
                what = f"called {expected[s].name} (step {s})"
                needed = f"{expected[r].name} (step {r})"
                if r not in position:
                    note = f"{what} but {needed}, which it requires, never ran"
                elif position[r] > position[s]:
                    misordered.add(s)
                    note = f"{what} before {needed}, which it requires"
                elif failed_result(candidates[matched[r]].result):
                    note = f"{what} although {needed}, which it requires, failed"
                else:
                    continue
                yield CaseError(code=ErrorCode.DEPENDENCY_VIOLATION, tool=expected[s].name, step=s,
                                expected=expected[r].name, note=note)

    def grounding(self, candidates: list[Made]) -> list[CaseError]:
        errors = []
        for made in candidates:
            if isinstance(made.call.arguments, str):
                continue
            missing = ungrounded(made.call.arguments, self.facts.rules(made.call.name),
                                 lambda made=made: self.context(made),  # type: ignore[misc]
                                 lambda: self.facts.gold_texts)
            for key, text in missing:
                errors.append(CaseError(
                    code=ErrorCode.UNGROUNDED_VALUE, tool=made.call.name, arg=key, actual=text,
                    note=f"called {made.call.name} with {key} {show(text)}, which appears nowhere in the "
                         "conversation before that call"))
        return errors


def _order_errors(expected: Sequence[Call], position: dict[int, int], misordered: set[int]) -> list[CaseError]:
    steps = sorted(position)
    keep = longest_increasing([position[s] for s in steps])
    in_order = [steps[k] for k in keep]
    errors = []
    for k, step in enumerate(steps):
        if k in keep or step in misordered:
            continue
        before = [s for s in in_order if s < step and position[s] > position[step]]
        after = [s for s in in_order if s > step and position[s] < position[step]]
        if before:
            other, relation = before[0], "before"
        else:
            other, relation = after[-1], "after"
        errors.append(CaseError(
            code=ErrorCode.OUT_OF_ORDER, tool=expected[step].name, step=step, expected=expected[other].name,
            note=f"called {expected[step].name} (step {step}) {relation} {expected[other].name} (step {other})"))
    return errors


def score_trajectory(case: GoldCase, run: RunRecord, *, judge: Judge | None = None,
                     facts: CaseFacts | None = None) -> CaseResult:
    """Score one run of a trajectory case."""
    facts = facts or CaseFacts(case)
    trajectory = _Trajectory(case, run, facts)
    made = trajectory.made
    forbidden_errors = []
    candidates = []
    for m in made:
        rule = trajectory.forbidden(m)
        if rule is None:
            candidates.append(m)
            continue
        why = f": {rule.reason}" if rule.reason else ""
        forbidden_errors.append(CaseError(code=ErrorCode.FORBIDDEN_CALL, tool=m.call.name,
                                          note=f"called {m.call.name} (call {m.position}), which is forbidden{why}"))
    grounding = trajectory.grounding(candidates)
    actual_names = tuple(m.call.name for m in made)

    def scores() -> Iterator[AnswerScore]:
        answers: list[tuple[Label, Answer]] = [("expected", case.expected)]
        answers += list(enumerate(case.alternatives))
        for label, answer in answers:
            if answer.behavior == "call":
                score = trajectory.score_calls(label, answer, forbidden_errors, candidates)
                if not answer.tool_only:
                    score.errors.extend(grounding)
            elif answer.behavior == "no_call" and case.order_mode == "superset":
                # Nothing is required and extra calls are allowed: only forbidden calls fail
                # (tau-bench tasks whose gold changes nothing: reads are fine, writes are not).
                score = AnswerScore(label, selection_ok=True)
                score.errors.extend(forbidden_errors)
            else:
                score = AnswerScore(label, selection_ok=not made)
                score.errors.extend(forbidden_errors)
                for m in candidates:
                    if answer.behavior == "no_call":
                        score.errors.append(CaseError(code=ErrorCode.UNEXPECTED_CALL, tool=m.call.name,
                                                      note=f"called {m.call.name} where no call was needed"))
                    else:
                        score.errors.append(CaseError(
                            code=ErrorCode.CALLED_INSTEAD_OF_ASKING, tool=m.call.name,
                            note=f"called {m.call.name} where the agent should have asked the user"))
                        score.errors.extend(fabricated(m.call, facts))
            score.sequence = sequence_metrics(score.expected_tools, actual_names)
            yield score

    best, status = choose(scores(), facts, judge)
    answer = case.expected if best.label == "expected" else case.alternatives[best.label]
    if answer.behavior == "no_call" and case.order_mode == "superset":
        abstained = not forbidden_errors  # reads are allowed: abstaining means changing nothing
    else:
        abstained = (answer.behavior == "call") == bool(made)
    verdicts = verdicts_of(
        None,
        (not any(e.code in ARGUMENT_CODES for e in best.errors)) if answer.behavior == "call" and made else None,
        dimension_ok(best.errors, "sequencing"),
        abstained,
        not any(e.code in GROUNDING_CODES for e in best.errors) if made else None)
    return build_result(case, run.trial, best, status, actual_tools=actual_names, verdicts=verdicts,
                        calls=len(made))


__all__ = ["calls_made", "failed_result", "levenshtein", "longest_increasing", "score_trajectory",
           "sequence_metrics"]
