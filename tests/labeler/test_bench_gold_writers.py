"""bench_gold_writers measures what it says: with the revision counted every submit moves it once, with the anchor's
no-op none does, and the table has a row per writer count (PostgreSQL: the queue it measures forms only there)."""

from __future__ import annotations

import pytest

from benchmarks import bench_gold_writers as bench


def test_the_anchor_counts_no_revision_and_the_product_one_per_submit(postgres_url: str) -> None:
    points = bench.fill(postgres_url, 6, 2)
    assert len(points) == 6 and len({tid for tid, _ in points}) == 6
    before = bench.revision(postgres_url)
    with bench.revision_counted(False):
        wall, samples = bench.writers(postgres_url, [points[0:2], points[2:4]])
    assert bench.revision(postgres_url) == before and len(samples) == 4 and wall > 0
    with bench.revision_counted(True):
        bench.writers(postgres_url, [points[4:5], points[5:6]])
    assert bench.revision(postgres_url) == before + 2


def test_the_table_has_a_row_per_writer_count(capsys: pytest.CaptureFixture[str], postgres_url: str) -> None:
    bench.main(["--url", postgres_url, "--threads", "1,2", "--labels", "2", "--rounds", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split(" | ")[0] for row in rows] == ["| 1", "| 2"]
