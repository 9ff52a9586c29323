"""A full disk, for real: a small tmpfs the test mounts (as root; CI runs as root) and fills. Importing into,
saving to, exporting from and scoring with -o onto the full disk: one line, exit 2, nothing half-written,
and the database still keeps every invariant (tests/reliability/invariants.py)."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from tests.judge.kit import export_version, orders_case, seeded, shoes_case, shoes_run, write_jsonl
from tests.reliability.invariants import assert_invariants
from tests.review.kit import transcript

FULL = "the disk is full; nothing was written"


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"TOOLGOLD_DB": str(db), "ANTHROPIC_API_KEY": ""},
                                catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def fill(mount: Path) -> None:
    """Take every free byte of the mount."""
    fd = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        while True:
            try:
                os.write(fd, b"\0" * 4096)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    finally:
        os.close(fd)
    os.sync()


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs holding a database with frozen gold and a saved run; unmounted whatever happens."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs to fill needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "--lazy", str(mount)], check=True)  # lazy: a connection may still hold a file


@pytest.fixture
def full(disk: Path, tmp_path: Path) -> dict[str, Any]:
    db = disk / "toolgold.db"
    store = Store(db)
    try:
        seeded(store, shoes_case(), orders_case())
        gold = export_version(store, "regression-v1", tmp_path / "gold.jsonl")
    finally:
        store.close()
    runs = write_jsonl(tmp_path / "runs.jsonl", [shoes_run()])
    new = write_jsonl(tmp_path / "new.jsonl", [transcript(f"new-{i}", "x" * 50_000) for i in range(20)])
    before = dump(db)
    fill(disk)
    return {"before": before, "db": db, "gold": gold, "runs": runs, "new": new, "disk": disk}


def dump(db: Path) -> dict[str, Any]:
    store = Store(db)
    try:
        return store.dump()
    finally:
        store.close()  # the last connection gone: SQLite drops its -wal now, not at some later collection


def empty_stage_size(folder: Path) -> int:
    """The bytes of an import's stage file before any row is written into it (its pages are large)."""
    from labeler.store import staging

    probe = folder / "probe.stage"
    with contextlib.closing(sqlite3.connect(probe)) as conn:
        conn.executescript(staging.STAGE_PAGE_SIZE + staging.STAGE_SCHEMA)
    size = probe.stat().st_size
    probe.unlink()
    return size


def only_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("what", ["import", "score --save"])
def test_writing_to_a_database_on_a_full_disk_is_one_line_and_writes_nothing(what: str,
                                                                           full: dict[str, Any]) -> None:
    db = full["db"]
    before = full["before"]
    argv = (["import", str(full["new"])] if what == "import"
            else ["score", str(full["gold"]), str(full["runs"]), "--save"])
    code, _, err = invoke(db, *argv)
    assert code == 2, err
    assert only_line(err) == f"error: the database {db}: {FULL}\n"
    (full["disk"] / "filler").unlink()  # room again: what is stored is exactly what was there
    assert dump(db) == before
    assert_invariants(db)


def test_an_import_whose_workers_fill_the_disk_while_staging_is_one_line_and_writes_nothing(
        full: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Room for the stage file itself, not for the rows the worker converting the input writes into it.
    import labeler.cli.data as data_cmd
    from labeler.cli import import_pool

    handed: list[int] = []
    submit = import_pool.ImportPool.submit

    def recorded(self: import_pool.ImportPool, chunk: import_pool.Chunk) -> None:
        handed.append(chunk.count)
        submit(self, chunk)

    monkeypatch.setattr(data_cmd, "MIN_BYTES", 0)
    monkeypatch.setattr(data_cmd, "usable_cores", lambda: 2)
    monkeypatch.setattr(import_pool.ImportPool, "submit", recorded)
    db, disk = full["db"], full["disk"]
    filler = disk / "filler"
    os.truncate(filler, filler.stat().st_size - empty_stage_size(tmp_path) - 256 * 1024)
    code, _, err = invoke(db, "import", str(full["new"]))
    assert handed == [20]  # converted, and staged, by a worker
    assert code == 2, err
    assert only_line(err) == f"error: the database {db}: {FULL}\n"
    assert sorted(p.name for p in disk.iterdir() if not p.name.startswith("toolgold.db-")) == ["filler",
                                                                                                "toolgold.db"]
    assert not list(disk.glob("*.stage"))
    filler.unlink()
    assert dump(db) == full["before"]
    assert_invariants(db)


@pytest.mark.parametrize("what", ["export", "export --version", "score -o"])
def test_writing_an_output_onto_a_full_disk_is_one_line_and_leaves_no_file(what: str, full: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    # The database lives elsewhere, with room: only the output's disk is full.
    db = tmp_path / "roomy.db"
    store = Store(db)
    try:
        seeded(store, shoes_case(), orders_case())
    finally:
        store.close()
    before = dump(db)
    out = full["disk"] / "out.jsonl"
    argv = {"export": ["export", "--user", "rita", "-o", str(out)],
            "export --version": ["export", "--version", "regression-v1", "--user", "rita", "-o", str(out)],
            "score -o": ["score", str(full["gold"]), str(full["runs"]), "-o", str(out)]}[what]
    code, _, err = invoke(db, *argv)
    assert code == 2, err
    assert only_line(err) == f"error: cannot write {out}: No space left on device\n"
    assert sorted(p.name for p in full["disk"].iterdir()) == ["filler", "toolgold.db"]  # no file, no temporary
    assert dump(db) == before
    assert_invariants(db)
    (full["disk"] / "filler").unlink()
    assert_invariants(full["db"])
