"""``bench_score``'s id pass row times what it names: with ``child`` the runs' ids are read by another process,
without it by this one, and the threshold ``toolgold score`` uses is left as it was either way."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from benchmarks.bench_score import generate, id_pass
from scorer import engine


def test_the_id_pass_is_timed_with_and_without_the_child_reader(tmp_path: Path,
                                                               run_readers: Callable[[], list[int]]) -> None:
    gold, runs = generate(tmp_path, 200)
    threshold = engine.RUN_READER_MIN_BYTES
    for child in (True, False):
        assert id_pass(gold, runs, tmp_path, child=child) > 0
        pids = run_readers()
        assert len(pids) == 1 and (pids[0] != os.getpid()) is child
        assert engine.RUN_READER_MIN_BYTES == threshold
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == []  # its spills removed
