"""The id pass of ``score_files`` reads a large runs file's ids in a child process while it reads the gold's
(``engine._RunReader``): the same pairing as reading them itself, the same first bad line, and one clear error,
with nothing scored, when that child dies. (tests/scorer/test_engine_order.py runs every pairing case both ways.)"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.bench_score import generate
from scorer import engine
from scorer.engine import _read_pairing, _shard_jobs, score_files
from scorer.errors import InvalidRecord, ScoringInterrupted, ToolgoldError


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return generate(tmp_path_factory.mktemp("reader"), 600)


def _pairing(gold: Path, runs: Path, directory: Path, workers: int) -> tuple[object, ...]:
    directory.mkdir()
    pairing = _read_pairing(gold, runs, _shard_jobs(gold, workers, None, False), directory)
    try:
        return (pairing.lockstep, pairing.run_starts, pairing.contested, pairing.gold_lines,
                [pairing.gold.read_flat(k).tobytes() for k in range(pairing.gold.parts)],
                [pairing.runs.read_flat(k).tobytes() for k in range(pairing.runs.parts)])
    finally:
        pairing.gold.close()
        pairing.runs.close()


def _variants(runs: Path, directory: Path) -> dict[str, Path]:
    """The runs in gold order, shuffled, with a run for an unknown case, and with blank lines among them."""
    lines = runs.read_text(encoding="utf-8").splitlines()
    shuffled = lines[:]
    random.Random(5).shuffle(shuffled)
    unknown = [*lines[:200], json.dumps({"format": "toolgold.run/1", "case_id": "nobody", "calls": []}), *lines[200:]]
    blank = [*lines[:10], "", "   ", *lines[10:]]
    out = {}
    for name, chosen in (("in order", lines), ("shuffled", shuffled), ("unknown", unknown), ("blank", blank)):
        out[name] = directory / f"{name}.jsonl"
        out[name].write_text("".join(f"{line}\n" for line in chosen), encoding="utf-8")
    return out


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_child_reading_the_runs_pairs_them_as_this_process_does(cases: tuple[Path, Path], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   workers: int) -> None:
    gold, runs = cases
    for name, variant in _variants(runs, tmp_path).items():
        here = _pairing(gold, variant, tmp_path / f"{name}-here", workers)
        monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", 0)
        there = _pairing(gold, variant, tmp_path / f"{name}-child", workers)
        monkeypatch.undo()
        assert there == here, name
        assert here[0] is (name in ("in order", "blank")), name  # lockstep


def test_the_runs_ids_are_read_in_another_process_from_the_reader_size_on(
        cases: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, run_readers: Callable[[], list[int]]) -> None:
    gold, runs = cases
    monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", runs.stat().st_size)
    score_files(gold, runs, workers=1)
    pids = run_readers()
    assert len(pids) == 1 and pids[0] != os.getpid()  # one reader, not this process
    monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", runs.stat().st_size + 1)
    score_files(gold, runs, workers=1)
    assert run_readers() == [os.getpid()]


def test_a_bad_run_line_found_by_the_child_is_the_same_one_clear_error(cases: tuple[Path, Path], tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    gold, runs = cases
    lines = runs.read_text(encoding="utf-8").splitlines()
    lines[450] = json.dumps({"format": "toolgold.run/1", "calls": []})  # no case_id: bad input in the id pass
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    errors = []
    for threshold in (bad.stat().st_size + 1, 0):
        monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", threshold)
        with pytest.raises(InvalidRecord) as err:
            score_files(gold, bad, workers=2)
        errors.append((type(err.value), str(err.value)))
    assert errors[0] == errors[1]
    assert errors[0][1].startswith(f"{bad}:451: ")


def test_a_child_that_dies_is_one_clear_error_and_nothing_is_scored(cases: tuple[Path, Path],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    gold, runs = cases

    def killed(*_: object) -> None:
        os._exit(9)  # as the kernel's OOM killer leaves it: no word sent

    monkeypatch.setattr(engine, "_read_runs", killed)
    monkeypatch.setattr(engine, "RUN_READER_MIN_BYTES", 0)
    with pytest.raises(ScoringInterrupted) as err:
        score_files(gold, runs, workers=2)
    assert isinstance(err.value, ToolgoldError)
    assert str(err.value) == ("the process reading the runs' ids died (killed, or out of memory); nothing was "
                              "scored: run it again")
