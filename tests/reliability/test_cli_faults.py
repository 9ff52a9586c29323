"""Faults the CLI must turn into one line and an exit code, with nothing written: the wrong role for a
frozen export, the rejects file of --skip-invalid, a bad --db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from tests.reliability.invariants import assert_invariants
from tests.review.test_cli_gold import labeled  # noqa: F401  (a fixture)

GOOD = {"format": "toolgold.transcript/1", "id": "good", "messages": [{"role": "user", "content": "hi"}]}


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("extra", [[], ["--version", "regression-v1"]])
def test_export_hf_checks_the_role_before_creating_any_folder(
        extra: list[str], labeled: Store, tmp_path: Path) -> None:  # noqa: F811
    labeled.freeze("regression", actor="rita")
    target = tmp_path / "hf" / "nested"
    code, _, err = invoke("export", "--hf", str(target), "--user", "ann", *extra)
    assert code == 2
    assert err.startswith("error: ") and "export a frozen gold version" in err and err.count("\n") == 1, err
    assert not (tmp_path / "hf").exists()


def test_export_hf_records_the_export_only_once_every_file_is_in_place(
        labeled: Store, tmp_path: Path) -> None:  # noqa: F811
    labeled.freeze("regression", actor="rita")
    target = tmp_path / "hf"
    (target / "toolgold" / "manifest.json").mkdir(parents=True)  # the last file cannot take its name
    before = labeled.dump()
    code, out, err = invoke("export", "--hf", str(target), "--user", "rita")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and "manifest.json" in err, err
    assert out == "" and "Traceback" not in err
    assert labeled.dump() == before  # no audit event of an export that did not happen
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == ["toolgold",
                                                                                  "toolgold/manifest.json"]
    (target / "toolgold" / "manifest.json").rmdir()
    code, _, err = invoke("export", "--hf", str(target), "--user", "rita")
    assert code == 0, err
    assert (target / "toolgold" / "manifest.json").is_file() and (target / "data" / "regression.jsonl").is_file()
    assert labeled.dump() != before  # now it happened, and is recorded


def test_export_version_with_the_wrong_role_writes_no_file(labeled: Store, tmp_path: Path) -> None:  # noqa: F811
    labeled.freeze("regression", actor="rita")
    out = tmp_path / "v1.jsonl"
    code, _, err = invoke("export", "--version", "regression-v1", "--user", "ann", "-o", str(out))
    assert code == 2 and "export a frozen gold version" in err
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".v1")] == []


# --- import --skip-invalid and its rejects file ----------------------------------------------------------

def _mixed(tmp_path: Path) -> Path:
    data = tmp_path / "mixed.jsonl"
    data.write_text(json.dumps(GOOD) + "\n{not json\n")
    return data


def test_a_rejects_file_in_a_missing_folder_is_refused_before_importing(store: Store, tmp_path: Path) -> None:
    rejects = tmp_path / "nope" / "rejects.txt"
    code, _, err = invoke("import", "--skip-invalid", "--rejects", str(rejects), str(_mixed(tmp_path)))
    assert code == 2
    assert err == f"error: cannot write {rejects}: the folder {rejects.parent} does not exist\n"
    assert store.stats()["transcripts"] == 0


def test_an_earlier_rejects_file_is_never_overwritten(store: Store, tmp_path: Path) -> None:
    rejects = tmp_path / "rejects.txt"
    rejects.write_text("from last week\n")
    code, _, err = invoke("import", "--skip-invalid", "--rejects", str(rejects), str(_mixed(tmp_path)))
    assert code == 0, err
    assert rejects.read_text() == "from last week\n"
    chosen = tmp_path / "rejects-2.txt"
    assert f"1 rejected records listed in {chosen} ({rejects} already exists)" in err
    assert chosen.read_text().startswith(f"{tmp_path / 'mixed.jsonl'}:2: not valid JSON")
    assert store.stats()["transcripts"] == 1


def test_the_default_rejects_file_is_never_overwritten_either(store: Store, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("toolgold-rejects.txt").write_text("old\n")
    Path("toolgold-rejects-2.txt").write_text("older\n")
    code, _, err = invoke("import", "--skip-invalid", str(_mixed(tmp_path)))
    assert code == 0, err
    assert Path("toolgold-rejects.txt").read_text() == "old\n"
    assert Path("toolgold-rejects-2.txt").read_text() == "older\n"
    assert Path("toolgold-rejects-3.txt").read_text().count("\n") == 1


def test_a_full_disk_for_the_rejects_loses_nothing(store: Store, tmp_path: Path) -> None:
    from tests.reliability.test_output_files import IS_ROOT

    if not IS_ROOT:
        pytest.skip("mounting a tmpfs to fill needs root")
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mount)], check=True)
    try:
        (mount / "filler").write_bytes(b"x" * 4096)
        data = tmp_path / "many.jsonl"
        data.write_text(json.dumps(GOOD) + "\n" + "".join("{bad json " + "y" * 200 + "\n" for _ in range(100)))
        code, _, err = invoke("import", "--skip-invalid", "--rejects", str(mount / "rejects.txt"), str(data))
        assert code == 2
        assert err == f"error: cannot write {mount / 'rejects.txt'}: No space left on device\n"
        assert store.stats()["transcripts"] == 0  # nothing imported: the rejects could not be kept
        assert_invariants(store.url)
    finally:
        subprocess.run(["umount", str(mount)], check=True)
