"""Gold hygiene: suspect gold found without an agent (pure functions)."""

from __future__ import annotations

from scorer.hygiene import HygieneProblem, duplicate_problems, lint
from scorer.model import Answer, ArgRule, Call
from tests.review.kit import gold

LONG = ("Hello there, I ordered a pair of running shoes last week and the tracking page has not changed "
        "since Monday. My customer number is C-1042 and I would like to know where the parcel is now")


def calls(*made: Call) -> Answer:
    return Answer(behavior="call", calls=made)


def test_a_clean_gold_set_has_no_problems() -> None:
    assert lint([gold("a#t2"), gold("b#t2", user_text="Orders for C-7?", customer="C-7")]) == []


def test_the_same_context_with_conflicting_answers() -> None:
    problems = lint([gold("a#t2"), gold("b#t2", expected=Answer(behavior="clarify"))])
    assert problems == [HygieneProblem(
        code="conflicting_duplicate", case_id="a#t2", related=("b#t2",),
        message='the same context as `b#t2`, but expects search_orders({"customer":"C-1042"}) where `b#t2` '
                "expects ask the user")]


def test_duplicates_that_agree_or_accept_each_other_are_fine() -> None:
    clarify = Answer(behavior="clarify")
    assert duplicate_problems([gold("a#t2"), gold("b#t2")]) == []
    assert duplicate_problems([gold("a#t2", alternatives=(clarify,)), gold("b#t2", expected=clarify)]) == []


def test_nearly_the_same_context_with_conflicting_answers() -> None:
    near = lint([gold("a#t2", user_text=LONG), gold("b#t2", user_text=LONG + " please", customer="C-2042"),
                 gold("c#t2", user_text="Cancel everything I ever ordered", customer="C-1")])
    assert [(p.code, p.case_id, p.related) for p in near] == [("conflicting_near_duplicate", "a#t2", ("b#t2",))]
    assert near[0].message.startswith("nearly the same context as `b#t2`")


def test_expected_calls_that_fail_their_own_schema_or_lack_required_values() -> None:
    case = gold("a#t2", expected=calls(
        Call(name="search_orders", arguments={"customer": "C-1042", "status": "lost", "cust": 1}),
        Call(name="refund_order", arguments={"amount": "ten"}),
        Call(name="cancel_order", arguments={})))
    assert [(p.code, p.tool, p.arg, p.message) for p in lint([case])] == [
        ("missing_required_value", "refund_order", "order_id", "required `refund_order.order_id` has no value"),
        ("schema_violation", "refund_order", "amount", "`refund_order.amount`: 'ten' is not of type 'number'"),
        ("schema_violation", "search_orders", "cust", "`search_orders` has no parameter `cust`"),
        ("schema_violation", "search_orders", "status", "`search_orders.status`: 'lost' is not one of "
                                                        "['open', 'shipped']"),
        ("unknown_tool", "cancel_order", None, "expected call to `cancel_order`, which the case does not offer"),
    ]


def test_empty_required_values_unless_the_rule_lets_them_be_omitted() -> None:
    empty = gold("a#t2", customer="  ")
    assert [p.message for p in lint([empty])] == ["required `search_orders.customer` is empty"]
    waived = gold("a#t2", expected=calls(Call(name="search_orders", arguments={})),
                  rules={"search_orders": {"customer": ArgRule(optional=True)}})
    assert lint([waived]) == []


def test_expected_identifiers_that_appear_nowhere_in_the_context() -> None:
    # The order id O-7 only shows up in the tool result after this decision point: the gold made it up.
    invented = gold("a#t2", expected=calls(Call(name="refund_order", arguments={"order_id": "O-7"})))
    assert lint([invented]) == [HygieneProblem(
        code="ungrounded_value", case_id="a#t2", tool="refund_order", arg="order_id",
        message='expected `refund_order.order_id` = "O-7" appears nowhere in the context')]
    said = gold("b#t2", user_text="Refund order O-7 please",
                expected=calls(Call(name="refund_order", arguments={"order_id": "O-7"})))
    waived = invented.model_copy(update={"id": "c#t2", "arg_rules": {"refund_order": {
        "order_id": ArgRule(grounded=False)}}})
    assert lint([said]) == [] and lint([waived]) == []
