"""Deciding a judge item is one transaction (SQLite and PostgreSQL): two reviewers accepting the same item at once
give one decision and one new version; the refused one creates nothing."""

from __future__ import annotations

import threading

import pytest

from labeler.store import Store, StoreError
from tests.judge.kit import orders_case, seeded, shoes_case
from tests.judge.test_store_judge import queued_item


@pytest.fixture
def js(any_store: Store) -> Store:
    seeded(any_store, shoes_case(), orders_case())
    return any_store


def test_two_reviewers_accepting_one_item_at_once_make_one_version(js: Store) -> None:
    item_id = queued_item(js)
    stores = [Store(js.url), Store(js.url)]
    barrier = threading.Barrier(2)
    made, refused = [], []

    def decide(i: int, who: str) -> None:
        barrier.wait()
        try:
            made.append(stores[i].adjudicate(item_id, "accept_alternative", actor=who, note=f"{who} says fine"))
        except StoreError as exc:
            refused.append(str(exc))

    threads = [threading.Thread(target=decide, args=(i, who)) for i, who in enumerate(("rita", "root"))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for s in stores:
        s.close()
    assert len(made) == 1 and len(refused) == 1, (made, refused)
    assert "already decided" in refused[0]
    assert sorted(v.id for v in js.list_versions()) == ["regression-v1", "regression-v2"]
    assert js.judge_adjudications() == made
    [resolved] = js.adjudication_queue(actor="rita", include_resolved=True)
    assert resolved.payload["new_version"] == made[0].new_version == "regression-v2"


def test_a_refused_decision_creates_no_version(js: Store) -> None:
    item_id = queued_item(js)
    js.adjudicate(item_id, "confirm_defect", actor="rita")
    with pytest.raises(StoreError, match="already decided"):
        js.adjudicate(item_id, "accept_alternative", actor="root")
    assert [v.id for v in js.list_versions()] == ["regression-v1"]
