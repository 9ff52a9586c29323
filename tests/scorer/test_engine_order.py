"""Runs in gold order are streamed beside the gold with no index; runs in any other order are joined to it on
disk. Neither changes anything a report says, nor any error: a run file in gold order, shuffled or reversed,
scored on one worker or two, gives byte-identical reports, and a second run for a trial, runs for unknown
cases, cases without a run and bad run lines read the same whichever way the runs came."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.bench_score import generate
from labeler.cli import cli
from scorer import engine
from scorer.engine import _read_pairing, _shard_jobs, score_files
from scorer.errors import InvalidRecord


@pytest.fixture(autouse=True, params=["runs read here", "runs read by a child"])
def run_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test of this module both ways: the id pass reading the runs' ids itself (small files) and in a
    child process (``engine.RUN_READER_MIN_BYTES`` on)."""
    if request.param == "runs read by a child":
        monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", 0)
    return str(request.param)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The benchmark's cases with a second trial for every seventh case (right after its first, as an
    agent loop writes them), every eleventh case without a run, and the same runs shuffled."""
    directory = tmp_path_factory.mktemp("order")
    gold, runs = generate(directory, 900)
    lines = []
    for k, line in enumerate(runs.read_text(encoding="utf-8").splitlines()):
        if k % 11 == 3:
            continue
        lines.append(line)
        if k % 7 == 0:
            second = json.loads(line)
            second["trial"], second["calls"] = 1, []
            lines.append(json.dumps(second))
    in_order = directory / "in-order.jsonl"
    in_order.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    shuffled = directory / "shuffled.jsonl"
    random.Random(3).shuffle(lines)
    shuffled.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return gold, in_order, shuffled


def _reversed(runs: Path, out: Path) -> Path:
    out.write_text("".join(f"{line}\n" for line in reversed(runs.read_text(encoding="utf-8").splitlines())),
                   encoding="utf-8")
    return out


def _rendered(gold: Path, runs: Path, fmt: str, workers: int, out: Path) -> str:
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs), "--format", fmt, "--workers", str(workers),
                                      "--allow-unscored", "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", ["json", "table", "junit"])
def test_runs_in_gold_order_shuffled_or_reversed_on_one_worker_or_two_give_one_report(
        generated: tuple[Path, Path, Path], fmt: str, tmp_path: Path) -> None:
    gold, in_order, shuffled = generated
    backwards = _reversed(in_order, tmp_path / "reversed.jsonl")
    reports = {(name, workers): _rendered(gold, runs, fmt, workers, tmp_path / f"{name}-{workers}")
               for name, runs in (("in-order", in_order), ("shuffled", shuffled), ("reversed", backwards))
               for workers in (1, 2)}
    first = reports["in-order", 1]
    assert all(report == first for report in reports.values()), [k for k, r in reports.items() if r != first]
    if fmt == "json":
        report = json.loads(first.splitlines()[0]) if first.startswith("{\"format\"") else json.loads(first)
        text = json.dumps(report)
        assert '"trial": 1' in text  # the second trials were scored
        assert report["unscored"]["cases_without_run"] == len(range(3, 900, 11))


def test_only_runs_out_of_gold_order_are_joined(generated: tuple[Path, Path, Path], tmp_path: Path) -> None:
    gold, in_order, shuffled = generated
    for k, (runs, lockstep) in enumerate(((in_order, True), (shuffled, False),
                                          (_reversed(in_order, tmp_path / "r.jsonl"), False))):
        jobs = _shard_jobs(gold, 2, None, False)
        (tmp_path / f"spill-{k}").mkdir()
        pairing = _read_pairing(gold, runs, jobs, tmp_path / f"spill-{k}")
        assert pairing.lockstep is lockstep
        assert not pairing.contested


def _write(path: Path, records: list[dict[str, object] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def _case(case_id: str) -> dict[str, object]:
    return {"format": "toolgold.gold/1", "id": case_id, "messages": [{"role": "user", "content": "hi"}],
            "expected": {"behavior": "no_call"}}


def _run(case_id: str, trial: int = 0) -> dict[str, object]:
    return {"format": "toolgold.run/1", "case_id": case_id, "trial": trial, "calls": []}


IDS = [f"c{i}" for i in range(6)]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(("runs", "line", "first"), [
    ([_run("c0"), _run("c1"), _run("c1"), _run("c2")], 3, 2),  # in gold order, the two next to each other
    ([_run("c1"), _run("c0"), _run("c2"), _run("c1")], 4, 1),  # out of order: joined
    ([_run("c3"), _run("c1"), _run("c0"), _run("c1")], 4, 2),
])
def test_a_second_run_for_a_trial_is_bad_input_at_its_line_in_any_order(
        tmp_path: Path, workers: int, runs: list[dict[str, object]], line: int, first: int) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case(i) for i in IDS])
    runs_file = _write(tmp_path / "runs.jsonl", list(runs))
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs_file), "--workers", str(workers)],
                                catch_exceptions=False)
    assert (result.exit_code, result.stdout, result.stderr.strip()) == (
        2, "", f"error: {runs_file}:{line}: a second run for case 'c1' trial 0 (the first is at line {first})")


@pytest.mark.parametrize("order", ["in gold order", "reversed"])
def test_unknown_runs_and_cases_without_runs_are_counted_with_their_examples(tmp_path: Path, order: str) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case(i) for i in IDS])
    runs = [_run("c0"), _run("gone-zulu"), _run("c2"), _run("gone-alpha"), _run("gone-zulu", 1), _run("gone-mike"),
            _run("c5")]
    runs_file = _write(tmp_path / "runs.jsonl", list(runs if order == "in gold order" else runs[::-1]))
    for workers in (1, 2):
        unscored = score_files(gold, runs_file, workers=workers).report.unscored
        names = ["gone-zulu", "gone-alpha", "gone-mike"] if order == "in gold order" else [
            "gone-mike", "gone-zulu", "gone-alpha"]  # in file order
        assert (unscored.cases_without_run, unscored.examples_without_run) == (3, ("c1", "c3", "c4"))
        assert (unscored.runs_for_unknown_cases, list(unscored.examples_unknown)) == (4, names)
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs_file)], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "gate failed: unscored input: 3 case(s) without a run, 4 run(s) for unknown cases (--allow-unscored to accept)")


@pytest.mark.parametrize("order", ["in gold order", "reversed"])
@pytest.mark.parametrize("bad_for", ["c2", "gone"])
def test_a_bad_run_line_is_bad_input_at_its_line_whichever_case_it_names(tmp_path: Path, order: str,
                                                                         bad_for: str) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case(i) for i in IDS])
    runs: list[dict[str, object] | str] = [_run(i) for i in IDS if i != "c2"]
    runs.insert(2, {"format": "toolgold.run/1", "case_id": bad_for, "calls": "none"})
    if order == "reversed":
        runs.reverse()
    runs_file = _write(tmp_path / "runs.jsonl", runs)
    line = 3 if order == "in gold order" else 4
    for workers in (1, 2):
        with pytest.raises(InvalidRecord) as err:
            score_files(gold, runs_file, workers=workers)
        assert (err.value.source, err.value.line) == (str(runs_file), line)
        assert err.value.message.startswith("calls:")


def test_a_run_without_a_case_id_is_bad_input_before_any_case_is_scored(tmp_path: Path) -> None:
    gold = _write(tmp_path / "gold.jsonl", [_case(i) for i in IDS])
    runs_file = _write(tmp_path / "runs.jsonl", [_run("c0"), {"format": "toolgold.run/1", "calls": []}])
    result = CliRunner().invoke(cli, ["score", str(gold), str(runs_file)], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(f"error: {runs_file}:2: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_runs_that_name_a_key_with_an_escape_are_read_by_their_real_case_id(tmp_path: Path) -> None:
    """A key spelled with a \\u escape is the same key: the quick id reader must not take another one."""
    gold = _write(tmp_path / "gold.jsonl", [
        '{"format": "toolgold.gold/1", "\\u0069d": "c0", "messages": [{"role": "user", "content": "hi"}, '
        '{"role": "assistant", "tool_calls": [{"id": "decoy", "function": {"name": "f", "arguments": "{}"}}]}, '
        '{"role": "tool", "tool_call_id": "decoy", "content": "ok"}, {"role": "user", "content": "thanks"}], '
        '"expected": {"behavior": "no_call"}}', _case("c1")])
    runs_file = _write(tmp_path / "runs.jsonl", [
        _run("c1"),
        '{"format": "toolgold.run/1", "case\\u005fid": "c0", "calls": [], "metadata": {"case_id": "decoy"}}'])
    report = score_files(gold, runs_file, workers=1).report
    assert (report.totals.results, report.unscored.any) == (2, False)


@pytest.mark.parametrize("order", ["in gold order", "reversed"])
def test_ids_with_escaped_quotes_and_backslashes_pair_each_run_with_its_own_case(tmp_path: Path, order: str) -> None:
    """The quick id readers try a pattern for values without an escape first; a value with one (an escaped
    quote, a backslash) must still be read whole, not cut at its first escape or taken for another id."""
    ids = ['say "hi"', "back\\slash", 'say "hi', "plain", 'say "hi"!']
    gold = _write(tmp_path / "gold.jsonl", [
        {**_case(i), "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"k": n}}]}}
        for n, i in enumerate(ids)])
    runs = [{"format": "toolgold.run/1", "case_id": i, "calls": [{"name": "f", "arguments": {"k": n}}]}
            for n, i in enumerate(ids)]
    runs_file = _write(tmp_path / "runs.jsonl", runs if order == "in gold order" else runs[::-1])
    jobs = _shard_jobs(gold, 1, None, False)
    assert _read_pairing(gold, runs_file, jobs, tmp_path).lockstep == (order == "in gold order")
    for workers in (1, 2):
        report = score_files(gold, runs_file, workers=workers).report
        assert (report.totals.passed, report.totals.failed, report.unscored.any) == (5, 0, False)
