"""Many writers on overlapping turns, on SQLite and PostgreSQL: no lost update, no "database is locked"
reaching a user, an audit event for every attempt, and never two leases for one transcript."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from labeler.labels import LabelBody
from labeler.store import ConflictError, Store, label_key
from tests.labeler.test_label_store import LOOKUP, TAU, seed
from tests.store_reads import active_lease, audit_events

THREADS = 8
SAVES_PER_THREAD = 500
TURNS = (2, 4, 6, 8)  # the four decision points of the seeded tau-bench transcript
ANNOTATORS = ("ann", "bob")


@pytest.fixture
def crowded(any_store: Store) -> Store:
    return seed(any_store)


def test_eight_writers_lose_no_update_and_every_attempt_is_audited(crowded: Store) -> None:
    landed: Counter[tuple[int, str]] = Counter()
    refused: Counter[tuple[int, str]] = Counter()
    errors: list[BaseException] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        for i in range(SAVES_PER_THREAD):
            turn = TURNS[(worker + i) % len(TURNS)]
            who = ANNOTATORS[(worker // 2 + i) % len(ANNOTATORS)]
            try:
                current = crowded.get_label(TAU, turn, who)
                body = LabelBody(decision="same", calls=(LOOKUP,), rationale=f"w{worker} #{i}")
                crowded.save_label(TAU, turn, who, body, version=current.version if current else 0)
            except ConflictError:
                with lock:
                    refused[(turn, who)] += 1
            except BaseException as exc:  # anything else (e.g. "database is locked") is a failure
                errors.append(exc)
                return
            else:
                with lock:
                    landed[(turn, who)] += 1

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(writer, range(THREADS)))

    assert errors == []
    assert sum(landed.values()) + sum(refused.values()) == THREADS * SAVES_PER_THREAD
    for turn in TURNS:
        for who in ANNOTATORS:
            label = crowded.get_label(TAU, turn, who)
            # Every save that landed bumped the version by one: none was silently overwritten.
            assert label is not None and label.version == landed[(turn, who)]
            key = label_key(TAU, turn, who)
            actions = Counter(e["action"] for e in audit_events(crowded, key) if e["entity"] == "label")
            assert actions["label.save"] == landed[(turn, who)]
            assert actions["label.conflict"] == refused[(turn, who)]
    assert sum(refused.values()) > 0, "the writers never overlapped; the test proves nothing"


def test_concurrent_claims_never_lease_one_transcript_twice(crowded: Store, tmp_path: Path) -> None:
    names = [f"annot{i}" for i in range(THREADS)]
    for name in names:
        crowded.add_user(name, "annotator", actor="root")
    barrier = threading.Barrier(THREADS)

    def claim(name: str) -> str | None:
        barrier.wait()
        return crowded.claim_next(name)

    with ThreadPoolExecutor(THREADS) as pool:
        got = [x for x in pool.map(claim, names) if x is not None]
    assert len(got) == len(set(got)), f"a transcript was leased twice: {got}"
    holders = {active_lease(crowded, tid).holder for tid in got}  # type: ignore[union-attr]
    assert len(holders) == len(got)
