"""Races that only PostgreSQL lets happen (SQLite's BEGIN IMMEDIATE serializes writers): several imports of
the same content at once, imports of different files that share a tool schema new to the store, and several
servers starting on one fresh database. Each must end as if they had run one after the other: the content
once, "already present" for the rest, never an IntegrityError."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from sqlalchemy import create_engine, text

from labeler.store import ImportItem, ImportResult, Store, head_revision
from scorer.model import Message, ToolCallRef, ToolSpec, Transcript

pytestmark = pytest.mark.postgres
WORKERS = 6
T = TypeVar("T")
NEW_TOOL = ToolSpec(name="refund_order", description="Refund an order",
                    parameters={"type": "object", "properties": {"order_id": {"type": "string"}}})


def transcript(tid: str) -> Transcript:
    return Transcript(
        id=tid,
        messages=(Message(role="user", content=f"Refund my order, {tid}."),
                  Message(role="assistant", tool_calls=(ToolCallRef(
                      id="c1", function={"name": "refund_order", "arguments": '{"order_id": "O-1"}'}),))),
        tools=(NEW_TOOL,))


def at_once(n: int, work: Callable[[int], T]) -> list[T]:
    """``work(0)`` … ``work(n - 1)`` on n threads released together; the first exception is raised."""
    barrier = threading.Barrier(n)

    def run(i: int) -> T:
        barrier.wait()
        return work(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


@pytest.fixture
def servers(postgres_url: str) -> Iterator[list[Store]]:
    """One store per "server", each with its own engine and pool."""
    Store(postgres_url).close()
    stores = [Store(postgres_url) for _ in range(WORKERS)]
    yield stores
    for store in stores:
        store.close()


def test_the_same_file_imported_by_several_servers_at_once_is_added_once(servers: list[Store]) -> None:
    items = [ImportItem(transcript(f"t{i}"), "same.jsonl", i + 1) for i in range(20)]
    results: list[ImportResult] = at_once(WORKERS, lambda i: servers[i].import_items(items))
    assert sorted(r.transcripts_added for r in results) == [0] * (WORKERS - 1) + [20]
    assert all("20 already present" in r.summary for r in results if r.transcripts_added == 0)
    assert servers[0].stats()["transcripts"] == 20


def test_files_sharing_a_new_tool_schema_imported_at_once_all_land(servers: list[Store]) -> None:
    results = at_once(WORKERS, lambda i: servers[i].import_items(
        [ImportItem(transcript(f"file{i}-t{j}"), f"file{i}.jsonl", j + 1) for j in range(5)]))
    assert [r.transcripts_added for r in results] == [5] * WORKERS
    assert servers[0].stats() == {"transcripts": 5 * WORKERS, "turns": 5 * WORKERS, "gold_cases": 0,
                                  "tool_schemas": 1}


@pytest.mark.timeout(120)  # without the advisory lock the servers' DDL waits on each other indefinitely
def test_several_servers_starting_on_a_fresh_database_migrate_it_once(postgres_url: str) -> None:
    stores = at_once(WORKERS, lambda i: Store(postgres_url))
    try:
        assert {s.schema_version() for s in stores} == {head_revision()}
        engine = create_engine(postgres_url)
        with engine.connect() as conn:
            assert conn.scalar(text("SELECT count(*) FROM alembic_version")) == 1
            assert conn.scalar(text("SELECT count(*) FROM tag_vocabulary")) == 11
        engine.dispose()
    finally:
        for s in stores:
            s.close()
