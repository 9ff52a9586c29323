"""Every file a command writes goes through labeler.files: atomic for regular files (an exclusively created
temporary file, never a predictable NAME.part a planted symlink could redirect), written directly to
FIFOs and devices (never replaced), and every failure is one line, exit 2, with the target untouched."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.files import OutputError, output_file
from tests.reliability.invariants import assert_invariants

CASE = {"format": "toolgold.gold/1", "id": "c1", "conversation_id": "t", "turn": 1, "kind": "turn",
        "split": "regression", "messages": [{"role": "user", "content": "hi"}],
        "expected": {"behavior": "call", "calls": [{"name": "f", "arguments": {"x": 1}}]}}
RUN = {"format": "toolgold.run/1", "case_id": "c1", "calls": [{"name": "f", "arguments": {"x": 1}}]}
IS_ROOT = os.geteuid() == 0


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def gold_db(tmp_path: Path) -> tuple[Path, str]:
    """A store with 400 gold cases (about 200 KB exported), the gold file and the export on stdout."""
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({**CASE, "id": f"c{i:04d}", "rationale": "r" * 300}) + "\n"
                            for i in range(400)))
    assert invoke("import", str(gold))[0] == 0
    assert invoke("users", "add", "rev", "--role", "reviewer")[0] == 0  # the held-out set takes a reviewer
    code, out, _ = invoke("export", "--user", "rev")
    assert code == 0 and len(out) > 150_000
    return gold, out


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: a real full disk."""
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs to fill needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def _read_fifo(path: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(path, "rb") as fh:
            into.append(fh.read())
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


def test_export_to_a_fifo_writes_through_it_and_keeps_it(gold_db: tuple[Path, str], tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = _read_fifo(fifo, got)
    code, _, err = invoke("export", "--user", "rev", "-o", str(fifo))
    reader.join(10)
    assert code == 0, err
    assert got == [gold_db[1].encode()]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["gold.jsonl", "pipe", "toolgold.db"] + [
        p.name for p in tmp_path.iterdir() if p.name.startswith("toolgold.db-")])


def _full_device(tmp_path: Path) -> Path:
    """A character device that is always full: /dev/full's own numbers, made in tmp_path when root (so a
    bug that replaces it cannot touch the real one); /dev/full itself otherwise (a user cannot replace it)."""
    if not IS_ROOT:
        return Path("/dev/full")
    device = tmp_path / "full"
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    return device


@pytest.mark.parametrize("command", [["export", "--user", "rev"], ["score", "{gold}", "{runs}"]])
def test_writing_into_a_full_device_is_one_line_and_the_device_stays(
        command: list[str], gold_db: tuple[Path, str], tmp_path: Path) -> None:
    device = _full_device(tmp_path)
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(RUN) + "\n")
    args = [a.format(gold=gold_db[0], runs=runs) for a in command]
    code, _, err = invoke(*args, "-o", str(device))
    assert code == 2
    assert err == f"error: cannot write {device}: No space left on device\n"
    assert stat.S_ISCHR(os.lstat(device).st_mode)


def test_a_planted_part_symlink_does_not_redirect_the_export(gold_db: tuple[Path, str], tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "gold-out.jsonl"
    (tmp_path / "gold-out.jsonl.part").symlink_to(victim)
    code, _, err = invoke("export", "--user", "rev", "-o", str(out))
    assert code == 0, err
    assert victim.read_text() == "precious\n"
    assert out.read_text() == gold_db[1]
    assert not out.is_symlink()


def test_an_export_has_the_usual_permissions(gold_db: tuple[Path, str], tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "gold-out.jsonl"
        assert invoke("export", "--user", "rev", "-o", str(out))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_full_disk_leaves_the_previous_export_and_no_temporary_file(
        gold_db: tuple[Path, str], tiny_disk: Path) -> None:
    out = tiny_disk / "gold.jsonl"
    out.write_text("previous\n")
    code, _, err = invoke("export", "--user", "rev", "-o", str(out))
    assert code == 2
    assert err == f"error: cannot write {out}: No space left on device\n"
    assert out.read_text() == "previous\n"
    assert [p.name for p in tiny_disk.iterdir()] == ["gold.jsonl"]
    assert_invariants(gold_db[0].parent / "toolgold.db")


@pytest.mark.parametrize("command", [["export", "--user", "rev"], ["export", "--version", "regression-v1"],
                                     ["score", "{gold}", "{runs}"], ["runs", "baseline", "x"]])
def test_output_into_a_missing_folder_is_refused_before_any_work(
        command: list[str], gold_db: tuple[Path, str], tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(RUN) + "\n")
    out = tmp_path / "nope" / "out.jsonl"
    args = [a.format(gold=gold_db[0], runs=runs) for a in command]
    code, _, err = invoke(*args, "-o", str(out))
    assert code == 2
    assert err == f"error: cannot write {out}: the folder {out.parent} does not exist\n"
    assert not out.parent.exists()


def test_a_failing_block_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "x.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError), output_file(out) as fh:
        fh.write("half")
        raise RuntimeError("boom")
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]


def test_exclusive_never_replaces(tmp_path: Path) -> None:
    out = tmp_path / "x.txt"
    out.write_text("old")
    with pytest.raises(OutputError, match="already exists"), output_file(out, exclusive=True) as fh:
        fh.write("new")
    assert out.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.txt"]
