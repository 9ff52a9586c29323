"""How a command line leaves: its databases closed cleanly, and the interpreter's shutdown spared a walk over every
object the command loaded (labeler/cli/__init__.py ``_leave``; the time it saves is in benchmarks/bench_startup.py).

Each command runs in a fresh interpreter, as a user runs it, to its real exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from labeler.store import Store
from labeler.store.engine import close_every_database
from tests.conftest import REPO

DEMO = REPO / "data" / "demo" / "bfcl.jsonl"  # 20 transcripts and their 20 gold cases

_PROBE = (
    "import atexit, gc, json, sys\n"
    "atexit.register(lambda: sys.stderr.write(f'\\nFROZEN {gc.get_freeze_count()}\\n'))\n"
    "from labeler.cli import main\n"
    "sys.argv = ['toolgold', *json.loads(sys.argv[1])]\n"
    "main()\n"
)


def toolgold(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=False)


def leftovers(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.glob(db.name + "-*"))


@pytest.mark.parametrize("args", [
    ["import", str(DEMO)],
    ["export", "--split", "rolling", "-o", "{out}"],
    ["import", "{bad}"],  # refused: exit 2, the store opened all the same
])
def test_a_store_command_closes_its_database_before_it_exits_leaving_no_wal(tmp_path: Path, args: list[str]) -> None:
    # Its SQLite file's last connection closes cleanly (the WAL copied in and removed) before the interpreter's
    # shutdown, which no longer walks the engines to find them.
    db = tmp_path / "store.db"
    assert toolgold("import", str(DEMO), "--db", str(db)).returncode == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    filled = [a.format(out=tmp_path / "out.jsonl", bad=bad) for a in args]
    done = toolgold(*filled, "--db", str(db))
    assert done.returncode == (2 if "{bad}" in args else 0), done.stderr
    assert leftovers(db) == [], leftovers(db)
    assert "Traceback" not in done.stderr


def test_the_interpreter_s_last_collection_is_spared_what_the_command_loaded(tmp_path: Path) -> None:
    # The modules, classes and tables a store command loaded are set aside (frozen) as it returns: the
    # interpreter's final collection walked them all (~0.1 s of every store command's exit) only to free memory
    # the process gives back anyway.
    done = toolgold("import", str(DEMO), "--db", str(tmp_path / "store.db"))
    assert done.returncode == 0, done.stderr
    frozen = int(done.stderr.rpartition("\nFROZEN ")[2].split()[0])
    assert frozen > 10_000, done.stderr


def test_a_database_closed_by_close_every_database_opens_again_when_used(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    assert toolgold("import", str(DEMO), "--db", str(db)).returncode == 0
    store = Store(str(db))
    try:
        before = store.stats()
        assert before["transcripts"] == 20
        close_every_database()
        assert store.stats() == before
    finally:
        store.close()
