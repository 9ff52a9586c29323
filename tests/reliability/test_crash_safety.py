"""SIGKILL an import while it is writing: the database stays consistent and a re-run completes once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from labeler.store import Store
from tests.reliability.invariants import assert_invariants

N = 3000


def write_source(path: Path, n: int = N) -> None:
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({
                "format": "toolgold.transcript/1", "id": f"crash/{i}",
                "messages": [{"role": "user", "content": f"question {i} " + "context " * 200},
                             {"role": "assistant", "tool_calls": [{"id": f"c{i}", "type": "function",
                              "function": {"name": "lookup", "arguments": json.dumps({"n": i})}}]},
                             {"role": "tool", "tool_call_id": f"c{i}", "content": "result " * 100},
                             {"role": "assistant", "content": "done"}],
                "tools": [{"name": "lookup", "parameters": {"type": "object",
                                                            "properties": {"n": {"type": "integer"}}}}],
            }) + "\n")


def test_killed_import_leaves_a_consistent_db_and_the_rerun_completes_without_duplicates(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    src = tmp_path / "big.jsonl"
    write_source(src)
    Store(db).close()  # migrated, empty
    wal = Path(str(db) + "-wal")
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "labeler.cli", "import", str(src)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    # Wait until the import is writing pages into the WAL, then kill it without warning.
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > 256 * 1024:
            break
        time.sleep(0.005)
    killed_mid_way = proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert killed_mid_way, "the import finished before it could be killed; raise N"

    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # One transaction: all or nothing, never a half-written transcript.
    assert con.execute("SELECT count(*) FROM transcripts").fetchone()[0] in (0, N)
    orphans = con.execute("SELECT count(*) FROM turns WHERE transcript_id NOT IN (SELECT id FROM transcripts)")
    assert orphans.fetchone() == (0,)
    con.close()
    assert_invariants(db)

    for _ in range(2):  # the re-run completes; running it again adds nothing
        subprocess.run([sys.executable, "-m", "labeler.cli", "import", str(src)], env=env, check=True,
                       capture_output=True)
    stats = Store(db).stats()
    assert (stats["transcripts"], stats["turns"]) == (N, 2 * N)
    assert_invariants(db)
