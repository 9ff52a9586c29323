"""A streaming import: the input is consumed before the write transaction, so converting it never holds the
lock other writers wait for, and a bad record anywhere still leaves nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from labeler.store import ImportItem, Store
from labeler.store.engine import CHUNK
from scorer.errors import InvalidRecord
from tests.labeler.test_store import gold, transcript


def test_other_writers_are_not_blocked_while_the_input_is_read(any_store: Store) -> None:
    other = Store(any_store.url)
    written = []

    def items() -> Iterator[ImportItem]:
        for n in range(3 * CHUNK):
            yield ImportItem(transcript(f"big-{n}"), "big.jsonl", n + 1)
            if n == 2 * CHUNK:  # well into the input: an annotator's write goes through at once
                written.append(other.import_items([ImportItem(transcript("saved-meanwhile"), "app", 1)]))
    result = any_store.import_items(items())
    assert result.transcripts_added == 3 * CHUNK
    assert written[0].transcripts_added == 1
    assert any_store.count_transcripts() == 3 * CHUNK + 1
    other.close()


def test_a_failure_late_in_a_long_input_writes_nothing(any_store: Store) -> None:
    before = any_store.dump()

    def items() -> Iterator[ImportItem]:
        for n in range(2 * CHUNK + 7):
            yield ImportItem(transcript(f"t{n}"), "in.jsonl", n + 1)
            yield ImportItem(gold(f"g{n}"), "in.jsonl", n + 1)
        raise InvalidRecord("not valid JSON", source="in.jsonl", line=99)
    with pytest.raises(InvalidRecord, match=r"in\.jsonl:99"):
        any_store.import_items(items())
    assert any_store.dump() == before


def test_a_conflict_in_a_late_chunk_writes_nothing(any_store: Store) -> None:
    any_store.import_items([ImportItem(transcript("taken"), "a.jsonl", 1)])
    before = any_store.dump()
    items = [ImportItem(transcript(f"t{n}"), "b.jsonl", n + 1) for n in range(2 * CHUNK)]
    items.append(ImportItem(transcript("taken", answer="Different"), "b.jsonl", 2 * CHUNK + 1))
    with pytest.raises(InvalidRecord, match=rf"b\.jsonl:{2 * CHUNK + 1}"):
        any_store.import_items(iter(items))
    assert any_store.dump() == before


def test_transcripts_and_gold_interleaved_in_the_input_all_arrive(any_store: Store, tmp_path: Path) -> None:
    items = [ImportItem(gold(f"g{n}") if n % 2 else transcript(f"t{n}"), "mix.jsonl", n + 1)
             for n in range(CHUNK + 3)]
    result = any_store.import_items(iter(items))
    assert (result.transcripts_added, result.gold_added) == ((CHUNK + 4) // 2, (CHUNK + 3) // 2)


def test_the_stage_file_is_written_in_large_pages_and_removed_after(tmp_path: Path) -> None:
    # 64 KiB pages: a transcript's ~30 KB body fits one page instead of a chain of eight overflow pages (about
    # half the stage write's CPU); the file is removed when the import ends.
    import sqlite3

    store = Store(tmp_path / "store.db")
    seen: list[tuple[object, ...]] = []

    def on_stage(path: Path, _store: Path) -> None:
        with sqlite3.connect(path) as con:
            seen.append(con.execute("PRAGMA page_size").fetchone())

    result = store.import_items([ImportItem(transcript("t1"), "in.jsonl", 1)], on_stage=on_stage)
    assert result.transcripts_added == 1
    assert seen == [(65536,)]
    assert not list(tmp_path.glob("*.stage"))
