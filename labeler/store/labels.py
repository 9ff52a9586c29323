"""Labels, leases and the annotator's queue.

A label is one row per (decision point, annotator). Every save names the version the editor started from
and is refused with ``ConflictError`` when the stored one is newer (optimistic concurrency); every change
writes an audit event with the state before and after. Submitting materializes the turn's gold case, so
``toolgold export`` carries it. Trajectory labels (one per transcript and annotator) follow the same rules.

The queue leases a transcript to one annotator at a time; SQLite runs a claim under BEGIN IMMEDIATE and
PostgreSQL skips rows another claimer holds (``FOR UPDATE SKIP LOCKED``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import (
    Connection,
    String,
    and_,
    case,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)

from labeler.labels import (
    LabelBody,
    TrajectoryBody,
    gold_case,
    gold_case_id,
    trajectory_case,
    trajectory_case_id,
)
from labeler.store import tables as t
from labeler.store.common import (
    GOLD_BODY,
    UnreadableRecord,
    audit,
    label_key,
    load_transcript,
    overlap_pending,
    put_gold,
    read_overlap,
    require_user,
    withdraw_gold,
)
from labeler.store.engine import Database, StoreError, dialect_insert, iso, now_iso, parse_iso
from labeler.store.turn_review import (
    CHANGED_AFTER_APPROVAL,
    DISPUTES_IMPORT,
    differs_from_import,
    note_label_against,
    standing_import,
    sync_trajectory,
    sync_turn,
    withdraw_label_from,
)
from scorer import canonical
from scorer.formats import to_json
from scorer.model import GoldCase, Transcript

LEASE_SECONDS = 30 * 60


@dataclass(frozen=True)
class LabelRecord:
    """One annotator's label of one decision point, as stored."""

    transcript_id: str
    message_index: int
    annotator: str
    status: str  # draft | submitted
    body: LabelBody
    version: int
    updated_at: str
    submitted_at: str | None = None

    @property
    def key(self) -> str:
        return label_key(self.transcript_id, self.message_index, self.annotator)


@dataclass(frozen=True)
class TrajectoryRecord:
    """One annotator's label of a whole transcript, as stored."""

    transcript_id: str
    annotator: str
    status: str  # draft | submitted
    body: TrajectoryBody
    version: int
    updated_at: str
    submitted_at: str | None = None

    @property
    def key(self) -> str:
        return f"{self.transcript_id}#trajectory@{self.annotator}"


@dataclass(frozen=True)
class Lease:
    transcript_id: str
    holder: str
    expires_at: str


@dataclass(frozen=True)
class TurnState:
    """A decision point with what the agent did and where labeling stands (for one annotator)."""

    ordinal: int
    message_index: int
    observed_behavior: str
    observed: list[dict[str, Any]]
    label_status: str | None  # this annotator's label: None, draft or submitted
    has_gold: bool
    awaits_overlap: bool = False  # another annotator's gold is here, and the overlap wants this one's label too

    @property
    def done(self) -> bool:
        return self.label_status == "submitted" or self.has_gold


@dataclass(frozen=True)
class QueueFilter:
    """Which transcripts an annotator wants to work on. ``status``: unlabeled (some turn has no gold yet),
    draft / submitted (the annotator has a label in that state)."""

    source: str | None = None
    tag: str | None = None
    tool: str | None = None
    status: str | None = None
    search: str | None = None


@dataclass(frozen=True)
class QueueItem:
    transcript_id: str
    source: str
    title: str
    n_turns: int
    n_done: int  # turns with a gold case or this annotator's submitted label
    n_drafts: int
    leased_by: str | None
    n_labeled: int = 0  # turns a person submitted a label for (imported gold does not count)


@dataclass(frozen=True)
class AnnotatorTotals:
    annotator: str
    drafts: int
    submitted: int
    unsure: int


class ConflictError(StoreError):
    """A label save started from an older version than the stored one: refused, nothing overwritten.

    ``mine`` is the body that was being saved, ``theirs`` the stored label that is newer.
    """

    def __init__(self, mine: LabelBody | TrajectoryBody, theirs: LabelRecord | TrajectoryRecord,
                 based_on: int) -> None:
        self.mine = mine
        self.theirs = theirs
        self.based_on = based_on
        super().__init__(
            f"{theirs.key} was changed elsewhere: the stored version {theirs.version} ({theirs.status}, saved "
            f"{theirs.updated_at}) is newer than version {based_on} this change started from; nothing was "
            "overwritten")


def _turn_keys(conn: Connection, transcript_id: str, message_index: int, *,
               lock: bool = False) -> tuple[int, int]:
    """The turn's and its transcript's keys. ``lock`` takes the turn row for the transaction, so saves
    of one turn queue up on PostgreSQL (SQLite's BEGIN IMMEDIATE already serializes writers)."""
    q = (select(t.TurnRow.id, t.TurnRow.transcript_id)
         .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)
         .where(t.TranscriptRow.external_id == transcript_id, t.TurnRow.message_index == message_index))
    row = conn.execute(q.with_for_update(of=t.TurnRow) if lock else q).first()
    if row is None:
        raise StoreError(f"transcript {transcript_id!r} has no decision point at message {message_index}")
    return row[0], row[1]


def _label_row(conn: Connection, turn_pk: int, annotator: str) -> Any:
    return conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn_pk,
                                                 t.LabelRow.annotator == annotator)).first()


def _label_record(transcript_id: str, message_index: int, row: Any) -> LabelRecord:
    return LabelRecord(transcript_id, message_index, row.annotator, row.status,
                       LabelBody.model_validate_json(row.body), row.version, row.updated_at, row.submitted_at)


def get_label(db: Database, transcript_id: str, message_index: int, annotator: str) -> LabelRecord | None:
    with db.read() as conn:
        turn_pk, _ = _turn_keys(conn, transcript_id, message_index)
        row = _label_row(conn, turn_pk, annotator)
    return _label_record(transcript_id, message_index, row) if row else None


def labels_for_turn(db: Database, transcript_id: str, message_index: int) -> list[LabelRecord]:
    """Every annotator's label of one decision point, oldest first."""
    with db.read() as conn:
        turn_pk, _ = _turn_keys(conn, transcript_id, message_index)
        rows = conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn_pk)
                            .order_by(t.LabelRow.id)).all()
    return [_label_record(transcript_id, message_index, r) for r in rows]


def _check_version(row: Any, body: LabelBody, version: int, transcript_id: str,
                   message_index: int) -> int:
    current = row.version if row is not None else 0
    if current != version:
        if row is None:
            raise StoreError(f"{transcript_id!r} message {message_index}: there is no saved label "
                             f"(version {version} was expected); reload the page")
        raise ConflictError(body, _label_record(transcript_id, message_index, row), version)
    return current


@contextmanager
def _auditing_refusals(db: Database, annotator: str, entity: str) -> Iterator[None]:
    """A refused (stale) save is recorded too, after its own transaction rolled back: who tried, from
    which version, with what."""
    try:
        yield
    except ConflictError as exc:
        with db.write() as conn:
            audit(conn, actor=annotator, action=f"{entity.split('_')[0]}.conflict", entity=entity,
                  entity_id=exc.theirs.key,
                  before={"status": exc.theirs.status, "version": exc.theirs.version,
                          "body": exc.theirs.body.to_json()},
                  after={"based_on": exc.based_on, "body": exc.mine.to_json()},
                  note="refused: a newer version is stored")
        raise


def save_label(db: Database, transcript_id: str, message_index: int, annotator: str, body: LabelBody, *,
               version: int) -> LabelRecord:
    """Save a draft. ``version`` is the version the edit started from (0 for a new label); a newer
    stored version raises ``ConflictError``. Saving a submitted label reopens it as a draft."""
    with _auditing_refusals(db, annotator, "label"), db.write() as conn:
        require_user(conn, annotator)
        turn_pk, tr_pk = _turn_keys(conn, transcript_id, message_index, lock=True)
        row = _label_row(conn, turn_pk, annotator)
        current = _check_version(row, body, version, transcript_id, message_index)
        text = body.canonical()
        if row is not None and row.body == text:
            return _label_record(transcript_id, message_index, row)  # nothing changed
        stamp = now_iso()
        values = {"status": "draft", "decision": body.decision, "unsure": body.unsure, "body": text,
                  "version": current + 1, "updated_at": stamp, "submitted_at": None}
        _write_label(conn, row, turn_pk, tr_pk, annotator, values, stamp)
        audit(conn, actor=annotator, action="label.save", entity="label",
              entity_id=label_key(transcript_id, message_index, annotator),
              before=_label_state(row), after={"status": "draft", "version": current + 1,
                                               "body": body.to_json()})
        _renew_lease(conn, tr_pk, annotator)
        if row is not None and row.status == "submitted":
            transcript, source = load_transcript(conn, transcript_id)
            imported = standing_import(conn, transcript_id, message_index)
            if imported is not None:
                withdraw_label_from(conn, DISPUTES_IMPORT, imported.id, annotator)
            else:
                _materialize_gold(conn, transcript, source, message_index, turn_pk, annotator)
                withdraw_label_from(conn, CHANGED_AFTER_APPROVAL, gold_case_id(transcript_id, message_index),
                                    annotator)
            sync_turn(conn, turn_pk, transcript_id, message_index, {transcript_id: (transcript, source)})
        return LabelRecord(transcript_id, message_index, annotator, "draft", body, current + 1, stamp)


def submit_label(db: Database, transcript_id: str, message_index: int, annotator: str, body: LabelBody, *,
                 version: int) -> LabelRecord:
    """Save ``body`` as submitted and materialize the turn's gold case. Raises ``LabelIncomplete`` (and
    writes nothing) when the label cannot be a gold case yet, ``ConflictError`` like ``save_label``."""
    with _auditing_refusals(db, annotator, "label"), db.write() as conn:
        require_user(conn, annotator)
        turn_pk, tr_pk = _turn_keys(conn, transcript_id, message_index, lock=True)
        row = _label_row(conn, turn_pk, annotator)
        current = _check_version(row, body, version, transcript_id, message_index)
        text = body.canonical()
        if row is not None and row.body == text and row.status == "submitted":
            return _label_record(transcript_id, message_index, row)
        transcript, source = load_transcript(conn, transcript_id)
        stamp = now_iso()
        mine = gold_case(body, transcript=transcript, message_index=message_index, annotators=(annotator,),
                         labeled_at=parse_iso(stamp), source=source)  # raises LabelIncomplete
        values = {"status": "submitted", "decision": body.decision, "unsure": body.unsure, "body": text,
                  "version": current + 1, "updated_at": stamp, "submitted_at": stamp}
        _write_label(conn, row, turn_pk, tr_pk, annotator, values, stamp)
        audit(conn, actor=annotator, action="label.submit", entity="label",
              entity_id=label_key(transcript_id, message_index, annotator),
              before=_label_state(row), after={"status": "submitted", "version": current + 1,
                                               "body": body.to_json()})
        _renew_lease(conn, tr_pk, annotator)
        imported = standing_import(conn, transcript_id, message_index)
        if imported is not None:  # the decision point's one gold case: agree with it or dispute it
            note_label_against(conn, mine, annotator, imported, DISPUTES_IMPORT,
                               differs=differs_from_import(mine, imported))
        else:
            _materialize_gold(conn, transcript, source, message_index, turn_pk, annotator)
            decided = conn.scalar(select(GOLD_BODY).where(t.GoldCaseRow.id == mine.id,
                                                                   t.GoldCaseRow.status == "approved"))
            if decided is not None:
                standing = GoldCase.model_validate_json(decided)
                note_label_against(conn, mine, annotator, standing, CHANGED_AFTER_APPROVAL,
                                   differs=_essence(mine) != _essence(standing))
        sync_turn(conn, turn_pk, transcript_id, message_index, {transcript_id: (transcript, source)})
        return LabelRecord(transcript_id, message_index, annotator, "submitted", body, current + 1, stamp,
                           stamp)


def _write_label(conn: Connection, row: Any, turn_pk: int, tr_pk: int, annotator: str,
                 values: dict[str, Any], stamp: str) -> None:
    if row is None:
        conn.execute(insert(t.LabelRow).values(turn_id=turn_pk, transcript_id=tr_pk, annotator=annotator,
                                               created_at=stamp, **values))
    else:
        conn.execute(update(t.LabelRow).where(t.LabelRow.id == row.id).values(**values))


def _materialize_gold(conn: Connection, transcript: Transcript, source: str, message_index: int,
                      turn_pk: int, actor: str) -> None:
    """Make the turn's gold case agree with its submitted labels (see ``_materialize``)."""
    def submitted() -> dict[str, GoldCase]:
        rows = conn.execute(
            select(t.LabelRow.annotator, t.LabelRow.body, t.LabelRow.submitted_at)
            .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
            .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all()
        return {r.annotator: gold_case(LabelBody.model_validate_json(r.body), transcript=transcript,
                                       message_index=message_index, annotators=(r.annotator,),
                                       labeled_at=parse_iso(r.submitted_at), source=source) for r in rows}

    _materialize(conn, gold_case_id(transcript.id, message_index), submitted, actor)


def _materialize(conn: Connection, case_id: str, submitted: Callable[[], dict[str, GoldCase]], actor: str) -> None:
    """Make a gold case agree with its submitted labels (``submitted()``: annotator -> label as a case, in
    order of submission; built only when the case awaits a decision), for turns and trajectories alike.

    The first submitter's label is the case; annotators whose labels say the same are listed with them
    (a disagreeing label stays in the labels table for review). With no submitted label left the case
    is withdrawn. A case a reviewer already approved or rejected is left alone.
    """
    existing = conn.execute(select(t.GoldCaseRow.status, GOLD_BODY)
                            .where(t.GoldCaseRow.id == case_id)).first()
    if existing is not None and existing.status != "submitted":
        return
    cases = submitted()
    if not cases:
        if existing is not None:
            withdraw_gold(conn, case_id, actor=actor, note="its only submitted label was reopened")
        return
    first = json.loads(existing.body)["provenance"]["annotators"] if existing is not None else []
    primary = first[0] if first and first[0] in cases else next(iter(cases))

    def essence(case: GoldCase) -> str:
        return canonical.dumps_stored({k: v for k, v in to_json(case).items() if k != "provenance"})

    agreeing = tuple(a for a in cases if a != primary and essence(cases[a]) == essence(cases[primary]))
    _put_materialized(conn, cases[primary], (primary, *agreeing), existing, actor)


def _put_materialized(conn: Connection, case: GoldCase, annotators: tuple[str, ...], existing: Any,
                      actor: str) -> None:
    """The gold case made from labels, standing for ``annotators``, through the one gold writer."""
    case = case.model_copy(update={"provenance": case.provenance.model_copy(update={"annotators": annotators})})
    put_gold(conn, case, actor=actor, action="gold.materialize",
             before=None if existing is None else {"content_hash": canonical.content_hash(json.loads(existing.body))})


def _essence(case: GoldCase) -> str:
    """A case as far as what it asks of the agent goes (not who labeled it, when, or with what words)."""
    return canonical.dumps_stored({k: v for k, v in to_json(case).items() if k not in ("provenance", "rationale")})

# -- trajectory labels: one per (transcript, annotator), same versioning and audit as turn labels

def _transcript_pk(conn: Connection, transcript_id: str, *, lock: bool = False) -> int:
    q = select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id)
    pk = conn.scalar(q.with_for_update() if lock else q)
    if pk is None:
        raise StoreError(f"no transcript with id {transcript_id!r}")
    return int(pk)


def _trajectory_row(conn: Connection, pk: int, annotator: str) -> Any:
    return conn.execute(select(t.TrajectoryLabelRow).where(t.TrajectoryLabelRow.transcript_id == pk,
                                                           t.TrajectoryLabelRow.annotator == annotator)).first()


def _trajectory_record(transcript_id: str, row: Any) -> TrajectoryRecord:
    return TrajectoryRecord(transcript_id, row.annotator, row.status, TrajectoryBody.model_validate_json(row.body),
                            row.version, row.updated_at, row.submitted_at)


def get_trajectory_label(db: Database, transcript_id: str, annotator: str) -> TrajectoryRecord | None:
    with db.read() as conn:
        row = _trajectory_row(conn, _transcript_pk(conn, transcript_id), annotator)
    return _trajectory_record(transcript_id, row) if row else None


def save_trajectory_label(db: Database, transcript_id: str, annotator: str, body: TrajectoryBody, *,
                          version: int, submit: bool = False) -> TrajectoryRecord:
    """Save (or with ``submit``, submit) a trajectory label; the same rules as ``save_label`` and
    ``submit_label``: a stale ``version`` raises ``ConflictError``, an incomplete submit ``LabelIncomplete``."""
    with _auditing_refusals(db, annotator, "trajectory_label"), db.write() as conn:
        require_user(conn, annotator)
        pk = _transcript_pk(conn, transcript_id, lock=True)
        row = _trajectory_row(conn, pk, annotator)
        current = row.version if row is not None else 0
        if current != version:
            if row is None:
                raise StoreError(f"{transcript_id!r}: there is no saved trajectory label; reload the page")
            raise ConflictError(body, _trajectory_record(transcript_id, row), version)
        text = body.canonical()
        status = "submitted" if submit else "draft"
        if row is not None and row.body == text and (row.status == status or not submit):
            return _trajectory_record(transcript_id, row)
        stamp = now_iso()
        transcript, source = load_transcript(conn, transcript_id)
        if submit:
            trajectory_case(body, transcript=transcript, annotators=(annotator,), labeled_at=parse_iso(stamp),
                            source=source)  # raises LabelIncomplete
        values = {"status": status, "body": text, "version": current + 1, "updated_at": stamp,
                  "submitted_at": stamp if submit else None}
        if row is None:
            conn.execute(insert(t.TrajectoryLabelRow).values(transcript_id=pk, annotator=annotator,
                                                             created_at=stamp, **values))
        else:
            conn.execute(update(t.TrajectoryLabelRow).where(t.TrajectoryLabelRow.id == row.id).values(**values))
        audit(conn, actor=annotator, action="trajectory.submit" if submit else "trajectory.save",
              entity="trajectory_label", entity_id=f"{transcript_id}#trajectory@{annotator}",
              before=_label_state(row), after={"status": status, "version": current + 1,
                                               "body": body.to_json()})
        _renew_lease(conn, pk, annotator)
        if submit or (row is not None and row.status == "submitted"):
            _materialize_trajectory(conn, transcript, source, pk, annotator)
            sync_trajectory(conn, pk, transcript_id, {transcript_id: (transcript, source)})
        return TrajectoryRecord(transcript_id, annotator, status, body, current + 1, stamp,
                                stamp if submit else None)


def _materialize_trajectory(conn: Connection, transcript: Transcript, source: str, pk: int,
                            actor: str) -> None:
    """The transcript's trajectory gold case from its submitted trajectory labels (see ``_materialize``)."""
    def submitted() -> dict[str, GoldCase]:
        rows = conn.execute(
            select(t.TrajectoryLabelRow.annotator, t.TrajectoryLabelRow.body, t.TrajectoryLabelRow.submitted_at)
            .where(t.TrajectoryLabelRow.transcript_id == pk, t.TrajectoryLabelRow.status == "submitted")
            .order_by(t.TrajectoryLabelRow.submitted_at, t.TrajectoryLabelRow.annotator)).all()
        return {r.annotator: trajectory_case(TrajectoryBody.model_validate_json(r.body), transcript=transcript,
                                             annotators=(r.annotator,), labeled_at=parse_iso(r.submitted_at),
                                             source=source) for r in rows}

    _materialize(conn, trajectory_case_id(transcript.id), submitted, actor)


def turn_states(db: Database, transcript_id: str, annotator: str | None = None) -> list[TurnState]:
    """The transcript's decision points in order, with the agent's calls and where labeling stands."""
    with db.read() as conn:
        pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id))
        if pk is None:
            raise StoreError(f"no transcript with id {transcript_id!r}")
        turns = conn.execute(
            select(t.TurnRow.id, t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior,
                   t.TurnRow.observed)
            .where(t.TurnRow.transcript_id == pk).order_by(t.TurnRow.ordinal)).all()
        mine = dict(conn.execute(
            select(t.LabelRow.turn_id, t.LabelRow.status)
            .where(t.LabelRow.transcript_id == pk, t.LabelRow.annotator == annotator)).all()) if annotator else {}
        gold_turns = set(conn.scalars(select(t.GoldCaseRow.turn).where(
            t.GoldCaseRow.conversation_id == transcript_id, t.GoldCaseRow.kind == "turn")))
        overlap = _overlap_pending_turns(conn, pk, annotator) & gold_turns  # overlap: still needs this label
        gold_turns -= overlap
    return [TurnState(o, mi, b, json.loads(obs), mine.get(tid), mi in gold_turns, mi in overlap)
            for tid, o, mi, b, obs in turns]

@dataclass(frozen=True)
class TurnWindow:
    """One open decision point and the few around it, with the transcript's totals counted in SQL: what the
    label page needs, read without every turn's state, so its cost does not grow with the transcript."""

    selected: TurnState
    states: tuple[TurnState, ...]
    """In order: the first decision point, those within ``span`` of the selected one, the last."""
    total: int
    done: int
    """Decision points with this annotator's submitted label or gold (not awaiting their overlap label)."""
    previous: int | None
    """Message index of the decision point before the selected one (None at the first)."""
    following: int | None
    awaiting_overlap: tuple[int, ...]
    """Ordinals of the first ``OVERLAP_SHOWN`` decision points that await this annotator's overlap label."""
    n_awaiting_overlap: int

    @property
    def position(self) -> int:
        return self.selected.ordinal

    def at(self, ordinal: int) -> TurnState | None:
        return next((s for s in self.states if s.ordinal == ordinal), None)


OVERLAP_SHOWN = 20


def _state_columns(conn: Connection, transcript_id: str, annotator: str | None) -> tuple[Any, Any, Any]:
    """SQL over ``turns``: this annotator's label status, whether the turn has gold (not awaiting the
    annotator's overlap label), and whether it awaits that overlap label."""
    gold_turns = select(t.GoldCaseRow.turn).where(t.GoldCaseRow.conversation_id == transcript_id,
                                                  t.GoldCaseRow.kind == "turn", t.GoldCaseRow.turn.is_not(None))
    has_gold = t.TurnRow.message_index.in_(gold_turns)
    pending = overlap_pending(annotator, read_overlap(conn))
    mine = (select(t.LabelRow.status).where(t.LabelRow.turn_id == t.TurnRow.id, t.LabelRow.annotator == annotator)
            .correlate(t.TurnRow).scalar_subquery()) if annotator else literal(None, String)
    return mine, and_(has_gold, ~pending), and_(has_gold, pending)


def _states(conn: Connection, transcript_id: str, annotator: str | None, where: Any, *, order: Any = None,
            limit: int | None = None) -> list[TurnState]:
    mine, gold, awaits = _state_columns(conn, transcript_id, annotator)
    q = (select(t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior, t.TurnRow.observed,
                mine, gold, awaits).where(where).order_by(order if order is not None else t.TurnRow.message_index))
    if limit is not None:
        q = q.limit(limit)
    return [TurnState(o, mi, b, json.loads(obs), status, bool(g), bool(a))
            for o, mi, b, obs, status, g, a in conn.execute(q)]


def turn_window(db: Database, transcript_id: str, annotator: str | None, message_index: int | None = None, *,
                span: int = 11) -> TurnWindow:
    """The decision point at ``message_index`` (when it is not one: the first that is not done, else the
    first) with ``span`` decision points each side, the first and the last, and the totals (SQL aggregates
    over this annotator's labels and the transcript's gold, never over every turn)."""
    with db.read() as conn:
        pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id))
        if pk is None:
            raise StoreError(f"no transcript with id {transcript_id!r}")
        here = t.TurnRow.transcript_id == pk
        mine, gold, awaits = _state_columns(conn, transcript_id, annotator)
        found = _states(conn, transcript_id, annotator, and_(here, t.TurnRow.message_index == message_index)) \
            if message_index is not None else []
        if not found:
            found = _states(conn, transcript_id, annotator, and_(here, ~or_(func.coalesce(mine, "") == "submitted",
                                                                         gold)),
                            limit=1) or _states(conn, transcript_id, annotator, here, limit=1)
        if not found:
            raise StoreError(f"transcript {transcript_id!r} has no decision point")
        selected = found[0]
        mi = selected.message_index
        before = _states(conn, transcript_id, annotator, and_(here, t.TurnRow.message_index < mi),
                         order=t.TurnRow.message_index.desc(), limit=span)
        after = _states(conn, transcript_id, annotator, and_(here, t.TurnRow.message_index > mi), limit=span)
        first = _states(conn, transcript_id, annotator, here, limit=1)
        last = _states(conn, transcript_id, annotator, here, order=t.TurnRow.message_index.desc(), limit=1)
        total = conn.scalar(select(func.count()).select_from(t.TurnRow).where(here)) or 0
        submitted = conn.scalar(select(func.count()).select_from(t.LabelRow).where(
            t.LabelRow.transcript_id == pk, t.LabelRow.annotator == annotator,
            t.LabelRow.status == "submitted")) or 0 if annotator else 0
        gold_rows = (select(t.TurnRow.id).join(t.GoldCaseRow, and_(
            t.GoldCaseRow.conversation_id == transcript_id, t.GoldCaseRow.kind == "turn",
            t.GoldCaseRow.turn == t.TurnRow.message_index)).where(here).distinct())
        gold_done = conn.scalar(select(func.count()).select_from(
            gold_rows.where(gold, or_(mine.is_(None), mine != "submitted")).subquery())) or 0
        waiting = gold_rows.add_columns(t.TurnRow.ordinal).where(awaits)
        n_waiting = conn.scalar(select(func.count()).select_from(waiting.subquery())) or 0
        shown = tuple(conn.scalars(select(waiting.subquery().c.ordinal).order_by("ordinal").limit(OVERLAP_SHOWN)))
    window = {s.ordinal: s for s in [*first, *before, selected, *after, *last]}
    return TurnWindow(selected=selected, states=tuple(window[o] for o in sorted(window)), total=total,
                      done=submitted + gold_done, previous=before[0].message_index if before else None,
                      following=after[0].message_index if after else None, awaiting_overlap=shown,
                      n_awaiting_overlap=n_waiting)


def next_to_label(db: Database, transcript_id: str, annotator: str, after: int | None) -> int | None:
    """Where Submit & next goes in this transcript: the next decision point after ``after`` without this
    annotator's submitted label (imported or someone else's gold included), else the first one not done at
    or before it; None when every decision point is done. Read with ``LIMIT 1`` queries, not every state."""
    with db.read() as conn:
        pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id))
        if pk is None:
            raise StoreError(f"no transcript with id {transcript_id!r}")
        here = t.TurnRow.transcript_id == pk
        mine, gold, _ = _state_columns(conn, transcript_id, annotator)
        unlabeled = or_(mine.is_(None), mine != "submitted")
        later = _states(conn, transcript_id, annotator, and_(here, t.TurnRow.message_index > after, unlabeled),
                        limit=1) if after is not None else []
        if later:
            return later[0].message_index
        upto = t.TurnRow.message_index <= after if after is not None else true()
        earlier = _states(conn, transcript_id, annotator, and_(here, upto, unlabeled, ~gold), limit=1)
        return earlier[0].message_index if earlier else None


# -- queue and leases

def _queue_query(conn: Connection, annotator: str, f: QueueFilter) -> Any:
    tr = t.TranscriptRow
    q = select(tr.id, tr.external_id, tr.source, tr.title, tr.n_turns).order_by(tr.id)
    if f.source:
        q = q.where(tr.source == f.source)
    if f.search:
        like = f"%{f.search}%"
        q = q.where(tr.external_id.like(like) | tr.title.like(like))
    if f.tool:
        q = q.where(tr.tool_set_id.in_(
            select(t.ToolSetToolRow.tool_set_id)
            .join(t.ToolSchemaRow, t.ToolSchemaRow.hash == t.ToolSetToolRow.schema_hash)
            .where(t.ToolSchemaRow.name == f.tool)))
    if f.tag:
        q = q.where(tr.external_id.in_(
            select(t.GoldCaseRow.conversation_id)
            .join(t.GoldCaseTagRow, t.GoldCaseTagRow.case_id == t.GoldCaseRow.id)
            .where(t.GoldCaseTagRow.tag == f.tag)))
    if f.status == "unlabeled":
        # A turn is labeled once a person submitted a label for it. Imported gold is a candidate a label agrees
        # with or disputes, so a transcript whose turns only have imported gold still waits in the queue.
        label_at_turn = (select(t.LabelRow.id)
                         .where(t.LabelRow.turn_id == t.TurnRow.id, t.LabelRow.status == "submitted")
                         .correlate_except(t.LabelRow))
        q = q.where(exists(select(t.TurnRow.id).where(
            t.TurnRow.transcript_id == tr.id,
            ~exists(label_at_turn) | overlap_pending(annotator, read_overlap(conn)))))  # overlap: N annotators per turn
    elif f.status in ("draft", "submitted"):
        q = q.where(exists(select(t.LabelRow.id).where(
            t.LabelRow.transcript_id == tr.id, t.LabelRow.annotator == annotator, t.LabelRow.status == f.status)))
    elif f.status is not None:
        raise StoreError(f"unknown status filter {f.status!r}; use unlabeled, draft or submitted")
    return q


def queue(db: Database, annotator: str, f: QueueFilter = QueueFilter(), *, limit: int = 50) -> list[QueueItem]:
    """Transcripts matching ``f`` with this annotator's progress and who holds them."""
    stamp = now_iso()
    with db.read() as conn:
        rows = conn.execute(_queue_query(conn, annotator, f).limit(limit)).all()
        pks = [r.id for r in rows]
        ext = [r.external_id for r in rows]
        done = dict(conn.execute(
            select(t.GoldCaseRow.conversation_id, func.count(func.distinct(t.GoldCaseRow.turn)))
            .where(t.GoldCaseRow.conversation_id.in_(ext), t.GoldCaseRow.kind == "turn")
            .group_by(t.GoldCaseRow.conversation_id)).all())
        drafts = dict(conn.execute(
            select(t.LabelRow.transcript_id, func.count())
            .where(t.LabelRow.transcript_id.in_(pks), t.LabelRow.annotator == annotator,
                   t.LabelRow.status == "draft")
            .group_by(t.LabelRow.transcript_id)).all())
        leases = dict(conn.execute(
            select(t.LeaseRow.transcript_id, t.LeaseRow.holder)
            .where(t.LeaseRow.transcript_id.in_(pks), t.LeaseRow.expires_at > stamp)).all())
        labeled = dict(conn.execute(
            select(t.LabelRow.transcript_id, func.count(func.distinct(t.LabelRow.turn_id)))
            .where(t.LabelRow.transcript_id.in_(pks), t.LabelRow.status == "submitted")
            .group_by(t.LabelRow.transcript_id)).all())
    return [QueueItem(r.external_id, r.source, r.title, r.n_turns, min(done.get(r.external_id, 0), r.n_turns),
                      drafts.get(r.id, 0), leases.get(r.id), min(labeled.get(r.id, 0), r.n_turns)) for r in rows]


def claim_next(db: Database, annotator: str, f: QueueFilter = QueueFilter(status="unlabeled"), *,
               skip: str | None = None, ttl_seconds: int = LEASE_SECONDS,
               now: datetime | None = None) -> str | None:
    """Lease the next transcript matching ``f`` that nobody else holds, and return its id (None when
    there is none). The annotator's own lease is resumed first unless it is ``skip``; one lease per
    annotator. SQLite runs this under BEGIN IMMEDIATE, so two annotators never get the same item."""
    moment = now or datetime.now(UTC)
    stamp, until = iso(moment), iso(moment + timedelta(seconds=ttl_seconds))
    with db.write() as conn:
        require_user(conn, annotator)
        conn.execute(delete(t.LeaseRow).where(t.LeaseRow.expires_at <= stamp))
        others = select(t.LeaseRow.transcript_id).where(t.LeaseRow.holder != annotator)
        mine = select(t.LeaseRow.transcript_id).where(t.LeaseRow.holder == annotator)
        q = _queue_query(conn, annotator, f).where(t.TranscriptRow.id.not_in(others))
        if skip:
            q = q.where(t.TranscriptRow.external_id != skip)
        # PostgreSQL: a candidate another claimer is taking right now is skipped, not waited for.
        q = q.with_for_update(of=t.TranscriptRow, skip_locked=True)
        taken: list[int] = []
        while True:
            # A claimer that committed after this statement's snapshot was taken has released its row lock
            # but its lease is not visible yet (READ COMMITTED): the lease insert below finds it instead.
            free = q.where(t.TranscriptRow.id.not_in(taken)) if taken else q
            row = (conn.execute(free.where(t.TranscriptRow.id.in_(mine)).limit(1)).first()
                   or conn.execute(free.limit(1)).first())
            if row is None:
                return None
            try:  # a transcript this toolgold cannot load would be handed out again and again: pass it by
                load_transcript(conn, row.external_id)
            except UnreadableRecord:
                taken.append(row.id)
                continue
            if _lease_unless_held(conn, row.id, annotator, stamp, until):
                conn.execute(delete(t.LeaseRow).where(t.LeaseRow.holder == annotator,
                                                      t.LeaseRow.transcript_id != row.id))
                return str(row.external_id)
            taken.append(row.id)


def _lease_unless_held(conn: Connection, transcript_pk: int, annotator: str, stamp: str, until: str) -> bool:
    """Write the annotator's lease on the transcript (renewing their own); False when another holds it."""
    values = {"transcript_id": transcript_pk, "holder": annotator, "claimed_at": stamp, "expires_at": until}
    stmt = dialect_insert(conn, t.LeaseRow).values(**values)
    stmt = stmt.on_conflict_do_update(index_elements=["transcript_id"],
                                      set_={"claimed_at": stamp, "expires_at": until},
                                      where=t.LeaseRow.holder == annotator)
    return conn.execute(stmt.returning(t.LeaseRow.transcript_id)).first() is not None


def take_lease(db: Database, transcript_id: str, annotator: str, *, ttl_seconds: int = LEASE_SECONDS,
               now: datetime | None = None) -> Lease:
    """Lease this transcript for the annotator when it is free (or already theirs); otherwise return the
    other holder's lease unchanged."""
    moment = now or datetime.now(UTC)
    stamp, until = iso(moment), iso(moment + timedelta(seconds=ttl_seconds))
    with db.write() as conn:
        require_user(conn, annotator)
        pk = _transcript_pk(conn, transcript_id, lock=True)
        held = conn.execute(select(t.LeaseRow.holder, t.LeaseRow.expires_at)
                            .where(t.LeaseRow.transcript_id == pk)).first()
        if held is not None and held.holder != annotator and parse_iso(held.expires_at) > moment:
            return Lease(transcript_id, held.holder, held.expires_at)
        conn.execute(delete(t.LeaseRow).where((t.LeaseRow.holder == annotator) | (t.LeaseRow.transcript_id == pk)))
        conn.execute(insert(t.LeaseRow).values(transcript_id=pk, holder=annotator, claimed_at=stamp,
                                               expires_at=until))
        return Lease(transcript_id, annotator, until)


def release_leases(db: Database, annotator: str) -> None:
    """Free every transcript the annotator holds (they signed out or left): the Sign out / Log out buttons."""
    with db.write() as conn:
        conn.execute(delete(t.LeaseRow).where(t.LeaseRow.holder == annotator))


def _renew_lease(conn: Connection, transcript_pk: int, annotator: str) -> None:
    until = iso(datetime.now(UTC) + timedelta(seconds=LEASE_SECONDS))
    conn.execute(update(t.LeaseRow).where(t.LeaseRow.transcript_id == transcript_pk,
                                          t.LeaseRow.holder == annotator).values(expires_at=until))

# -- progress


def _label_state(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"status": row.status, "version": row.version, "body": json.loads(row.body)}


def _overlap_pending_turns(conn: Connection, transcript_pk: int, annotator: str | None) -> set[int]:
    """Message indexes of the transcript's turns that still wait for ``annotator``'s label (overlap)."""
    pending = overlap_pending(annotator, read_overlap(conn))
    return set(conn.scalars(select(t.TurnRow.message_index).where(t.TurnRow.transcript_id == transcript_pk,
                                                                   pending)))


def annotator_totals(db: Database) -> list[AnnotatorTotals]:
    with db.read() as conn:
        rows = conn.execute(
            select(t.LabelRow.annotator, t.LabelRow.status, func.count(),
                   func.sum(case((t.LabelRow.unsure == True, 1), else_=0)))  # noqa: E712
            .group_by(t.LabelRow.annotator, t.LabelRow.status)).all()
    totals: dict[str, dict[str, int]] = {}
    for annotator, status, n, unsure in rows:
        entry = totals.setdefault(annotator, {"draft": 0, "submitted": 0, "unsure": 0})
        entry[status] = n
        entry["unsure"] += int(unsure or 0)
    return [AnnotatorTotals(a, v["draft"], v["submitted"], v["unsure"]) for a, v in sorted(totals.items())]


__all__ = ["LEASE_SECONDS", "AnnotatorTotals", "ConflictError", "LabelRecord", "Lease", "QueueFilter", "QueueItem",
           "TrajectoryRecord", "TurnState", "TurnWindow", "annotator_totals", "claim_next", "get_label",
           "get_trajectory_label", "labels_for_turn", "next_to_label", "queue", "release_leases", "save_label",
           "save_trajectory_label", "submit_label", "take_lease", "turn_states", "turn_window"]
