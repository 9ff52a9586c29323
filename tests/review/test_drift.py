"""Schema drift: which gold cases the current tool schemas no longer fit, and why (pure functions)."""

from __future__ import annotations

from typing import Any

import pytest

from scorer.drift import DriftReason, StaleCase, case_drift, migrate_case, stale_cases
from scorer.model import Answer, ArgRule, Call, ToolSpec
from tests.review.kit import LOOKUP, REFUND, gold


def lookup_with(properties: dict[str, Any], required: list[str], name: str = "search_orders") -> ToolSpec:
    return ToolSpec(name=name, description="Find a customer's orders",
                    parameters={"type": "object", "properties": properties, "required": required})


STATUS = {"type": "string", "enum": ["open", "shipped"]}
RENAMED = lookup_with({"customer_id": {"type": "string"}, "status": STATUS}, ["customer_id"])


def test_a_renamed_parameter_is_named_with_its_new_name() -> None:
    [stale] = stale_cases([gold("a#t2")], [RENAMED, REFUND])
    assert stale == StaleCase(case_id="a#t2", reasons=(DriftReason(
        kind="param_renamed", tool="search_orders", param="customer", renamed_to="customer_id",
        message="expected args use `customer`, renamed to `customer_id` in `search_orders`"),))
    assert stale.blocking


@pytest.mark.parametrize(("current", "reason"), [
    # The parameter is gone and nothing like it took its place.
    ([lookup_with({"email": {"type": "string"}}, []), REFUND],
     DriftReason(kind="param_removed", tool="search_orders", param="customer",
                 message="expected args use `customer`, which `search_orders` no longer has")),
    # A new required field the gold does not set.
    ([lookup_with({"customer": {"type": "string"}, "region": {"type": "string"}}, ["customer", "region"]), REFUND],
     DriftReason(kind="new_required", tool="search_orders", param="region",
                 message="`search_orders` now requires `region`, which the expected call does not set")),
    # The value the gold expects no longer fits the parameter's type.
    ([lookup_with({"customer": {"type": "integer"}}, ["customer"]), REFUND],
     DriftReason(kind="type_changed", tool="search_orders", param="customer",
                 message="`search_orders.customer` no longer accepts the expected value \"C-1042\": "
                         "'C-1042' is not of type 'integer'")),
    # The tool is gone.
    ([REFUND],
     DriftReason(kind="tool_removed", tool="search_orders",
                 message="expected calls use `search_orders`, which the current tools no longer offer")),
])
def test_each_kind_of_drift_that_breaks_the_gold(current: list[ToolSpec], reason: DriftReason) -> None:
    assert case_drift(gold("a#t2"), current) == StaleCase(case_id="a#t2", reasons=(reason,))


def test_a_new_tool_is_a_note_not_a_blocker() -> None:
    batch = ToolSpec(name="search_orders_batch", parameters={"type": "object", "properties": {}})
    stale = case_drift(gold("a#t2"), [LOOKUP, REFUND, batch])
    assert stale is not None and not stale.blocking
    assert stale.reasons == (DriftReason(
        kind="tool_added", tool="search_orders_batch", blocking=False,
        message="a new tool `search_orders_batch` is offered: check whether it is now the better call"),)
    assert stale_cases([gold("a#t2")], [LOOKUP, REFUND, batch], added_tools=False) == []


def test_changes_the_gold_does_not_touch_are_no_drift() -> None:
    reworded = ToolSpec(name="search_orders", description="Look up orders (v2)",
                        parameters={**LOOKUP.parameters, "properties": {
                            **LOOKUP.properties, "page": {"type": "integer"}}})
    refund_v2 = ToolSpec(name="refund_order", parameters={"type": "object", "properties": {
        "order_id": {"type": "string"}, "reason": {"type": "string"}}, "required": ["order_id", "reason"]})
    assert stale_cases([gold("a#t2"), gold("b#t2")], [reworded, refund_v2]) == []


def test_alternatives_and_rules_count_as_uses() -> None:
    case = gold("a#t2", alternatives=(Answer(behavior="call", calls=(Call(name="refund_order",
                                                                          arguments={"order_id": "O-7"}),)),))
    refund_v2 = ToolSpec(name="refund_order", parameters={"type": "object", "properties": {
        "order": {"type": "string"}}, "required": ["order"]})
    [stale] = stale_cases([case], [LOOKUP, refund_v2])
    assert [(r.kind, r.param, r.renamed_to) for r in stale.reasons] == [("param_renamed", "order_id", "order")]


def test_migrating_a_rename_moves_the_values_rules_and_schemas() -> None:
    case = gold("a#t2", rules={"search_orders": {"customer": ArgRule(match="ci")}},
                required_args={"search_orders": ("customer",)})
    moved = migrate_case(case, [RENAMED, REFUND])
    assert moved is not None
    assert moved.expected.calls == (Call(name="search_orders", arguments={"customer_id": "C-1042"}),)
    assert moved.arg_rules == {"search_orders": {"customer_id": ArgRule(match="ci")}}
    assert moved.required_args == {"search_orders": ("customer_id",)}
    assert moved.tools == (RENAMED, REFUND)
    assert case_drift(moved, [RENAMED, REFUND]) is None


def test_drift_that_needs_a_person_is_not_migrated() -> None:
    assert migrate_case(gold("a#t2"), [REFUND]) is None
    assert migrate_case(gold("a#t2"), [lookup_with({"customer": {"type": "integer"}}, []), REFUND]) is None
