"""The working copy of the label being edited, saved to the store on every change.

One ``Work`` per (transcript, turn, annotator) lives in the session while the annotator is on that turn:
the body as last saved, the version it was saved as (the base of the next save), and a generation
number that is part of every widget key, so a change made by code (a prefill, a reload after a conflict)
gives the widgets fresh defaults instead of stale state. The database is the record: a reload starts
again from the stored label.

A save the database cannot take *now* (``DatabaseBusy``: a lock held past the busy timeout, a disk error)
keeps the body on the ``Work`` marked unsaved (``busy``), and ``retry_pending`` tries it again on every run
of the panel (the decision bar asks for one every couple of seconds) until the store accepts it: the
session holds the pending edit only until then, never instead of the database. So that a reload or a server
restart (a new session) does not lose it either, the pending body is also written to the pending-edit journal
beside the database (``labeler.store.pending``); ``load`` restores it into the panel, marked "unsaved (database
was busy) — retrying", and the entry is removed only once the store confirmed the save (or the annotator kept
the stored version after a conflict). A newer stored version than the journaled edit was based on is a conflict,
shown field by field like any other, never overwritten silently.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import streamlit as st
from dateutil import parser as dateparser
from pydantic import ValidationError

from labeler.app import context
from labeler.candidates import proposed_label
from labeler.labels import LabelBody, LabelIncomplete, TrajectoryBody, observed_as_calls
from labeler.store import (
    ConflictError,
    DatabaseBusy,
    LabelRecord,
    PendingEdit,
    StoreError,
    TrajectoryRecord,
    UnreadablePending,
    observed_calls,
)
from scorer import strict_json
from scorer.canonical import NonFiniteNumber
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.model import Call, Transcript


def typed_json(raw: str) -> Any:
    """JSON a person typed, read as strictly as files are (no NaN/Infinity, no lone surrogates, bounded
    depth); a ``ValueError`` saying what is wrong otherwise, which the editors show next to the field."""
    try:
        return strict_json.loads(raw)
    except InvalidRecord as exc:
        raise ValueError(exc.message.removeprefix("not valid JSON: ")) from None


@dataclass(frozen=True)
class Item:
    """What is being labeled: one decision point, or (``message_index`` None) the whole transcript."""

    transcript_id: str
    message_index: int | None
    annotator: str
    scratch: bool = False
    """A reviewer's edit (``annotator`` names the review): kept in the session, never saved as a label; the
    review page hands the body to the store's *edit and accept*."""

    @property
    def is_trajectory(self) -> bool:
        return self.message_index is None

    @property
    def key(self) -> str:
        """A short, stable prefix for this item's widget keys."""
        raw = f"{self.transcript_id}\x00{self.message_index}\x00{self.annotator}"
        return "w" + hashlib.sha1(raw.encode()).hexdigest()[:10]


@dataclass
class Work:
    body: LabelBody | TrajectoryBody
    version: int
    status: str | None  # None until the first save
    saved_at: str | None = None
    gen: int = 0
    conflict: ConflictError | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    input_errors: dict[str, str] = field(default_factory=dict)  # input that could not be read (bad JSON)
    stash: tuple[Call, ...] | None = None  # calls set aside when "Same as observed" replaced them
    # A submitted label is read-only until the annotator chooses Edit; the submitted version is kept so the
    # edit can be abandoned (``discard_edit``) instead of leaving the turn a draft without gold.
    editing: bool = False
    # Schema errors of a field show once the annotator touched it (``"n:arg"``), or all after a submit attempt.
    touched: set[str] = field(default_factory=set)
    tried_submit: bool = False
    submitted: LabelBody | TrajectoryBody | None = None
    submitted_version: int = 0
    # Not saved yet because the database was busy (the one-line reason); the body is the annotator's work.
    busy: str | None = None
    busy_submit: bool = False  # the pending write is a submit (Submit & next moves on once it lands)
    item: Item | None = None
    ack: int = 0  # the last decision-bar event applied (the bar shows its optimistic state until then)
    submits: int = 0  # submit attempts on this turn (the bar drops the next turn it drew ahead on a refusal)
    restored: bool = False  # the pending edit came back from the journal (a reload while the database was busy)
    journaled: bool = False  # the pending body is in the journal (removed once a save lands)
    # The store refused the journaled edit for a reason other than busy or conflict (the one-line reason): it
    # would come back refused on every load, so the panel shows it with the choice to discard it.
    refused: str | None = None

    @property
    def locked(self) -> bool:
        return self.status == "submitted" and not self.editing

    @property
    def label(self) -> LabelBody:
        """The body of a turn label (what the turn panel and the call editor edit)."""
        if not isinstance(self.body, LabelBody):
            raise TypeError(f"a turn panel was given a {type(self.body).__name__}, not a turn label")
        return self.body


def reference_time_of(tr: Transcript) -> datetime | None:
    """The transcript's own timestamp (the default "now" for relative dates), when it has one."""
    for key in ("timestamp", "started_at", "created_at"):
        raw = tr.metadata.get(key)
        if not raw:
            continue
        try:
            value = dateparser.isoparse(str(raw))
        except ValueError:
            continue
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return None


def _state_key(item: Item) -> str:
    return f"work:{item.key}"


def load(item: Item, tr: Transcript) -> Work:
    """The working copy for ``item``: from the session, else from the store, else a fresh draft."""
    key = _state_key(item)
    if key not in st.session_state:
        store = context.store()
        record: LabelRecord | TrajectoryRecord | None
        if item.message_index is None:
            record = store.get_trajectory_label(item.transcript_id, item.annotator)
            # A new trajectory label starts from what the agent did, in order.
            fresh: LabelBody | TrajectoryBody = TrajectoryBody(
                calls=observed_as_calls([c for m in tr.messages for c in observed_calls(m)]),
                reference_time=reference_time_of(tr))
        else:
            record = store.get_label(item.transcript_id, item.message_index, item.annotator)
            # A synthetic candidate's last turn starts from the label it proposes (toolgold synthesize).
            proposal = proposed_label(tr) if item.message_index == len(tr.messages) else None
            fresh = proposal or LabelBody(reference_time=reference_time_of(tr))
        if record is None:
            work = Work(fresh, 0, None, item=item)
        else:
            work = Work(record.body, record.version, record.status, _clock(record.updated_at), item=item)
        st.session_state[key] = work
        if not item.scratch:
            _restore(item, work, record)
    restored: Work = st.session_state[key]
    return restored


RESTORED_MESSAGE = "unsaved (database was busy) — retrying"


def _restore(item: Item, work: Work, record: LabelRecord | TrajectoryRecord | None) -> None:
    """Put back the edit the journal holds for ``item`` (typed in an earlier session the database was too busy
    for): pending again, retried by ``retry_pending``; an unreadable entry is one line on the panel."""
    journal = context.store().pending_journal()
    try:
        pending = journal.get(item.transcript_id, item.message_index, item.annotator)
    except UnreadablePending as exc:
        work.error = str(exc)
        return
    if pending is None:
        return
    if record is not None and record.body == pending.body and (record.status == "submitted" or not pending.submit):
        journal.remove(item.transcript_id, item.message_index, item.annotator)  # it landed after all
        return
    if work.status == "submitted":  # the edit of a submitted label: Discard goes back to the stored one
        work.editing, work.submitted, work.submitted_version = True, work.body, work.version
    work.body, work.version = pending.body, pending.base_version
    work.busy, work.busy_submit = RESTORED_MESSAGE, pending.submit
    work.restored = work.journaled = True
    work.gen += 1
    # The first try waits for the decision bar's next retry, so the panel shows the restored work at once
    # instead of after a busy timeout.
    st.session_state[BUSY_KEY] = (time.monotonic(), RESTORED_MESSAGE)


def forget(item: Item) -> None:
    st.session_state.pop(_state_key(item), None)


def keep_only(item: Item) -> None:
    """Drop the working copies of other items that hold nothing unsaved: the store has them, and coming
    back then starts from the stored version (a copy with a conflict or unreadable input is kept)."""
    current = _state_key(item)
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("work:") and k != current]:
        work = st.session_state[key]
        if (work.conflict is None and not work.input_errors and work.error is None and not work.editing
                and work.busy is None and work.refused is None):
            del st.session_state[key]


def retry_pending() -> list[Item]:
    """Try again every save the database was too busy for (this session's, any turn); the items that landed
    now. A submit that lands is not moved on from here: its turn shows it submitted."""
    landed = []
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("work:")]:
        work = st.session_state[key]
        if not isinstance(work, Work) or work.busy is None or work.item is None:
            continue
        if submit(work.item, work) if work.busy_submit else save(work.item, work):
            landed.append(work.item)
        elif work.busy is not None:
            break  # still busy: the rest wait for the next retry rather than each block this run
    return landed


def widget_key(item: Item, work: Work, name: str) -> str:
    return f"{item.key}:{work.gen}:{name}"


def _clock(stamp: str) -> str:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")


def _adopt(work: Work, record: LabelRecord | TrajectoryRecord) -> None:
    work.body, work.version, work.status = record.body, record.version, record.status
    work.saved_at = _clock(record.updated_at)
    work.conflict = None
    work.error = None
    work.problems = []
    work.busy, work.busy_submit = None, False
    work.refused = None
    st.session_state.pop(BUSY_KEY, None)
    if work.journaled and work.item is not None:
        _unjournal(work.item, work)


def _journal(work: Work, *, ahead: bool = False) -> None:
    """Write the pending body to the journal, so a reload or a restart does not lose it. ``ahead``: before a
    save is tried (a reload while that save waits on the lock finds it), not flushed to disk; once the save
    found the database busy it is written again, fsync'd. A journal that cannot be written (the same full
    disk, say) leaves the edit in the session only, and the busy message says so."""
    item = work.item
    if item is None or item.scratch:
        return
    edit = PendingEdit(item.transcript_id, item.message_index, item.annotator, work.body, work.version,
                       work.busy_submit)
    try:
        context.store().pending_journal().put(edit, sync=not ahead)
    except OSError as exc:
        if not ahead:
            work.busy = f"{work.busy}; not kept past a reload either: {exc.strerror or exc}"
        return
    work.journaled = True


def _unjournal(item: Item, work: Work) -> None:
    try:
        context.store().pending_journal().remove(item.transcript_id, item.message_index, item.annotator)
    except OSError:
        return  # retried after the next save; a stale entry restores a body equal to the stored one: dropped
    work.journaled, work.restored = False, False


def start_edit(item: Item, work: Work) -> None:
    """Unlock a submitted label for changes (its first change makes it a draft again)."""
    if work.status == "submitted":
        work.editing, work.submitted, work.submitted_version = True, work.body, work.version
        work.gen += 1


def discard_edit(item: Item, work: Work) -> None:
    """Abandon an edit: back to the submitted version, submitted again when the edit had saved a draft."""
    if not work.editing or work.submitted is None:
        return
    if work.version != work.submitted_version or work.status != "submitted":
        work.body = work.submitted
        if not submit(item, work):
            return  # a conflict or problem is on screen; the edit stays open
    work.editing, work.submitted = False, None
    work.gen += 1


def change(item: Item, work: Work, *, regenerate: bool = False, **fields: Any) -> None:
    """Apply ``fields`` to the body and save it as a draft right away (refused saves are kept on screen).
    A submitted label that is not being edited is left alone: a stray key must not withdraw its gold."""
    if work.locked:
        return
    try:
        body = type(work.body).model_validate({**work.body.model_dump(), **fields})
        body.to_json()  # a NaN or ±Infinity (from code, not typing: typed JSON is strict) is refused, not nulled
    except ValidationError as exc:
        work.error = describe_validation_error(exc)
        return
    except NonFiniteNumber as exc:
        work.error = f"not saved: {exc}"
        return
    work.body = body
    work.error = None
    if regenerate:
        work.gen += 1
    save(item, work)


def _store_body(item: Item, work: Work, *, version: int, submit: bool) -> LabelRecord | TrajectoryRecord:
    store = context.store()
    if item.message_index is None:
        assert isinstance(work.body, TrajectoryBody)
        return store.save_trajectory_label(item.transcript_id, item.annotator, work.body, version=version,
                                           submit=submit)
    assert isinstance(work.body, LabelBody)
    action = store.submit_label if submit else store.save_label
    return action(item.transcript_id, item.message_index, item.annotator, work.body, version=version)


BUSY_KEY = "database-busy"
BUSY_BACKOFF_SECONDS = 2.0
"""After a write this session found the database busy, the next waits this long: each attempt can block for the
whole busy_timeout, and a run that tried every pending save (and the key's own) would block for several of them
before it could show "database busy, retrying"; the decision bar asks again every 2 s."""


def _busy(work: Work, message: str, *, submitting: bool) -> None:
    work.busy = message
    work.busy_submit = work.busy_submit or submitting
    st.session_state[BUSY_KEY] = (time.monotonic(), message)
    _journal(work)


def _backing_off(work: Work, *, submitting: bool) -> bool:
    """True (and ``work`` kept pending) when this session found the database busy moments ago."""
    seen = st.session_state.get(BUSY_KEY)
    if seen is None or time.monotonic() - seen[0] >= BUSY_BACKOFF_SECONDS:
        return False
    work.busy = seen[1]
    work.busy_submit = work.busy_submit or submitting
    _journal(work)
    return True


def save(item: Item, work: Work, *, over: int | None = None) -> bool:
    """Save the body; ``over`` is the stored version to replace after a conflict (the annotator's choice).
    True when the store took it; a busy database leaves it pending (``work.busy``) for ``retry_pending``.
    A reviewer's scratch copy (``item.scratch``) is never saved as a label."""
    if item.scratch:
        work.error = None
        return True
    if _backing_off(work, submitting=False):
        return False
    if work.busy is None:
        _journal(work, ahead=True)  # a save can wait on the lock for the whole busy timeout
    try:
        record = _store_body(item, work, version=work.version if over is None else over, submit=False)
    except ConflictError as exc:
        if exc.theirs.body == work.body and exc.theirs.status == "draft":
            _adopt(work, exc.theirs)  # the same edit, saved meanwhile (by the session it was restored from)
            return True
        work.conflict, work.busy, work.busy_submit = exc, None, False
        return False
    except DatabaseBusy as exc:
        _busy(work, str(exc), submitting=False)
        return False
    except StoreError as exc:
        _refused(work, exc)
        return False
    except NonFiniteNumber as exc:  # not JSON: refused whole, never stored with a null in its place
        work.error, work.busy = f"not saved: {exc}", None
        return False
    _adopt(work, record)
    return True


def _refused(work: Work, exc: StoreError) -> None:
    """The store refused the save (not busy, not a conflict). An edit kept in the journal stays there, so it
    is marked refused: the panel offers to discard it instead of showing the error again on every load."""
    work.busy, work.busy_submit = None, False
    if work.journaled:
        work.refused, work.error = str(exc), None
    else:
        work.error = str(exc)


def discard_refused(item: Item, work: Work) -> None:
    """Drop an edit the store refused: its journal entry is moved aside (``.discarded``, kept for an operator),
    and the panel starts again from the stored label."""
    try:
        context.store().pending_journal().discard(item.transcript_id, item.message_index, item.annotator)
    except OSError as exc:
        work.error = f"the unsaved edit could not be set aside: {exc.strerror or exc}"
        return
    forget(item)


def keep_theirs(item: Item, work: Work) -> None:
    """After a conflict: drop this tab's change and continue from the stored version."""
    if work.conflict is not None:
        _adopt(work, work.conflict.theirs)
        work.gen += 1


def keep_mine(item: Item, work: Work) -> None:
    """After a conflict: save this tab's change over the stored version (a deliberate choice)."""
    if work.conflict is not None:
        save(item, work, over=work.conflict.theirs.version)


def submit(item: Item, work: Work) -> bool:
    """Submit the label; True when it is now submitted. Problems and conflicts are kept on ``work``."""
    if _backing_off(work, submitting=True):
        return False
    try:
        record = _store_body(item, work, version=work.version, submit=True)
    except LabelIncomplete as exc:
        work.problems = exc.problems
        work.tried_submit = True
        return False
    except ConflictError as exc:
        work.conflict, work.busy, work.busy_submit = exc, None, False
        return False
    except DatabaseBusy as exc:
        _busy(work, str(exc), submitting=True)
        return False
    except StoreError as exc:
        _refused(work, exc)
        return False
    except NonFiniteNumber as exc:  # not JSON: refused whole, never stored with a null in its place
        work.error, work.busy = f"not saved: {exc}", None
        return False
    _adopt(work, record)
    work.editing, work.submitted = False, None
    return True
