"""Scoring one decision point: behavior (call / no call / ask), tool selection, arguments, grounding.

Parallel calls are paired with the expected calls by optimal assignment (``linear_sum_assignment`` on a
cost matrix: a different tool costs more than any number of argument errors), never greedily. The agent's
calls are put in a canonical order first (tool name, then canonical arguments), so the order in which the
agent emitted them cannot change any verdict, note or error order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

from scorer import canonical
from scorer.arguments import (
    ARGUMENT_CODES,
    CLEAN,
    CallPlan,
    PairCheck,
    check_pair,
    checked_by_plan,
    clean_when_equal,
    counted,
    diagnose,
    equal_arguments,
    from_call_errors,
    has_error,
    pair_cost,
    plan_for,
    render,
    swaps,
)
from scorer.assignment import optimal_pairs
from scorer.codes import NO_CALL, ErrorCode
from scorer.facts import CaseFacts
from scorer.grounding import Context, checked_keys, is_phone_key, scalar_texts, ungrounded
from scorer.judging import Judge
from scorer.matchers import show
from scorer.model import Answer, ArgRule, Call, GoldCase, RunCall, RunRecord
from scorer.results import CaseError, CaseResult, PartialCredit, Status, Verdicts, trusted
from scorer.verdict import (
    AnswerScore,
    Label,
    build_result,
    built,
    case_error,
    choose,
    partial_ratios,
    verdicts_of,
)

GROUNDING_CODES = frozenset({ErrorCode.UNGROUNDED_VALUE, ErrorCode.FABRICATED_VALUE})
_ONE = (0,)
_WRONG_TOOL_FIELDS: Final = frozenset({"code", "tool", "expected", "actual", "step", "note"})
_UNGROUNDED_FIELDS: Final = frozenset({"code", "tool", "arg", "actual", "note"})
WRONG_TOOL_COST = 1_000
"""Above any realistic count of argument errors: pairing the right tools always comes first."""


def canonical_order(calls: tuple[RunCall, ...]) -> tuple[RunCall, ...]:
    if len(calls) < 2:
        return calls
    if len({c.name for c in calls}) == len(calls):  # distinct names: the arguments never break a tie
        return tuple(sorted(calls, key=_name))
    return tuple(sorted(calls, key=lambda c: (c.name, canonical.dumps(c.arguments))))


def _name(call: RunCall) -> str:
    return call.name


def names(calls: Sequence[Call] | Sequence[RunCall]) -> str:
    return ", ".join(c.name for c in calls) or "none"


@dataclass(slots=True)
class PairMemo:
    """Argument checks and assignments already made for one run. The alternatives of a case repeat the same
    expected calls (BFCL's parallel answers expand into hundreds), so each distinct check is made once. One
    per run: the keys hold positions in that run's calls."""

    checks: dict[tuple[int | None, tuple[str, bytes], int, bool], PairCheck] = field(default_factory=dict)
    costs: dict[tuple[int | None, tuple[str, bytes], int, bool], int] = field(default_factory=dict)
    pairs: dict[tuple[tuple[int, ...], ...], list[tuple[int, int]]] = field(default_factory=dict)

    def check(self, facts: CaseFacts, want: Call, got: RunCall, j: int, *, tool_only: bool,
              step: int | None) -> PairCheck:
        key = (step, facts.call_key(want), j, tool_only)
        found = self.checks.get(key)
        if found is None:
            found = self.checks[key] = check_pair(facts, want, got, tool_only=tool_only, step=step,
                                                  context=lambda: facts.context)
        return found

    def cost(self, facts: CaseFacts, want: Call, got: RunCall, j: int, *, tool_only: bool, step: int) -> int:
        """The error count of the check, counted without writing notes unless the check was made."""
        key = (step, facts.call_key(want), j, tool_only)
        done = self.checks.get(key)
        if done is not None:
            return done.cost
        found = self.costs.get(key)
        if found is None:
            found = self.costs[key] = pair_cost(facts, want, got, tool_only=tool_only, step=step)
        return found

    def optimal(self, cost: list[list[int]]) -> list[tuple[int, int]]:
        shape = tuple(map(tuple, cost))
        found = self.pairs.get(shape)
        if found is None:
            found = self.pairs[shape] = optimal_pairs(cost)
        return found


def assign(expected: Sequence[Call], actual: Sequence[RunCall], check: dict[tuple[int, int], PairCheck],
           facts: CaseFacts, tool_only: bool, memo: PairMemo | None = None) -> list[tuple[int, int]]:
    """Optimal pairing of expected and actual calls; fills ``check`` with the argument check of each chosen
    pair of calls to the same tool (reusing those in ``memo``). Pairs are costed by counting errors; only
    the chosen ones are checked in full, notes and all."""
    if memo is None and not tool_only and facts.compiled:
        planned = _assign_planned(expected, actual, check, facts)
        if planned is not None:
            return planned
    memo = memo or PairMemo()
    if len(expected) == 1 and len(actual) == 1:
        if expected[0].name == actual[0].name:
            check[0, 0] = memo.check(facts, expected[0], actual[0], 0, tool_only=tool_only, step=None)
        return [(0, 0)]
    cost = [[WRONG_TOOL_COST] * len(actual) for _ in expected]
    for i, want in enumerate(expected):
        for j, got in enumerate(actual):
            if want.name == got.name:
                cost[i][j] = memo.cost(facts, want, got, j, tool_only=tool_only, step=i)
    pairs = memo.optimal(cost)
    for i, j in pairs:
        if expected[i].name == actual[j].name:
            check[i, j] = memo.check(facts, expected[i], actual[j], j, tool_only=tool_only, step=i)
    return pairs


def _assign_planned(expected: Sequence[Call], actual: Sequence[RunCall], check: dict[tuple[int, int], PairCheck],
                    facts: CaseFacts) -> list[tuple[int, int]] | None:
    """``assign`` through compiled plans (one answer, no memo across alternatives): each pair of calls to
    the same tool is diagnosed once, costed by its error count, and only the chosen pairs are written out.
    None where a plan does not apply (a ``from_call`` rule, unparseable arguments)."""
    plans = []
    for want in expected:
        plan = plan_for(facts, want)
        if plan is None:
            return None
        plans.append(plan)
    if any(isinstance(got.arguments, str) for got in actual):
        return None
    cost = [[WRONG_TOOL_COST] * len(actual) for _ in expected]
    typed: list[dict[str, bool]] = [{} for _ in actual]  # what the schema says of each call's keys
    pending: dict[tuple[int, int], list[str] | None] = {}
    """Lower bounds: costs still to take swapped pairs off (their wrong keys), or counted only until they
    exceeded 0 (None): no pair but an exactly right one costs 0, so most are never needed in full."""
    clean: set[tuple[int, int]] = set()  # pairs with neither an error nor a review: nothing to write
    for i, plan in enumerate(plans):
        name = plan.tool
        row = cost[i]
        for j, got in enumerate(actual):
            if got.name == name:
                found, wrong, review, complete = counted(facts, plan, got.arguments,  # type: ignore[arg-type]
                                                         typed[j], 0)
                if not complete:
                    row[j] = found
                    pending[i, j] = None
                elif wrong is None:
                    row[j] = found
                    if not found and not review:
                        clean.add((i, j))
                else:
                    row[j] = found - len(wrong) // 2
                    pending[i, j] = wrong
    if len(expected) == 1 and len(actual) == 1:
        pairs = [(0, 0)]
    else:
        pairs = _optimal(cost, pending, plans, actual, facts)
    context = facts_context(facts)
    for i, j in pairs:
        plan = plans[i]
        got = actual[j]
        if (i, j) in clean:
            check[i, j] = CLEAN
        elif got.name == plan.tool:
            step = None if len(expected) == 1 and len(actual) == 1 else i
            args = got.arguments
            check[i, j] = render(facts, plan, args, diagnose(facts, plan, args), step, context)  # type: ignore[arg-type]
    return pairs


def _optimal(cost: list[list[int]], pending: dict[tuple[int, int], list[str] | None], plans: Sequence[CallPlan],
             actual: Sequence[RunCall], facts: CaseFacts) -> list[tuple[int, int]]:
    """``optimal_pairs`` of the exact costs, without the solver where the optimum is unique and plain to
    see: each row (or, with more rows than columns, each column) has a single cheapest entry, in a
    different column (row) for each. That assignment costs the sum of the minima, a bound every other
    assignment exceeds (it takes some row off its single minimum), so it is the one the solver returns too.

    The entries in ``pending`` are lower bounds (swapped pairs not yet looked for); one is made exact only
    where it could be a line's minimum, and all are before the solver sees the matrix."""

    def exact(i: int, j: int) -> None:
        wrong = pending.pop((i, j))
        plan = plans[i]
        args = actual[j].arguments
        if wrong is None:  # counted only in part: count it all
            before, wrong, _, _ = counted(facts, plan, args)  # type: ignore[arg-type]
        else:
            before = cost[i][j] + len(wrong) // 2
        cost[i][j] = before - swaps(facts, plan, args, wrong) if wrong else before  # type: ignore[arg-type]

    rows, cols = len(cost), len(cost[0])
    by_rows = rows <= cols
    chosen: list[int] = []
    for a in range(rows if by_rows else cols):
        cells = [(a, b) for b in range(cols)] if by_rows else [(b, a) for b in range(rows)]
        while True:
            low = min(cost[i][j] for i, j in cells)
            open_cells = [c for c in cells if c in pending and cost[c[0]][c[1]] == low]
            if not open_cells:
                break
            for i, j in open_cells:
                exact(i, j)
        at = [k for k, (i, j) in enumerate(cells) if cost[i][j] == low]
        if len(at) != 1 or at[0] in chosen:
            for i, j in list(pending):
                exact(i, j)
            return optimal_pairs(cost)
        chosen.append(at[0])
    if by_rows:
        return list(enumerate(chosen))
    return sorted((r, c) for c, r in enumerate(chosen))


def _pair_off(expected: Sequence[Call], actual: Sequence[RunCall]) -> tuple[list[int], int] | None:
    """Each call's exactly equal expected call (same tool, canonically equal arguments; the first one not
    taken, in order: equality is transitive, so greedy is exact), -1 for at most one call that has none
    (the leftover, whose position comes second, -1 if none). None where two calls have none or a call's
    arguments are unparseable."""
    used = [False] * len(expected)
    row_of = [-1] * len(actual)
    names = [c.name for c in expected]  # read once, compared once per call made
    q = -1
    for j, got in enumerate(actual):
        args = got.arguments
        if isinstance(args, str):
            return None
        name = got.name
        for i, want in enumerate(expected):
            if not used[i] and names[i] == name and equal_arguments(args, want.arguments):
                used[i] = True
                row_of[j] = i
                break
        else:
            if q >= 0:
                return None
            q = j
    return row_of, q


def _certified(expected: Sequence[Call], actual: Sequence[RunCall], facts: CaseFacts, row_of: list[int], q: int
               ) -> tuple[int, PairCheck | None] | None:
    """The pairing ``assign`` makes, where every call but the one at ``q`` equals a different expected call
    (``_pair_off``, as many calls as expected) and the optimum is provably unique; None otherwise.

    The exact pairs cost 0; let the leftover pair ``(p, q)`` cost ``c``, ``a = c // 2 + 1`` and ``b = c - a + 1``.
    If every other cell of row ``p`` costs at least ``a``, every other cell of column ``q`` at least ``b``, and
    every cell off the pairing between exactly paired lines at least 1, then the potentials ``u_p = a - 1/2``,
    ``v_q = b - 1/2`` (0 for every other row and column) sum to each paired cell's cost and stay strictly
    below every other cell's: any other assignment costs more (the linear program's duality), so this one is
    the unique optimum and the solver returns it too, whatever the order of the calls. Only bounds are needed
    off the pairing, counted until they reach what is asked (``counted``'s limit), and only the leftover pair
    is diagnosed and written. Returns ``p`` (the pairs are ``(p, q)`` and ``(row_of[j], j)``) and the leftover
    pair's check (None for two different tools)."""
    n = len(expected)
    taken = set(row_of)
    p = next(i for i in range(n) if i not in taken)  # the expected call no call equals
    for i, want in enumerate(expected):
        own = want.arg_rules  # the case has no from_call rule (``score_turn`` asks): only a call's own can be
        if own:
            for rule in own.values():
                if rule.match == "from_call":  # no plan: the general path checks it
                    return None
        if i != p and not clean_when_equal(facts, want):
            return None
    plans: list[CallPlan | None] = [None] * n  # made when first needed: a cell of two different tools needs none
    rules: list[dict[str, ArgRule] | None] = [None] * n
    texts: dict[str, Any] = {}  # normalized strings, for ``has_error``

    def plan_of(i: int) -> CallPlan:
        plan = plans[i]
        if plan is None:
            plan = plans[i] = CallPlan(facts, expected[i])
        return plan

    typed: list[dict[str, bool]] = [{} for _ in actual]  # what the schema says of each call's keys

    def at_least(i: int, j: int, need: int) -> bool:
        """Whether cell ``(i, j)``, of two calls to the same tool, costs at least ``need`` (counted only as
        far as that; a cell of two tools costs ``WRONG_TOOL_COST``, more than any ``need`` asked here)."""
        got = actual[j]
        args = got.arguments
        if need == 1:
            want = expected[i]
            own = rules[i]
            if own is None:
                own = rules[i] = facts.call_rules(want)
            if has_error(facts, want.arguments, own, args, texts):  # type: ignore[arg-type]
                return True
        plan = plan_of(i)
        found, wrong, _, complete = counted(facts, plan, args, typed[j], need - 1)  # type: ignore[arg-type]
        if not complete or found - (len(wrong) >> 1 if wrong else 0) >= need:
            return True
        return (found - swaps(facts, plan, args, wrong) if wrong else found) >= need  # type: ignore[arg-type]

    got = actual[q]
    args = got.arguments
    if isinstance(args, str):  # never (``_pair_off`` stops first): for the type checker
        return None
    # Names read once each: the loops below compare every pair of calls (a pydantic read costs several
    # times a list's).
    wanted_tools = [c.name for c in expected]
    made_tools = [c.name for c in actual]
    plan = plan_of(p)
    diagnosis = diagnose(facts, plan, args) if plan.tool == made_tools[q] else None
    cost = diagnosis.cost if diagnosis is not None else WRONG_TOOL_COST
    a = cost // 2 + 1  # at most 501 and 500: a cell of two different tools (1000) always reaches them
    b = cost - a + 1
    tool = plan.tool
    for j in range(len(actual)):
        if j != q and made_tools[j] == tool and not at_least(p, j, a):
            return None
    tool = made_tools[q]
    for i in range(n):
        if i != p and wanted_tools[i] == tool and not at_least(i, q, b):
            return None
    for j in range(len(actual)):
        if j != q:
            paired, tool = row_of[j], made_tools[j]
            for i in range(n):
                if i != p and i != paired and wanted_tools[i] == tool and not at_least(i, j, 1):
                    return None
    check = render(facts, plan, args, diagnosis, p, facts_context(facts)) if diagnosis is not None else None
    return p, check


def _certified_result(trial: int, actual: tuple[RunCall, ...], facts: CaseFacts, p: int, q: int,
                      check: PairCheck | None, *, compared: bool) -> CaseResult | None:
    """``score_turn``'s result for a certified pairing (``_certified``: every pair but ``(p, q)`` exact and
    clean), built straight from it as ``_one_call`` does: the same result, or None where the leftover pair
    has a review (the judge may settle it: the general path decides). ``compared``: ``_pair_off`` compared
    the leftover call with every expected call (it came first) and it equals none."""
    fields = facts.fields  # each field and each call's name and arguments read once (pydantic reads cost)
    expected = fields["expected"].calls
    names = tuple(c.name for c in expected)
    golds = [c.arguments for c in expected]
    got = actual[q]
    want_name, got_name = names[p], got.name
    want_args = golds[p]
    n = len(expected)
    if check is not None:
        if check.reviews:
            return None
        errors = list(check.errors)
    else:
        offered = "" if facts.offered(got_name) else f" (not among the {len(fields['tools'])} offered tools)"
        errors = [case_error(_WRONG_TOOL_FIELDS, ErrorCode.WRONG_TOOL,
                             f"called {got_name}{offered} where {want_name} was expected", got_name, None, want_name,
                             got_name, p)]
    grounded = True
    args = got.arguments
    gold = False  # ``grounding_errors`` of the one call that may have any (no alternative to search)
    if not compared:
        for i in range(n):
            if names[i] == got_name and equal_arguments(args, golds[i]):  # type: ignore[arg-type]
                gold = True  # a gold call: every value is one the annotator vouched for
                break
    if not gold:
        for key, text in ungrounded(args, facts.rules(got_name), facts_context(facts),  # type: ignore[arg-type]
                                    lambda: facts.gold_texts):
            grounded = False
            errors.append(_ungrounded_error(got_name, key, text))
    selection = check is not None
    missed = missed_arguments(errors) if selection else None  # of the leftover call
    gold_args = 0
    for g in golds:
        gold_args += len(g)
    if not selection:
        matched, correct = gold_args - len(want_args), n - 1
    elif missed:
        matched, correct = gold_args - len(want_args.keys() & missed), n - 1
    else:
        matched, correct = gold_args, n
    verdicts = verdicts_of(selection, missed is None if selection else None, None, True, grounded)
    status: Status = "fail" if errors else "pass"
    return built(CaseResult, {  # every field, in field order (as ``build_result``)
        "case_id": fields["id"], "trial": trial, "kind": fields["kind"], "status": status,
        "matched": None if errors else "expected", "compared_with": "expected",
        "errors": tuple(errors), "reviews": (), "verdicts": verdicts,
        "expected_behavior": "call", "actual_behavior": "call",
        "expected_tools": names, "actual_tools": tuple(c.name for c in actual),
        "confusion": tuple(sorted([(want_name, got_name), *[(c, c) for i, c in enumerate(names) if i != p]])),
        "sequence": None, "partial": partial_ratios(matched, gold_args, correct, n, n), "calls": n,
        "redundant_calls": 0, "tags": fields["tags"], "split": fields["split"], "toolkit_size": len(fields["tools"])})


def score_call_answer(label: Label, answer: Answer, actual: tuple[RunCall, ...], facts: CaseFacts,
                      grounding: list[CaseError], memo: PairMemo | None = None) -> AnswerScore:
    expected = answer.calls
    score = AnswerScore(label, expected_tools=tuple(c.name for c in expected))
    if not actual:
        score.selection_ok = False
        score.errors.append(trusted(CaseError,
            code=ErrorCode.MISSING_CALL, tool=expected[0].name,
            note=f"made no call; expected {names(expected)}"))
        score.confusion = [(c.name, NO_CALL) for c in expected]
        return score
    if len(expected) == 1 and len(actual) == 1:
        return _score_one_call(score, expected[0], actual[0], answer.tool_only, facts, grounding, memo)
    checks: dict[tuple[int, int], PairCheck] = {}
    pairs = assign(expected, actual, checks, facts, answer.tool_only, memo)
    if len(expected) != len(actual):
        score.errors.append(trusted(CaseError,
            code=ErrorCode.WRONG_CALL_COUNT, expected=len(expected), actual=len(actual),
            note=f"made {len(actual)} call{'s' * (len(actual) != 1)} ({names(actual)}); "
                 f"expected {len(expected)} ({names(expected)})"))
    for i, j in pairs:
        want, got = expected[i], actual[j]
        score.confusion.append((want.name, got.name))
        step = i if len(expected) > 1 else None
        if want.name != got.name:
            offered = "" if facts.offered(got.name) else f" (not among the {len(facts.case.tools)} offered tools)"
            score.errors.append(trusted(CaseError,
                code=ErrorCode.WRONG_TOOL, tool=got.name, expected=want.name, actual=got.name, step=step,
                note=f"called {got.name}{offered} where {want.name} was expected"))
            continue
        pair = checks[i, j]
        score.errors.extend(pair.errors)
        score.reviews.extend(pair.reviews)
        if not answer.tool_only and facts.from_call_rules(got.name):
            score.errors.extend(from_call_errors(facts, got, step=step, source=_context_results(facts),
                                                 code=ErrorCode.WRONG_ARG_VALUE))
    matched_rows = {i for i, _ in pairs}
    matched_cols = {j for _, j in pairs}
    score.confusion += [(c.name, NO_CALL) for i, c in enumerate(expected) if i not in matched_rows]
    score.confusion += [(NO_CALL, c.name) for j, c in enumerate(actual) if j not in matched_cols]
    score.confusion.sort()
    score.selection_ok = sorted(c.name for c in expected) == sorted(c.name for c in actual)
    score.paired = tuple(sorted(i for i, j in pairs if expected[i].name == actual[j].name))
    if not answer.tool_only:  # "only the tool names are checked": the values are not the gold's concern
        score.errors.extend(grounding)
    return score


def _score_one_call(score: AnswerScore, want: Call, got: RunCall, tool_only: bool, facts: CaseFacts,
                    grounding: list[CaseError], memo: PairMemo | None) -> AnswerScore:
    """``score_call_answer`` for one expected and one actual call (most cases): the same score, without the
    assignment's bookkeeping (and without memo keys when no alternative could reuse the check)."""
    score.confusion = [(want.name, got.name)]
    score.selection_ok = want.name == got.name
    if not score.selection_ok:
        offered = "" if facts.offered(got.name) else f" (not among the {len(facts.case.tools)} offered tools)"
        score.errors.append(trusted(CaseError,
            code=ErrorCode.WRONG_TOOL, tool=got.name, expected=want.name, actual=got.name, step=None,
            note=f"called {got.name}{offered} where {want.name} was expected"))
    else:
        pair = memo.check(facts, want, got, 0, tool_only=tool_only, step=None) if memo is not None else \
            check_pair(facts, want, got, tool_only=tool_only, context=lambda: facts.context)
        score.errors.extend(pair.errors)
        score.reviews.extend(pair.reviews)
        if not tool_only and facts.from_call_rules(got.name):
            score.errors.extend(from_call_errors(facts, got, step=None, source=_context_results(facts),
                                                 code=ErrorCode.WRONG_ARG_VALUE))
        score.paired = _ONE
    if not tool_only:
        score.errors.extend(grounding)
    return score


def _context_results(facts: CaseFacts) -> Callable[[int], tuple[str, str | None]]:
    """In a turn case a ``from_call`` value must come from some tool result already in the context."""
    def source(step: int) -> tuple[str, str | None]:
        results = "\n".join(m.content or "" for m in facts.case.messages if m.role == "tool")
        return "any earlier tool result", results
    return source


def score_no_call_answer(label: Label, answer: Answer, actual: tuple[RunCall, ...],
                         facts: CaseFacts) -> AnswerScore:
    score = AnswerScore(label)
    score.selection_ok = not actual
    score.confusion = [(NO_CALL, c.name) for c in actual] or [(NO_CALL, NO_CALL)]
    for call in actual:
        if answer.behavior == "no_call":
            score.errors.append(trusted(CaseError, code=ErrorCode.UNEXPECTED_CALL, tool=call.name,
                                          note=f"called {call.name} where no call was needed"))
            continue
        score.errors.append(trusted(CaseError, code=ErrorCode.CALLED_INSTEAD_OF_ASKING, tool=call.name,
                                      note=f"called {call.name} where the agent should have asked the user"))
        score.errors.extend(fabricated(call, facts))
    return score


def fabricated(call: RunCall, facts: CaseFacts) -> list[CaseError]:
    """Values of a call made instead of asking that come from nowhere: identifier-like values and the
    tool's required arguments (values listed in the schema's ``enum`` or equal to its ``default`` aside)."""
    if isinstance(call.arguments, str):
        return []
    args = call.arguments
    rules = facts.rules(call.name)
    keys = list(checked_keys(args, rules))
    spec = facts.spec(call.name)
    for key in facts.required(call.name):
        if key in args and key not in keys and not _schema_given(spec.properties.get(key) if spec else None,
                                                                   args[key]):
            keys.append(key)
    errors = []
    for key in sorted(keys):
        rule = rules.get(key)
        if rule is not None and rule.grounded is False:
            continue
        for text in scalar_texts(args[key]):
            if text.casefold() not in facts.gold_texts and not facts.context.contains(text, phone=is_phone_key(key)):
                errors.append(trusted(CaseError,
                    code=ErrorCode.FABRICATED_VALUE, tool=call.name, arg=key, actual=args[key],
                    note=f"called {call.name} with {key} {show(text)}, which the user never gave; "
                         "the gold says to ask"))
                break
    return errors


def _schema_given(prop: object, value: object) -> bool:
    if not isinstance(prop, dict):
        return False
    if "enum" in prop and any(canonical.equal(v, value) for v in prop["enum"]):
        return True
    return "default" in prop and canonical.equal(prop["default"], value)


def grounding_errors(actual: Sequence[RunCall], facts: CaseFacts) -> list[CaseError]:
    errors = []
    gold_calls = [c for a in (facts.case.expected, *facts.case.alternatives) for c in a.calls]
    for call in actual:
        if isinstance(call.arguments, str):
            continue
        if any(c.name == call.name and canonical.equal(call.arguments, c.arguments) for c in gold_calls):
            continue  # a gold call: every value is one the annotator vouched for
        for key, text in ungrounded(call.arguments, facts.rules(call.name), lambda: facts.context,
                                    lambda: facts.gold_texts):
            errors.append(_ungrounded_error(call.name, key, text))
    return errors


def _answers(case: GoldCase) -> Iterator[tuple[Label, Answer]]:
    yield "expected", case.expected
    yield from enumerate(case.alternatives)


def exact_answer(answer: Answer, actual: tuple[RunCall, ...], facts: CaseFacts, *,
                 checked: bool = False) -> AnswerScore | None:
    """The score of an answer the agent's calls equal exactly (same tools, canonical-equal arguments, no
    ``from_call`` rule to check), or None. The common case, so it skips assignment and schema checks:
    calls equal to the gold are as valid as the gold. ``checked``: the calls are known to pair off exactly
    with the answer's (``_pair_off``)."""
    expected = answer.calls
    if not checked:
        if answer.behavior != "call":
            if actual:
                return None
            return AnswerScore("expected", confusion=[(NO_CALL, NO_CALL)])
        if len(expected) != len(actual):
            return None
        if len(expected) == 1:
            want, got = expected[0], actual[0]
            if want.name != got.name or isinstance(got.arguments, str) or not canonical.equal(got.arguments,
                                                                                                want.arguments):
                return None
        elif not _same_multiset(expected, actual):
            return None
    if any(facts.has_from_call(c) for c in expected):
        return None
    if len(expected) == 1:
        name = expected[0].name
        return AnswerScore("expected", expected_tools=(name,), confusion=[(name, name)], paired=_ONE)
    names = tuple(c.name for c in expected)
    return AnswerScore("expected", expected_tools=names, confusion=sorted((n, n) for n in names),
                       paired=tuple(range(len(names))))


def _same_multiset(expected: Sequence[Call], actual: Sequence[RunCall]) -> bool:
    """Each actual call equals a different expected call (equality is transitive, so greedy is exact)."""
    remaining = list(expected)
    for got in actual:
        if isinstance(got.arguments, str):
            return False
        for k, want in enumerate(remaining):
            if want.name == got.name and canonical.equal(got.arguments, want.arguments):
                del remaining[k]
                break
        else:
            return False
    return True


def _one_call(trial: int, want: Call, got: RunCall, facts: CaseFacts) -> CaseResult | None:
    """``score_turn`` for the commonest shape (one expected call, no alternative, one call made), built
    straight from the compiled check: the same result, or None where the general path must decide (a
    ``from_call`` rule, unparseable arguments, an argument left to the judge)."""
    # Each field read once: a pydantic field read is a generic attribute lookup (BaseModel defines
    # ``__getattr__``), several times a local's cost.
    args = got.arguments
    if isinstance(args, str):
        return None
    wanted = want.__dict__  # two fields: one attribute lookup, then dict lookups
    name = wanted["name"]
    got_name = got.name
    gold = wanted["arguments"]
    gold_args = len(gold)
    same_tool = name == got_name
    if same_tool and len(args) == gold_args and canonical.equal(args, gold) \
            and not facts.has_from_call(want):  # exactly the gold
        return _one_call_result(facts.fields, trial, name, name, "pass", (), _verdicts_pass(),
                                partial_ratios(gold_args, gold_args, 1, 1, 1))
    plan = plan_for(facts, want)
    if plan is None:
        return None
    errors: list[CaseError]
    missed: set[str] | None = None  # the gold arguments the call got wrong (``missed_arguments``)
    if same_tool:
        check, missed = checked_by_plan(facts, plan, args, facts_context(facts))
        if check.reviews:
            return None
        errors = list(check.errors)  # a clean check is shared: never written to
        selection = True
    else:
        offered = "" if facts.offered(got_name) else f" (not among the {len(facts.fields['tools'])} offered tools)"
        errors = [case_error(_WRONG_TOOL_FIELDS, ErrorCode.WRONG_TOOL,
                             f"called {got_name}{offered} where {name} was expected", got_name, None, name,
                             got_name, None)]
        selection = False
    grounding_error = False  # the errors above are the call's (selection, arguments), never grounding
    for key, text in ungrounded(args, facts.rules(got_name), facts_context(facts), lambda: facts.gold_texts):
        errors.append(_ungrounded_error(got_name, key, text))
        grounding_error = True
    if not errors:
        return _one_call_result(facts.fields, trial, name, got_name, "pass", (), _verdicts_pass(),
                                partial_ratios(gold_args, gold_args, 1, 1, 1))
    verdicts = verdicts_of(selection, missed is None if selection else None, None, True, not grounding_error)
    if selection:
        correct = 0 if missed else 1
        matched = gold_args
        if missed:
            for key in gold:  # ``len(gold.keys() - missed)``, without building the set
                if key in missed:
                    matched -= 1
    else:
        correct = matched = 0
    return _one_call_result(facts.fields, trial, name, got_name, "fail", tuple(errors), verdicts,
                            partial_ratios(matched, gold_args, correct, 1, 1))


def missed_arguments(errors: Iterable[CaseError]) -> set[str] | None:
    """The gold arguments a call got wrong, for partial credit (a swap costs both keys); None when no error is an
    argument's."""
    missed: set[str] | None = None
    for e in errors:
        code = e.code
        if code in ARGUMENT_CODES:
            if missed is None:
                missed = set()
            if code == ErrorCode.SWAPPED_ARGS and isinstance(e.expected, dict):
                missed.update(e.expected)
            else:
                missed.add("\0" if e.arg is None else e.arg)
    return missed


def _ungrounded_error(tool: str, key: str, text: str) -> CaseError:
    return case_error(_UNGROUNDED_FIELDS, ErrorCode.UNGROUNDED_VALUE,
                      f"called {tool} with {key} {show(text)}, which appears nowhere in the conversation", tool, key,
                      None, text)


def facts_context(facts: CaseFacts) -> Callable[[], Context]:
    return lambda: facts.context


@lru_cache(maxsize=1)
def _verdicts_pass() -> Verdicts:
    return verdicts_of(True, True, None, True, True)


def _one_call_result(fields: dict[str, Any], trial: int, want: str, got: str, status: Status,
                     errors: tuple[CaseError, ...], verdicts: Verdicts, partial: PartialCredit) -> CaseResult:
    """What ``build_result`` makes of one expected call and one call made."""
    # A copy of the shape with the fields that never vary, then the others set in place: a dict of every
    # field built key by key grows its table three times and costs about twice as much.
    result = _ONE_CALL_SHAPE.copy()
    result["case_id"] = fields["id"]
    result["trial"] = trial
    result["kind"] = fields["kind"]
    result["status"] = status
    if status == "pass":
        result["matched"] = "expected"
    result["errors"] = errors
    result["verdicts"] = verdicts
    result["expected_tools"] = (want,)
    result["actual_tools"] = (got,)
    result["confusion"] = ((want, got),)
    result["partial"] = partial
    result["tags"] = fields["tags"]
    result["split"] = fields["split"]
    result["toolkit_size"] = len(fields["tools"])
    return built(CaseResult, result)


_ONE_CALL_SHAPE: Final[dict[str, Any]] = {  # every field of a CaseResult, in field order
    "case_id": "", "trial": 0, "kind": "turn", "status": "fail", "matched": None, "compared_with": "expected",
    "errors": (), "reviews": (), "verdicts": None, "expected_behavior": "call", "actual_behavior": "call",
    "expected_tools": (), "actual_tools": (), "confusion": (), "sequence": None, "partial": None, "calls": 1,
    "redundant_calls": 0, "tags": (), "split": None, "toolkit_size": 0}


def score_turn(case: GoldCase, run: RunRecord, *, judge: Judge | None = None,
               facts: CaseFacts | None = None) -> CaseResult:
    """Score one run of a turn case."""
    facts = facts or CaseFacts(case)
    ran = run.__dict__  # (one attribute lookup for the fields read below; the case's are in ``facts``)
    calls = ran["calls"]
    made = calls if calls is not None else run.actual_calls()  # ``actual_calls`` of a turn record, inline
    fields = facts.fields
    expected: Answer = fields["expected"]
    alternatives = fields["alternatives"]
    expected_calls = facts.expected_calls
    if len(made) == 1 and len(expected_calls) == 1 and not alternatives and not expected.tool_only \
            and facts.compiled:
        lean = _one_call(ran["trial"], expected_calls[0], made[0], facts)
        if lean is not None:
            return lean
    # By name first: an exact answer depends only on the multiset of calls and reports only their names, so
    # the canonical order of same-name calls (by their arguments' JSON) is worked out only when needed.
    actual = made if len(made) < 2 else tuple(sorted(made, key=_name))
    status: Status = "pass"
    if len(made) > 1 and len(made) == len(expected_calls) and not alternatives and facts.compiled \
            and expected.behavior == "call" and not expected.tool_only and not facts.any_from_call:
        # Parallel calls, one answer: pair off the calls that equal a gold call exactly; all of them is an
        # exact answer, all but one is usually a pairing provably unique (``_certified``), whatever the order.
        off = _pair_off(expected_calls, actual)
        if off is None:
            exact = None
        elif off[1] < 0:
            exact = exact_answer(expected, actual, facts, checked=True)
        else:
            row_of, q = off
            certified = _certified(expected_calls, actual, facts, row_of, q)
            if certified is not None:
                lean = _certified_result(ran["trial"], actual, facts, certified[0], q, certified[1],
                                         compared=q == 0)
                if lean is not None:
                    return lean
            exact = None
    else:
        exact = exact_answer(expected, actual, facts)
    if exact is not None:
        best = exact
    else:
        actual = canonical_order(made)
        grounding = grounding_errors(actual, facts) if actual else []
        memo = PairMemo() if alternatives else None  # only alternatives repeat a check

        def scores() -> Iterator[AnswerScore]:
            for label, answer in _answers(case):
                if answer.behavior == "call":
                    yield score_call_answer(label, answer, actual, facts, grounding, memo)
                else:
                    yield score_no_call_answer(label, answer, actual, facts)

        best, status = choose(scores(), facts, judge)
    answer = expected if best.label == "expected" else alternatives[best.label]
    args_scored = answer.behavior == "call" and best.selection_ok
    errors = best.errors
    verdicts = verdicts_of(
        best.selection_ok,
        (not errors or not any(e.code in ARGUMENT_CODES for e in errors)) if args_scored else None,
        None,
        (answer.behavior == "call") == bool(actual),
        (not errors or not any(e.code in GROUNDING_CODES for e in errors)) if actual else None)
    actual_tools = (actual[0].name,) if len(actual) == 1 else tuple(c.name for c in actual)
    return build_result(case, ran["trial"], best, status, actual_tools=actual_tools, verdicts=verdicts,
                        calls=len(actual))


__all__ = ["GROUNDING_CODES", "WRONG_TOOL_COST", "canonical_order", "exact_answer", "fabricated", "grounding_errors",
           "score_turn"]
