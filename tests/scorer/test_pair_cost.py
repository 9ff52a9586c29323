"""Parallel calls are paired by ``pair_cost`` (errors counted, notes not written): it must count exactly
the errors ``check_pair`` writes, or the pairing, and so every note, could change."""

from __future__ import annotations

import itertools

from scorer.arguments import check_pair, pair_cost
from scorer.facts import CaseFacts
from scorer.model import RunCall
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
