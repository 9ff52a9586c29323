"""Gold versions: immutable, content-hashed snapshots of a split, derived versions, diffs, roles, audit."""

from __future__ import annotations

import hashlib
import json

import pytest

from labeler.store import GoldVersion, PermissionDenied, Store, StoreError, VersionDiff
from scorer.formats import dumps_record
from scorer.model import Answer, Call, GoldCase
from tests.review.kit import gold, people, put
from tests.store_reads import audit_events


@pytest.fixture
def gstore(any_store: Store) -> Store:
    """Three approved regression cases, one submitted (not yet approved) and one approved rolling case."""
    people(any_store)
    put(any_store, gold("b#t2"), gold("a#t2", customer="C-7"), gold("c#t2", customer="C-9"),
        gold("d#t2", status="submitted"), gold("r#t2", split="rolling"))
    return any_store


def export(store: Store, vid: str, actor: str = "rita") -> str:
    return "".join(line + "\n" for line in store.iter_version_lines(vid, actor=actor))


def stamped(case: GoldCase, vid: str) -> str:
    return dumps_record(case.model_copy(update={"provenance": case.provenance.model_copy(
        update={"gold_version": vid})}))


def test_freeze_snapshots_the_approved_cases_of_a_split_with_the_hash_of_its_export(gstore: Store) -> None:
    version = gstore.freeze("regression", actor="rita", note="first cut")
    text = export(gstore, "regression-v1")
    assert version == GoldVersion(
        id="regression-v1", split="regression", number=1, parent=None,
        content_hash=hashlib.sha256(text.encode()).hexdigest(), n_cases=3, created_at=version.created_at,
        created_by="rita", note="first cut", provenance={"made_by": "freeze"})
    # Ordered by case id, each line the case with the version stamped into its provenance.
    assert text == "".join(stamped(c, "regression-v1") + "\n"
                           for c in (gold("a#t2", customer="C-7"), gold("b#t2"), gold("c#t2", customer="C-9")))
    assert gstore.list_versions() == [version]
    assert gstore.get_version("regression-v1") == version
    assert gstore.version_case("regression-v1", "b#t2", actor="root").provenance.gold_version == "regression-v1"
    assert gstore.freeze("rolling", actor="root").id == "rolling-v1"


def test_a_frozen_version_never_changes_while_the_gold_set_moves_on(gstore: Store) -> None:
    gstore.freeze("regression", actor="rita")
    before = export(gstore, "regression-v1")
    fixed = gold("b#t2", customer="C-1042-X")
    v2 = gstore.derive_version("regression-v1", [fixed], actor="rita", note="fix b",
                               provenance={"reason": "typo"})
    assert export(gstore, "regression-v1") == before  # byte for byte
    assert gstore.get_version("regression-v1").content_hash == hashlib.sha256(before.encode()).hexdigest()
    assert gstore.diff_versions("regression-v1", "regression-v2") == VersionDiff(
        "regression-v1", "regression-v2", added=(), removed=(), changed=("b#t2",))
    # The derived version is the parent with the change, and so is the live gold set.
    assert v2.parent == "regression-v1" and v2.n_cases == 3
    assert v2.provenance == {"made_by": "derive", "reason": "typo"}
    assert gstore.get_gold("b#t2") == fixed
    assert gstore.version_case("regression-v2", "b#t2", actor="rita").expected == fixed.expected
    # The live set now equals v2: freezing again has nothing to add.
    with pytest.raises(StoreError, match="nothing changed since regression-v2"):
        gstore.freeze("regression", actor="rita")


def test_versions_share_the_rows_of_unchanged_cases(gstore: Store) -> None:
    gstore.freeze("regression", actor="rita")
    gstore.derive_version("regression-v1", [gold("b#t2", customer="C-2")], actor="rita", note="",
                          provenance={})
    assert len(gstore.dump()["gold_blobs"]) == 4  # three frozen once, plus the changed one


def test_derive_adds_new_cases_and_leaves_a_live_case_edited_since_alone(gstore: Store) -> None:
    gstore.freeze("regression", actor="rita")
    gstore.derive_version("regression-v1", [gold("b#t2", customer="C-2")], actor="rita", note="", provenance={})
    # Deriving from v1 again: b#t2 changed live since v1, so the live case keeps the newer edit.
    v3 = gstore.derive_version("regression-v1", [gold("b#t2", customer="C-3"), gold("e#t2")], actor="root",
                               note="", provenance={"judge_verdict": "gold_wrong"})
    assert v3.id == "regression-v3" and v3.n_cases == 4
    assert v3.provenance == {"made_by": "derive", "judge_verdict": "gold_wrong", "live_not_updated": ["b#t2"]}
    assert gstore.get_gold("b#t2").expected.calls[0].arguments == {"customer": "C-2"}
    assert gstore.get_gold("e#t2") == gold("e#t2")
    assert gstore.diff_versions("regression-v2", "regression-v3") == VersionDiff(
        "regression-v2", "regression-v3", added=("e#t2",), removed=(), changed=("b#t2",))


@pytest.mark.parametrize(("changed", "message"), [
    ([], "at least one changed case"),
    ([gold("b#t2", split="rolling")], "not in the regression split"),
    ([gold("b#t2")], "nothing to derive"),
])
def test_derive_refuses_what_would_not_be_a_new_version(gstore: Store, changed: list[GoldCase],
                                                        message: str) -> None:
    gstore.freeze("regression", actor="rita")
    before = gstore.dump()
    with pytest.raises(StoreError, match=message):
        gstore.derive_version("regression-v1", changed, actor="rita", note="", provenance={})
    assert gstore.dump() == before


def test_freeze_refuses_an_empty_split_and_unknown_names(gstore: Store) -> None:
    put(gstore, gold("z#t2", split="rolling", status="submitted"))
    with pytest.raises(StoreError, match="unknown split 'nightly'"):
        gstore.freeze("nightly", actor="rita")
    with pytest.raises(StoreError, match="no gold version 'regression-v9'"):
        gstore.get_version("regression-v9")
    with pytest.raises(StoreError, match="no gold version"):
        gstore.diff_versions("regression-v1", "regression-v2")


def test_an_empty_split_cannot_be_frozen(any_store: Store) -> None:
    people(any_store)
    with pytest.raises(StoreError, match="no approved regression gold cases to freeze"):
        any_store.freeze("regression", actor="rita")


@pytest.mark.parametrize("action", ["freeze", "derive", "export", "read_case", "note_export"])
def test_an_annotator_cannot_freeze_derive_or_export_a_version(gstore: Store, action: str) -> None:
    gstore.freeze("regression", actor="rita")
    before = gstore.dump()
    run = {
        "freeze": lambda: gstore.freeze("regression", actor="ann"),
        "derive": lambda: gstore.derive_version("regression-v1", [gold("b#t2", customer="X")], actor="ann",
                                                note="", provenance={}),
        "export": lambda: list(gstore.iter_version_lines("regression-v1", actor="ann")),
        "read_case": lambda: gstore.version_case("regression-v1", "b#t2", actor="ann"),
        "note_export": lambda: gstore.note_export("regression-v1", actor="ann", target="x.jsonl"),
    }[action]
    with pytest.raises(PermissionDenied, match=r"only a reviewer or admin can .* \('ann' is annotator\)"):
        run()
    with pytest.raises(PermissionDenied, match="'nobody' is not an active user"):
        gstore.freeze("regression", actor="nobody")
    assert gstore.dump() == before


def test_freezing_deriving_and_exporting_are_audited(gstore: Store) -> None:
    gstore.freeze("regression", actor="rita", note="baseline for Q3")
    gstore.derive_version("regression-v1", [gold("b#t2", customer="C-2")], actor="root", note="judge",
                          provenance={"run": "run-5"})
    gstore.note_export("regression-v2", actor="rita", target="gold.jsonl")
    events = [e for e in audit_events(gstore) if e["entity"] == "gold_version"]
    assert [(e["actor"], e["action"], e["entity_id"], e["note"]) for e in events] == [
        ("rita", "version.create", "regression-v1", "baseline for Q3"),
        ("root", "version.create", "regression-v2", "judge"),
        ("rita", "version.export", "regression-v2", None),
    ]
    v2 = gstore.get_version("regression-v2")
    assert json.loads(events[1]["after"]) == {"split": "regression", "parent": "regression-v1",
                                              "content_hash": v2.content_hash, "n_cases": 3,
                                              "provenance": {"made_by": "derive", "run": "run-5"}}
    live = [e for e in audit_events(gstore, "b#t2") if e["action"] == "gold.derive"]
    assert len(live) == 1 and live[0]["actor"] == "root"


def test_an_export_that_no_longer_matches_its_hash_fails_loudly(store: Store) -> None:
    from sqlalchemy import text

    people(store)
    put(store, gold("a#t2"))
    store.freeze("regression", actor="rita")
    with store.engine.begin() as conn:  # tampering behind the store's back
        conn.execute(text("UPDATE gold_blobs SET body = replace(body, 'C-1042', 'C-9999')"))
    with pytest.raises(StoreError, match="does not match its content hash"):
        list(store.iter_version_lines("regression-v1", actor="rita"))


def test_a_judge_mismatch_goes_into_the_review_queue_once(gstore: Store) -> None:
    payload = {"version": "regression-v1", "run": "run-1", "verdict": "gold_wrong",
               "actual": [{"name": "search_orders", "arguments": {"customer": "c-1042"}}]}
    first = gstore.enqueue_review("judge_mismatch", "b#t2", payload)
    again = gstore.enqueue_review("judge_mismatch", "b#t2", payload)
    assert again == first
    assert (first.kind, first.ref, first.status, first.payload, first.created_by) == (
        "judge_mismatch", "b#t2", "open", payload, "judge")
    with pytest.raises(StoreError, match="unknown review kind 'hunch'"):
        gstore.enqueue_review("hunch", "b#t2")
    with pytest.raises(StoreError, match="no gold case 'zz'"):
        gstore.enqueue_review("judge_mismatch", "zz")
    assert [e["action"] for e in audit_events(gstore, "b#t2")] == ["review.enqueue"]
    assert Answer(behavior="call", calls=(Call(name="x"),))  # the payload may carry any JSON
