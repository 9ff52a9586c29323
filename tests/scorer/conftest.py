"""Fixtures shared by the scorer's tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scorer import engine


@pytest.fixture
def run_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[int]]:
    """Which processes read a runs file's ids (``engine._run_keys``, in this process or a forked child): the
    returned callable gives their pids since it was last called."""
    noted = tmp_path / "run-readers"
    real = engine._run_keys

    def reading(path: Path) -> Iterator[tuple[int, int, int, str, int]]:
        with noted.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return real(path)

    def taken() -> list[int]:
        pids = [int(pid) for pid in noted.read_text().split()] if noted.exists() else []
        noted.unlink(missing_ok=True)
        return pids

    monkeypatch.setattr(engine, "_run_keys", reading)
    return taken
