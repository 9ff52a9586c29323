"""Parallel calls are paired by ``pair_cost`` (errors counted, notes not written): it must count exactly
the errors ``check_pair`` writes, or the pairing, and so every note, could change."""

from __future__ import annotations

import itertools
import random

import pytest

from scorer import turn
from scorer.arguments import check_pair, counted, diagnose, pair_cost, plan_cost, plan_for
from scorer.assignment import optimal_pairs
from scorer.facts import CaseFacts
from scorer.model import GoldCase, RunCall
from tests.conftest import pure_core_only
from tests.scorer.kit import call, calls, case
from tests.scorer.test_diagnoses import ACCOUNTS
from tests.scorer.test_trusted_results import _cases, _outputs


def test_the_cost_counts_every_error_check_pair_writes() -> None:
    compared = 0
    for gold in _cases():
        facts = CaseFacts(gold)
        context = facts.context
        for actual in _outputs(gold):
            for want, got in itertools.product(gold.expected.calls, actual):
                if want.name != got.name:
                    continue
                for step in (None, 0):
                    full = check_pair(facts, want, got, step=step, context=lambda context=context: context)
                    assert pair_cost(facts, want, got, step=step) == full.cost
                    compared += 1
    assert compared > 100


def test_a_swapped_pair_costs_one_error() -> None:
    gold = case(calls(call("transfer", from_account="CHK-1", to_account="SAV-2", amount=5)), tools=ACCOUNTS)
    facts = CaseFacts(gold)
    got = RunCall(name="transfer", arguments={"from_account": "SAV-2", "to_account": "CHK-1", "amount": 6})
    full = check_pair(facts, gold.expected.calls[0], got)
    assert [e.code.value for e in full.errors] == ["wrong_arg_value", "swapped_args"]
    assert pair_cost(facts, gold.expected.calls[0], got) == 2


def _plan_pairs(gold: GoldCase, outputs: list[tuple[RunCall, ...]]) -> int:
    facts = CaseFacts(gold)
    compared = 0
    for actual in outputs:
        for want, got in itertools.product(gold.expected.calls, actual):
            plan = plan_for(facts, want)
            if want.name != got.name or plan is None or isinstance(got.arguments, str):
                continue
            cost = diagnose(facts, plan, got.arguments).cost
            assert plan_cost(facts, plan, got.arguments) == cost, (gold.id, want, got)
            for limit in (0, 1):  # stopped early: a lower bound above the limit, never above the cost
                lower, _, _, complete = counted(facts, plan, got.arguments, None, limit)
                assert (lower <= cost and lower > limit) if not complete else lower >= cost, (gold.id, got)
            compared += 1
    return compared


def test_the_plan_cost_counts_what_the_diagnosis_finds() -> None:
    """``plan_cost`` (the pairing of parallel calls) against ``diagnose`` (what is written for the chosen
    pairs), on the real items, every rule kind and schema shape, each against every output."""
    from tests.scorer.test_compiled_checks import _more_outputs, _rule_cases, _rule_outputs

    compared = sum(_plan_pairs(gold, _more_outputs(gold)) for gold in _cases())
    compared += sum(_plan_pairs(gold, _rule_outputs(gold)) for gold in _rule_cases())
    assert compared > 2000


@pure_core_only
def test_pairs_found_without_the_solver_are_the_solvers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``turn._optimal`` skips the solver only where the optimum is unique; everywhere it must answer what
    ``optimal_pairs`` answers, ties and rectangular matrices included."""
    solved = []
    monkeypatch.setattr(turn, "optimal_pairs", lambda cost: solved.append(1) or optimal_pairs(cost))
    rng = random.Random(15)
    facts = CaseFacts(case(calls(call("f"))))
    for _ in range(4000):
        rows, cols = rng.randint(1, 5), rng.randint(1, 5)
        top = rng.choice((1, 2, 3, 10, 1000))
        cost = [[rng.randint(0, top) for _ in range(cols)] for _ in range(rows)]
        if rng.random() < 0.3:  # the shape of parallel calls: one cheap entry per row, the rest dear
            for r in range(min(rows, cols)):
                cost[r][r] = 0
        assert turn._optimal([list(row) for row in cost], {}, [], [], facts) == optimal_pairs(cost), cost
    assert 500 < 4000 - len(solved) < 3500  # both ways taken
