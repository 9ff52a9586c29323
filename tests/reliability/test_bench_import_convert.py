"""``bench_import_convert`` measures a worker's whole job as ``toolgold import``'s workers do it (issue 15): since
the workers write bodies into the store themselves (stop 26) that job needs a store's file beside the stage, and
the benchmark, still handing the worker a stage file alone, crashed ``make bench`` at its first staged chunk."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from benchmarks import bench_import_convert as bench
from benchmarks.bench_bfcl import BFCL
from benchmarks.bench_store import write_gold, write_transcripts


def _count(path: Path, table: str) -> int:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_the_staged_side_writes_rows_into_the_stage_and_bodies_into_the_store(tmp_path: Path) -> None:
    stage, store = bench._stage_file(tmp_path)
    staging = bench._converter((stage, store))
    for write, n in ((write_transcripts, 3), (write_gold, 4)):
        lines = bench._lines(write, n)
        done = staging(lines)
        assert len(done) == n
    assert _count(store, "transcript_bodies") == 3
    assert _count(store, "gold_bodies") == 4
    assert _count(store, "pending_bodies") == _count(store, "pending_gold_bodies") == 1
    assert _count(stage, "rows_transcripts") == 3
    assert _count(stage, "rows_gold_cases") == 4
    # bodies went to the store, not into the stage as well
    assert _count(stage, "rows_transcript_bodies") == _count(stage, "rows_gold_bodies") == 0


def test_the_benchmark_prints_both_rows(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bench.main(["--transcripts", "3", "--gold", "3", "--bfcl", "0", "--repeat", "1"])
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in table[1:]] == ["| transcript", "| gold case"]


@pytest.mark.skipif(not BFCL.is_dir(), reason="no BFCL data here (TOOLGOLD_BFCL_DATA or ../shared/data/bfcl)")
def test_the_bfcl_row_converts_real_gold_cases_each_with_tools_of_its_own(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bfcl.jsonl"
    assert bench.write_bfcl_gold(path, 5) == 5
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["format"] for r in records] == ["toolgold.gold/1"] * 5
    assert len({json.dumps(r["tools"]) for r in records}) == 5
    bench.main(["--transcripts", "2", "--gold", "2", "--bfcl", "4", "--repeat", "1"])
    table = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[:2] for row in table[1:]][-1] == ["| BFCL gold case, tools of its own", "4"]


def test_each_pass_starts_as_a_fresh_workers_first_read(tmp_path: Path) -> None:
    """What a pass learns of the records (tool lists, schema verdicts, compiled schemas) is gone when the next
    starts: a real import reads each of a BFCL file's tool schemas once, so a pass must not find them known."""
    from scorer import formats, model

    lines = bench._lines(write_gold, 3)
    bench._converter()(lines)
    assert formats._SHARED_TOOLS and formats._TOOLS_JSON and model._SCHEMA_PROBLEMS
    bench.first_read()
    assert not formats._SHARED_TOOLS and not formats._TOOLS_JSON and not model._SCHEMA_PROBLEMS
    assert model._schema_problem.cache_info().currsize == 0
