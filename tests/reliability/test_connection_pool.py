"""Connection-pool exhaustion, on SQLite and PostgreSQL: 32 annotators pressing "Next transcript" at once
all get a transcript, none the same, and nothing stalls. The pool holds 15 connections (SQLAlchemy's
default 5 + 10 overflow): a claim that held its transaction's connection while taking a second one to read
a setting deadlocked once 15 claims waited for their second connection, and failed after the pool timeout.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from labeler.store import ImportItem, QueueFilter, Store, StoreError
from scorer.model import Message, Transcript

CLAIMS = 32


def transcripts(n: int) -> list[ImportItem]:
    return [ImportItem(Transcript(id=f"t{i:02d}", messages=(Message(role="user", content=f"question {i}"),)),
                       "pool.jsonl", i + 1) for i in range(n)]


@pytest.fixture
def busy(any_store: Store) -> Store:
    any_store.import_items(transcripts(CLAIMS + 8))
    any_store.add_user("root", "admin")
    for i in range(CLAIMS):
        any_store.add_user(f"annot{i:02d}", "annotator", actor="root")
    return any_store


def test_32_concurrent_claims_each_get_a_transcript_without_exhausting_the_pool(busy: Store) -> None:
    barrier = threading.Barrier(CLAIMS)

    def claim(i: int) -> str | None:
        barrier.wait()
        return busy.claim_next(f"annot{i:02d}")

    started = time.monotonic()
    with ThreadPoolExecutor(CLAIMS) as pool:
        got = list(pool.map(claim, range(CLAIMS)))
    elapsed = time.monotonic() - started
    assert None not in got, got
    assert len(set(got)) == CLAIMS, f"a transcript was leased twice: {sorted(got)}"  # type: ignore[arg-type]
    # A claim that waited for the pool fails after its 30 s timeout; a healthy one takes milliseconds.
    assert elapsed < 25, f"32 claims took {elapsed:.1f} s: they queued for connections"


def test_32_concurrent_queue_reads_do_not_exhaust_the_pool(busy: Store) -> None:
    barrier = threading.Barrier(CLAIMS)

    def read(i: int) -> int:
        barrier.wait()
        return len(busy.queue(f"annot{i:02d}", QueueFilter(status="unlabeled")))

    with ThreadPoolExecutor(CLAIMS) as pool:
        assert list(pool.map(read, range(CLAIMS))) == [CLAIMS + 8] * CLAIMS


def test_a_transaction_opened_inside_another_on_the_same_thread_is_refused(busy: Store) -> None:
    with busy.read(), pytest.raises(StoreError, match="inside another"), busy.write():
        pass
