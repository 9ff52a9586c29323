"""Parallel calls are paired by optimal assignment: the agent's order never changes a verdict.

BFCL's parallel checker walks the gold calls in order and takes the first agent call that fits each one
(agentevals' superset mode is similarly greedy), so the same calls in another order can flip its verdict.
These tests pin down that toolgold's result is identical for every order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scorer.api import score_case
from scorer.arguments import check_pair
from scorer.facts import CaseFacts
from scorer.model import ArgRule, GoldCase, RunCall
from tests.scorer.kit import call, calls, case, rules, run, user

# Two refunds of the same order; amounts match within 1.
REFUNDS = case(
    calls(call("issue_refund", order_id="O-7", amount=2), call("issue_refund", order_id="O-7", amount=4)),
    messages=(user("Refund O-7 twice: about 2 and about 4 dollars"),),
    arg_rules=rules(issue_refund={"amount": ArgRule(match="number", tolerance=1)}))


def greedy_in_gold_order(gold: GoldCase, actual: Sequence[RunCall]) -> bool:
    """BFCL's no-order parallel checker: each gold call takes the first remaining agent call that fits."""
    facts = CaseFacts(gold)
    remaining = list(actual)
    for want in gold.expected.calls:
        fit = next((got for got in remaining if got.name == want.name
                    and not check_pair(facts, want, got).errors), None)
        if fit is None:
            return False
        remaining.remove(fit)
    return True


def test_greedy_matching_depends_on_order_and_toolgold_does_not() -> None:
    amount_3 = RunCall(name="issue_refund", arguments={"order_id": "O-7", "amount": 3})
    amount_1 = RunCall(name="issue_refund", arguments={"order_id": "O-7", "amount": 1})
    # Amount 3 fits both gold calls (2±1 and 4±1), amount 1 only the first.
    assert greedy_in_gold_order(REFUNDS, [amount_1, amount_3]) is True
    assert greedy_in_gold_order(REFUNDS, [amount_3, amount_1]) is False
    first = score_case(REFUNDS, run(amount_1, amount_3))
    second = score_case(REFUNDS, run(amount_3, amount_1))
    assert first == second
    assert first.status == "pass"


PARALLEL = case(
    calls(call("get_order", order_id="O-1"), call("get_order", order_id="O-2"),
          call("search_orders", customer_id="C-1042", status="open")),
    messages=(user("I'm C-1042. Where are O-1 and O-2, and what's still open?"),))

AGENT_CALLS = [
    ("get_order", {"order_id": "O-2"}),
    ("get_order", {"order_id": "O-9"}),
    ("search_orders", {"customer_id": "C-1042", "status": "shipped"}),
    ("update_user", {"user_id": "C-1042"}),
    ("get_order", '{"order_id": '),
    ("search_orders", {"customer_id": "C-1042", "status": "open", "limit": 3}),
]


def all_orders(made: Sequence[tuple[str, Any]]) -> set[str]:
    results = {score_case(PARALLEL, run(*order)).model_dump_json() for order in itertools.permutations(made)}
    return results


def test_every_permutation_of_mixed_right_and_wrong_calls_gives_one_result() -> None:
    for size in (2, 3, 4):
        for subset in itertools.combinations(AGENT_CALLS, size):
            assert len(all_orders(subset)) == 1, subset


def test_a_permuted_correct_answer_always_passes() -> None:
    correct = [("get_order", {"order_id": "O-1"}), ("get_order", {"order_id": "O-2"}),
               ("search_orders", {"customer_id": "C-1042", "status": "open"})]
    for order in itertools.permutations(correct):
        result = score_case(PARALLEL, run(*order))
        assert (result.status, result.errors, result.actual_tools) == (
            "pass", (), ("get_order", "get_order", "search_orders"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(AGENT_CALLS), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_shuffling_the_agent_calls_never_changes_the_result(made: list[tuple[str, Any]], rnd: Any) -> None:
    shuffled = list(made)
    rnd.shuffle(shuffled)
    assert score_case(PARALLEL, run(*made)) == score_case(PARALLEL, run(*shuffled))
