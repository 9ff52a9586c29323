"""Parallel calls paired off exactly first (``turn._certified``): the same pairing the solver makes, or none.

``score_turn`` pairs the agent's calls that exactly equal a gold call first and prices only the leftover
pair in full, where bounds on the other cells prove the optimum unique (so the solver, whatever the order
of the calls, would return the same). Where they cannot (a tie: two assignments of the same cost), it must
decline and leave the pairing to the general path. These tests compare it with the solver on the full cost
matrix, and the whole result with the reference path (``CaseFacts(compiled=False)``), on random cases made
to be full of near-ties: few keys, few values, values copied between calls, accepted alternatives.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import canonical
from scorer.api import score_case
from scorer.arguments import equal_arguments, equal_value, pair_cost
from scorer.assignment import optimal_pairs
from scorer.facts import CaseFacts
from scorer.model import Answer, ArgRule, Call, GoldCase, RunCall
from scorer.turn import WRONG_TOOL_COST, _certified, _pair_off, canonical_order
from tests.scorer.kit import case, run, tool, user

TOOLS = (tool("f", ("a",), a={"type": "string"}, b={"type": "integer"}, c={"type": "string"}),
         tool("g", ("a",), a={"type": "string"}, b={"type": "integer"}))
VALUES = {"a": ["x", "y", "z"], "b": [1, 2], "c": ["p", "q"]}


def _solver_pairs(gold: GoldCase, actual: tuple[RunCall, ...]) -> set[tuple[int, str, str]]:
    """The solver's pairing on the full matrix of exact costs, by expected index and the call paired."""
    facts = CaseFacts(gold)
    expected = gold.expected.calls
    cost = [[pair_cost(facts, want, got, step=i) if want.name == got.name else WRONG_TOOL_COST
             for got in actual] for i, want in enumerate(expected)]
    return {(i, actual[j].name, canonical.dumps(actual[j].arguments)) for i, j in optimal_pairs(cost)}


def _certify(gold: GoldCase, actual: tuple[RunCall, ...]) -> tuple[list[tuple[int, int]], int, int] | None:
    """``_certified``'s pairs, ``p`` and ``q`` where the calls pair off exactly but for one, else None."""
    off = _pair_off(gold.expected.calls, actual)
    if off is None or off[1] < 0 or len(actual) != len(gold.expected.calls):
        return None
    row_of, q = off
    found = _certified(gold.expected.calls, actual, CaseFacts(gold), row_of, q)
    if found is None:
        return None
    p = found[0]
    return sorted((p, q) if j == q else (row_of[j], j) for j in range(len(actual))), p, q


def _assert_as_reference(gold: GoldCase, actual: tuple[RunCall, ...]) -> None:
    made = run(*actual)
    fast = score_case(gold, made)
    reference = score_case(gold, made, facts=CaseFacts(gold, compiled=False))
    assert fast.model_dump_json() == reference.model_dump_json(), actual


@st.composite
def parallel_items(draw: st.DrawFn) -> tuple[GoldCase, tuple[RunCall, ...]]:
    n = draw(st.integers(2, 4))
    gold_calls = []
    for _ in range(n):
        name = draw(st.sampled_from(["f", "f", "g"]))
        keys = ["a", "b", "c"] if name == "f" else ["a", "b"]
        args = {"a": draw(st.sampled_from(VALUES["a"]))}
        for key in keys[1:]:
            if draw(st.booleans()):
                args[key] = draw(st.sampled_from(VALUES[key]))
        own = {}
        if draw(st.booleans()):  # an accepted alternative for a (BFCL's possible answers)
            own["a"] = ArgRule(match=draw(st.sampled_from(["one_of", "normalized"])),
                               accept=(args["a"], draw(st.sampled_from(VALUES["a"]))))
        gold_calls.append(Call(name=name, arguments=args, arg_rules=own))
    made: list[dict[str, Any]] = [dict(c.arguments) for c in gold_calls]
    for _ in range(draw(st.integers(1, 2))):  # one or two calls go wrong
        k = draw(st.integers(0, n - 1))
        args = made[k]
        keys = sorted(k for k in args if k in VALUES)
        if not keys:
            args["a"] = draw(st.sampled_from(VALUES["a"]))
            continue
        kind = draw(st.sampled_from(["value", "copy", "drop", "extra", "swap"]))
        key = draw(st.sampled_from(keys))
        if kind == "value":
            args[key] = draw(st.sampled_from(VALUES[key]))
        elif kind == "copy":  # another gold call's value: the near-ties
            other = gold_calls[draw(st.integers(0, n - 1))].arguments
            if key in other:
                args[key] = other[key]
        elif kind == "drop":
            del args[key]
        elif kind == "extra":
            args["zz"] = 1
        elif "a" in args and "c" in args:
            args["a"], args["c"] = args["c"], args["a"]
    names = [c.name for c in gold_calls]
    order = draw(st.permutations(range(n)))
    actual = tuple(RunCall(name=names[k], arguments=made[k]) for k in order)
    gold = case(_answer(gold_calls), tools=TOOLS, messages=(user("x y z p q, 1 and 2"),))
    return gold, actual


def _answer(gold_calls: list[Call]) -> Answer:
    return Answer(behavior="call", calls=tuple(gold_calls))


@settings(max_examples=400, deadline=None)
@given(parallel_items())
def test_the_certified_pairing_is_the_solvers_and_the_result_the_references(item: tuple[GoldCase, tuple[RunCall, ...]]
                                                                           ) -> None:
    gold, actual = item
    by_name = tuple(sorted(actual, key=lambda c: c.name))
    certified = _certify(gold, by_name)
    if certified is not None:
        pairs = {(i, by_name[j].name, canonical.dumps(by_name[j].arguments)) for i, j in certified[0]}
        assert pairs == _solver_pairs(gold, canonical_order(actual))
    _assert_as_reference(gold, actual)


def test_a_tie_is_left_to_the_solver() -> None:
    """a=x exactly, and a=x with an unknown key: 2 errors against a=y; paired the other way round, 1 + 1."""
    gold = case(_answer([Call(name="f", arguments={"a": "x"}), Call(name="f", arguments={"a": "y"})]), tools=TOOLS)
    actual = (RunCall(name="f", arguments={"a": "x"}), RunCall(name="f", arguments={"a": "x", "zz": 1}))
    assert _pair_off(gold.expected.calls, actual) == ([0, -1], 1)
    assert _certify(gold, actual) is None
    _assert_as_reference(gold, actual)


def test_a_tie_through_the_leftover_calls_column_is_left_to_the_solver() -> None:
    """a=z is accepted for the first gold call (cost 0) though not equal to it; against the second it costs 2
    (a wrong, b left out), as does the exact a=x: both pairings cost 2. The leftover row's bound holds (2), its
    column's does not (0 < 1)."""
    gold = case(_answer([Call(name="f", arguments={"a": "x"},
                              arg_rules={"a": ArgRule(match="one_of", accept=("x", "z"))}),
                         Call(name="f", arguments={"a": "y", "b": 2})]), tools=TOOLS)
    actual = (RunCall(name="f", arguments={"a": "x"}), RunCall(name="f", arguments={"a": "z"}))
    assert _pair_off(gold.expected.calls, actual) == ([0, -1], 1)
    assert _certify(gold, actual) is None
    _assert_as_reference(gold, actual)


def test_a_unique_optimum_is_certified_and_only_its_leftover_pair_written() -> None:
    gold = case(_answer([Call(name="f", arguments={"a": "x", "b": 1}), Call(name="f", arguments={"a": "y", "b": 2}),
                         Call(name="g", arguments={"a": "z"})]), tools=TOOLS)
    actual = (RunCall(name="g", arguments={"a": "z"}), RunCall(name="f", arguments={"a": "y", "b": 2}),
              RunCall(name="f", arguments={"a": "x", "b": 1, "zz": 1}))
    off = _pair_off(gold.expected.calls, actual)
    assert off == ([2, 1, -1], 2)
    certified = _certified(gold.expected.calls, actual, CaseFacts(gold), *off)
    assert certified is not None
    p, check = certified
    assert p == 0 and _certify(gold, actual) == ([(0, 2), (1, 1), (2, 0)], 0, 2)
    assert check is not None and [e.code for e in check.errors] == ["hallucinated_param"]
    result = score_case(gold, run(*actual))
    assert [e.code for e in result.errors] == ["hallucinated_param"] and result.errors[0].step == 0
    _assert_as_reference(gold, actual)


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                     st.sampled_from(["x", "y", "1", "True", ""]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.sampled_from(["a", "b"]), st.integers(0, 1)), inner, max_size=3)), max_leaves=8)


@settings(max_examples=2000, deadline=None)
@given(_VALUES, _VALUES)
def test_equal_value_is_canonical_equality(a: Any, b: Any) -> None:
    """The pairing's fast comparison says what ``canonical.equal`` says: 1 and 1.0 equal, True and 1 not,
    NaN equal to NaN, a tuple to the same list, keys that are not strings as their JSON text."""
    assert equal_value(a, b) == canonical.equal(a, b)
    assert equal_value(a, a) == canonical.equal(a, a)
    if isinstance(a, dict) and isinstance(b, dict):
        assert equal_arguments(a, b) == canonical.equal(a, b)
    widened = [a, b, 1, 1.0, True]  # the same values side by side, and the look-alikes of each other
    for x in widened:
        for y in widened:
            assert equal_value([x, "x"], [y, "x"]) == canonical.equal([x, "x"], [y, "x"])
            assert equal_arguments({"k": x}, {"k": y}) == canonical.equal({"k": x}, {"k": y})
