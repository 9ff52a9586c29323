"""The pending-edit journal's entry format (labeler/store/pending.py), pinned: format-1 entries as the app writes
them read back and are rewritten byte for byte; entries that must be refused are, each with its own reason, set
aside (kept as ``.unreadable``), and never a traceback. A change to the format has to change these files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from labeler.store.pending import PendingJournal, UnreadablePending, _parse

HERE = Path(__file__).parent / "pending"
VALID = sorted((HERE / "valid").glob("*.json"))
INVALID = sorted((HERE / "invalid").glob("*.json"))

REFUSED = {
    "format-2.json": "not a format-1 journal entry",
    "no-format.json": "not a format-1 journal entry",
    "missing-body.json": "missing 'body'",
    "version-as-text.json": "wrong field types",
    "unknown-decision.json": "body does not validate (1 error(s))",
    "torn.json": "not valid JSON: Unterminated string",
    "nan-version.json": "NaN",
    "not-utf8.json": "not UTF-8",
}


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_a_format_1_entry_reads_back_and_is_written_again_byte_for_byte(path: Path, tmp_path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    journal = PendingJournal(tmp_path / "journal")
    key = (record["transcript_id"], record["message_index"], record["annotator"])
    journal.directory.mkdir()
    shutil.copy(path, journal.path_for(*key))
    edit = journal.get(*key)
    assert edit is not None and edit.base_version == record["base_version"] and edit.submit == record["submit"]
    journal.remove(*key)
    journal.put(edit, sync=False)
    assert journal.path_for(*key).read_bytes() == path.read_bytes()


def test_every_refused_entry_has_its_expected_reason() -> None:
    assert sorted(p.name for p in INVALID) == sorted(REFUSED)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_a_refused_entry_is_one_line_set_aside_and_then_gone(path: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError) as parsed:
        _parse(path.read_bytes())
    assert REFUSED[path.name] in str(parsed.value)
    journal = PendingJournal(tmp_path / "journal")
    journal.directory.mkdir()
    key = ("tau/airline-7", 4, "ann")
    target = journal.path_for(*key)
    shutil.copy(path, target)
    with pytest.raises(UnreadablePending) as refused:
        journal.get(*key)
    message = str(refused.value)
    assert "\n" not in message and message.startswith(f"{target}: unreadable unsaved edit") and REFUSED[
        path.name] in message
    assert journal.get(*key) is None and journal.entries() == []
    assert target.with_name(target.name + ".unreadable").read_bytes() == path.read_bytes()
