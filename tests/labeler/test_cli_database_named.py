"""A database failure mid-command names the database the command ran on (its --db), through Click's
public API (``Context.args``), without ``Context.protected_args`` (deprecated since Click 8.2)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy.exc import OperationalError

from labeler.cli import cli
from labeler.store import Store


def locked(*_: object, **__: object) -> int:
    raise OperationalError("UPDATE review_items ...", {}, Exception("database is locked"))


@pytest.mark.parametrize("form", ["--db", "--db="])
def test_a_database_failure_names_the_db_given_and_warns_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  form: str) -> None:
    db = tmp_path / "other.db"
    monkeypatch.setattr(Store, "sync_review_queue", locked)
    args = ["init", "--db", str(db)] if form == "--db" else ["init", f"--db={db}"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: the database ") and str(db) in line and "locked" in line, line
