"""The file engine at scale keeps no per-case state, and that changes nothing a report says: one worker and
several give byte-identical reports (every format, the failure list with its notes, every case), and a gold
id twice is caught wherever the two copies are and whether or not they have runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.bench_score import generate
from labeler.cli import cli
from scorer.engine import score_files
from scorer.errors import InvalidRecord
from scorer.report import MAX_FAILURE_EXAMPLES


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The benchmark's generated cases: 45% of runs fail, so the failure list is cut at its limit."""
    return generate(tmp_path_factory.mktemp("gen"), 1_200)


def _rendered(gold: Path, runs: Path, fmt: str, workers: int, tmp_path: Path) -> str:
    out = tmp_path / f"out-{fmt}-{workers}"
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs), "--format", fmt, "--workers", str(workers),
                                      "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html", "junit"])
def test_one_worker_and_three_give_the_same_report(generated: tuple[Path, Path], fmt: str, tmp_path: Path) -> None:
    one = _rendered(*generated, fmt, 1, tmp_path)
    three = _rendered(*generated, fmt, 3, tmp_path)
    assert one == three


def test_the_failure_list_is_the_first_failures_in_gold_order_with_their_notes(
        generated: tuple[Path, Path]) -> None:
    report = score_files(*generated, workers=3).report
    everything = score_files(*generated, workers=1, spool_dir=None).report
    assert report.totals.failed > MAX_FAILURE_EXAMPLES
    assert len(report.failures) == MAX_FAILURE_EXAMPLES
    gold_order = [json.loads(line)["id"] for line in generated[0].read_text(encoding="utf-8").splitlines()]
    failing = [f.case_id for f in report.failures]
    assert failing == sorted(failing, key=gold_order.index)
    assert report.failures == everything.failures
    assert all(f.errors and f.status == "fail" for f in report.failures)


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _case(case_id: str) -> dict:
    return {"format": "toolgold.gold/1", "id": case_id, "messages": [{"role": "user", "content": "hi"}],
            "expected": {"behavior": "no_call"}}


def _run(case_id: str) -> dict:
    return {"format": "toolgold.run/1", "case_id": case_id, "calls": []}


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("with_runs", [True, False])
def test_a_gold_id_twice_is_bad_input_in_one_shard_or_across_shards(tmp_path: Path, workers: int,
                                                                    with_runs: bool) -> None:
    ids = [f"c{i:03d}" for i in range(40)]
    gold = _write(tmp_path / "gold.jsonl", [_case(i) for i in [*ids, "c007"]])
    runs = _write(tmp_path / "runs.jsonl", [_run(i) for i in ids if with_runs or i != "c007"])
    with pytest.raises(InvalidRecord) as err:
        score_files(gold, runs, workers=workers)
    assert (err.value.line, err.value.message) == (41, "gold case id 'c007' appears twice (first at line 8)")


def test_distinct_gold_ids_without_runs_are_not_taken_for_duplicates(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case(f"c{i}") for i in range(30)])
    runs = _write(tmp_path / "runs.jsonl", [_run("c0")])
    report = score_files(gold, runs, workers=2).report
    assert (report.totals.results, report.unscored.cases_without_run) == (1, 29)


def test_a_runs_file_past_what_the_index_can_address_is_bad_input_before_it_is_read(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case("c0")])
    runs = tmp_path / "runs.jsonl"
    with runs.open("wb") as fh:  # sparse: no disk is used
        fh.truncate(512 << 30)
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs)], catch_exceptions=False)
    assert (result.exit_code, result.stderr.strip()) == (2, f"error: {runs}: runs file is over 512 GiB; split it")


def test_automatic_workers_start_where_two_were_measured_faster(generated: tuple[Path, Path]) -> None:
    """``--workers 0``: two processes for 10,000 of the benchmark's cases (18.7 MB of gold: 1.03 s against
    1.53 s in one, stop 31), one for a gold file the size of this fixture's 1,200 (2.2 MB, where the two tie)."""
    from scorer.engine import automatic_workers

    gold, _ = generated
    per_case = gold.stat().st_size / 1_200
    assert automatic_workers(gold.stat().st_size, 2) == 1
    assert automatic_workers(int(10_000 * per_case), 2) == 2
    assert automatic_workers(int(10_000 * per_case), 1) == 1
    assert automatic_workers(int(10_000 * per_case), 16) == 4
    assert automatic_workers(int(10_000 * per_case), 0) == 1  # a machine that cannot say how many cores


def test_a_tool_orjson_cannot_write_is_validated_as_it_is_and_scored(tmp_path: Path) -> None:
    """The gold reader keys known tools by orjson's text of them; an integer beyond 64 bits (which orjson
    refuses to write) leaves that case's tools uncached, never unscored."""
    tool = {"name": "get_order", "parameters": {"type": "object", "properties": {
        "order_id": {"type": "integer", "maximum": 10 ** 30}}, "required": ["order_id"]}}
    gold, runs = tmp_path / "gold.jsonl", tmp_path / "runs.jsonl"
    with gold.open("w") as g, runs.open("w") as r:
        for i, got in enumerate((7, 8, 7)):
            g.write(json.dumps({"format": "toolgold.gold/1", "id": f"c{i}", "tools": [tool],
                                "messages": [{"role": "user", "content": "Where is order 7?"}],
                                "expected": {"behavior": "call",
                                             "calls": [{"name": "get_order", "arguments": {"order_id": 7}}]}}) + "\n")
            r.write(json.dumps({"format": "toolgold.run/1", "case_id": f"c{i}",
                                "calls": [{"name": "get_order", "arguments": {"order_id": got}}]}) + "\n")
    report = score_files(gold, runs, workers=1).report
    assert (report.totals.passed, report.totals.failed) == (2, 1)
    assert [f.case_id for f in report.failures] == ["c1"]
