"""Schema drift in the store: an import that changes a tool flags the gold cases it touches into the
re-labeling queue, where a reviewer migrates, fixes or dismisses them (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest

from labeler.store import ImportItem, PermissionDenied, Store, StoreError
from scorer.model import Call, GoldCase
from tests.review.kit import REFUND, TOOLS, gold, people, put, transcript
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


# -- drift is keyed by the case's own tool set: the transcript it was labeled on -----------------------

def renamed_gold(cid: str) -> GoldCase:
    return gold(cid, tools=(RENAMED, REFUND), expected=gold("x").expected.model_copy(update={
        "calls": (Call(name="search_orders", arguments={"customer_id": "C-1042"}),)}))


@pytest.mark.parametrize("renamed_first", [False, True])
def test_two_transcripts_with_different_tools_of_the_same_name_never_flag_each_other(
        any_store: Store, renamed_first: bool) -> None:
    people(any_store)
    # t1 offers search_orders(customer), t2 a different search_orders(customer_id); each case was labeled on
    # its own transcript with its own tools, in one import or in two, in either order.
    old = (transcript("t1"), gold("t1#t2"))
    new = (transcript("t2", tools=(RENAMED, REFUND)), renamed_gold("t2#t2"))
    first, second = (new, old) if renamed_first else (old, new)
    put(any_store, *first)
    assert any_store.check_schema_drift() == []
    put(any_store, *second)
    assert any_store.check_schema_drift() == [] and any_store.relabel_queue(actor="rita") == []


def test_a_transcript_reimported_with_changed_tools_flags_only_its_own_cases(any_store: Store) -> None:
    people(any_store)
    put(any_store, transcript("t1"), gold("t1#t2"), transcript("t2"), gold("t2#t2"))
    # The same conversation t1 again, its search_orders now taking customer_id: not a conflict, a new tool set.
    result = any_store.import_items([ImportItem(transcript("t1", tools=(RENAMED, REFUND)), "again.jsonl", 1),
                                     ImportItem(gold("t1#t2", tools=(RENAMED, REFUND)), "again.jsonl", 2)])
    assert (result.transcripts_retooled, result.gold_retooled, result.rejects) == (1, 1, [])
    assert "1 transcripts' tools changed" in result.summary
    assert any_store.get_transcript("t1").transcript.tools == (RENAMED, REFUND)
    assert any_store.get_gold("t1#t2") == gold("t1#t2")  # kept as labeled, for a reviewer to migrate
    [stale] = any_store.check_schema_drift()
    assert (stale.case_id, [r.kind for r in stale.reasons]) == ("t1#t2", ["param_renamed"])
    [item] = any_store.relabel_queue(actor="rita")
    assert item.tools == (RENAMED, REFUND)
    migrated = any_store.resolve_relabel(item.id, actor="rita")
    assert migrated.tools == (RENAMED, REFUND)
    assert any_store.check_schema_drift() == []  # t2#t2, labeled on t2 (unchanged), was never flagged
    assert [e["action"] for e in audit_events(any_store, "t1") if e["action"] == "transcript.tools"] == [
        "transcript.tools"]


def test_a_tool_gone_from_the_cases_own_transcript_is_removed(any_store: Store) -> None:
    people(any_store)
    put(any_store, transcript("t1"), gold("t1#t2"))
    put(any_store, transcript("t1", tools=(REFUND,)))
    [stale] = any_store.check_schema_drift()
    assert [r.kind for r in stale.reasons] == ["tool_removed"]


def test_a_transcript_whose_conversation_changed_is_still_a_conflict(any_store: Store) -> None:
    put(any_store, transcript("t1"))
    result = any_store.import_items([ImportItem(transcript("t1", "Something else", tools=(RENAMED, REFUND)),
                                                "again.jsonl", 4)], skip_invalid=True)
    [reject] = result.rejects
    assert str(reject) == ("again.jsonl:4: transcript 't1' is already in the store with different content "
                           "(give it a new id to keep both)")
    assert any_store.get_transcript("t1").transcript.tools == TOOLS
