"""Labels, users, leases and coverage in the store, on a real SQLite file (and PostgreSQL when available)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from labeler.cli.data import convert_files
from labeler.labels import LabelBody, LabelIncomplete, RuleDraft
from labeler.store import (
    ConflictError,
    Coverage,
    LabelRecord,
    PermissionDenied,
    QueueFilter,
    Store,
    StoreError,
    User,
)
from scorer.importers import ImportOptions
from scorer.model import Call, GoldCase
from tests.store_reads import active_lease, audit_events

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "app"
TAU = "tau-airline-task10-trial1"  # decision points at messages 2 (text), 4 (call), 6 (text), 8 (call)
LOOKUP = Call(name="get_reservation_details", arguments={"reservation_id": "H9ZU1C"})


def seed(store: Store) -> Store:
    items, rejects = convert_files(sorted(FIXTURES.glob("*.jsonl")), None, ImportOptions())
    assert not rejects
    store.import_items(items)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    store.add_user("bob", "annotator", actor="root")
    return store


@pytest.fixture
def labeled_store(any_store: Store) -> Store:
    """Seeded, on SQLite and on PostgreSQL."""
    return seed(any_store)


def call_label(**changes: object) -> LabelBody:
    return LabelBody(decision="same", calls=(LOOKUP,), tags=("happy_path",), **changes)  # type: ignore[arg-type]


def label_events(store: Store, key: str) -> list[dict[str, object]]:
    return [e for e in audit_events(store, key) if e["entity"] == "label"]


# -- users ----------------------------------------------------------------------------------------------


def test_first_user_adds_themselves_then_only_admins_add_users(store: Store) -> None:
    assert store.add_user("root", "admin") == User("root", "admin")
    with pytest.raises(PermissionDenied, match="only an admin can add users"):
        store.add_user("eve", "admin")
    store.add_user("ann", actor="root")
    with pytest.raises(PermissionDenied, match=r"\('ann' is annotator\)"):
        store.add_user("eve", actor="ann")
    with pytest.raises(StoreError, match="already a user named 'ann'"):
        store.add_user("ann", actor="root")
    with pytest.raises(StoreError, match="unknown role 'boss'"):
        store.add_user("eve", "boss", actor="root")
    assert store.users() == [User("ann", "annotator"), User("root", "admin")]


def test_admin_changes_roles_but_cannot_demote_themselves(store: Store) -> None:
    store.add_user("root", "admin")
    store.add_user("ann", actor="root")
    assert store.set_user("ann", role="reviewer", actor="root") == User("ann", "reviewer")
    assert store.set_user("ann", active=False, actor="root") == User("ann", "reviewer", False)
    assert store.users() == [User("root", "admin")]
    with pytest.raises(PermissionDenied, match="cannot demote or disable themselves"):
        store.set_user("root", role="annotator", actor="root")


# -- labels ---------------------------------------------------------------------------------------------


def test_every_change_is_a_new_version_with_an_audit_event(labeled_store: Store) -> None:
    s = labeled_store
    first = s.save_label(TAU, 4, "ann", LabelBody(decision="different"), version=0)
    second = s.save_label(TAU, 4, "ann", call_label(), version=1)
    assert (first.version, second.version, second.status) == (1, 2, "draft")
    assert s.get_label(TAU, 4, "ann") == LabelRecord(TAU, 4, "ann", "draft", call_label(), 2, second.updated_at)
    # Saving the same body again is not a change: no version, no event.
    assert s.save_label(TAU, 4, "ann", call_label(), version=2).version == 2
    events = label_events(s, f"{TAU}#t4@ann")
    assert [(e["actor"], e["action"]) for e in events] == [("ann", "label.save"), ("ann", "label.save")]
    assert events[0]["before"] is None
    assert json.loads(events[1]["before"]) == {"status": "draft", "version": 1, "body": {"decision": "different"}}
    assert json.loads(events[1]["after"])["body"] == call_label().to_json()


def test_a_stale_save_is_refused_with_both_versions_and_nothing_changes(labeled_store: Store) -> None:
    s = labeled_store
    s.save_label(TAU, 4, "ann", LabelBody(decision="no_call"), version=0)
    theirs = s.save_label(TAU, 4, "ann", call_label(), version=1)  # the same annotator in another tab
    before = s.dump()
    mine = LabelBody(decision="clarify", rationale="ask for the user id first")
    with pytest.raises(ConflictError) as info:
        s.save_label(TAU, 4, "ann", mine, version=1)
    assert info.value.mine == mine
    assert info.value.theirs == theirs
    assert info.value.based_on == 1
    assert "stored version 2" in str(info.value) and "nothing was overwritten" in str(info.value)
    after = s.dump()
    assert after.pop("audit_log") != before.pop("audit_log")
    assert after == before  # the label itself is untouched
    refusal = label_events(s, f"{TAU}#t4@ann")[-1]
    assert (refusal["action"], refusal["actor"]) == ("label.conflict", "ann")
    assert json.loads(refusal["after"]) == {"based_on": 1, "body": mine.to_json()}
    assert json.loads(refusal["before"])["version"] == 2


def test_labels_are_per_annotator(labeled_store: Store) -> None:
    s = labeled_store
    s.save_label(TAU, 4, "ann", call_label(), version=0)
    s.save_label(TAU, 4, "bob", LabelBody(decision="clarify"), version=0)
    assert [(r.annotator, r.body.decision) for r in s.labels_for_turn(TAU, 4)] == [("ann", "same"),
                                                                                     ("bob", "clarify")]


def test_unknown_turn_or_user_is_refused(labeled_store: Store) -> None:
    with pytest.raises(StoreError, match="no decision point at message 3"):
        labeled_store.save_label(TAU, 3, "ann", LabelBody(), version=0)
    with pytest.raises(PermissionDenied, match="'zed' is not an active user"):
        labeled_store.save_label(TAU, 4, "zed", LabelBody(), version=0)


def test_submit_materializes_an_exportable_gold_case(labeled_store: Store) -> None:
    s = labeled_store
    s.save_label(TAU, 4, "ann", call_label(), version=0)
    done = s.submit_label(TAU, 4, "ann", call_label(), version=1)
    assert (done.status, done.version) == ("submitted", 2)
    gold = s.get_gold(f"{TAU}#t4")
    assert isinstance(gold, GoldCase)
    assert (gold.conversation_id, gold.turn, gold.expected.behavior, gold.expected.calls) == (TAU, 4, "call", (LOOKUP,))
    assert (gold.provenance.annotators, gold.provenance.status, gold.provenance.source) == (("ann",), "submitted",
                                                                                          "tau-bench")
    assert len(gold.messages) == 4 and len(gold.tools) == 14
    assert [json.loads(line)["id"] for line in s.iter_gold_lines(status="submitted")] == [f"{TAU}#t4"]
    assert s.count_gold(tag="happy_path") == 1
    assert [e["action"] for e in audit_events(s, f"{TAU}#t4")] == ["gold.materialize"]


def test_an_incomplete_label_is_not_submitted(labeled_store: Store) -> None:
    s = labeled_store
    body = LabelBody(decision="different", calls=(Call(name="get_reservation_details", arguments={}),))
    s.save_label(TAU, 4, "ann", body, version=0)
    before = s.dump()
    with pytest.raises(LabelIncomplete) as info:
        s.submit_label(TAU, 4, "ann", body, version=1)
    assert info.value.problems == ["call 1 get_reservation_details.reservation_id: required, but missing"]
    assert s.dump() == before


def test_agreeing_annotators_share_the_case_and_a_dissenter_does_not_replace_it(labeled_store: Store) -> None:
    s = labeled_store
    s.add_user("cy", actor="root")
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    s.submit_label(TAU, 4, "bob", call_label(), version=0)
    s.submit_label(TAU, 4, "cy", LabelBody(decision="clarify"), version=0)
    gold = s.get_gold(f"{TAU}#t4")
    assert gold.provenance.annotators == ("ann", "bob")
    assert gold.expected.calls == (LOOKUP,)


def test_reopening_the_only_submitted_label_withdraws_its_gold_case(labeled_store: Store) -> None:
    s = labeled_store
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    s.save_label(TAU, 4, "ann", call_label(rationale="checking again"), version=1)
    assert s.count_gold() == 0
    assert [e["action"] for e in audit_events(s, f"{TAU}#t4")] == ["gold.materialize", "gold.withdraw"]


def test_waived_required_keys_and_rules_reach_the_gold_case(labeled_store: Store) -> None:
    s = labeled_store
    body = LabelBody(
        decision="different", calls=(Call(name="get_reservation_details", arguments={}),),
        required_args={"get_reservation_details": ()},
        arg_rules={"get_reservation_details": {"reservation_id": RuleDraft(match="ci")}},
    )
    s.submit_label(TAU, 4, "ann", body, version=0)
    gold = s.get_gold(f"{TAU}#t4")
    rule = gold.rule_for("get_reservation_details", "reservation_id")
    assert (rule.match, rule.optional) == ("ci", True)


def test_turn_states_show_the_annotators_progress(labeled_store: Store) -> None:
    s = labeled_store
    s.save_label(TAU, 2, "ann", LabelBody(decision="clarify"), version=0)
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    states = s.turn_states(TAU, "ann")
    assert [(x.message_index, x.observed_behavior, x.label_status, x.done) for x in states] == [
        (2, "text", "draft", False), (4, "call", "submitted", True), (6, "text", None, False),
        (8, "call", None, False)]
    assert states[1].observed == [{"name": "get_reservation_details", "arguments": {"reservation_id": "H9ZU1C"}}]
    # Bob sees the gold case as done, with no label of his own.
    assert [(x.label_status, x.done) for x in s.turn_states(TAU, "bob")][1] == (None, True)


# -- queue and leases -----------------------------------------------------------------------------------


def test_two_annotators_never_get_the_same_transcript(labeled_store: Store) -> None:
    s = labeled_store
    first = s.claim_next("ann")
    second = s.claim_next("bob")
    assert first == "tau-airline-task10-trial1" and second == "tau-airline-task35-trial3"
    assert s.claim_next("ann") == first  # resumes its own lease
    assert s.claim_next("ann", skip=first) == "xss-probe"
    assert active_lease(s, first) is None  # one lease per annotator: skipping released it


def test_concurrent_claims_hand_out_distinct_transcripts(store: Store, isolated_db: Path) -> None:
    """SQLite: claims from five connections at once queue on BEGIN IMMEDIATE; each gets its own item."""
    s = seed(store)
    for n in range(3):
        s.add_user(f"u{n}", actor="root")
    results: list[str | None] = []
    stores = [Store(isolated_db) for _ in range(5)]
    names = ["ann", "bob", "u0", "u1", "u2"]
    threads = [threading.Thread(target=lambda st=st, n=n: results.append(st.claim_next(n)))
               for st, n in zip(stores, names, strict=True)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    claimed = [r for r in results if r is not None]
    assert sorted(claimed) == sorted(set(claimed)) and len(claimed) == 3  # three transcripts, no duplicates
    assert results.count(None) == 2


def test_an_expired_lease_frees_itself(labeled_store: Store) -> None:
    s = labeled_store
    start = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
    assert s.claim_next("ann", QueueFilter(search="task10"), now=start, ttl_seconds=600) == TAU
    assert s.claim_next("bob", QueueFilter(search="task10"), now=start + timedelta(minutes=9)) is None
    assert s.take_lease(TAU, "bob", now=start + timedelta(minutes=9)).holder == "ann"
    assert s.claim_next("bob", QueueFilter(search="task10"), now=start + timedelta(minutes=11)) == TAU
    assert active_lease(s, TAU, now=start + timedelta(minutes=11)).holder == "bob"  # type: ignore[union-attr]


def test_queue_filters_and_progress(labeled_store: Store) -> None:
    s = labeled_store
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    s.save_label(TAU, 2, "ann", LabelBody(decision="clarify"), version=0)
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(source="xss-probe"))] == ["xss-probe"]
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(tool="save_note"))] == ["xss-probe"]
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(tag="happy_path"))] == [TAU]
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(status="draft"))] == [TAU]
    assert [q.transcript_id for q in s.queue("bob", QueueFilter(status="draft"))] == []
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(search="PEP4E0"))] == ["tau-airline-task35-trial3"]
    [item] = s.queue("ann", QueueFilter(search="task10"))
    assert (item.n_turns, item.n_done, item.n_drafts) == (4, 1, 1)
    with pytest.raises(StoreError, match="unknown status filter"):
        s.queue("ann", QueueFilter(status="done"))


def test_a_fully_labeled_transcript_leaves_the_unlabeled_queue(labeled_store: Store) -> None:
    s = labeled_store
    for index in (2, 6):
        s.submit_label(TAU, index, "ann", LabelBody(decision="clarify"), version=0)
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    assert TAU in [q.transcript_id for q in s.queue("ann", QueueFilter(status="unlabeled"))]
    s.submit_label(TAU, 8, "ann", LabelBody(decision="no_call"), version=0)
    assert [q.transcript_id for q in s.queue("ann", QueueFilter(status="unlabeled"))] == [
        "tau-airline-task35-trial3", "xss-probe"]
    assert s.claim_next("ann") == "tau-airline-task35-trial3"


# -- vocabulary and coverage ----------------------------------------------------------------------------


def test_only_admins_edit_the_tag_vocabulary(labeled_store: Store) -> None:
    s = labeled_store
    assert {"happy_path", "near_duplicate_tools", "underspecified", "tool_shaped_language", "ordered_multi_step",
            "missing_info", "stale_context"} <= {x.tag for x in s.tags()}
    with pytest.raises(PermissionDenied):
        s.set_tag("sarcasm", adversarial=True, actor="ann")
    s.set_tag("sarcasm", adversarial=True, description="says the opposite", actor="root")
    s.remove_tag("relative_date", actor="root")
    tags = {x.tag: x for x in s.tags()}
    assert tags["sarcasm"].adversarial and "relative_date" not in tags and not tags["happy_path"].adversarial


def test_coverage_counts_decisions_tools_tags_and_the_adversarial_ratio(labeled_store: Store) -> None:
    s = labeled_store
    s.submit_label(TAU, 4, "ann", call_label(), version=0)
    s.submit_label(TAU, 2, "ann", LabelBody(decision="clarify", tags=("underspecified",)), version=0)
    s.submit_label(TAU, 6, "ann", LabelBody(decision="no_call", tags=("tool_shaped_language", "stale_context")),
                   version=0)
    assert s.coverage() == Coverage(
        total=3, by_behavior={"call": 1, "clarify": 1, "no_call": 1}, by_tool={"get_reservation_details": 1},
        by_tag={"happy_path": 1, "stale_context": 1, "tool_shaped_language": 1, "underspecified": 1},
        happy_path=1, adversarial=2)
    assert s.coverage().adversarial_ratio == 2.0


def test_annotator_totals(labeled_store: Store) -> None:
    s = labeled_store
    s.submit_label(TAU, 4, "ann", call_label(unsure=True), version=0)
    s.save_label(TAU, 2, "ann", LabelBody(decision="clarify"), version=0)
    s.save_label(TAU, 2, "bob", LabelBody(), version=0)
    assert [(x.annotator, x.drafts, x.submitted, x.unsure) for x in s.annotator_totals()] == [
        ("ann", 1, 1, 1), ("bob", 1, 0, 0)]


# -- trajectory labels ----------------------------------------------------------------------------------


def test_trajectory_labels_version_audit_and_materialize(labeled_store: Store) -> None:
    from labeler.labels import TrajectoryBody
    from scorer.model import Dependency, ForbiddenCall

    s = labeled_store
    transfer = Call(name="transfer_to_human_agents", arguments={"summary": "cannot cancel"})
    draft = TrajectoryBody(calls=(LOOKUP, transfer), order="strict")
    assert s.save_trajectory_label(TAU, "ann", draft, version=0).version == 1
    with pytest.raises(ConflictError) as info:
        s.save_trajectory_label(TAU, "ann", TrajectoryBody(no_action=True), version=0)
    assert info.value.theirs.body == draft
    body = draft.model_copy(update={
        "after": (Dependency(step=1, requires=(0,)),),
        "forbidden": (ForbiddenCall(name="cancel_reservation"),),
        "arg_rules": {"transfer_to_human_agents": {"summary": RuleDraft(match="any")}}})
    done = s.save_trajectory_label(TAU, "ann", body, version=1, submit=True)
    assert (done.status, done.version) == ("submitted", 2)
    gold = s.get_gold(f"{TAU}#trajectory")
    assert (gold.kind, gold.order, gold.expected.calls, gold.after, gold.forbidden) == (
        "trajectory", "strict", (LOOKUP, transfer), (Dependency(step=1, requires=(0,)),),
        (ForbiddenCall(name="cancel_reservation"),))
    assert gold.rule_for("transfer_to_human_agents", "summary").match == "any"
    assert len(gold.messages) == 2  # the context before the agent's first decision
    assert [e["action"] for e in audit_events(s, f"{TAU}#trajectory@ann")] == [
        "trajectory.save", "trajectory.conflict", "trajectory.submit"]
    # A turn-level coverage count is not disturbed by the trajectory case.
    assert s.coverage().total == 0


def test_an_incomplete_trajectory_is_not_submitted(labeled_store: Store) -> None:
    from labeler.labels import TrajectoryBody

    with pytest.raises(LabelIncomplete) as info:
        labeled_store.save_trajectory_label(TAU, "ann", TrajectoryBody(), version=0, submit=True)
    assert info.value.problems == ["add the expected calls, or mark that no action is expected"]
    assert labeled_store.get_trajectory_label(TAU, "ann") is None


def test_a_label_holding_nan_or_infinity_is_refused_and_nothing_is_stored(labeled_store: Store) -> None:
    """Before: the body's ``model_dump`` turned NaN into ``None`` and the label was stored with a null."""
    from labeler.labels import TrajectoryBody
    from scorer.canonical import NonFiniteNumber

    s = labeled_store
    bad = LabelBody(decision="different", calls=(Call(name="get_reservation_details",
                                                      arguments={"reservation_id": float("nan")}),))
    with pytest.raises(NonFiniteNumber, match=r"^calls\[0\]\.arguments\.reservation_id: NaN is not a JSON number$"):
        s.save_label(TAU, 4, "ann", bad, version=0)
    with pytest.raises(NonFiniteNumber):
        s.submit_label(TAU, 4, "ann", bad, version=0)
    assert s.get_label(TAU, 4, "ann") is None and label_events(s, f"{TAU}#t4@ann") == []
    steps = TrajectoryBody(calls=(Call(name="get_reservation_details", arguments={"n": [1, float("-inf")]}),))
    with pytest.raises(NonFiniteNumber, match=r"^calls\[0\]\.arguments\.n\[1\]: -Infinity"):
        s.save_trajectory_label(TAU, "ann", steps, version=0)
    assert s.get_trajectory_label(TAU, "ann") is None
