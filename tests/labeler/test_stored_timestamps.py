"""Every timestamp the store writes is stored in the one form its ``Timestamp`` columns use.

On SQLite that form is SQLAlchemy's fixed-width UTC ``YYYY-MM-DD HH:MM:SS.ffffff``: SQL orders and compares the
text, so one value written in another form (an ISO string with ``T`` and ``Z``, say, by a raw-SQL path such as
the import's publish step) would sort wrongly against all the others.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import tables as t

STORED = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$")


def timestamp_columns() -> list[tuple[str, str]]:
    return [(table.name, column.name) for table in t.Base.metadata.sorted_tables for column in table.columns
            if isinstance(column.type, t.Timestamp)]


def test_every_timestamp_an_import_writes_is_in_the_stored_form(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    result = CliRunner().invoke(cli, ["init", "--demo-if-empty", "--db", str(db)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    con = sqlite3.connect(db)
    try:
        checked = 0
        for table, column in timestamp_columns():
            for (value,) in con.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL"):
                assert isinstance(value, str) and STORED.match(value), f"{table}.{column} = {value!r}"
                checked += 1
    finally:
        con.close()
    assert checked > 100  # transcripts, tool schemas, gold cases and the audit all wrote some
