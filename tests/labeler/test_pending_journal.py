"""The pending-edit journal (issue 12): an edit the database was too busy for, kept on disk until it lands."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labeler.labels import LabelBody, TrajectoryBody
from labeler.store import PendingEdit, PendingJournal, Store, UnreadablePending
from labeler.store.pending import PENDING_DIR_ENV, journal_dir


def edit(text: str = "ask which booking", *, index: int | None = 2, submit: bool = False) -> PendingEdit:
    body = TrajectoryBody(rationale=text) if index is None else LabelBody(decision="clarify", rationale=text)
    return PendingEdit("tau-1", index, "ann", body, base_version=3, submit=submit)


def test_an_entry_round_trips_and_is_gone_once_removed(tmp_path: Path) -> None:
    journal = PendingJournal(tmp_path / "db.pending")
    journal.put(edit("first"))
    journal.put(edit("second, replacing the first", submit=True))
    journal.put(edit("a trajectory edit", index=None))
    got = journal.get("tau-1", 2, "ann")
    assert got is not None
    assert (got.body, got.base_version, got.submit) == (LabelBody(decision="clarify",
                                                                  rationale="second, replacing the first"), 3, True)
    trajectory = journal.get("tau-1", None, "ann")
    assert trajectory is not None and isinstance(trajectory.body, TrajectoryBody)
    assert journal.get("tau-1", 2, "bob") is None and journal.get("tau-1", 4, "ann") is None
    assert len(journal.entries()) == 2
    assert not [p for p in journal.directory.iterdir() if p.name.startswith(".tmp-")]  # no temporaries left
    journal.remove("tau-1", 2, "ann")
    journal.remove("tau-1", 2, "ann")  # twice is fine
    assert journal.get("tau-1", 2, "ann") is None
    assert len(journal.entries()) == 1


def test_the_journal_is_private_and_lives_beside_a_sqlite_file(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PENDING_DIR_ENV, raising=False)
    store = Store(tmp_path / "toolgold.db")
    journal = store.pending_journal()
    assert journal.directory == tmp_path / "toolgold.db.pending"
    journal.put(edit())
    assert journal.directory.stat().st_mode & 0o077 == 0
    monkeypatch.setenv(PENDING_DIR_ENV, str(tmp_path / "elsewhere"))
    assert journal_dir(store.url) == tmp_path / "elsewhere"
    monkeypatch.delenv(PENDING_DIR_ENV)
    assert "secret" not in str(journal_dir("postgresql+psycopg://u:secret@db/toolgold"))
    assert journal_dir("postgresql+psycopg://u:a@db/toolgold") == journal_dir("postgresql+psycopg://u:b@db/toolgold")
    store.close()


@pytest.mark.parametrize("content", [
    b'{"format": 1, "transcript_id": "tau-1", "message_index": 2, "annotator": "ann", "base_ver',  # torn
    b"",
    b"\xff\xfe not utf-8",
    b'{"format": 1, "transcript_id": "tau-1", "message_index": 2, "annotator": "ann", "base_version": NaN,'
    b' "submit": false, "body": {}}',
    b'{"format": 1, "transcript_id": "tau-1", "message_index": 2, "annotator": "ann", "base_version": 1,'
    b' "submit": false, "body": {"decision": "launch the rockets"}}',
    b'{"format": 99}',
    b"[1, 2, 3]",
])
def test_an_unreadable_entry_is_one_line_set_aside_and_skipped(tmp_path: Path, content: bytes) -> None:
    journal = PendingJournal(tmp_path / "db.pending")
    journal.put(edit())
    path = journal.path_for("tau-1", 2, "ann")
    path.write_bytes(content)
    with pytest.raises(UnreadablePending) as caught:
        journal.get("tau-1", 2, "ann")
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    assert journal.get("tau-1", 2, "ann") is None  # skipped from now on
    kept = path.with_name(path.name + ".unreadable")
    assert kept.read_bytes() == content  # kept for an operator, not deleted
    assert journal.entries() == []
    journal.put(edit("typed again"))  # a new edit of the same turn is journaled as usual
    again = journal.get("tau-1", 2, "ann")
    assert again is not None and again.body.rationale == "typed again"


def test_an_entry_naming_another_label_is_not_restored_into_this_one(tmp_path: Path) -> None:
    journal = PendingJournal(tmp_path / "db.pending")
    journal.put(edit())
    os.replace(journal.path_for("tau-1", 2, "ann"), journal.path_for("tau-1", 2, "bob"))
    with pytest.raises(UnreadablePending, match="names another label"):
        journal.get("tau-1", 2, "bob")
    assert journal.get("tau-1", 2, "bob") is None


def test_a_failed_write_leaves_the_previous_entry_and_no_temporary(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    journal = PendingJournal(tmp_path / "db.pending")
    journal.put(edit("the earlier edit"))

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        journal.put(edit("the later edit"))
    monkeypatch.undo()
    got = journal.get("tau-1", 2, "ann")
    assert got is not None and got.body.rationale == "the earlier edit"
    assert [p.name for p in journal.directory.iterdir()] == [journal.path_for("tau-1", 2, "ann").name]


def test_an_edit_holding_nan_is_refused_not_journaled_as_null(tmp_path: Path) -> None:
    from scorer.canonical import NonFiniteNumber
    from scorer.model import Call

    journal = PendingJournal(tmp_path / "db.pending")
    journal.put(edit("kept"))
    body = LabelBody(decision="different", calls=(Call(name="refund", arguments={"amount": float("nan")}),))
    with pytest.raises(NonFiniteNumber, match=r"^calls\[0\]\.arguments\.amount: NaN is not a JSON number$"):
        journal.put(PendingEdit("tau-1", 2, "ann", body, base_version=3))
    got = journal.get("tau-1", 2, "ann")
    assert got is not None and got.body.rationale == "kept"  # the entry before is untouched
    assert not [p for p in journal.directory.iterdir() if p.name.startswith(".tmp-")]
