"""The review queue: what a reviewer must decide, the decisions, and approving what nobody contests.

Label-driven items (``disagreement``, ``unsure``) are kept in step with the submitted labels by
``sync_review_queue``; other parts (the LLM judge) put ``judge_mismatch`` items in with ``enqueue_review``.
Every decision checks the acting user's role here, on the server side, and writes an audit event.
Overlap (several annotators on a share of the turns) is set here too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import ValidationError
from sqlalchemy import Connection, func, select, update

from labeler.labels import (
    LabelBody,
    LabelIncomplete,
    TrajectoryBody,
    gold_case,
    gold_case_id,
    observed_as_calls,
    schema_problems,
    trajectory_case,
    trajectory_case_id,
)
from labeler.store import tables as t
from labeler.store.common import (
    GOLD_BODY,
    OVERLAP_KEY,
    REVIEWER_ROLES,
    Overlap,
    PermissionDenied,
    audit,
    in_sample,
    label_key,
    load_transcript,
    put_gold,
    put_setting,
    read_overlap,
    require_role,
    stamp,
    withdraw_gold,
)
from labeler.store.engine import Database, StoreError, now_iso, parse_iso
from labeler.store.turn_review import (
    CHANGED_AFTER_APPROVAL,
    DISPUTES_IMPORT,
    LABEL_KINDS,
    Loaded,
    ReviewItem,
    close_item,
    contested_cases,
    enqueue,
    lock_turn,
    review_item,
    submitted_cases,
    submitted_trajectory_cases,
    sync_trajectory,
    sync_turn,
    trajectories_needing_sync,
    turns_needing_sync,
)
from scorer import canonical
from scorer.agreement import disagreeing_fields, label_ratings, majority
from scorer.formats import describe_validation_error
from scorer.model import Answer, Call, GoldCase

JUDGE_KIND: Final = "judge_mismatch"
REVIEW_KINDS: Final = (*LABEL_KINDS, CHANGED_AFTER_APPROVAL, DISPUTES_IMPORT, JUDGE_KIND)
STANDING_KINDS: Final = (CHANGED_AFTER_APPROVAL, DISPUTES_IMPORT, JUDGE_KIND)
"""Items about gold that already stands: the reviewer sees it beside the labels."""


@dataclass(frozen=True)
class ReviewCandidate:
    """One version of the answer a reviewer can approve: an annotator's label, the agent's observed call,
    the current gold, or (judge mismatches) the agent's answer from the run."""

    key: str  # label:<annotator> | observed | gold | agent | alternative
    title: str
    case: GoldCase | None
    """None when this version cannot be a gold case (``problems`` says why)."""
    problems: tuple[str, ...] = ()
    annotators: tuple[str, ...] = ()
    """Who this version stands for (the annotators whose labels say the same)."""
    unsure: bool = False
    rationale: str = ""


@dataclass(frozen=True)
class ReviewDetail:
    item: ReviewItem
    transcript_id: str | None
    message_index: int | None
    candidates: tuple[ReviewCandidate, ...]
    preselected: str | None
    """The majority's version (for a judge mismatch: the gold)."""
    disagreeing: tuple[str, ...]
    """Fields the annotators disagree on (decision, tool, arg:<tool>.<name>)."""
    others: tuple[ReviewItem, ...]
    """Other undecided items about the same case."""

    def candidate(self, key: str) -> ReviewCandidate | None:
        return next((c for c in self.candidates if c.key == key), None)


def _agent_candidates(base: GoldCase, payload: Mapping[str, Any]) -> list[ReviewCandidate]:
    """The agent's answer from a judge-mismatch payload (``actual``: ``[{name, arguments}]``), as a
    replacement of the expected answer and as an added alternative."""
    actual = payload.get("actual", payload.get("calls"))
    if not isinstance(actual, list):
        return []
    out = []
    try:
        calls = tuple(Call(name=c["name"], arguments=c.get("arguments") or {}) for c in actual)
        answer = Answer(behavior="call", calls=calls) if calls else Answer(behavior="no_call")
    except (ValidationError, KeyError, TypeError, AttributeError) as exc:
        problem = describe_validation_error(exc) if isinstance(exc, ValidationError) else "not a list of calls"
        return [ReviewCandidate("agent", "Agent's answer", None, (problem,))]
    for key, title, changes in (("agent", "Agent's answer as the expected answer", {"expected": answer}),
                                ("alternative", "Gold + the agent's answer as an alternative",
                                 {"alternatives": (*base.alternatives, answer)})):
        try:
            case = GoldCase.model_validate({**base.model_dump(), **changes})
        except ValidationError as exc:
            out.append(ReviewCandidate(key, title, None, (describe_validation_error(exc),)))
            continue
        out.append(ReviewCandidate(key, title, case, (), base.provenance.annotators, False, base.rationale))
    return out


# -- the review queue: the hook other parts (the LLM judge) put items into ------------------------

def enqueue_review(db: Database, kind: str, ref: str, payload: Mapping[str, Any] | None = None, *,
                   actor: str = "judge") -> ReviewItem:
    """Put an item in the reviewers' queue. ``ref`` is a gold case id (``<transcript>#t<message index>``
    for labeled turns); ``payload`` is what the reviewer needs to decide (for ``judge_mismatch``: the
    version, the run, the agent's calls, the verdict and its rationale). An open item of the same kind,
    case and payload is returned instead of a duplicate. Creating an item decides nothing, so any caller
    may (the judge runs without a user); the audit log names ``actor``."""
    if kind not in REVIEW_KINDS:
        raise StoreError(f"unknown review kind {kind!r}; choose one of {', '.join(REVIEW_KINDS)}")
    text = canonical.dumps_stored(dict(payload or {}))
    with db.write() as conn:
        known = conn.scalar(select(t.GoldCaseRow.id).where(t.GoldCaseRow.id == ref)) or conn.scalar(
            select(t.GoldVersionCaseRow.case_id).where(t.GoldVersionCaseRow.case_id == ref).limit(1))
        if known is None:
            raise StoreError(f"no gold case {ref!r} to review")
        return enqueue(conn, kind, ref, text, actor)



# -- the review queue: what needs a reviewer's decision -----------------------------------------

def sync_review_queue(db: Database) -> int:
    """Re-derive every label-driven item from the labels as committed now and return how many items are open.

    Label writes already keep their turn's items in step in their own transaction (``turn_review``); this
    is the reconciliation for data written before that, or changed behind the store's back. It looks at
    every turn that has or may need an item, each under its row lock, in turn order, so concurrent syncs
    (two reviewers opening Review at once) queue up instead of creating the same item twice.
    """
    with db.write() as conn:
        loaded: Loaded = {}
        for turn_pk, transcript_id, message_index in turns_needing_sync(conn):
            lock_turn(conn, turn_pk)
            sync_turn(conn, turn_pk, transcript_id, message_index, loaded)
        for transcript_pk, transcript_id in trajectories_needing_sync(conn):
            conn.execute(select(t.TranscriptRow.id).where(t.TranscriptRow.id == transcript_pk).with_for_update())
            sync_trajectory(conn, transcript_pk, transcript_id, loaded)
        return conn.scalar(select(func.count()).select_from(t.ReviewItemRow)
                           .where(t.ReviewItemRow.status != "resolved")) or 0


def review_queue(db: Database, *, actor: str, kinds: Sequence[str] | None = None,
                 include_resolved: bool = False, limit: int = 500) -> list[ReviewItem]:
    """Items awaiting a decision (escalated ones first), for reviewers and admins."""
    q = select(t.ReviewItemRow).order_by(
        (t.ReviewItemRow.status != "escalated"), t.ReviewItemRow.id).limit(limit)
    if not include_resolved:
        q = q.where(t.ReviewItemRow.status != "resolved")
    if kinds:
        q = q.where(t.ReviewItemRow.kind.in_(list(kinds)))
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "see the review queue")
        return [review_item(r) for r in conn.execute(q)]


def review_counts(db: Database) -> dict[str, int]:
    """Open items per kind (escalated ones under ``escalated``)."""
    with db.read() as conn:
        rows = conn.execute(select(t.ReviewItemRow.kind, t.ReviewItemRow.status, func.count())
                            .where(t.ReviewItemRow.status != "resolved")
                            .group_by(t.ReviewItemRow.kind, t.ReviewItemRow.status)).all()
    out: dict[str, int] = {}
    for kind, status, n in rows:
        key = "escalated" if status == "escalated" else kind
        out[key] = out.get(key, 0) + n
    return out


def review_detail(db: Database, item_id: int, *, actor: str) -> ReviewDetail:
    """The item with the versions to choose from side by side: each annotator's label, the agent's
    observed call, the current gold (and for a judge mismatch the agent's answer), the majority
    pre-selected."""
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "review gold cases")
        return _detail(conn, _item_row(conn, item_id))


def _detail(conn: Connection, row: Any) -> ReviewDetail:
    item = review_item(row)
    turn = _turn_of(conn, item.ref)
    candidates: list[ReviewCandidate] = []
    preselected: str | None = None
    fields: tuple[str, ...] = ()
    live_row = conn.execute(select(GOLD_BODY, t.GoldCaseRow.status)
                            .where(t.GoldCaseRow.id == item.ref)).first()
    live = GoldCase.model_validate_json(live_row.body) if live_row else None
    if turn is not None:
        turn_pk, transcript_id, message_index, observed, behavior = turn
        labels = submitted_cases(conn, turn_pk, transcript_id, message_index)
        cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
        agreeing = majority(cases) if cases else ()
        for annotator, (case, unsure, found) in labels.items():
            title = annotator + (" (unsure)" if unsure else "")
            candidates.append(ReviewCandidate(f"label:{annotator}", title, case, tuple(found),
                                              _agreeing(cases, annotator), unsure,
                                              case.rationale if case else ""))
        if agreeing:
            preselected = f"label:{agreeing[0]}"
            fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
        if behavior != "open":
            candidates.append(_observed_candidate(conn, transcript_id, message_index, observed,
                                                  next(iter(cases.values()), live)))
    trajectory = _trajectory_of(conn, item.ref) if turn is None else None
    if trajectory is not None:
        transcript_pk, transcript_id = trajectory
        labels = submitted_trajectory_cases(conn, transcript_pk, transcript_id)
        cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
        for annotator, (case, unsure, found) in labels.items():
            candidates.append(ReviewCandidate(f"label:{annotator}", annotator + (" (unsure)" if unsure else ""),
                                              case, tuple(found), _agreeing(cases, annotator), unsure,
                                              case.rationale if case else ""))
        agreeing = majority(cases) if cases else ()
        if agreeing:
            preselected = f"label:{agreeing[0]}"
            fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
        candidates.append(_observed_trajectory(conn, transcript_pk, transcript_id, next(iter(cases.values()), live)))
    if live is not None and (turn is None or item.kind in STANDING_KINDS or not candidates):
        candidates.insert(0, ReviewCandidate("gold", f"Gold ({live_row.status if live_row else ''})", live, (),
                                             live.provenance.annotators, False, live.rationale))
    base = live or (_frozen_case(conn, item) if item.kind == "judge_mismatch" else None)
    if item.kind == "judge_mismatch" and base is not None:
        if live is None:
            candidates.insert(0, ReviewCandidate("gold", "Gold (as frozen)", base, (),
                                                 base.provenance.annotators, False, base.rationale))
        candidates.extend(_agent_candidates(base, item.payload))
        preselected = "gold"
    if preselected is None and candidates:
        preselected = candidates[0].key
    others = tuple(review_item(r) for r in conn.execute(select(t.ReviewItemRow).where(
        t.ReviewItemRow.ref == item.ref, t.ReviewItemRow.id != item.id, t.ReviewItemRow.status != "resolved")))
    about = turn[1] if turn else trajectory[1] if trajectory else None  # the transcript the item is about
    return ReviewDetail(item, about, turn[2] if turn else None, tuple(candidates), preselected, fields,
                        others)


def _agreeing(cases: Mapping[str, GoldCase], annotator: str) -> tuple[str, ...]:
    if annotator not in cases:
        return (annotator,)
    whole = label_ratings(cases)["label"] if len(cases) >= 2 else {annotator: ""}
    return (annotator, *(a for a in cases if a != annotator and whole.get(a) == whole[annotator]))


def _observed_candidate(conn: Connection, transcript_id: str, message_index: int,
                        observed: list[dict[str, Any]], like: GoldCase | None) -> ReviewCandidate:
    """What the agent did, as a gold case (tags and reference time from ``like``)."""
    transcript, source = load_transcript(conn, transcript_id)
    body = LabelBody(decision="same" if observed else "no_call", calls=observed_as_calls(observed),
                     tags=like.tags if like else (), reference_time=like.reference_time if like else None,
                     split=like.split if like else "regression")
    title = "Observed agent call" if observed else "Observed agent (no call)"
    try:
        case = gold_case(body, transcript=transcript, message_index=message_index, annotators=(),
                         labeled_at=parse_iso(now_iso()), source=source)
    except LabelIncomplete as exc:
        return ReviewCandidate("observed", title, None, tuple(exc.problems))
    return ReviewCandidate("observed", title, case)


def _observed_trajectory(conn: Connection, transcript_pk: int, transcript_id: str,
                         like: GoldCase | None) -> ReviewCandidate:
    """What the agent did over the whole conversation, in order, as a trajectory case (tags, reference time
    and split from ``like``; the agent's answer has none of its own)."""
    transcript, source = load_transcript(conn, transcript_id)
    observed = [c for raw in conn.scalars(select(t.TurnRow.observed).where(t.TurnRow.transcript_id == transcript_pk)
                                          .order_by(t.TurnRow.message_index)) for c in json.loads(raw)]
    body = TrajectoryBody(calls=observed_as_calls(observed), no_action=not observed,
                          tags=like.tags if like else (), reference_time=like.reference_time if like else None,
                          split=like.split if like else "regression")
    title = "Observed agent calls" if observed else "Observed agent (no call)"
    try:
        case = trajectory_case(body, transcript=transcript, annotators=(), labeled_at=parse_iso(now_iso()),
                               source=source)
    except LabelIncomplete as exc:
        return ReviewCandidate("observed", title, None, tuple(exc.problems))
    return ReviewCandidate("observed", title, case)


def _frozen_case(conn: Connection, item: ReviewItem) -> GoldCase | None:
    version = item.payload.get("version")
    if not isinstance(version, str):
        return None
    body = conn.scalar(
        select(t.GoldBlobRow.body)
        .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)
        .where(t.GoldVersionCaseRow.version_id == version, t.GoldVersionCaseRow.case_id == item.ref))
    return GoldCase.model_validate_json(stamp(body, version)) if body else None


def _turn_of(conn: Connection, ref: str) -> tuple[int, str, int, list[dict[str, Any]], str] | None:
    """The decision point a case id stands for: ``<transcript>#t<index>`` for label-made gold, or the
    conversation and turn an imported turn case names."""
    transcript_id, sep, index = ref.rpartition("#t")
    if not sep or not index.isdigit():
        named = conn.execute(select(t.GoldCaseRow.conversation_id, t.GoldCaseRow.turn).where(
            t.GoldCaseRow.id == ref, t.GoldCaseRow.kind == "turn")).first()
        if named is None or named.conversation_id is None or named.turn is None:
            return None
        transcript_id, index = named.conversation_id, str(named.turn)
    row = conn.execute(
        select(t.TurnRow.id, t.TurnRow.observed, t.TurnRow.observed_behavior)
        .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)
        .where(t.TranscriptRow.external_id == transcript_id, t.TurnRow.message_index == int(index))).first()
    if row is None:
        return None
    return row.id, transcript_id, int(index), json.loads(row.observed), row.observed_behavior


def _trajectory_of(conn: Connection, ref: str) -> tuple[int, str] | None:
    """The transcript a trajectory case id (``<transcript>#trajectory``) stands for."""
    transcript_id, sep, rest = ref.rpartition("#trajectory")
    if not sep or rest:
        return None
    pk = conn.scalar(select(t.TranscriptRow.id).where(t.TranscriptRow.external_id == transcript_id))
    return None if pk is None else (int(pk), transcript_id)


def _item_row(conn: Connection, item_id: int, *, lock: bool = False) -> Any:
    """The item's row; ``lock`` takes it for the transaction, so two reviewers deciding one item at once
    queue up and the second finds it decided (PostgreSQL; SQLite's BEGIN IMMEDIATE serializes already)."""
    q = select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)
    row = conn.execute(q.with_for_update() if lock else q).first()
    if row is None:
        raise StoreError(f"no review item {item_id}")
    return row


def _not_a_judge_item(row: Any) -> Any:
    """Judge items have one workflow, the Adjudication page's (``adjudicate``): one recorded decision that
    calibration reads, and a new frozen version instead of an overwritten live case."""
    if row.kind == JUDGE_KIND:
        raise StoreError(f"review item {row.id} is a judge mismatch: decide it on the Adjudication page")
    return row


def deciding(conn: Connection, item_id: int, actor: str) -> Any:
    """The item, when ``actor`` may decide it now: a reviewer or admin, an admin for escalated items."""
    role = require_role(conn, actor, REVIEWER_ROLES, "approve or reject gold cases")
    row = _item_row(conn, item_id, lock=True)
    if row.status == "resolved":
        raise StoreError(f"review item {item_id} was already decided by {row.decided_by} "
                         f"({row.decision}, {row.decided_at})")
    if row.status == "escalated" and role != "admin":
        raise PermissionDenied(f"review item {item_id} was escalated: only an admin can decide it "
                               f"({actor!r} is {role})")
    return row


def accept_review(db: Database, item_id: int, choice: str, *, actor: str, comment: str = "") -> GoldCase:
    """Approve one of the versions shown side by side (``choice`` is its key, e.g. ``label:ann``,
    ``observed``, ``gold``, ``agent``): it becomes the approved gold case, with the reviewer and the
    annotators it stands for in its provenance."""
    with db.write() as conn:
        row = _not_a_judge_item(deciding(conn, item_id, actor))
        detail = _detail(conn, row)
        chosen = next((c for c in detail.candidates if c.key == choice), None)
        if chosen is None:
            raise StoreError(f"review item {item_id} has no version {choice!r}; choose one of "
                             f"{', '.join(c.key for c in detail.candidates)}")
        if chosen.case is None:
            raise StoreError(f"{chosen.title} cannot be approved: " + "; ".join(chosen.problems))
        return _approve(conn, row, chosen.case, chosen.annotators, actor=actor, decision="accept",
                        comment=comment or None, extra={"chosen": choice})


def edit_and_accept(db: Database, item_id: int, case: GoldCase, *, actor: str, comment: str = "") -> GoldCase:
    """Approve the reviewer's own edit of the case (same id)."""
    with db.write() as conn:
        row = _not_a_judge_item(deciding(conn, item_id, actor))
        if case.id != row.ref:
            raise StoreError(f"the edited case is {case.id!r}, but review item {item_id} is about "
                             f"{row.ref!r}")
        try:  # model_copy(update=...) skips validation: check the edit as a whole
            case = GoldCase.model_validate(case.model_dump())
        except ValidationError as exc:
            raise StoreError(f"the edited case is not valid: {describe_validation_error(exc)}") from None
        # Who labeled is a fact, not an edit: the edit may stand for some of this turn's labels, never others.
        detail = _detail(conn, row)
        labeled = {a for c in detail.candidates for a in c.annotators}
        # A value the tool cannot take is no gold; what a candidate already broke (imported gold) stays.
        known = {p for c in detail.candidates if c.case is not None for p in schema_problems(c.case)}
        if broken := [p for p in schema_problems(case) if p not in known]:
            raise StoreError("the edited case breaks the tool schema: " + "; ".join(broken))
        if strangers := sorted(set(case.provenance.annotators) - labeled):
            raise StoreError(f"provenance.annotators cannot be edited: {', '.join(strangers)} did not label "
                             f"{row.ref} (its labels are by {', '.join(sorted(labeled)) or 'nobody'})")
        return _approve(conn, row, case, case.provenance.annotators, actor=actor, decision="edit",
                        comment=comment or None, extra={})


def _approve(conn: Connection, row: Any, case: GoldCase, annotators: Sequence[str], *, actor: str,
             decision: str, comment: str | None, extra: Mapping[str, Any]) -> GoldCase:
    # The item is about one decision point's one gold case: a label chosen for imported gold keeps its id.
    approved = case.model_copy(update={"id": row.ref, "provenance": case.provenance.model_copy(update={
        "status": "approved", "reviewer": actor, "annotators": tuple(annotators), "gold_version": None})})
    before = conn.scalar(select(t.GoldCaseRow.content_hash).where(t.GoldCaseRow.id == row.ref))
    put_gold(conn, approved, actor=actor, action="gold.approve",
             before=None if before is None else {"content_hash": before}, note=comment)
    close_item(conn, row.id, actor=actor, decision=decision, comment=comment, extra=extra)
    _close_label_items(conn, row, actor, f"decided with item {row.id}")
    return approved


def _close_label_items(conn: Connection, row: Any, actor: str, comment: str) -> None:
    """A decision about a turn settles its other label-driven items too (not other judge mismatches)."""
    for other in conn.scalars(select(t.ReviewItemRow.id).where(
            t.ReviewItemRow.ref == row.ref, t.ReviewItemRow.id != row.id,
            t.ReviewItemRow.status != "resolved",
            t.ReviewItemRow.kind.in_([*LABEL_KINDS, CHANGED_AFTER_APPROVAL, DISPUTES_IMPORT]))):
        close_item(conn, other, actor=actor, decision="settled", comment=comment)


def reject_review(db: Database, item_id: int, *, actor: str, comment: str) -> list[str]:
    """Reject and requeue: the turn's submitted labels go back to their annotators as drafts (with the
    comment, which is required) and the undecided gold case is withdrawn until they resubmit. A gold case
    without labels (imported) is marked rejected. Returns the annotators it went back to."""
    if not comment.strip():
        raise StoreError("say why when you reject: the annotators will read it")
    with db.write() as conn:
        row = _not_a_judge_item(deciding(conn, item_id, actor))
        requeued = _requeue(conn, row.ref, actor=actor, comment=comment)
        close_item(conn, row.id, actor=actor, decision="reject", comment=comment,
                   extra={"requeued": requeued})
        _close_label_items(conn, row, actor, f"rejected with item {row.id}")
        return requeued


def _requeue(conn: Connection, ref: str, *, actor: str, comment: str) -> list[str]:
    turn = _turn_of(conn, ref)
    labels = conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn[0],
                                                   t.LabelRow.status == "submitted")
                          .order_by(t.LabelRow.id)).all() if turn else []
    transcript_id, message_index = (turn[1], turn[2]) if turn else ("", 0)
    stamped = now_iso()
    for label in labels:
        conn.execute(update(t.LabelRow).where(t.LabelRow.id == label.id).values(
            status="draft", version=label.version + 1, updated_at=stamped, submitted_at=None))
        audit(conn, actor=actor, action="label.requeue", entity="label",
              entity_id=label_key(transcript_id, message_index, label.annotator),
              before={"status": "submitted", "version": label.version},
              after={"status": "draft", "version": label.version + 1}, note=comment)
    live = conn.execute(select(GOLD_BODY, t.GoldCaseRow.status)
                        .where(t.GoldCaseRow.id == ref)).first()
    if live is None:
        return [r.annotator for r in labels]
    if labels:
        withdraw_gold(conn, ref, actor=actor, note=comment)
    else:
        case = GoldCase.model_validate_json(live.body)
        put_gold(conn, case.model_copy(update={"provenance": case.provenance.model_copy(
      update={"status": "rejected", "reviewer": actor, "gold_version": None})}),
      actor=actor, action="gold.reject", before={"status": live.status}, note=comment)
    return [r.annotator for r in labels]


def escalate_review(db: Database, item_id: int, *, actor: str, comment: str) -> ReviewItem:
    """Hand the item to an admin (a comment saying why is required)."""
    if not comment.strip():
        raise StoreError("say why you escalate: the admin will read it")
    with db.write() as conn:
        row = deciding(conn, item_id, actor)
        if row.status == "escalated":
            raise StoreError(f"review item {item_id} is already escalated")
        escalation = {"by": actor, "at": now_iso(), "comment": comment}
        payload = canonical.dumps_stored({**json.loads(row.payload), "escalation": escalation})
        conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)
                     .values(status="escalated", payload=payload))
        audit(conn, actor=actor, action="review.escalate", entity="review_item", entity_id=row.ref,
              before={"item": item_id, "status": row.status}, after={"item": item_id, "status": "escalated"},
              note=comment)
        return review_item(_item_row(conn, item_id))

# -- approving what needs no decision ---------------------------------------------------------------

def approvable_cases(db: Database, split: str | None = None) -> list[str]:
    """Submitted gold cases nobody contests, read from the labels themselves (no unsure flag, no
    disagreement), from the open review and re-labeling items, and with as many submitted labels as the
    overlap asks for."""
    with db.read() as conn:
        overlap = read_overlap(conn)
        q = select(t.GoldCaseRow.id).where(t.GoldCaseRow.status == "submitted").order_by(t.GoldCaseRow.id)
        if split:
            q = q.where(t.GoldCaseRow.split == split)
        contested = contested_cases(conn)
        waiting = _waiting_for_overlap(conn, overlap) if overlap.active else set()
        return [c for c in conn.scalars(q) if c not in contested and c not in waiting]


def approve_cases(db: Database, case_ids: Sequence[str], *, actor: str, comment: str = "") -> int:
    """Approve submitted gold cases as they stand (reviewers and admins); returns how many. All or nothing:
    a case that is contested now (an unsure flag, a disagreement, an open item; checked inside this
    transaction) refuses the whole approval, naming the cases and why."""
    with db.write() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "approve gold cases")
        for turn_pk in _turn_pks(conn, case_ids):
            lock_turn(conn, turn_pk)  # a label committing now waits, or is seen below
        contested = contested_cases(conn, case_ids)
        if contested:
            raise StoreError("not approved: a reviewer must decide " + "; ".join(
                f"{case_id} ({why})" for case_id, why in sorted(contested.items())))
        done = 0
        for case_id in case_ids:
            row = conn.execute(select(GOLD_BODY, t.GoldCaseRow.status, t.GoldCaseRow.content_hash)
                               .where(t.GoldCaseRow.id == case_id)).first()
            if row is None:
                raise StoreError(f"no gold case {case_id!r}")
            if row.status != "submitted":
                continue
            case = GoldCase.model_validate_json(row.body)
            approved = case.model_copy(update={"provenance": case.provenance.model_copy(
                update={"status": "approved", "reviewer": actor, "gold_version": None})})
            put_gold(conn, approved, actor=actor, action="gold.approve",
                     before={"content_hash": row.content_hash}, note=comment or "uncontested")
            done += 1
        return done


def _turn_pks(conn: Connection, case_ids: Sequence[str]) -> list[int]:
    """The turns behind label-made case ids, in turn order (the order locks are taken in)."""
    return sorted(turn[0] for turn in (_turn_of(conn, c) for c in case_ids) if turn is not None)

# -- overlap: several annotators on a share of the turns ------------------------------------------------

def overlap(db: Database) -> Overlap:
    with db.read() as conn:
        return read_overlap(conn)


def set_overlap(db: Database, annotators: int, percent: float, *, actor: str) -> Overlap:
    """Have ``annotators`` different annotators label ``percent``% of the turns (admins only). The sample
    is fixed per turn, so raising the share keeps the turns already in it."""
    if not 1 <= annotators <= 10:
        raise StoreError("overlap: the number of annotators per turn is between 1 and 10")
    if not 0 <= percent <= 100:
        raise StoreError("overlap: the share of turns is a percentage between 0 and 100")
    with db.write() as conn:
        require_role(conn, actor, ("admin",), "set the overlap")
        before = read_overlap(conn)
        after = Overlap(annotators, float(percent))
        put_setting(conn, OVERLAP_KEY, {"annotators": annotators, "percent": float(percent)}, actor)
        audit(conn, actor=actor, action="overlap.set", entity="setting", entity_id=OVERLAP_KEY,
              before={"annotators": before.annotators, "percent": before.percent},
              after={"annotators": annotators, "percent": float(percent)})
        return after


def _waiting_for_overlap(conn: Connection, overlap: Overlap) -> set[str]:
    counts = (select(t.LabelRow.turn_id, func.count().label("n")).where(t.LabelRow.status == "submitted")
              .group_by(t.LabelRow.turn_id).subquery())
    rows = conn.execute(
        select(t.TranscriptRow.external_id, t.TurnRow.message_index)
        .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)
        .outerjoin(counts, counts.c.turn_id == t.TurnRow.id)
        .where(in_sample(overlap), func.coalesce(counts.c.n, 0) < overlap.annotators)).all()
    return {gold_case_id(tid, index) for tid, index in rows}


# -- agreement and hygiene inputs ------------------------------------------------------------------------

def agreement_labels(db: Database, *, actor: str) -> dict[str, dict[str, GoldCase]]:
    """Every turn with two or more submitted labels: case id -> annotator -> that label as a gold case
    (reviewers and admins: annotators label blind)."""
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "see how annotators agree")
        shared = (select(t.LabelRow.turn_id).where(t.LabelRow.status == "submitted")
                  .group_by(t.LabelRow.turn_id).having(func.count() >= 2))
        turns = conn.execute(
            select(t.TurnRow.id, t.TranscriptRow.external_id, t.TurnRow.message_index)
            .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)
            .where(t.TurnRow.id.in_(shared))
            .order_by(t.TranscriptRow.external_id, t.TurnRow.message_index)).all()
        loaded: dict[str, Any] = {}
        out = {}
        for turn_pk, transcript_id, index in turns:
            labels = submitted_cases(conn, turn_pk, transcript_id, index, loaded)
            out[gold_case_id(transcript_id, index)] = {a: c for a, (c, _, _) in labels.items() if c is not None}
        shared_trajectories = (select(t.TrajectoryLabelRow.transcript_id)
                               .where(t.TrajectoryLabelRow.status == "submitted")
                               .group_by(t.TrajectoryLabelRow.transcript_id).having(func.count() >= 2))
        for pk, transcript_id in conn.execute(
                select(t.TranscriptRow.id, t.TranscriptRow.external_id)
                .where(t.TranscriptRow.id.in_(shared_trajectories))
                .order_by(t.TranscriptRow.external_id)).all():
            labels = submitted_trajectory_cases(conn, pk, transcript_id, loaded)
            out[trajectory_case_id(transcript_id)] = {a: c for a, (c, _, _) in labels.items() if c is not None}
        return out


def review_item_for(db: Database, ref: str) -> ReviewItem | None:
    """The undecided item about a case, if any (escalated first)."""
    with db.read() as conn:
        row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.ref == ref,
                                                         t.ReviewItemRow.status != "resolved")
                           .order_by((t.ReviewItemRow.status != "escalated"), t.ReviewItemRow.id)
                           .limit(1)).first()
    return review_item(row) if row else None


def returned_to(db: Database, annotator: str, *, limit: int = 50) -> list[ReviewItem]:
    """Items a reviewer rejected and sent back to this annotator, newest first."""
    with db.read() as conn:
        rows = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.decision == "reject")
                            .order_by(t.ReviewItemRow.id.desc()).limit(limit * 10)).all()
    items = [review_item(r) for r in rows]
    return [i for i in items if annotator in i.payload.get("requeued", ())][:limit]


__all__ = ["REVIEW_KINDS", "ReviewCandidate", "ReviewDetail", "ReviewItem", "accept_review", "agreement_labels",
           "approvable_cases", "approve_cases", "close_item", "deciding", "edit_and_accept", "enqueue_review",
           "escalate_review", "overlap", "reject_review", "returned_to", "review_counts", "review_detail",
           "review_item_for", "review_queue", "set_overlap", "sync_review_queue"]
