"""A lock held by another writer past the timeout, on SQLite (another connection in BEGIN IMMEDIATE) and on
PostgreSQL (another session holding EXCLUSIVE locks on every table, the store's lock_timeout short): every
command that writes says so in one line, exits 2, shows no traceback, and writes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from labeler.cli import cli
from labeler.store import Store
from labeler.store.tables import Base
from tests.judge.kit import KEY, export_version, orders_case, seeded, shoes_case, shoes_run, write_jsonl
from tests.reliability.invariants import assert_invariants
from tests.reliability.test_kill9 import FakeAnthropic
from tests.review.kit import gold, put, transcript

TIMEOUT_MS = 200

# Every command that writes to the database, with what it needs ({gold}, {runs}, {runs2}, {new}).
WRITERS: dict[str, list[str]] = {
    "import": ["import", "{new}"],
    "users add": ["users", "add", "zed", "--role", "annotator", "--user", "root"],
    "users set-role": ["users", "set-role", "ann", "reviewer", "--user", "root"],
    "users deactivate": ["users", "deactivate", "ann", "--user", "root"],
    "freeze": ["freeze", "regression", "--user", "rita"],
    "score --save": ["score", "{gold}", "{runs2}", "--save"],
    "score --judge": ["score", "{gold}", "{runs2}", "--judge"],
    "runs delete": ["runs", "delete", "run-1", "--yes", "--user", "root"],
    "drift --tools": ["drift", "--tools", "{tools}", "--user", "rita"],
    "export --version": ["export", "--version", "regression-v1", "--user", "rita"],
    "export --version -o": ["export", "--version", "regression-v1", "--user", "rita", "-o", "{out}"],
    "export --hf": ["export", "--hf", "{hf}", "--user", "rita"],
    "judge": ["judge"],
}


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, isolated_db: Path) -> str:
    return str(isolated_db) if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


def invoke(db: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"TOOLGOLD_DB": db, **(env or {})}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def files(db: str, tmp_path: Path) -> dict[str, str]:
    """Gold frozen as regression-v1, a saved run, a pending judge question, and one approved case not frozen
    yet (so freeze has something to write)."""
    store = Store(db)
    try:
        seeded(store, shoes_case(), orders_case())
        store.add_user("bob", "annotator", actor="root")
        gold_file = export_version(store, "regression-v1", tmp_path / "gold.jsonl")
        put(store, gold("later#t2", customer="C-9"))
    finally:
        store.close()
    out = {"gold": str(gold_file),
           "runs": str(write_jsonl(tmp_path / "runs.jsonl", [shoes_run()])),
           "runs2": str(write_jsonl(tmp_path / "runs2.jsonl", [shoes_run("running shoes, waterproof").model_copy(
               update={"run_id": "run-2"})])),
           "new": str(write_jsonl(tmp_path / "new.jsonl", [transcript("brand-new")])),
           "tools": str(tmp_path / "tools.json"), "out": str(tmp_path / "exported.jsonl"),
           "hf": str(tmp_path / "hf")}
    Path(out["tools"]).write_text('[{"name": "search_products", "parameters": {"type": "object", "properties": '
                                  '{"q": {"type": "string"}}}}]')
    no_key = {"ANTHROPIC_API_KEY": "", "TOOLGOLD_JUDGE_MODEL": ""}
    assert invoke(db, "score", out["gold"], out["runs"], "--save", env=no_key)[0] in (0, 1)  # 1: a gate failed
    assert invoke(db, "score", out["gold"], out["runs"], "--judge", env=no_key)[0] in (0, 1)
    store = Store(db)
    try:
        assert [r.run_id for r in store.list_runs()] == ["run-1"]
        assert store.pending_judge_questions()
    finally:
        store.close()
    return out


@contextmanager
def lock_held(db: str) -> Iterator[None]:
    """Another writer holds the database until the block ends."""
    if "://" not in db:
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    engine = create_engine(db)
    conn = engine.connect()
    try:
        tables = ", ".join(t.name for t in Base.metadata.sorted_tables)
        conn.execute(text(f"LOCK TABLE {tables} IN EXCLUSIVE MODE"))  # readers pass, writers wait
        yield
    finally:
        conn.rollback()
        conn.close()
        engine.dispose()


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_every_writing_command_waits_then_says_so_in_one_line_and_writes_nothing(
        command: str, db: str, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    import labeler.store.engine as engine

    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", TIMEOUT_MS)
    argv = [a.format(**files) for a in WRITERS[command]]
    before = Store(db).dump()
    api = FakeAnthropic(delay=0)
    try:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}
        with lock_held(db):
            code, out, err = invoke(db, *argv, env=env)
    finally:
        api.close()
    assert code == 2, (code, err)
    *progress, last = err.splitlines()
    assert last.startswith("error: the database ") and last.endswith(
        f"is locked by another writer (waited {TIMEOUT_MS / 1000:g} s); nothing was written: try again"), err
    assert all(line.startswith("judge: asking") for line in progress), err  # the judge says what it starts
    assert "Traceback" not in err, err
    assert Store(db).dump() == before
    assert not Path(files["out"]).exists()  # an export the store could not record leaves no file
    assert not Path(files["hf"]).exists() or not list(Path(files["hf"]).rglob("*.*"))  # nor a dataset folder
    assert out == ""  # nor lines on stdout: an export to stdout is recorded, a scored run saved, before printing
    assert_invariants(db)
