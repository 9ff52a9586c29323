"""The options the app's Streamlit server runs with, however it is started (issue 16 "Speed of the loop").

Streamlit's default ``runner.postScriptGC`` runs a full ``gc.collect(2)`` after every script run, on the
script thread: with the store, the parsed transcripts and the app's modules in the heap that took ~200 ms
a run on the loaded 2-core machine, and Submit & next pays it between the panel's fragment run and the
full run ``st.rerun()`` starts (the next run cannot begin until it is over). Python's own generational
collector still runs; the app turns only the forced full pass off, both in the repository's
``.streamlit/config.toml`` (``make run``, ``streamlit run``) and on ``toolgold app``'s command line (which
works from any directory). The figures are in benchmarks/bench_labeling.py --chromium.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli.app import app_cmd

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_config_turns_the_forced_gc_after_each_run_off() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


def test_toolgold_app_starts_streamlit_without_the_forced_gc_after_each_run(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[list[str]] = []
    monkeypatch.setattr(subprocess, "call", lambda cmd, **_: started.append(cmd) or 0)  # Windows

    def become(path: str, cmd: list[str], env: dict[str, str]) -> None:  # POSIX: the process becomes the server
        started.append(cmd)
        raise SystemExit(0)
    monkeypatch.setattr(os, "execve", become)
    result = CliRunner().invoke(app_cmd, [])
    assert result.exit_code == 0, result.output
    [cmd] = started
    assert cmd[cmd.index("--runner.postScriptGC") + 1] == "false"
