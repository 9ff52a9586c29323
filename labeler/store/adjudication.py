"""Adjudication: deciding a judge item, a workflow across the judge, review and versions aggregates.

The aggregates stay independent of each other; what needs several of them at once lives here, above them.
"""

from __future__ import annotations

import dataclasses
import json

from sqlalchemy import Connection, insert, select

from labeler.store import tables as t
from labeler.store.common import REVIEWER_ROLES, require_role
from labeler.store.engine import Database, StoreError, now_iso
from labeler.store.gold import get_gold
from labeler.store.judge import (
    DECISIONS,
    REVIEW_KIND,
    REVIEWER_VERDICTS,
    Adjudication,
    AdjudicationItem,
    StoredVerdict,
    agent_answer,
    judge_verdict,
    judge_verdicts,
    version_with,
)
from labeler.store.review import close_item, deciding, review_queue
from labeler.store.versions import derive_version_in, version_case
from scorer.model import Answer, GoldCase


def adjudication_queue(db: Database, *, actor: str, include_resolved: bool = False) -> list[AdjudicationItem]:
    """Judge items in the reviewers' queue (reviewers and admins), oldest first."""
    items = review_queue(db, actor=actor, kinds=[REVIEW_KIND],
                         include_resolved=include_resolved)
    keys = [str(i.payload.get("judge_key", "")) for i in items]
    verdicts = judge_verdicts(db, (k for k in keys if k))
    return [AdjudicationItem(i.id, i.status, i.ref, i.payload, verdicts.get(k), None,
                             i.payload.get("version")) for i, k in zip(items, keys, strict=True)]


def adjudication_item(db: Database, item_id: int, *, actor: str) -> AdjudicationItem:
    """One item with the verdict in full and the gold case as frozen in its version (or live)."""
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "see the adjudication queue")
        row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)).first()
        if row is None or row.kind != REVIEW_KIND:
            raise StoreError(f"no judge item {item_id} in the review queue")
        payload = json.loads(row.payload)
    key = payload.get("judge_key")
    verdict = judge_verdict(db, key) if isinstance(key, str) else None
    version = payload.get("version") or version_with(db, row.ref)
    if version:
        case: GoldCase | None = version_case(db, version, row.ref, actor=actor)
    else:
        try:
            case = get_gold(db, row.ref)
        except StoreError:
            case = None
    return AdjudicationItem(row.id, row.status, row.ref, payload, verdict, case, version)


def adjudicate(db: Database, item_id: int, decision: str, *, actor: str, note: str = "",
               reviewer_verdict: str | None = None, fixed: Answer | None = None) -> Adjudication:
    """Decide a judge item (reviewers and admins):

    - ``confirm_defect``: the deterministic failure stands;
    - ``accept_alternative``: the agent's answer joins the case's alternatives in a NEW gold version
      derived from the frozen one (which stays as it was), with provenance (reviewer, verdict, run);
    - ``fix_gold``: the gold answer was wrong; ``fixed`` replaces it in a new version;
    - ``judge_wrong``: the verdict was wrong; ``note`` (required) says why and ``reviewer_verdict`` the
      right one.

    The decision and the reviewer's verdict are recorded for calibration; the item is closed."""
    if decision not in DECISIONS:
        raise StoreError(f"unknown decision {decision!r}; choose one of {', '.join(DECISIONS)}")
    item = adjudication_item(db, item_id, actor=actor)
    verdict = item.verdict
    if verdict is None or verdict.status != "answered" or verdict.verdict is None:
        raise StoreError(f"judge item {item_id} has no answered verdict to decide on")
    said = DECISIONS[decision]
    if decision == "judge_wrong":
        if not note.strip():
            raise StoreError("say why the judge is wrong: the note goes into calibration")
        said = reviewer_verdict
        if said not in REVIEWER_VERDICTS or said == verdict.verdict:
            raise StoreError(f"name the right verdict (one of {', '.join(REVIEWER_VERDICTS)}, other than "
                             f"the judge's {verdict.verdict})")
    # Decide, derive and close in one transaction, with the item's row locked first: of two reviewers
    # deciding at once, the second finds it decided, and a refused decision leaves no version behind.
    with db.write() as conn:
        deciding(conn, item_id, actor)  # role, not decided yet, escalation rules
        new_version = None
        if decision in ("accept_alternative", "fix_gold"):
            new_version = _derive_for(conn, item, decision, actor=actor, note=note, fixed=fixed, verdict=verdict)
        record = Adjudication(review_item_id=item_id, verdict_key=verdict.key, kind=verdict.kind,
                              model=verdict.model, prompt_version=verdict.prompt_version,
                              judge_verdict=verdict.verdict, reviewer_verdict=str(said), decision=decision,
                              reviewer=actor, note=note, new_version=new_version, created_at=now_iso())
        conn.execute(insert(t.JudgeAdjudicationRow).values(**dataclasses.asdict(record)))
        extra = {"reviewer_verdict": said} | ({"new_version": new_version} if new_version else {})
        close_item(conn, item_id, actor=actor, decision=decision, comment=note or None, extra=extra)
    return record


def _derive_for(conn: Connection, item: AdjudicationItem, decision: str, *, actor: str, note: str,
                fixed: Answer | None, verdict: StoredVerdict) -> str:
    if item.case is None or item.version is None:
        raise StoreError(f"{item.case_id} is in no frozen gold version: freeze its split first, then "
                         "decide (the new answer goes into a version derived from the frozen one)")
    case = item.case
    if decision == "accept_alternative":
        answer = agent_answer(item.payload)
        if answer == case.expected or answer in case.alternatives:
            raise StoreError(f"{item.version} already accepts this answer for {case.id}")
        changed = case.model_copy(update={"alternatives": (*case.alternatives, answer)})
        action = "accepted the agent's answer as an alternative"
    else:
        if fixed is None:
            raise StoreError("fixing the gold needs the corrected answer")
        changed = case.model_copy(update={"expected": fixed, "alternatives": tuple(
            a for a in case.alternatives if a != fixed)})
        action = "fixed the gold answer"
    changed = GoldCase.model_validate(changed.model_dump())  # re-check the case's own consistency rules
    provenance = {"action": decision, "reviewer": actor, "judge_verdict": verdict.verdict,
                  "judge_key": verdict.key, "judge_model": verdict.model,
                  "prompt_version": verdict.prompt_version, "run": item.payload.get("run"),
                  "trial": item.payload.get("trial"), "review_item": item.item_id, "case_id": case.id}
    derived = derive_version_in(conn, item.version, [changed], actor=actor,
                             note=note or f"{action} ({case.id}, review item {item.item_id})",
                             provenance=provenance)
    return str(derived.id)


__all__ = ["adjudicate", "adjudication_item", "adjudication_queue"]
