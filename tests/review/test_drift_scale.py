"""The drift check at scale (issue 15): after an import that brings a new tool schema, ``check_schema_drift`` looks
at every gold case in the store. With 20,000 gold cases that was 11.8 s, under the write lock the whole time (no
annotator could save), with every body in memory at once (250 MB), most of it spent hashing the same few tool
lists once per case and asking the database, case by case, for relabel rows that are not there. It now reads the
cases without the lock, a batch at a time, hashes each tool list once, and takes the lock only to write what
changed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from labeler.store import ImportItem, Store
from labeler.store import drift as store_drift
from labeler.store.engine import Database
from scorer.model import Call
from tests.review.kit import REFUND, gold, people, put, transcript
from tests.review.test_drift import RENAMED


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The write transactions opened from now on (their callers' names)."""
    opened: list[str] = []
    real = Database.write

    @contextlib.contextmanager
    def counted(self: Database) -> Iterator[Any]:
        import inspect

        opened.append(inspect.stack()[2].function)
        with real(self) as conn:
            yield conn

    monkeypatch.setattr(Database, "write", counted)
    return opened


def _store(any_store: Store, cases: int) -> Store:
    people(any_store)
    put(any_store, transcript("t1"), *(gold(f"c{n}#t2") for n in range(cases)),
        gold("r#t2", expected=gold("x").expected.model_copy(update={
            "calls": (Call(name="refund_order", arguments={"order_id": "O-7"}),)})))
    return any_store


def test_a_check_with_nothing_to_change_takes_no_write_lock(any_store: Store, writes: list[str]) -> None:
    ds = _store(any_store, 30)
    assert ds.check_schema_drift() == []
    put(ds, transcript("t9", tools=(RENAMED, REFUND)))  # the tools moved on: 30 cases use the renamed parameter
    writes.clear()
    stale = ds.check_schema_drift()
    assert sorted(s.case_id for s in stale) == sorted(f"c{n}#t2" for n in range(30))
    assert writes == ["check_schema_drift"]  # one write transaction: the 30 flags
    assert len(ds.relabel_queue(actor="rita")) == 30
    writes.clear()
    assert ds.check_schema_drift() == stale  # the same verdicts, flagged already: nothing to write
    assert writes == []
    assert len(ds.relabel_queue(actor="rita")) == 30


def test_each_tool_list_is_hashed_once_a_check(any_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _store(any_store, 40)
    put(ds, transcript("t9", tools=(RENAMED, REFUND)))
    hashed: list[int] = []
    real = store_drift.canonical.content_hash

    def counted(value: Any) -> str:
        hashed.append(len(value))
        return real(value)

    monkeypatch.setattr(store_drift.canonical, "content_hash", counted)
    assert len(ds.check_schema_drift()) == 40
    assert len(hashed) <= 2  # one tool list for every case (and none for the case that fits)


def test_a_case_edited_between_the_read_and_the_write_is_left_to_the_next_check(
        any_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _store(any_store, 3)
    put(ds, transcript("t9", tools=(RENAMED, REFUND)))
    real = Database.write

    @contextlib.contextmanager
    def edited_first(self: Database) -> Iterator[Any]:
        monkeypatch.setattr(Database, "write", real)
        with real(self) as conn:  # an edit lands after the check read the cases, before it writes
            conn.exec_driver_sql("UPDATE gold_cases SET content_hash = 'edited' WHERE id = 'c1#t2'")
        with real(self) as conn:
            yield conn

    monkeypatch.setattr(Database, "write", edited_first)
    stale = ds.check_schema_drift()
    assert sorted(s.case_id for s in stale) == ["c0#t2", "c1#t2", "c2#t2"]  # what the cases were when read
    assert sorted(item.case_id for item in ds.relabel_queue(actor="rita")) == ["c0#t2", "c2#t2"]
    assert sorted(s.case_id for s in ds.check_schema_drift()) == ["c0#t2", "c1#t2", "c2#t2"]
    assert sorted(item.case_id for item in ds.relabel_queue(actor="rita")) == ["c0#t2", "c1#t2", "c2#t2"]


def test_many_flags_are_written_a_batch_per_transaction(any_store: Store, writes: list[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A renamed parameter that 100,000 cases use flags them all: one transaction for all of them held the write
    # lock for as long as writing 100,000 flags and audit events takes. Saves get the lock between batches.
    ds = _store(any_store, 25)
    put(ds, transcript("t9", tools=(RENAMED, REFUND)))
    monkeypatch.setattr(store_drift, "DRIFT_BATCH", 10)
    writes.clear()
    stale = ds.check_schema_drift()
    assert len(stale) == 25
    assert writes == ["check_schema_drift"] * 3
    assert sorted(item.case_id for item in ds.relabel_queue(actor="rita")) == sorted(s.case_id for s in stale)


def test_the_tool_list_hashes_a_check_keeps_are_bounded() -> None:
    # BFCL-like stores give every case tools of its own: the memo must not keep every case's tools.
    hashes = store_drift._ToolsHashes()
    lists = [[REFUND.model_copy(update={"description": f"Refund {n}"})] for n in range(store_drift.TOOLS_HASHES + 50)]
    digests = [hashes(tools) for tools in lists]
    assert len(set(digests)) == len(lists)  # each list's own hash
    assert len(hashes) <= store_drift.TOOLS_HASHES
    assert hashes(lists[-1]) == digests[-1]


# -- an import checks the gold it could have changed, not the whole store ------------------------------------


@pytest.fixture
def read_cases(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The gold cases each drift check reads from now on (their ids)."""
    seen: list[str] = []
    real = store_drift._case

    def counted(body: str) -> Any:
        case = real(body)
        seen.append(case.id)
        return case

    monkeypatch.setattr(store_drift, "_case", counted)
    return seen


def _mixed_store(any_store: Store) -> Store:
    """t1 and t2 (source ``unit``) with a case each; ``lost#t2`` (source ``unit``) and ``far#t2`` (source
    ``elsewhere``), whose conversations are not in the store: each is checked against its source's newest tools."""
    people(any_store)
    far = gold("far#t2")
    put(any_store, transcript("t1"), transcript("t2"), gold("t1#t2"), gold("t2#t2"), gold("lost#t2"),
        far.model_copy(update={"provenance": far.provenance.model_copy(update={"source": "elsewhere"})}))
    return any_store


def test_an_import_checks_only_the_gold_it_could_change(any_store: Store, read_cases: list[str],
                                                       writes: list[str]) -> None:
    ds = _mixed_store(any_store)
    # t1 again, its search_orders now taking customer_id; and a new transcript t3 of source unit, whose newer
    # schemas are what lost#t2 is checked against.
    result = ds.import_items([ImportItem(transcript("t1", tools=(RENAMED, REFUND)), "again.jsonl", 1),
                              ImportItem(transcript("t3", tools=(RENAMED, REFUND)), "again.jsonl", 2)])
    assert result.drift_scope() == {"cases": set(), "conversations": {"t1", "t3"}}
    read_cases.clear()
    scoped = ds.check_schema_drift(**result.drift_scope())
    # t1#t2 (its own transcript changed) and lost#t2 (its source's tools changed): not t2#t2 nor far#t2.
    assert sorted(read_cases) == ["lost#t2", "t1#t2"]
    assert sorted(s.case_id for s in scoped) == ["lost#t2", "t1#t2"]
    read_cases.clear()
    writes.clear()
    everything = ds.check_schema_drift()  # what a whole check finds: the same, and already flagged
    assert sorted(read_cases) == ["far#t2", "lost#t2", "t1#t2", "t2#t2"]
    assert sorted(s.case_id for s in everything) == ["lost#t2", "t1#t2"] and writes == []


def test_gold_an_import_adds_is_in_its_scope(any_store: Store, read_cases: list[str]) -> None:
    ds = _mixed_store(any_store)
    result = ds.import_items([ImportItem(gold("new#t2", tools=(RENAMED, REFUND)), "more.jsonl", 1)])
    assert result.drift_scope() == {"cases": {"new#t2"}, "conversations": set()}
    read_cases.clear()
    ds.check_schema_drift(**result.drift_scope())
    assert read_cases == ["new#t2"]


def test_a_large_import_is_checked_whole(any_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    from labeler.store import transcripts

    monkeypatch.setattr(transcripts, "DRIFT_SCOPE_MAX", 3)
    people(any_store)
    small = any_store.import_items([ImportItem(transcript(f"s{n}"), "a.jsonl", n) for n in range(3)])
    assert small.drift_scope() == {"cases": set(), "conversations": {"s0", "s1", "s2"}}
    large = any_store.import_items([ImportItem(transcript(f"l{n}"), "b.jsonl", n) for n in range(4)])
    assert large.drift_scope() == {}  # every case: the ids would cost more than they save


def test_a_scope_of_the_largest_size_is_read_a_chunk_at_a_time_on_either_database(any_store: Store) -> None:
    from sqlalchemy import select

    from labeler.store import tables
    from labeler.store.transcripts import DRIFT_SCOPE_MAX

    ds = _mixed_store(any_store)
    conversations = {f"c{n:06}" for n in range(DRIFT_SCOPE_MAX - 1)} | {"t1"}
    with ds.engine.connect() as conn:
        queries = store_drift._scoped(conn, select(tables.GoldCaseRow.id), set(), conversations)
        found = [case_id for query in queries for case_id in conn.scalars(query)]
    assert len(queries) == DRIFT_SCOPE_MAX // store_drift.SCOPE_CHUNK + 1  # the chunks, then the source's cases
    assert sorted(found) == ["lost#t2", "t1#t2"]  # labeled on t1; of t1's source, its conversation not stored


def test_a_scope_read_in_chunks_checks_each_case_once_and_flags_the_same(
        any_store: Store, read_cases: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _mixed_store(any_store)
    result = ds.import_items([ImportItem(transcript("t1", tools=(RENAMED, REFUND)), "again.jsonl", 1),
                              ImportItem(transcript("t3", tools=(RENAMED, REFUND)), "again.jsonl", 2),
                              ImportItem(gold("new#t2", tools=(RENAMED, REFUND)), "again.jsonl", 3)])
    monkeypatch.setattr(store_drift, "SCOPE_CHUNK", 1)
    read_cases.clear()
    stale = ds.check_schema_drift(**result.drift_scope())
    assert sorted(read_cases) == ["lost#t2", "new#t2", "t1#t2"]  # each once, though two queries name new#t2
    assert sorted(s.case_id for s in stale) == ["lost#t2", "t1#t2"]


def test_a_store_with_fewer_cases_than_the_scope_names_is_read_whole(any_store: Store,
                                                                    read_cases: list[str]) -> None:
    # Binding 10,000 ids takes longer than reading a few thousand cases: the same flags either way.
    ds = _mixed_store(any_store)
    ds.import_items([ImportItem(transcript("t1", tools=(RENAMED, REFUND)), "again.jsonl", 1)])
    read_cases.clear()
    stale = ds.check_schema_drift(cases=set(), conversations={"t1", "x", "y", "z"})
    assert sorted(read_cases) == ["far#t2", "lost#t2", "t1#t2", "t2#t2"]
    assert [s.case_id for s in stale] == ["t1#t2"]
    read_cases.clear()
    assert [s.case_id for s in ds.check_schema_drift(cases=set(), conversations={"t1"})] == ["t1#t2"]
    assert sorted(read_cases) == ["lost#t2", "t1#t2"]


def test_a_scoped_check_finds_its_cases_through_indexes_not_by_reading_every_case(store: Store) -> None:
    # Each of the scope's three kinds of case by an index (revision 0006 indexes the source): at 1,000,000
    # gold cases a scan made the check after a 6-trajectory import 2.1 s, against 0.7 s for the import itself.
    from sqlalchemy import select, text

    from labeler.store import tables

    put(store, transcript("t1"), gold("t1#t2"))
    with store.engine.connect() as conn:
        queries = store_drift._scoped(conn, select(tables.GoldCaseRow.id), {"g1#t2"}, {"t1"})
        assert len(queries) == 2  # the cases and conversations named; the unstored cases of t1's source
        for query in queries:
            sql = str(query.compile(conn, compile_kwargs={"literal_binds": True}))
            plan = [row[-1] for row in conn.execute(text(f"EXPLAIN QUERY PLAN {sql}"))]
            assert not [step for step in plan if step.startswith("SCAN gold_cases")], plan
