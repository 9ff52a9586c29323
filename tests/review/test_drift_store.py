"""Schema drift in the store: an import that changes a tool flags the gold cases it touches into the
re-labeling queue, where a reviewer migrates, fixes or dismisses them (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from labeler.store import PermissionDenied, Store, StoreError
from scorer.model import Call
from tests.review.kit import REFUND, gold, people, put, transcript
from tests.review.test_drift import RENAMED, lookup_with
from tests.store_reads import audit_events


@pytest.fixture
def ds(any_store: Store) -> Store:
    people(any_store)
    put(any_store, transcript("t1"), gold("a#t2"), gold("b#t2", expected=gold("x").expected.model_copy(
        update={"calls": (Call(name="refund_order", arguments={"order_id": "O-7"}),)})))
    return any_store


def test_an_import_with_a_renamed_parameter_flags_the_cases_that_use_it(ds: Store) -> None:
    assert ds.check_schema_drift() == []
    put(ds, transcript("t9", tools=(RENAMED, REFUND)))  # the agent's tools moved on
    assert ds.current_tools("unit") == [REFUND, RENAMED]
    [stale] = ds.check_schema_drift()
    assert stale.case_id == "a#t2" and stale.summary == (
        "expected args use `customer`, renamed to `customer_id` in `search_orders`")
    [item] = ds.relabel_queue(actor="rita")
    assert (item.case_id, item.status, [r.kind for r in item.reasons]) == ("a#t2", "open", ["param_renamed"])
    assert ds.check_schema_drift() == [stale] and len(ds.relabel_queue(actor="rita")) == 1  # flagged once
    # The reviewer migrates it: the gold now uses the new name and schema, approved by the reviewer.
    fixed = ds.resolve_relabel(item.id, actor="rita")
    assert fixed.expected.calls == (Call(name="search_orders", arguments={"customer_id": "C-1042"}),)
    assert (fixed.provenance.status, fixed.provenance.reviewer) == ("approved", "rita")
    assert ds.get_gold("a#t2") == fixed
    assert ds.check_schema_drift() == [] and ds.relabel_queue(actor="rita") == []


def test_a_declared_toolset_catches_removed_tools_and_a_dismissal_sticks(ds: Store) -> None:
    stale = ds.check_schema_drift(tools=[RENAMED])
    assert [(s.case_id, [r.kind for r in s.reasons]) for s in stale] == [
        ("a#t2", ["param_renamed"]), ("b#t2", ["tool_removed"])]
    items = ds.relabel_queue(actor="rita")
    refund = next(i for i in items if i.case_id == "b#t2")
    with pytest.raises(StoreError, match="cannot be migrated mechanically"):
        ds.resolve_relabel(refund.id, actor="rita")
    with pytest.raises(StoreError, match="say why"):
        ds.dismiss_relabel(refund.id, actor="rita", note="")
    ds.dismiss_relabel(refund.id, actor="rita", note="refunds move to another agent; keep for history")
    ds.check_schema_drift(tools=[RENAMED])
    assert [i.case_id for i in ds.relabel_queue(actor="rita")] == ["a#t2"]


def test_a_reviewer_may_fix_a_flagged_case_by_hand(ds: Store) -> None:
    ds.check_schema_drift(tools=[lookup_with({"customer": {"type": "string"}, "region": {"type": "string"}},
                                             ["customer", "region"]), REFUND])
    [item] = ds.relabel_queue(actor="rita")
    assert item.reasons[0].kind == "new_required"
    fix = gold("a#t2", tools=item.tools, expected=gold("x").expected.model_copy(update={"calls": (
        Call(name="search_orders", arguments={"customer": "C-1042", "region": "EU"}),)}))
    assert ds.resolve_relabel(item.id, fix, actor="root", note="region from the account").provenance.reviewer == "root"
    assert [e["note"] for e in audit_events(ds, "a#t2") if e["action"] == "gold.relabel"] == [
        "region from the account"]


@pytest.mark.parametrize("action", ["queue", "resolve", "dismiss"])
def test_annotators_cannot_decide_re_labeling(ds: Store, action: str) -> None:
    ds.check_schema_drift(tools=[RENAMED, REFUND])
    [item] = ds.relabel_queue(actor="rita")
    before = ds.dump()
    with pytest.raises(PermissionDenied, match=r"\('ann' is annotator\)"):
        {"queue": lambda: ds.relabel_queue(actor="ann"),
         "resolve": lambda: ds.resolve_relabel(item.id, actor="ann"),
         "dismiss": lambda: ds.dismiss_relabel(item.id, actor="ann", note="fine")}[action]()
    assert ds.dump() == before
