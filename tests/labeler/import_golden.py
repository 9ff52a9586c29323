"""The rows an import stores, as one digest per table (timestamps left out): the golden dump that
tests/labeler/test_import_parity.py compares with, written by ``python -m tests.labeler.import_golden OUT``
from the code before the import was sped up (commit 3dc0936) and checked in as tests/data/golden/."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path

from labeler.store import ImportItem, Store
from scorer import importers
from scorer.importers.base import Converted, ImportOptions
from scorer.model import ToolSpec

REPO = Path(__file__).resolve().parents[2]
INPUTS = [*sorted((REPO / "data" / "demo").glob("*.jsonl")), REPO / "tests" / "data" / "app" / "tau_airline.jsonl",
          *sorted(p for p in (REPO / "tests" / "data" / "real").rglob("*") if p.suffix in (".json", ".jsonl"))]
TABLES = {
    "transcripts": "SELECT t.id, external_id, source, content_hash, title, b.body, n_messages, n_turns, n_tool_calls, "
                   "started_at FROM transcripts AS t JOIN transcript_bodies AS b ON b.id = t.body_id ORDER BY t.id",
    "transcript_tools": "SELECT t.id, m.position, m.schema_hash FROM transcripts AS t "
                        "JOIN tool_set_tools AS m ON m.tool_set_id = t.tool_set_id ORDER BY t.id, m.position",
    "tool_schemas": "SELECT hash, name, body FROM tool_schemas ORDER BY hash",
    "turns": "SELECT transcript_id, ordinal, message_index, observed, observed_behavior, n_calls FROM turns "
             "ORDER BY transcript_id, ordinal",
    "gold_cases": "SELECT g.id, conversation_id, turn, split, kind, status, behavior, tags, source, b.body, "
                  "content_hash FROM gold_cases AS g JOIN gold_bodies AS b ON b.id = g.body_id ORDER BY g.id",
    "gold_case_tags": "SELECT case_id, tag FROM gold_case_tags ORDER BY case_id, tag",
}


def import_inputs(db_file: Path) -> None:
    store = Store(db_file)
    store.migrate()
    options = ImportOptions(tools=(ToolSpec(name="lookup", description="placeholder"),))
    for path in INPUTS:
        try:
            converted = list(importers.convert(path, None, options))
        except Exception:  # a file no importer reads (a task list): not an input
            continue
        store.import_items([ImportItem(c.record, str(path.relative_to(REPO)), c.line) for c in converted
                            if isinstance(c, Converted)])


def digests(db_file: Path) -> dict[str, list[object]]:
    conn = sqlite3.connect(db_file)
    out: dict[str, list[object]] = {}
    for table, query in TABLES.items():
        h = hashlib.sha256()
        n = 0
        for row in conn.execute(query):
            h.update(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
            n += 1
        out[table] = [n, h.hexdigest()]
    conn.close()
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1])
    db = target.with_suffix(".db")
    db.unlink(missing_ok=True)
    import_inputs(db)
    target.write_text(json.dumps(digests(db), indent=1) + "\n")
