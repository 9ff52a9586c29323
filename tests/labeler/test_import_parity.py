"""An import stores exactly the rows it stored before it was sped up (orjson canonical JSON, the fast depth
check): the same ids, bodies, content hashes, tools, turns and tags, digest for digest, as the golden dump
written by the code of commit 3dc0936 (``python -m tests.labeler.import_golden``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.labeler.import_golden import REPO, digests, import_inputs

GOLDEN = REPO / "tests" / "data" / "golden" / "import_rows.json"


def test_the_stored_rows_are_the_golden_dumps(tmp_path: Path) -> None:
    db = tmp_path / "parity.db"
    import_inputs(db)
    assert digests(db) == json.loads(GOLDEN.read_text())
