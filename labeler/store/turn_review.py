"""Whether a decision point needs a reviewer, derived from its committed labels.

The label-driven review items (``disagreement``, ``unsure``, ``changed_after_approval``) are kept in step
inside the same transaction that changes a turn's submitted labels, with the turn's row locked: no clock,
high-water mark or later sweep decides whether a flag is seen, so a label that commits late is reviewed all
the same. ``contested_cases`` reads the same facts straight from the labels, so approval refuses an unsure or
disagreeing case whatever the queue holds.

Functions here take the ``Connection`` of a transaction the caller opened; none opens one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Connection, Integer, String, cast, func, insert, select, update

from labeler.labels import (
    LabelBody,
    LabelIncomplete,
    TrajectoryBody,
    gold_case,
    gold_case_id,
    trajectory_case,
    trajectory_case_id,
)
from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, audit, load_transcript
from labeler.store.engine import StoreError, now_iso, parse_iso
from scorer import canonical
from scorer.agreement import disagreeing_fields, label_ratings
from scorer.model import GoldCase, Transcript

LABEL_KINDS: Final = ("disagreement", "unsure")
"""Items the labels alone raise and withdraw."""
CHANGED_AFTER_APPROVAL: Final = "changed_after_approval"
"""A label submitted, with another answer, after its case was approved: the approved gold stays until a
reviewer decides."""
DISPUTES_IMPORT: Final = "disputes_import"
"""A label that disputes the imported gold of its decision point (the one gold case there)."""

Loaded = dict[str, tuple[Transcript, str]]
"""Parsed transcripts (with their source) shared across turns of one transaction."""


@dataclass(frozen=True)
class ReviewItem:
    """Something a reviewer must decide about one decision point (``ref`` is its gold case id)."""

    id: int
    kind: str
    ref: str
    status: str  # open | escalated | resolved
    payload: Mapping[str, Any]
    created_at: str
    created_by: str
    decided_at: str | None = None
    decided_by: str | None = None
    decision: str | None = None
    comment: str | None = None


def review_item(row: Any) -> ReviewItem:
    return ReviewItem(row.id, row.kind, row.ref, row.status, json.loads(row.payload), row.created_at,
                      row.created_by, row.decided_at, row.decided_by, row.decision, row.comment)


def enqueue(conn: Connection, kind: str, ref: str, payload: str, actor: str) -> ReviewItem:
    """The open item of this kind, case and payload, or a new one."""
    row = conn.execute(select(t.ReviewItemRow).where(
        t.ReviewItemRow.kind == kind, t.ReviewItemRow.ref == ref, t.ReviewItemRow.payload == payload,
        t.ReviewItemRow.status != "resolved")).first()
    if row is not None:
        return review_item(row)
    values = {"kind": kind, "ref": ref, "status": "open", "payload": payload, "created_at": now_iso(),
              "created_by": actor}
    new_id = conn.execute(insert(t.ReviewItemRow).values(**values).returning(t.ReviewItemRow.id)).scalar_one()
    audit(conn, actor=actor, action="review.enqueue", entity="review_item", entity_id=ref,
          after={"item": new_id, "kind": kind, "payload": json.loads(payload)})
    return ReviewItem(new_id, kind, ref, "open", json.loads(payload), values["created_at"], actor)


def close_item(conn: Connection, item_id: int, *, actor: str, decision: str, comment: str | None,
               extra: Mapping[str, Any] | None = None) -> None:
    row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)).first()
    if row is None:
        raise StoreError(f"no review item {item_id}")
    stamped = now_iso()
    values: dict[str, Any] = {"status": "resolved", "decided_at": stamped, "decided_by": actor,
                              "decision": decision, "comment": comment}
    if extra:
        values["payload"] = canonical.dumps_stored({**json.loads(row.payload), **extra})
    conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id).values(**values))
    audit(conn, actor=actor, action=f"review.{decision}", entity="review_item", entity_id=row.ref,
          before={"item": item_id, "kind": row.kind, "status": row.status},
          after={"item": item_id, "status": "resolved", "decision": decision, **(extra or {})},
          note=comment)


def _open_item(conn: Connection, kind: str, ref: str) -> Any:
    return conn.execute(select(t.ReviewItemRow).where(
        t.ReviewItemRow.kind == kind, t.ReviewItemRow.ref == ref,
        t.ReviewItemRow.status != "resolved").order_by(t.ReviewItemRow.id)).first()


# -- the labels of one turn -----------------------------------------------------------------------------

def submitted_cases(conn: Connection, turn_pk: int, transcript_id: str, message_index: int,
                    loaded: Loaded | None = None) -> dict[str, tuple[GoldCase | None, bool, list[str]]]:
    """Each annotator's submitted label of a turn as a gold case (None when it no longer builds), whether
    it is flagged unsure, and what keeps it from building; in order of submission."""
    rows = conn.execute(
        select(t.LabelRow.annotator, t.LabelRow.body, t.LabelRow.submitted_at, t.LabelRow.updated_at)
        .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
        .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all()
    if not rows:
        return {}
    cache = loaded if loaded is not None else {}
    if transcript_id not in cache:
        cache[transcript_id] = load_transcript(conn, transcript_id)
    transcript, source = cache[transcript_id]
    out: dict[str, tuple[GoldCase | None, bool, list[str]]] = {}
    for annotator, text, submitted_at, updated_at in rows:
        body = LabelBody.model_validate_json(text)
        try:
            case: GoldCase | None = gold_case(
                body, transcript=transcript, message_index=message_index, annotators=(annotator,),
                labeled_at=parse_iso(submitted_at or updated_at), source=source)  # a submitted label has both
            found: list[str] = []
        except LabelIncomplete as exc:
            case, found = None, exc.problems
        out[annotator] = (case, body.unsure, found)
    return out


def _wanted(labels: Mapping[str, tuple[GoldCase | None, bool, list[str]]]) -> dict[str, dict[str, Any]]:
    """The items submitted labels of one case call for: ``kind -> payload``."""
    wanted: dict[str, dict[str, Any]] = {}
    cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
    fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
    if fields:
        wanted["disagreement"] = {"annotators": list(cases), "fields": list(fields)}
    unsure = [annotator for annotator, (_, flagged, _) in labels.items() if flagged]
    if unsure:
        wanted["unsure"] = {"annotators": unsure}
    return wanted


# -- trajectory labels: one per transcript and annotator, reviewed like turn labels -----------------------

def submitted_trajectory_cases(conn: Connection, transcript_pk: int, transcript_id: str,
                               loaded: Loaded | None = None) -> dict[str, tuple[GoldCase | None, bool, list[str]]]:
    """Each annotator's submitted trajectory label as a gold case (None when it no longer builds), its unsure
    flag and what keeps it from building; in order of submission."""
    rows = conn.execute(
        select(t.TrajectoryLabelRow.annotator, t.TrajectoryLabelRow.body, t.TrajectoryLabelRow.submitted_at,
               t.TrajectoryLabelRow.updated_at)
        .where(t.TrajectoryLabelRow.transcript_id == transcript_pk, t.TrajectoryLabelRow.status == "submitted")
        .order_by(t.TrajectoryLabelRow.submitted_at, t.TrajectoryLabelRow.annotator)).all()
    if not rows:
        return {}
    cache = loaded if loaded is not None else {}
    if transcript_id not in cache:
        cache[transcript_id] = load_transcript(conn, transcript_id)
    transcript, source = cache[transcript_id]
    out: dict[str, tuple[GoldCase | None, bool, list[str]]] = {}
    for annotator, text, submitted_at, updated_at in rows:
        body = TrajectoryBody.model_validate_json(text)
        try:
            case: GoldCase | None = trajectory_case(body, transcript=transcript, annotators=(annotator,),
                                                    labeled_at=parse_iso(submitted_at or updated_at), source=source)
            found: list[str] = []
        except LabelIncomplete as exc:
            case, found = None, exc.problems
        out[annotator] = (case, body.unsure, found)
    return out


def sync_trajectory(conn: Connection, transcript_pk: int, transcript_id: str, loaded: Loaded | None = None) -> None:
    """Open, update or withdraw the trajectory case's ``disagreement`` and ``unsure`` items from its
    submitted trajectory labels. The caller holds the transcript's row."""
    ref = trajectory_case_id(transcript_id)
    status = conn.scalar(select(t.GoldCaseRow.status).where(t.GoldCaseRow.id == ref))
    wanted = _wanted(submitted_trajectory_cases(conn, transcript_pk, transcript_id, loaded)) \
        if status == "submitted" else {}
    _reconcile(conn, ref, wanted)


def trajectories_needing_sync(conn: Connection) -> list[tuple[int, str]]:
    """``(transcript pk, transcript id)`` of every transcript whose trajectory case awaits a decision and has
    submitted trajectory labels, or has a label-driven item open; in transcript order."""
    undecided = select(t.GoldCaseRow.id).where(t.GoldCaseRow.status == "submitted", t.GoldCaseRow.kind == "trajectory")
    ref = t.TranscriptRow.external_id + "#trajectory"
    labeled = select(t.TrajectoryLabelRow.transcript_id).where(t.TrajectoryLabelRow.status == "submitted")
    open_refs = select(t.ReviewItemRow.ref).where(t.ReviewItemRow.status != "resolved",
                                                  t.ReviewItemRow.kind.in_(LABEL_KINDS))
    rows = conn.execute(select(t.TranscriptRow.id, t.TranscriptRow.external_id).where(
        (t.TranscriptRow.id.in_(labeled) & ref.in_(undecided)) | ref.in_(open_refs))
        .order_by(t.TranscriptRow.id)).all()
    return [(int(pk), str(tid)) for pk, tid in rows]


def _reasons(conn: Connection, turn_pk: int, transcript_id: str, message_index: int,
             loaded: Loaded) -> dict[str, dict[str, Any]]:
    """What a reviewer must decide about a turn whose gold awaits a decision: ``kind -> payload``."""
    submitted = conn.execute(
        select(t.LabelRow.annotator, t.LabelRow.unsure)
        .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
        .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all()
    wanted: dict[str, dict[str, Any]] = {}
    if len(submitted) >= 2:  # only then is there anything to compare (and a transcript worth parsing)
        labels = submitted_cases(conn, turn_pk, transcript_id, message_index, loaded)
        cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
        fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
        if fields:
            wanted["disagreement"] = {"annotators": list(cases), "fields": list(fields)}
    unsure = [annotator for annotator, flagged in submitted if flagged]
    if unsure:
        wanted["unsure"] = {"annotators": unsure}
    return wanted


def lock_turn(conn: Connection, turn_pk: int) -> None:
    """Take the turn's row for this transaction: label writes and syncs of one turn queue up on
    PostgreSQL (SQLite's BEGIN IMMEDIATE already serializes writers)."""
    conn.execute(select(t.TurnRow.id).where(t.TurnRow.id == turn_pk).with_for_update())


def sync_turn(conn: Connection, turn_pk: int, transcript_id: str, message_index: int,
              loaded: Loaded | None = None) -> None:
    """Open, update or withdraw the turn's ``disagreement`` and ``unsure`` items from its labels as
    committed now. The caller holds the turn's row (``lock_turn``)."""
    ref = gold_case_id(transcript_id, message_index)
    status = conn.scalar(select(t.GoldCaseRow.status).where(t.GoldCaseRow.id == ref))
    wanted = _reasons(conn, turn_pk, transcript_id, message_index,
                      loaded if loaded is not None else {}) if status == "submitted" else {}
    _reconcile(conn, ref, wanted)


def _reconcile(conn: Connection, ref: str, wanted: Mapping[str, Mapping[str, Any]]) -> None:
    """Make the case's open label-driven items say exactly ``wanted`` (kind -> payload)."""
    for kind in LABEL_KINDS:
        open_row = _open_item(conn, kind, ref)
        if kind in wanted:
            payload = canonical.dumps_stored(wanted[kind])
            if open_row is None:
                enqueue(conn, kind, ref, payload, "review")
            elif open_row.payload != payload:
                conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == open_row.id)
                             .values(payload=payload))
        elif open_row is not None and open_row.status == "open":
            close_item(conn, open_row.id, actor="review", decision="withdrawn",
                       comment="the labels changed: nothing to decide any more")


def differs_from_import(label: GoldCase, imported: GoldCase) -> bool:
    """Whether a label disputes imported gold: another decision, tool or argument under the match rules
    (as two annotators are compared), not merely other tags, rules or words."""
    return bool(disagreeing_fields(label_ratings({"import": imported, "label": label})))


def note_label_against(conn: Connection, case: GoldCase, annotator: str, standing: GoldCase, kind: str, *,
                       differs: bool) -> None:
    """``annotator`` submitted ``case`` for a turn whose gold already stands (``standing``: approved, or
    imported). Another answer (``differs``) opens or joins an item of ``kind`` about the standing case; the
    same answer withdraws the annotator from it. The standing gold changes only by a reviewer's decision."""
    row = _open_item(conn, kind, standing.id)
    annotators = list(json.loads(row.payload).get("annotators", ())) if row is not None else []
    wanted = ([*annotators, annotator] if annotator not in annotators else annotators) if differs else [
        a for a in annotators if a != annotator]
    if row is None:
        if wanted:
            enqueue(conn, kind, standing.id,
                    canonical.dumps_stored({"annotators": wanted, "status": standing.provenance.status,
                                     "source": standing.provenance.source,
                                     "reviewer": standing.provenance.reviewer}), annotator)
        return
    if not wanted:
        if row.status == "open":
            close_item(conn, row.id, actor="review", decision="withdrawn",
                       comment="the label says what the standing gold says again")
        return
    payload = canonical.dumps_stored({**json.loads(row.payload), "annotators": wanted})
    if payload != row.payload:
        conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == row.id).values(payload=payload))


def withdraw_label_from(conn: Connection, kind: str, ref: str, annotator: str) -> None:
    """``annotator``'s label no longer stands against ``ref`` (it was reopened as a draft)."""
    row = _open_item(conn, kind, ref)
    if row is None:
        return
    annotators = [a for a in json.loads(row.payload).get("annotators", ()) if a != annotator]
    if not annotators and row.status == "open":
        close_item(conn, row.id, actor="review", decision="withdrawn", comment=f"{annotator} reopened the label")
    elif annotators:
        conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == row.id).values(
            payload=canonical.dumps_stored({**json.loads(row.payload), "annotators": annotators})))


def standing_import(conn: Connection, transcript_id: str, message_index: int) -> GoldCase | None:
    """Gold for this decision point that came from an import (its own id, not ``<transcript>#t<index>``):
    the decision point's one gold case, which labels agree with or dispute."""
    body = conn.scalar(select(GOLD_BODY).where(
        t.GoldCaseRow.conversation_id == transcript_id, t.GoldCaseRow.turn == message_index,
        t.GoldCaseRow.kind == "turn", t.GoldCaseRow.id != gold_case_id(transcript_id, message_index))
        .order_by(t.GoldCaseRow.id).limit(1))
    return GoldCase.model_validate_json(body) if body is not None else None


# -- whole-database views -------------------------------------------------------------------------------

def turns_needing_sync(conn: Connection) -> list[tuple[int, str, int]]:
    """``(turn pk, transcript id, message index)`` of every turn that has or may need a label-driven item:
    submitted labels on undecided gold that are flagged unsure or more than one, and turns with such an
    item still open. Ordered by turn, so concurrent syncs lock turns in the same order."""
    undecided = select(t.GoldCaseRow.id).where(t.GoldCaseRow.status == "submitted")
    ref = t.TranscriptRow.external_id + "#t" + cast(t.TurnRow.message_index, String)
    labeled = (select(t.LabelRow.turn_id).where(t.LabelRow.status == "submitted").group_by(t.LabelRow.turn_id)
               .having((func.count() >= 2) | (func.max(cast(t.LabelRow.unsure, Integer)) == 1)))
    open_refs = select(t.ReviewItemRow.ref).where(t.ReviewItemRow.status != "resolved",
                                                  t.ReviewItemRow.kind.in_(LABEL_KINDS))
    rows = conn.execute(
        select(t.TurnRow.id, t.TranscriptRow.external_id, t.TurnRow.message_index)
        .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)
        .where(((t.TurnRow.id.in_(labeled)) & ref.in_(undecided)) | ref.in_(open_refs))
        .order_by(t.TurnRow.id)).all()
    return [(int(pk), str(tid), int(index)) for pk, tid, index in rows]


def contested_cases(conn: Connection, case_ids: Iterable[str] | None = None) -> dict[str, str]:
    """Undecided gold cases a reviewer must look at, with why, read from the labels themselves (an unsure
    flag, annotators who disagree) and from open review and re-labeling items. ``case_ids`` narrows the
    answer to those cases."""
    wanted = set(case_ids) if case_ids is not None else None
    out: dict[str, str] = {}

    def note(case_id: str, why: str) -> None:
        if wanted is None or case_id in wanted:
            out.setdefault(case_id, why)

    for ref, kind, item_id in conn.execute(select(t.ReviewItemRow.ref, t.ReviewItemRow.kind, t.ReviewItemRow.id)
                                           .where(t.ReviewItemRow.status != "resolved")):
        note(ref, f"review item {item_id} ({kind}) is undecided")
    for case_id in conn.scalars(select(t.RelabelItemRow.case_id).where(t.RelabelItemRow.status == "open")):
        note(case_id, "its tool schemas changed: it waits for re-labeling")
    loaded: Loaded = {}
    for turn_pk, transcript_id, index in turns_needing_sync(conn):
        case_id = gold_case_id(transcript_id, index)
        if wanted is not None and case_id not in wanted:
            continue
        reasons = _reasons(conn, turn_pk, transcript_id, index, loaded)
        if "unsure" in reasons:
            note(case_id, "flagged unsure by " + ", ".join(reasons["unsure"]["annotators"]))
        if "disagreement" in reasons:
            note(case_id, "its annotators disagree on " + ", ".join(reasons["disagreement"]["fields"]))
    for transcript_pk, transcript_id in trajectories_needing_sync(conn):
        case_id = trajectory_case_id(transcript_id)
        if wanted is not None and case_id not in wanted:
            continue
        reasons = _wanted(submitted_trajectory_cases(conn, transcript_pk, transcript_id, loaded))
        if "unsure" in reasons:
            note(case_id, "flagged unsure by " + ", ".join(reasons["unsure"]["annotators"]))
        if "disagreement" in reasons:
            note(case_id, "its annotators disagree on " + ", ".join(reasons["disagreement"]["fields"]))
    return out


__all__ = [
    "CHANGED_AFTER_APPROVAL",
    "DISPUTES_IMPORT",
    "LABEL_KINDS",
    "Loaded",
    "ReviewItem",
    "close_item",
    "contested_cases",
    "differs_from_import",
    "enqueue",
    "lock_turn",
    "note_label_against",
    "review_item",
    "standing_import",
    "submitted_cases",
    "submitted_trajectory_cases",
    "sync_trajectory",
    "sync_turn",
    "trajectories_needing_sync",
    "turns_needing_sync",
    "withdraw_label_from",
]
