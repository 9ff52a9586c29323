"""Every reader of stored gold cases gives back exactly what it gave before the bodies moved into their own table
(revision 0005, ``gold_bodies``): the export's bytes (every selection), the streamed lines, the cases as domain
types one by one and all together, the coverage, a frozen version's lines, and a case rewritten and one
withdrawn by the one gold writer (``common.put_gold`` / ``withdraw_gold``), digest for digest, as the golden dump
written by the code of commit 3bc20e6 (``python -m tests.labeler.test_gold_parity``)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from labeler.store import Store
from labeler.store.common import put_gold, withdraw_gold
from tests.labeler.import_golden import REPO, import_inputs

GOLDEN = REPO / "tests" / "data" / "golden" / "gold_readers.json"
SELECTIONS = {"all": {}, "rolling": {"split": "rolling"}, "submitted": {"status": "submitted"},
              "bfcl": {"tag": "bfcl"}, "rolling bfcl": {"split": "rolling", "tag": "bfcl"}}


def _digest(parts: list[bytes]) -> list[object]:
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return [len(parts), h.hexdigest()]


def _readers(store: Store) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for name, selection in SELECTIONS.items():
        out[f"export:{name}"] = _digest([block for _, block in store.iter_gold_blocks(**selection)])
        out[f"lines:{name}"] = _digest([line.encode("utf-8") + b"\n" for line in store.iter_gold_lines(**selection)])
    cases = store.gold_cases()
    out["gold_cases"] = _digest([case.model_dump_json().encode("utf-8") for case in cases])
    out["get_gold"] = _digest([store.get_gold(case.id).model_dump_json().encode("utf-8") for case in cases])
    out["count"] = [store.count_gold(), store.count_gold(split="regression")]
    out["coverage"] = _digest([repr(store.coverage()).encode("utf-8")])
    return out


def gold_digests(db_file: Path) -> dict[str, list[object]]:
    import_inputs(db_file)
    store = Store(db_file)
    try:
        out = {f"imported {k}": v for k, v in _readers(store).items()}
        store.add_user("rev", "reviewer")
        version = store.freeze("regression", actor="rev")
        out["version lines"] = _digest([line.encode("utf-8") + b"\n"
                                        for line in store.iter_version_lines(version.id, actor="rev")])
        cases = store.gold_cases()
        with store.write() as conn:
            for n, case in enumerate(cases[:40:3]):  # other splits, statuses and tags for the selections
                changed = case.model_copy(update={
                    "split": "rolling" if n % 2 else case.split, "tags": (*case.tags, "parity_edit"),
                    "provenance": case.provenance.model_copy(update={"status": "submitted" if n % 3 else "approved"})})
                put_gold(conn, changed, actor="rev", action="gold.edit")
                put_gold(conn, changed, actor="rev", action="gold.edit")  # the same again: nothing changes
            for case in cases[1:40:7]:
                withdraw_gold(conn, case.id, actor="rev", note="parity")
        out.update({f"rewritten {k}": v for k, v in _readers(store).items()})
        return out
    finally:
        store.close()


def test_every_reader_of_stored_gold_gives_back_the_golden_digests(tmp_path: Path) -> None:
    assert gold_digests(tmp_path / "parity.db") == json.loads(GOLDEN.read_text())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else GOLDEN
    db = target.with_suffix(".db")
    db.unlink(missing_ok=True)
    target.write_text(json.dumps(gold_digests(db), indent=1) + "\n")
    db.unlink(missing_ok=True)
