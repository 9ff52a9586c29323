"""`toolgold import` forks its workers before the store loads SQLAlchemy, and the workers never load it.

The importing process spends ~0.4 s of its start-up importing SQLAlchemy and the store's tables, which the
workers never use (they convert records and write them with ``sqlite3``: ``labeler.store.staging``). Forked
after that, every worker carried it (~23 MB more of each one's memory) and none could start before it; forked
before, and handed their first chunks at once, they convert while the importing process loads it. Told by Python's audit events in a real import: ``os.fork`` and the first
``import`` of a module, each written to a file named after the process that raised it (the hook is inherited
by the forked workers)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.labeler.test_store import gold

_IMPORT = r'''
import os, sys
source, events = sys.argv[1], sys.argv[3]
def hook(event, args):
    if not (event in ("os.fork", "sqlite3.connect") or (event == "open" and str(args[0]) == source) or (
            event == "import" and args[0].partition(".")[0] in ("sqlalchemy", "sqlmodel", "alembic"))):
        return
    with open(os.path.join(events, str(os.getpid())), "a") as fh:
        fh.write(f"{event} {args[0] if args else ''}\n")
sys.addaudithook(hook)
import labeler.cli.data as data_cmd
from labeler.cli import import_pool
data_cmd.MIN_BYTES = 0  # through the workers, however small the file
import_pool.CHUNK_LINES = 10  # a chunk for each worker, and more
data_cmd.usable_cores = lambda: 2
with open(os.path.join(events, "main"), "w") as fh:
    fh.write(str(os.getpid()))
sys.argv = ["toolgold", "import", sys.argv[1], "--db", sys.argv[2]]
from labeler.cli import main
main()
'''

_HEAVY = ("sqlalchemy", "sqlmodel", "alembic", "labeler.store.engine", "labeler.store.tables")


def _events(directory: Path) -> tuple[list[str], dict[int, list[str]]]:
    main = int((directory / "main").read_text())
    found = {int(p.name): p.read_text().splitlines() for p in directory.iterdir() if p.name != "main"}
    return found.pop(main, []), found


@pytest.mark.skipif(sys.platform != "linux", reason="forked import workers")
def test_the_workers_are_forked_before_sqlalchemy_loads_and_never_load_it(tmp_path: Path) -> None:
    src = tmp_path / "gold.jsonl"
    src.write_text("".join(gold(f"c{i}").model_dump_json() + "\n" for i in range(40)), encoding="utf-8")
    events = tmp_path / "events"
    events.mkdir()
    done = subprocess.run([sys.executable, "-c", _IMPORT, str(src), str(tmp_path / "s.db"), str(events)],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    main, workers = _events(events)
    forks = [n for n, line in enumerate(main) if line.startswith("os.fork")]
    loads = [n for n, line in enumerate(main) if line.startswith("import sqlalchemy")]
    assert len(forks) >= 2 and loads, main
    assert max(forks) < min(loads), main  # every worker forked before SQLAlchemy was first imported
    # and the first chunks were found (the input read after the fork: ``ImportPool.prime``) and handed out
    # before it too, so the workers convert while this process loads the store
    reads = [n for n, line in enumerate(main) if line.startswith("open ")]
    assert [n for n in reads if max(forks) < n < min(loads)], main
    # Each worker wrote its rows (it opened the stage and the store) and imported no SQL library.
    assert len(workers) == 2 and all(any(line.startswith("sqlite3.connect") for line in lines)
                                     for lines in workers.values()), workers
    assert {pid: lines for pid, lines in workers.items() if any(line.startswith("import") for line in lines)} == {}
    assert sqlite3.connect(tmp_path / "s.db").execute("SELECT count(*) FROM gold_cases").fetchone() == (40,)


def test_the_import_command_and_the_workers_code_load_no_sql_library() -> None:
    code = ("import json, sys\n"
            "import labeler.cli.data, labeler.cli.import_pool, labeler.store.staging\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=True)
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if any(m == h or m.startswith(h + ".") for h in _HEAVY)] == []


def test_the_body_tables_the_workers_write_by_name_are_the_stores_tables() -> None:
    from labeler.store import staging, transcripts

    for kind, names in ((transcripts.TRANSCRIPT_BODIES, staging.TRANSCRIPT_BODY_TABLES),
                        (transcripts.GOLD_BODIES, staging.GOLD_BODY_TABLES)):
        assert kind.tables is names
        assert (kind.row.__tablename__, kind.owner.__tablename__, kind.pending.__tablename__) == \
            (names.bodies, names.owner, names.pending)
        assert f"CREATE TABLE {names.staged} " in staging.STAGE_SCHEMA
