"""The pending-edit journal: what a person typed that the database could not take yet, kept on disk.

A save that finds the database busy (a lock held past ``busy_timeout``, a disk error) leaves the edit in the
session; a reload or a server restart starts a new session, so without this the edit would be gone. The
journal keeps it beside the database, outside it (the database is the thing that is locked): one small JSON
file per annotator and turn (or trajectory) in a per-deployment directory, ``<db>.pending/`` for a SQLite
file. Each write goes to a temporary file created exclusively in that directory (``mkstemp``) and is renamed
over the entry, so an entry is either the previous complete one or the new complete one, never half of each;
the app writes it before a draft save is tried (not flushed: it survives the process, for a reload while the
save waits on the lock) and again once the save found the database busy (fsync'd, the directory too: it
survives the machine). The next page load for that annotator and turn restores the entry, retries
it, and the entry is removed only after the store confirmed the save (or the person chose the stored
version after a conflict).

Why files on the server rather than the browser's ``localStorage``: the server is where the save is retried
and confirmed, it survives a reload in any tab or browser the annotator signs in from, and it keeps the
decision bar's event ordering untouched. What it does not cover: a PostgreSQL deployment with several app
servers keeps one journal per server's disk (``TOOLGOLD_PENDING_DIR``), so a reload that lands on another
server does not see the edit until the annotator is back on the first one.

An entry that cannot be read (torn by a filesystem that lost data, edited by hand, written by another
version) is moved aside to ``<entry>.unreadable`` — kept for an operator, never deleted — and reported as
one line; it is skipped, never a traceback. An entry the store refuses for a reason other than a busy
database or a conflict (the label it was based on is gone, say) stays until the annotator, shown what they
typed and why, chooses to discard it: it is then moved aside to ``<entry>.discarded``, never deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from labeler.labels import LabelBody, TrajectoryBody
from labeler.store.engine import StoreError, now_iso
from scorer import strict_json
from scorer.errors import InvalidRecord

PENDING_DIR_ENV = "TOOLGOLD_PENDING_DIR"
FORMAT = 1
_TEMP_PREFIX = ".tmp-"


class UnreadablePending(StoreError):
    """A journal entry that could not be read; the message is one line naming the file."""


@dataclass(frozen=True)
class PendingEdit:
    """One unsaved edit: the body as typed, the stored version it was based on, and whether it was a submit."""

    transcript_id: str
    message_index: int | None  # None: the transcript's trajectory label
    annotator: str
    body: LabelBody | TrajectoryBody
    base_version: int
    submit: bool = False
    written_at: str = ""


def journal_dir(url: str) -> Path:
    """Where the journal of the database at ``url`` lives: ``TOOLGOLD_PENDING_DIR`` when set, else
    ``<file>.pending`` beside a SQLite file, else a per-database directory under the user's state home."""
    override = os.environ.get(PENDING_DIR_ENV)
    if override:
        return Path(override)
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///").split("?", 1)[0] + ".pending")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    # The URL without its password names the deployment; hashed, as it is not a file name.
    try:
        from sqlalchemy.engine import make_url

        shown = make_url(url).render_as_string(hide_password=True)
    except Exception:
        shown = url.split("@", 1)[-1]
    return Path(state) / "toolgold" / "pending" / hashlib.sha256(shown.encode()).hexdigest()[:16]


class PendingJournal:
    """The journal in ``directory`` (created on the first write, private to the server's user)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def path_for(self, transcript_id: str, message_index: int | None, annotator: str) -> Path:
        raw = f"{annotator}\x00{transcript_id}\x00{'trajectory' if message_index is None else message_index}"
        return self.directory / (hashlib.sha256(raw.encode()).hexdigest()[:32] + ".json")

    def put(self, edit: PendingEdit, *, sync: bool = True) -> None:
        """Write ``edit``, replacing the entry for its annotator and turn; ``OSError`` when it cannot. With
        ``sync`` (the default) it is fsync'd, so it survives a crash of the machine; without, it survives the
        process (a reload, a restart of the server) and costs no disk flush."""
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        record = {"format": FORMAT, "transcript_id": edit.transcript_id, "message_index": edit.message_index,
                  "annotator": edit.annotator, "base_version": edit.base_version, "submit": edit.submit,
                  "written_at": edit.written_at or now_iso(), "body": edit.body.model_dump(mode="json")}
        edit.body.to_json()  # NonFiniteNumber for a NaN or ±Infinity, which model_dump would have made null
        data = json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False).encode()
        target = self.path_for(edit.transcript_id, edit.message_index, edit.annotator)
        fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=".json", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                if sync:
                    os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        if sync:
            self._sync_dir()

    def get(self, transcript_id: str, message_index: int | None, annotator: str) -> PendingEdit | None:
        """The pending edit for this annotator and turn, or None. An entry that cannot be read is moved aside
        and ``UnreadablePending`` raised (one line); the next call finds none."""
        path = self.path_for(transcript_id, message_index, annotator)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UnreadablePending(f"{path}: unsaved edit could not be read ({exc.strerror or exc})") from None
        try:
            edit = _parse(raw)
        except ValueError as exc:
            self._set_aside(path)
            raise UnreadablePending(f"{path}: unreadable unsaved edit, skipped and kept as {path.name}.unreadable "
                                    f"({exc})") from None
        if (edit.transcript_id, edit.message_index, edit.annotator) != (transcript_id, message_index, annotator):
            self._set_aside(path)
            raise UnreadablePending(f"{path}: unsaved edit names another label, skipped and kept as "
                                    f"{path.name}.unreadable")
        return edit

    def remove(self, transcript_id: str, message_index: int | None, annotator: str) -> None:
        """Forget the entry (the store confirmed the save); nothing when there is none."""
        path = self.path_for(transcript_id, message_index, annotator)
        try:
            path.unlink()
        except FileNotFoundError:
            return

    def discard(self, transcript_id: str, message_index: int | None, annotator: str) -> Path | None:
        """Set the entry aside as ``<entry>.discarded`` (the annotator chose to drop an edit the store refused),
        never deleting it nor an earlier one set aside (then ``.discarded-2``, ...); the path it was kept as, or
        None when there is no entry. ``OSError`` when it cannot be moved."""
        path = self.path_for(transcript_id, message_index, annotator)
        if not path.exists():
            return None
        for n in range(1, 10_000):
            kept = path.with_name(path.name + (".discarded" if n == 1 else f".discarded-{n}"))
            try:
                os.link(path, kept)  # fails if that name is taken: an earlier discarded edit is never replaced
            except FileExistsError:
                continue
            except FileNotFoundError:
                return None
            os.unlink(path)
            self._sync_dir()
            return kept
        raise OSError(f"{path}: too many discarded edits kept beside it")

    def entries(self) -> list[Path]:
        """The entries on disk (not temporaries, not the ones set aside)."""
        if not self.directory.is_dir():
            return []
        return sorted(p for p in self.directory.glob("*.json") if not p.name.startswith(_TEMP_PREFIX))

    def _set_aside(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            os.replace(path, path.with_name(path.name + ".unreadable"))
            self._sync_dir()

    def _sync_dir(self) -> None:
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:
            pass  # some filesystems cannot fsync a directory; the rename itself is atomic
        finally:
            os.close(fd)


def _parse(raw: bytes) -> PendingEdit:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    try:
        record = strict_json.loads(text)
    except InvalidRecord as exc:
        raise ValueError(exc.message) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(f"not a format-{FORMAT} journal entry")
    try:
        transcript_id, index, annotator = record["transcript_id"], record["message_index"], record["annotator"]
        base, submit, body = record["base_version"], record["submit"], record["body"]
    except KeyError as exc:
        raise ValueError(f"missing {exc.args[0]!r}") from None
    if not (isinstance(transcript_id, str) and isinstance(annotator, str)
            and (index is None or _is_int(index)) and _is_int(base) and isinstance(submit, bool)):
        raise ValueError("wrong field types")
    try:
        parsed: LabelBody | TrajectoryBody = (TrajectoryBody if index is None else LabelBody).model_validate(body)
    except ValidationError as exc:
        raise ValueError(f"body does not validate ({exc.error_count()} error(s))") from None
    return PendingEdit(transcript_id, index, annotator, parsed, base, submit, str(record.get("written_at", "")))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
