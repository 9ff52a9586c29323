"""The export's byte stream (``Store.iter_gold_blocks``): the same bytes as the canonical lines, on both backends
and whatever text encoding a SQLite file was created with; the held-out count that guards it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import ImportItem, PermissionDenied, Store
from labeler.store.gold import EXPORT_BLOCK_BYTES
from scorer.model import GoldCase
from tests.labeler.test_store import gold


def cases() -> list[GoldCase]:
    """Non-ASCII text (stored as UTF-8, 2-4 bytes a character) in every case, some long enough to span blocks."""
    out = []
    for i in range(40):
        case = gold(f"g{i:02d}", split="rolling" if i % 3 == 0 else "regression",
                    tags=("near_duplicate_tools",) if i % 4 == 0 else ("happy_path",))
        text = f"Zürich → 東京 {'✓' * (i * 2_000)} 🚆 {i}"
        out.append(case.model_copy(update={"messages": (case.messages[0].model_copy(update={"content": text}),
                                                        *case.messages[1:])}))
    return out


def lines_as_bytes(store: Store, **selection: str) -> bytes:
    return "".join(line + "\n" for line in store.iter_gold_lines(**selection)).encode("utf-8")


@pytest.mark.parametrize("selection", [{}, {"split": "rolling"}, {"tag": "near_duplicate_tools"},
                                       {"status": "draft"}])
def test_the_blocks_are_the_canonical_lines_byte_for_byte(any_store: Store, selection: dict[str, str]) -> None:
    any_store.import_items([ImportItem(c, "g.jsonl", i) for i, c in enumerate(cases(), 1)])
    blocks = list(any_store.iter_gold_blocks(**selection))
    assert b"".join(block for _, block in blocks) == lines_as_bytes(any_store, **selection)
    assert sum(n for n, _ in blocks) == any_store.count_gold(**selection)
    assert all(block.count(b"\n") == n for n, block in blocks)
    if not selection:  # ~3 MB of cases: several blocks, each about EXPORT_BLOCK_BYTES
        assert len(blocks) > 1 and all(len(block) < 2 * EXPORT_BLOCK_BYTES for _, block in blocks)


def test_a_sqlite_file_created_in_utf16_exports_the_same_utf8_bytes(tmp_path: Path) -> None:
    utf8, utf16 = tmp_path / "utf8.db", tmp_path / "utf16.db"
    con = sqlite3.connect(utf16)
    con.execute("PRAGMA encoding = 'UTF-16le'")
    con.execute("CREATE TABLE first_table_fixes_the_encoding (x)")
    con.commit()
    con.close()
    first = Store(utf8)
    first.import_items([ImportItem(c, "g.jsonl", i) for i, c in enumerate(cases(), 1)])
    Store(utf16).close()  # migrated; the rows are copied in by sqlite3 (an import stages in a UTF-8 file)
    with sqlite3.connect(utf8) as source, sqlite3.connect(utf16) as target:
        for table in ("gold_bodies", "gold_cases"):
            rows = source.execute(f"SELECT * FROM {table}").fetchall()
            target.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    second = Store(utf16)
    with second.read() as conn:
        assert conn.exec_driver_sql("PRAGMA encoding").scalar() == "UTF-16le"
    for store in (first, second):
        assert b"".join(block for _, block in store.iter_gold_blocks()) == lines_as_bytes(first)
        store.close()


def test_the_held_out_set_is_counted_inside_any_selection(store: Store, tmp_path: Path) -> None:
    store.import_items([ImportItem(c, "g.jsonl", i) for i, c in enumerate(cases(), 1)])
    store.add_user("ana", "admin")
    store.add_user("ann", "annotator", actor="ana")
    assert store.authorize_gold_export(split="rolling", actor=None, target="x") == 14  # no held-out case
    with pytest.raises(PermissionDenied, match="holds 26 approved regression cases"):
        store.authorize_gold_export(actor=None, target="x")
    with pytest.raises(PermissionDenied, match="holds 6 approved regression cases"):
        store.authorize_gold_export(tag="near_duplicate_tools", actor=None, target="x")
    with pytest.raises(PermissionDenied):
        store.authorize_gold_export(actor="ann", target="x")
    assert store.authorize_gold_export(actor="ana", target="x") == 40
    out = tmp_path / "all.jsonl"
    done = CliRunner().invoke(cli, ["export", "--user", "ana", "-o", str(out)], catch_exceptions=False)
    assert done.exit_code == 0, done.stderr
    assert out.read_bytes() == lines_as_bytes(store)
