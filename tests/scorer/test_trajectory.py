"""Trajectory cases: order modes, dependencies, from_call, forbidden and redundant calls, stale values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.model import (
    ArgRule,
    Dependency,
    ForbiddenCall,
    FunctionCall,
    GoldCase,
    Message,
    OrderMode,
    RunRecord,
    ToolCallRef,
)
from scorer.results import CaseError, CaseResult, PartialCredit, SequenceMetrics, Verdicts
from scorer.trajectory import levenshtein, longest_increasing
from tests.scorer.kit import TOOLS, call, calls, case, rules, user

SIZE = len(TOOLS)
ASK = user("I'm C-1042. My headphones broke, can I get my money back? It was 20 dollars.")


def trajectory(*steps: Any, mode: OrderMode = "strict", **fields: Any) -> GoldCase:
    fields.setdefault("messages", (ASK,))
    return case(calls(*steps), kind="trajectory", order=mode, **fields)


def agent(*made: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], Any],
          context: tuple[Message, ...] = (ASK,)) -> RunRecord:
    """A run as messages (the context first): each call in its own assistant message, followed by its
    result when given."""
    messages: list[Message] = list(context)
    for i, item in enumerate(made):
        name, args = item[0], item[1]
        messages.append(Message(role="assistant", tool_calls=(
            ToolCallRef(id=f"call{i}", function=FunctionCall(name=name, arguments=json.dumps(args))),)))
        if len(item) > 2:
            result = item[2] if isinstance(item[2], str) else json.dumps(item[2])
            messages.append(Message(role="tool", tool_call_id=f"call{i}", content=result))
    return RunRecord(case_id="c1", messages=tuple(messages))


SEARCH = ("search_orders", {"customer_id": "C-1042"}, {"orders": [{"order_id": "O-7", "item": "headphones"}]})
GET = ("get_order", {"order_id": "O-7"}, {"order_id": "O-7", "total": 20})
REFUND = ("issue_refund", {"order_id": "O-7", "amount": 20}, {"status": "refunded"})
BALANCE = ("get_account_balance", {"account_id": "C-1042"}, {"balance": 5})

REFUND_FLOW = (call("search_orders", customer_id="C-1042"), call("get_order", order_id="O-7"),
               call("issue_refund", order_id="O-7", amount=20))
NAMES = ("search_orders", "get_order", "issue_refund")


def test_the_expected_trajectory_passes_with_full_metrics() -> None:
    result = score_case(trajectory(*REFUND_FLOW), agent(SEARCH, GET, REFUND))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=1.0, call_precision=1.0, call_recall=1.0, call_f1=1.0, sequence_alignment=1.0),
        case_id="c1", kind="trajectory", status="pass", matched="expected",
        verdicts=Verdicts(arguments=True, sequencing=True, abstention=True, grounding=True),
        expected_tools=NAMES, actual_tools=NAMES,
        sequence=SequenceMetrics(exact=True, edit_distance=0.0, expected=NAMES, actual=NAMES),
        calls=3, toolkit_size=SIZE)


RUNS = {
    "exact": (SEARCH, GET, REFUND),
    "reordered": (GET, SEARCH, REFUND),
    "missing": (SEARCH, REFUND),
    "extra": (SEARCH, GET, BALANCE, REFUND),
}
# agentevals-style modes: what each mode forgives.
EXPECTED_CODES: dict[OrderMode, dict[str, list[ErrorCode]]] = {
    "strict": {"exact": [], "reordered": [ErrorCode.OUT_OF_ORDER], "missing": [ErrorCode.MISSING_STEP],
               "extra": [ErrorCode.EXTRA_STEP]},
    "unordered": {"exact": [], "reordered": [], "missing": [ErrorCode.MISSING_STEP],
                  "extra": [ErrorCode.EXTRA_STEP]},
    "subset": {"exact": [], "reordered": [], "missing": [], "extra": [ErrorCode.EXTRA_STEP]},
    "superset": {"exact": [], "reordered": [], "missing": [ErrorCode.MISSING_STEP], "extra": []},
}


@pytest.mark.parametrize("mode", ["strict", "unordered", "subset", "superset"])
@pytest.mark.parametrize("variant", list(RUNS))
def test_order_modes(mode: OrderMode, variant: str) -> None:
    result = score_case(trajectory(*REFUND_FLOW, mode=mode), agent(*RUNS[variant]))
    assert [e.code for e in result.errors] == EXPECTED_CODES[mode][variant]
    assert result.status == ("pass" if not EXPECTED_CODES[mode][variant] else "fail")
    assert result.verdicts.sequencing is (not EXPECTED_CODES[mode][variant])


def test_out_of_order_and_missing_steps_say_which_step() -> None:
    reordered = score_case(trajectory(*REFUND_FLOW), agent(GET, SEARCH, REFUND))
    assert reordered.errors == (CaseError(
        code=ErrorCode.OUT_OF_ORDER, tool="search_orders", step=0, expected="get_order",
        note="called search_orders (step 0) after get_order (step 1)"),)
    missing = score_case(trajectory(*REFUND_FLOW), agent(SEARCH, REFUND))
    assert missing.errors == (CaseError(code=ErrorCode.MISSING_STEP, tool="get_order", step=1,
                                        note="get_order (step 1) was never called"),)
    assert missing.sequence == SequenceMetrics(exact=False, edit_distance=1 / 3, expected=NAMES,
                                               actual=("search_orders", "issue_refund"))


DEPENDS = (Dependency(step=2, requires=(0,)),)


def test_a_refund_before_the_lookup_it_depends_on_violates_the_dependency() -> None:
    gold = trajectory(*REFUND_FLOW, mode="unordered", after=DEPENDS)
    result = score_case(gold, agent(REFUND, SEARCH, GET))
    assert result.errors == (CaseError(
        code=ErrorCode.DEPENDENCY_VIOLATION, tool="issue_refund", step=2, expected="search_orders",
        note="called issue_refund (step 2) before search_orders (step 0), which it requires"),)


def test_a_step_after_its_dependency_failed_violates_it() -> None:
    gold = trajectory(*REFUND_FLOW, mode="unordered", after=DEPENDS)
    failed_search = ("search_orders", {"customer_id": "C-1042"}, {"error": "customer not found"})
    result = score_case(gold, agent(failed_search, GET, REFUND))
    assert [(e.code, e.note) for e in result.errors] == [(
        ErrorCode.DEPENDENCY_VIOLATION,
        "called issue_refund (step 2) although search_orders (step 0), which it requires, failed")]


def test_a_dependency_that_never_ran_is_named() -> None:
    gold = trajectory(*REFUND_FLOW, mode="subset", after=DEPENDS)
    result = score_case(gold, agent(GET, REFUND))
    assert [(e.code, e.note) for e in result.errors] == [(
        ErrorCode.DEPENDENCY_VIOLATION,
        "called issue_refund (step 2) but search_orders (step 0), which it requires, never ran")]


FROM_SEARCH = rules(issue_refund={"order_id": ArgRule(match="from_call", from_call=0)})


def test_from_call_values_must_come_from_the_named_result() -> None:
    gold = trajectory(call("search_orders", customer_id="C-1042"), call("issue_refund", order_id="O-?", amount=20),
                      arg_rules=FROM_SEARCH, messages=(user("I'm C-1042 and I want 20 back for order O-9"),))
    assert score_case(gold, agent(SEARCH, REFUND)).status == "pass"
    guessed = ("issue_refund", {"order_id": "O-9", "amount": 20})
    result = score_case(gold, agent(SEARCH, guessed))
    assert result.errors == (CaseError(
        code=ErrorCode.DEPENDENCY_VIOLATION, tool="issue_refund", arg="order_id", step=1, actual="O-9",
        note="called issue_refund with order_id 'O-9', which is not in the result of search_orders (step 0)"),)
    early = score_case(gold, agent(REFUND, SEARCH))
    assert ErrorCode.DEPENDENCY_VIOLATION in early.codes


def test_placing_an_order_after_a_negative_inventory_check_is_forbidden() -> None:
    gold = trajectory(call("check_inventory", sku="SKU-1"),
                      forbidden=(ForbiddenCall(name="place_order", reason="the item is out of stock"),),
                      messages=(user("Check if SKU-1 is in stock and if so order 2"),))
    out_of_stock = ("check_inventory", {"sku": "SKU-1"}, {"in_stock": False})
    result = score_case(gold, agent(out_of_stock, ("place_order", {"sku": "SKU-1", "quantity": 2})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=1.0, call_precision=0.5, call_recall=1.0, call_f1=2 / 3, sequence_alignment=2 / 3),
        case_id="c1", kind="trajectory", status="fail", errors=(CaseError(
            code=ErrorCode.FORBIDDEN_CALL, tool="place_order",
            note="called place_order (call 1), which is forbidden: the item is out of stock"),),
        verdicts=Verdicts(arguments=True, sequencing=False, abstention=True, grounding=True),
        expected_tools=("check_inventory",), actual_tools=("check_inventory", "place_order"),
        sequence=SequenceMetrics(exact=False, edit_distance=0.5, expected=("check_inventory",),
                                 actual=("check_inventory", "place_order")),
        calls=2, toolkit_size=SIZE)


def test_repeating_a_call_with_the_same_arguments_is_redundant() -> None:
    gold = trajectory(*REFUND_FLOW, mode="superset")
    result = score_case(gold, agent(SEARCH, SEARCH, GET, REFUND))
    assert result.errors == (CaseError(
        code=ErrorCode.REDUNDANT_CALL, tool="search_orders",
        note="called search_orders again with the same arguments (call 1 repeats call 0)"),)
    assert result.redundant_calls == 1


def test_a_value_replaced_mid_conversation_is_stale_in_a_trajectory() -> None:
    switch = user("Actually, check my other account, C-2000.")
    gold = trajectory(call("get_account_balance", account_id="C-2000"), messages=(ASK, switch))
    result = score_case(gold, agent(("get_account_balance", {"account_id": "C-1042"}), context=(ASK, switch)))
    assert [e.code for e in result.errors] == [ErrorCode.STALE_VALUE]
    # The same run given only the continuation (the case's messages are the context) reads the same.
    continuation = RunRecord(case_id="c1", messages=agent(("get_account_balance", {"account_id": "C-1042"}),
                                                          context=()).messages)
    assert [e.code for e in score_case(gold, continuation).errors] == [ErrorCode.STALE_VALUE]


def test_a_trajectory_where_no_call_was_needed() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")).model_copy(update={"behavior": "no_call",
                                                                                      "calls": ()}),
                kind="trajectory")
    result = score_case(gold, agent(SEARCH))
    assert [e.code for e in result.errors] == [ErrorCode.UNEXPECTED_CALL]


def test_levenshtein_and_longest_increasing_subsequence() -> None:
    assert levenshtein(["a", "b", "c"], ["b", "a", "c"]) == 2
    assert levenshtein([], ["a"]) == 1
    assert levenshtein(["a", "b"], ["a", "b"]) == 0
    assert longest_increasing([3, 0, 1, 2]) == {1, 2, 3}
    assert longest_increasing([]) == set()


def test_a_from_call_argument_left_out_is_a_wrong_value() -> None:
    gold = trajectory(call("search_orders", customer_id="C-1042"), call("issue_refund", order_id="O-?", amount=20),
                      arg_rules=FROM_SEARCH)
    result = score_case(gold, agent(SEARCH, ("issue_refund", {"amount": 20})))
    assert result.errors == (CaseError(
        code=ErrorCode.MISSING_REQUIRED_ARG, tool="issue_refund", arg="order_id", step=1, expected="O-?",
        note="called issue_refund without required order_id; expected a value from the result of expected call 0 "
             "(from_call)"),)


def test_no_call_with_superset_allows_reads_and_fails_only_forbidden_calls() -> None:
    """How tau-bench tasks whose gold changes nothing are encoded: look things up, write nothing."""
    nothing = case(calls(call("search_orders", customer_id="C-1042")).model_copy(update={"behavior": "no_call",
                                                                                         "calls": ()}),
                   kind="trajectory", order="superset",
                   forbidden=(ForbiddenCall(name="issue_refund", reason="the task changes nothing"),))
    assert score_case(nothing, agent(SEARCH)).status == "pass"
    refunded = score_case(nothing, agent(SEARCH, ("issue_refund", {"order_id": "O-7", "amount": 20})))
    assert [e.code for e in refunded.errors] == [ErrorCode.FORBIDDEN_CALL]
