"""What each command imports at start-up: only what it uses (the timings are in benchmarks/bench_startup.py).

Each command runs in a fresh interpreter, the way a user runs it, and reports the modules it loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

_PROBE = (
    "import json, sys\n"
    "from labeler.cli import main\n"
    "sys.argv = ['toolgold', *json.loads(sys.argv[1])]\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stdout.flush()\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
)

HEAVY = ("sqlalchemy", "sqlmodel", "scipy", "anthropic", "streamlit", "labeler.store", "alembic")


def loaded_by(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=False)
    marker = done.stderr.rpartition("\nMODULES ")[2]
    return set(json.loads(marker))


def heavy_in(modules: set[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


def test_help_loads_no_command_and_no_heavy_library() -> None:
    modules = loaded_by("--help")
    assert heavy_in(modules, (*HEAVY, "pydantic", "numpy", "jsonschema")) == []
    assert not [m for m in modules if m.startswith("labeler.cli.")]


def test_scoring_a_small_file_loads_no_store_sql_scipy_or_sdk(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({
        "format": "toolgold.gold/1", "id": "c1", "kind": "turn", "split": "regression",
        "tools": [{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}],
        "messages": [{"role": "user", "content": "x is 3"}],
        "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"x": 3}}]}}) + "\n",
                    encoding="utf-8")
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps({"format": "toolgold.run/1", "case_id": "c1",
                                "calls": [{"name": "f", "arguments": '{"x": 4}'}]}) + "\n", encoding="utf-8")
    modules = loaded_by("score", str(gold), str(runs), "-o", str(tmp_path / "report.txt"))
    assert (tmp_path / "report.txt").read_text(encoding="utf-8")  # it did score
    assert "scorer.turn" in modules
    assert heavy_in(modules) == []
    # What the small path does not need (a third of its start-up): numpy (the runs follow the gold, so they
    # are streamed, not indexed), the synthesizer (the report only needs its names), the other renderers
    # and worker processes.
    assert heavy_in(modules, ("numpy", "scorer.synthesize", "scorer.render.junit", "scorer.render.html",
                              "xml.sax", "multiprocessing.pool")) == []
    # Nor jsonschema: an everyday tool schema is told valid without it (scorer.schemas.surely_valid_schema).
    assert heavy_in(modules, ("jsonschema", "referencing", "tqdm")) == []


def test_app_command_loads_no_store_before_streamlit_starts() -> None:
    modules = loaded_by("app", "--help")
    assert heavy_in(modules, (*HEAVY, "pydantic")) == []


@pytest.mark.parametrize("name", sorted(__import__("labeler.cli", fromlist=["COMMANDS"]).COMMANDS))
def test_the_short_help_listed_without_importing_matches_the_command(name: str) -> None:
    import importlib

    import click

    from labeler.cli import COMMANDS, SHORT_HELP

    module, _, attr = COMMANDS[name].partition(":")
    command = getattr(importlib.import_module(module), attr)
    assert name in SHORT_HELP, f"add {name!r} to SHORT_HELP in labeler/cli/__init__.py"
    listed = click.Command(name, help=SHORT_HELP[name])
    for width in (40, 70, 120, 400):
        assert listed.get_short_help_str(width) == command.get_short_help_str(width), (
            f"SHORT_HELP[{name!r}] in labeler/cli/__init__.py differs from the command's docstring")


# Store commands: the engine and the aggregates they use; Alembic only when the schema is behind (a database
# already at the newest revision is opened with one query), numpy/SciPy/the review aggregates never.
NOT_FOR_STORE_COMMANDS = ("alembic", "numpy", "scipy", "pandas", "anthropic", "streamlit", "labeler.store.review",
                          "labeler.store.turn_review", "labeler.store.labels", "labeler.store.runs",
                          "labeler.store.judge", "labeler.store.adjudication", "sqlalchemy.dialects.postgresql")


NOT_FOR_EXPORT = ("labeler.cli.import_pool", "scorer.importers", "multiprocessing", "tqdm", "pydantic", "jsonschema",
                  "scorer.model", "labeler.store.transcripts", "labeler.candidates", "labeler.labels")


def _gold_file(path: Path, n: int = 20) -> Path:
    tool = {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}
    path.write_text("".join(json.dumps({
        "format": "toolgold.gold/1", "id": f"c{i:02d}", "kind": "turn", "split": "rolling", "tools": [tool],
        "messages": [{"role": "user", "content": f"x is {i}"}],
        "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"x": i}}]}}) + "\n"
        for i in range(n)), encoding="utf-8")
    return path


def test_store_commands_on_a_current_database_load_no_alembic_numpy_or_aggregate_they_do_not_use(
        tmp_path: Path) -> None:
    db = tmp_path / "current.db"
    gold = _gold_file(tmp_path / "gold.jsonl")
    # A new file is made from the snapshot of what the revisions build (engine.SQLITE_HEAD): no Alembic either.
    assert heavy_in(loaded_by("import", str(gold), "--db", str(db)), NOT_FOR_STORE_COMMANDS) == []
    out = tmp_path / "out.jsonl"
    exported = loaded_by("export", "-o", str(out), "--db", str(db))
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == \
        [f"c{i:02d}" for i in range(20)]
    # Exporting reads canonical JSON and writes it as it is: no importer, no domain types (pydantic).
    assert heavy_in(exported, (*NOT_FOR_STORE_COMMANDS, *NOT_FOR_EXPORT)) == []
    again = _gold_file(tmp_path / "more.jsonl", 25)
    imported = loaded_by("import", str(again), "--db", str(db))
    assert heavy_in(imported, NOT_FOR_STORE_COMMANDS) == []
    # Everyday tool schemas need no jsonschema, and a progress bar no tqdm when stderr is not a terminal; a
    # toolgold file is told by the first importer, so no other importer is loaded.
    assert heavy_in(imported, ("jsonschema", "referencing", "tqdm", "labeler.labels", "scorer.synthesize")) == []
    assert sorted(m for m in imported if m.startswith("scorer.importers.")) == [
        "scorer.importers.base", "scorer.importers.common", "scorer.importers.native", "scorer.importers.registry",
        "scorer.importers.tools_file"]  # tools_file (and common) for --tools
    assert heavy_in(loaded_by("users", "list", "--db", str(db)), (*NOT_FOR_STORE_COMMANDS, *NOT_FOR_EXPORT)) == []
    lines = loaded_by("export", "--db", str(db))  # to stdout, the same way
    assert heavy_in(lines, (*NOT_FOR_STORE_COMMANDS, *NOT_FOR_EXPORT)) == []


def test_every_name_and_action_of_the_lazy_store_facade_is_the_one_its_module_defines() -> None:
    code = (
        "import importlib, inspect, json, sys\n"
        "import labeler.store as s\n"
        "bare = sorted(m for m in sys.modules if m.startswith('labeler.store.') or m.startswith('sqlalchemy'))\n"
        "s.Store\n"
        "named = sorted(m for m in sys.modules if m.startswith('labeler.store.'))\n"
        "missing = [n for n in s.__all__ if n not in s._MODULE_OF]\n"
        "bad = [n for n in s.__all__ if n in s._MODULE_OF and getattr(s, n) is not getattr(\n"
        "    importlib.import_module('labeler.store.' + s._MODULE_OF[n]), n)]\n"
        "actions = {k: v for k, v in vars(s.Store).items() if not k.startswith('_') and k != 'pending_journal'}\n"
        "for name, stand_in in actions.items():\n"
        "    function = getattr(s.Store, name)\n"
        "    if not (inspect.isfunction(function) and vars(s.Store)[name] is function\n"
        "            and function.__module__ == stand_in.module):\n"
        "        bad.append(name)\n"
        "print(json.dumps({'bare': bare, 'named': named, 'missing': missing, 'bad': bad, 'actions': len(actions)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          check=True)
    found = json.loads(done.stdout)
    assert found["missing"] == [] and found["bad"] == [] and found["actions"] > 90
    # importing the package loads nothing (an import's workers name its rows without SQLAlchemy); naming
    # Store loads the facade, the engine and the tables, no aggregate
    assert found["bare"] == []
    assert found["named"] == ["labeler.store.base", "labeler.store.engine", "labeler.store.facade",
                              "labeler.store.tables"]
