"""A bad --db, a read-only database, a lock held past the timeout: one line each, exit 2, never a traceback,
never SQL parameters or transcript content; read-only commands work on a read-only database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from tests.reliability.invariants import assert_invariants

SECRET = "TRANSCRIPT-CONTENT-7Q"
TRANSCRIPT = {"format": "toolgold.transcript/1", "id": "t-secret", "messages": [{"role": "user", "content": SECRET}]}
CASE = {"format": "toolgold.gold/1", "id": "c1", "conversation_id": "t", "turn": 1, "kind": "turn",
        "split": "regression", "messages": [{"role": "user", "content": "hi"}],
        "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"x": 1}}]}}
RUN = {"format": "toolgold.run/1", "case_id": "c1", "calls": [{"name": "f", "arguments": {"x": 1}}]}


def invoke(db: str | Path, *args: str) -> tuple[int, str, str]:
    """The CLI on database ``db`` (through TOOLGOLD_DB: every command reads it, not all take --db)."""
    result = CliRunner().invoke(cli, list(args), env={"TOOLGOLD_DB": str(db)}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    files = {"transcripts": tmp_path / "t.jsonl", "gold": tmp_path / "gold.jsonl", "runs": tmp_path / "runs.jsonl"}
    files["transcripts"].write_text(json.dumps(TRANSCRIPT) + "\n")
    files["gold"].write_text(json.dumps(CASE) + "\n")
    files["runs"].write_text(json.dumps(RUN) + "\n")
    return files


def commands(inputs: dict[str, Path]) -> list[list[str]]:
    return [["init"], ["import", str(inputs["transcripts"])], ["export"], ["versions"],
            ["score", str(inputs["gold"]), str(inputs["runs"]), "--save"], ["runs", "list"],
            ["judge", "stats"], ["drift"]]


def bad_dbs(tmp_path: Path) -> list[tuple[str, str]]:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    not_db = tmp_path / "notes.txt"
    not_db.write_text("these are my notes, not a database\n" * 100)
    return [
        (str(folder), f"cannot open the database {folder}: it is a folder"),
        (str(not_db), f"cannot open the database {not_db}: file is not a database"),
        ("postgresql+psycopg://toolgold:hunter2@127.0.0.1:1/none",
         "cannot open the database postgresql+psycopg://toolgold:***@127.0.0.1:1/none: connection"),
        ("mysqlx://db.example/x", "cannot open the database mysqlx://db.example/x: unknown database type 'mysqlx'"),
        ("sqlite:///" + str(folder) + "/../" + folder.name, "it is a folder"),
    ]


@pytest.mark.parametrize("which", range(5))
@pytest.mark.parametrize("command", range(8))
def test_a_bad_db_is_one_line(which: int, command: int, inputs: dict[str, Path], tmp_path: Path) -> None:
    db, words = bad_dbs(tmp_path)[which]
    args = commands(inputs)[command]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, _, err = invoke(db, *args)
    assert code == 2, err
    assert err.startswith("error: ") and words in err, err
    assert err.count("\n") == 1, err
    assert "hunter2" not in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing created beside it


@pytest.fixture
def read_only_db(tmp_path: Path, inputs: dict[str, Path]) -> Iterator[Path]:
    """A database with one gold case and one transcript on a tmpfs remounted read-only."""
    import os

    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root (root also ignores file permissions)")
    mount = tmp_path / "ro"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    try:
        db = mount / "toolgold.db"
        # In a child process: the mount can only turn read-only once no file on it is open.
        subprocess.run([sys.executable, "-m", "labeler.cli", "import", str(inputs["gold"]), str(inputs["transcripts"])],
                       env={**os.environ, "TOOLGOLD_DB": str(db)}, check=True, capture_output=True)
        # approved regression gold is the held-out set: exporting it takes a reviewer
        subprocess.run([sys.executable, "-m", "labeler.cli", "users", "add", "rev", "--role", "reviewer"],
                       env={**os.environ, "TOOLGOLD_DB": str(db)}, check=True, capture_output=True)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        yield db
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)  # lazy: this process may still hold it


def test_read_only_commands_work_on_a_read_only_database(read_only_db: Path, inputs: dict[str, Path]) -> None:
    code, out, err = invoke(read_only_db, "export", "--user", "rev")
    assert code == 0, err
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["c1"]
    assert invoke(read_only_db, "versions")[0] == 0
    assert invoke(read_only_db, "runs", "list")[0] == 0
    code, out, err = invoke(read_only_db, "score", str(inputs["gold"]), str(inputs["runs"]))
    assert code == 0, err


@pytest.mark.parametrize("args", [["import", "{other}"], ["freeze", "regression", "--user", "root"],
                                  ["score", "{gold}", "{runs}", "--save"]])
def test_writing_commands_on_a_read_only_database_say_so(args: list[str], read_only_db: Path,
                                                         inputs: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({**TRANSCRIPT, "id": "other"}) + "\n")
    argv = [a.format(other=other, gold=inputs["gold"], runs=inputs["runs"]) for a in args]
    code, _, err = invoke(read_only_db, *argv)
    assert code == 2
    assert err == f"error: the database {read_only_db} is read-only: this command needs to write to it\n"


def test_a_lock_held_past_the_timeout_is_one_line_without_sql_or_content(
        inputs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import labeler.store.engine as engine

    db = tmp_path / "toolgold.db"
    Store(db).close()
    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 200)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        code, _, err = invoke(db, "import", str(inputs["transcripts"]))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code == 2
    assert err == (f"error: the database {db} is locked by another writer (waited 0.2 s); nothing was written: "
                   "try again\n")
    assert SECRET not in err
    assert Store(db).stats()["transcripts"] == 0
    assert_invariants(db)


def test_a_full_disk_under_the_database_is_one_line_and_loses_nothing(tmp_path: Path) -> None:
    import os

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], check=True)
    try:
        db = mount / "toolgold.db"
        small = tmp_path / "small.jsonl"
        small.write_text(json.dumps(TRANSCRIPT) + "\n")
        assert invoke(db, "import", str(small))[0] == 0
        before = Store(db).dump()
        big = tmp_path / "big.jsonl"
        big.write_text("".join(json.dumps({**TRANSCRIPT, "id": f"big-{i}", "messages": [
            {"role": "user", "content": f"{SECRET} {i} " + "x" * 20_000}]}) + "\n" for i in range(200)))
        code, _, err = invoke(db, "import", str(big))
        assert code == 2
        assert err == f"error: the database {db}: the disk is full; nothing was written\n"
        assert SECRET not in err
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert Store(db).dump() == before
        assert_invariants(db)
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)


def test_a_label_save_under_a_held_lock_raises_database_busy_and_lands_once_released(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The label page's save: a lock held past the timeout is a ``DatabaseBusy`` (one line, nothing written),
    and the same save goes through once the lock is released (the page retries it)."""
    import labeler.store.engine as engine
    from labeler.labels import LabelBody
    from labeler.store import DatabaseBusy, StoreError

    monkeypatch.setattr(engine, "BUSY_TIMEOUT_MS", 200)
    db = tmp_path / "toolgold.db"
    store = Store(db)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    tr = tmp_path / "t.jsonl"
    tr.write_text(json.dumps({"format": "toolgold.transcript/1", "id": "t1", "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}) + "\n")
    assert invoke(db, "import", str(tr))[0] == 0
    [state] = store.turn_states("t1", "ann")
    body = LabelBody(decision="clarify", rationale=f"typed while locked {SECRET}")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseBusy) as raised:
            store.save_label("t1", state.message_index, "ann", body, version=0)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert isinstance(raised.value, StoreError)
    assert str(raised.value) == (f"the database {db} is locked by another writer (waited 0.2 s); nothing was "
                                 "written: try again")
    assert store.get_label("t1", state.message_index, "ann") is None
    record = store.save_label("t1", state.message_index, "ann", body, version=0)
    assert record.version == 1 and record.body.rationale == body.rationale


def test_without_fcntl_the_cli_starts_and_a_sqlite_import_is_one_line(tmp_path: Path) -> None:
    """Platforms without ``fcntl`` (Windows): no crash when the store is imported, read-only commands work,
    and an import into a SQLite file (whose stage files are flock'd) says why in one line, writing nothing."""
    db = tmp_path / "toolgold.db"
    Store(db).close()
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps({"format": "toolgold.transcript/1", "id": "x",
                               "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    child = ("import sys; sys.modules['fcntl'] = None\n"
             "from labeler.cli import cli\n"
             "sys.exit(cli.main(sys.argv[1:], prog_name='toolgold'))\n")
    env = {"TOOLGOLD_DB": str(db), "PATH": "/usr/bin:/bin"}
    listed = subprocess.run([sys.executable, "-c", child, "versions"], capture_output=True, text=True, env=env,
                            cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert listed.returncode == 0, listed.stderr
    done = subprocess.run([sys.executable, "-c", child, "import", str(src)], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[2], timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "fcntl" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert Store(db).stats()["transcripts"] == 0
    assert not list(tmp_path.glob("*.stage"))
