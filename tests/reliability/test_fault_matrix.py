"""Every CLI command that reads a file × every bad-input class of the corpus (tests/data/bad): exit 2 with one
`error: FILE...` line, no traceback, and the database exactly as it was — integrity_check ok, no foreign-key
violation, every table's rows unchanged. Disk-full and read-only-database faults are in
test_output_files.py, test_cli_faults.py and test_database_faults.py; they check the same invariants."""

from __future__ import annotations

import json
import sqlite3
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from scorer.formats import dumps_record
from scorer.model import Answer, Call, GoldCase, Message, RunRecord
from tests.reliability.invariants import assert_invariants

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
CORPUS = sorted(p.name for p in BAD.iterdir())
GOLD = GoldCase(id="c1", conversation_id="t", turn=1, messages=(Message(role="user", content="hi"),),
                expected=Answer(behavior="call", calls=(Call(name="f", arguments={"x": 1}),)))

# command -> argv with {bad} where the corpus file goes and {gold}/{runs}/{tools} for good files
COMMANDS: dict[str, list[str]] = {
    "import": ["import", "{bad}"],
    "import --from toolgold": ["import", "--from", "toolgold", "{bad}"],
    "import --skip-invalid --tools": ["import", "--skip-invalid", "--rejects", "{rejects}", "--tools", "{bad}",
                                      "{transcripts}"],
    "score GOLD": ["score", "{bad}", "{runs}"],
    "score RUNS": ["score", "{gold}", "{bad}"],
    "score --baseline": ["score", "{gold}", "{runs}", "--baseline", "{bad}"],
    "score --tools": ["score", "{gold}", "{runs}", "--tools", "{bad}"],
    "lint": ["lint", "{bad}"],
    "drift --tools": ["drift", "--tools", "{bad}"],
    "run": ["run", "{bad}", "--agent", "python:matrix_agent:agent", "-o", "{out}"],
}

# (command, file) pairs where the corpus file is not bad input for that command, and why.
NOT_BAD: dict[tuple[str, str], str] = {
    ("score RUNS", "blank_lines_only.jsonl"): "no runs: the case is unscored, a gate (exit 1), not bad input",
    ("score RUNS", "empty.jsonl"): "no runs: the case is unscored, a gate (exit 1), not bad input",
    ("score RUNS", "run_record_not_importable.jsonl"): "a valid run record (for an unknown case: a gate)",
    ("import", "missing_format.jsonl"): "detection reads a {messages} line without a format tag as OpenAI chat",
}


def integrity(db: Path) -> tuple[list[Any], list[Any]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall(), conn.execute("PRAGMA foreign_key_check").fetchall()


@pytest.fixture
def world(isolated_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A store holding a transcript and a gold case, good input files, and the python agent `run` uses."""
    files = {"gold": tmp_path / "gold.jsonl", "runs": tmp_path / "runs.jsonl",
             "transcripts": tmp_path / "transcripts.jsonl"}
    files["gold"].write_text(dumps_record(GOLD) + "\n")
    files["runs"].write_text(dumps_record(RunRecord(case_id="c1", calls=())) + "\n")
    files["transcripts"].write_text(json.dumps({"format": "toolgold.transcript/1", "id": "kept",
                                                "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    for name in ("gold", "transcripts"):
        assert CliRunner().invoke(cli, ["import", str(files[name])]).exit_code == 0
    module = types.ModuleType("matrix_agent")
    module.agent = lambda messages, tools: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "matrix_agent", module)
    return {**{k: str(v) for k, v in files.items()}, "out": str(tmp_path / "out.jsonl"),
            "rejects": str(tmp_path / "rejects.txt")}


@pytest.mark.parametrize("name", CORPUS)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_bad_input_is_one_line_and_changes_nothing(command: str, name: str, world: dict[str, str],
                                                   isolated_db: Path) -> None:
    store = Store(isolated_db)
    before = store.dump()
    store.close()
    bad = str(BAD / name)
    argv = [a.format(bad=bad, **world) for a in COMMANDS[command]]
    result = CliRunner().invoke(cli, argv)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), (
        f"{command} {name}: {result.exception!r}")  # no traceback: only click's own exit
    if (command, name) in NOT_BAD:
        assert result.exit_code in (0, 1), result.output
    else:
        assert result.exit_code == 2, (command, name, result.output)
        assert result.stderr.startswith(f"error: {bad}") or result.stderr.startswith("Usage: "), result.stderr
        assert result.stderr.count("\n") == 1 or result.stderr.startswith("Usage: "), result.stderr
    assert "Traceback" not in result.output
    assert integrity(isolated_db) == ([("ok",)], [])
    assert_invariants(isolated_db)
    if (command, name) in NOT_BAD:
        return
    after = Store(isolated_db)
    assert after.dump() == before
    after.close()
    assert not Path(world["out"]).exists() and not Path(world["rejects"]).exists()
