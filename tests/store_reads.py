"""What tests read from the database to check the app's and the CLI's effects, where no page or command
reads it that way: the audit log, the lease on a transcript, a judge question's uses. Test-only: production
code has no caller for these, so they live here, read through the store's tables, not in the store's API."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from labeler.store import Database, JudgeUse, Lease
from labeler.store import tables as t
from labeler.store.tables import iso


def audit_events(db: Database, entity_id: str | None = None) -> list[dict[str, Any]]:
    """The audit log in the order it was written (of one entity, or all)."""
    q = select(t.AuditRow).order_by(t.AuditRow.id)
    if entity_id is not None:
        q = q.where(t.AuditRow.entity_id == entity_id)
    with db.read() as conn:
        return [dict(r._mapping) for r in conn.execute(q)]


def active_lease(db: Database, transcript_id: str, *, now: datetime | None = None) -> Lease | None:
    """The lease on a transcript that has not expired at ``now``, if any."""
    with db.read() as conn:
        row = conn.execute(
            select(t.LeaseRow.holder, t.LeaseRow.expires_at)
            .join(t.TranscriptRow, t.TranscriptRow.id == t.LeaseRow.transcript_id)
            .where(t.TranscriptRow.external_id == transcript_id,
                   t.LeaseRow.expires_at > iso(now or datetime.now(UTC)))).first()
    return Lease(transcript_id, row.holder, row.expires_at) if row else None


def judge_uses(db: Database, verdict_key: str) -> list[JudgeUse]:
    """Where a judge question was asked for, oldest first."""
    with db.read() as conn:
        rows = conn.execute(select(t.JudgeUseRow).where(t.JudgeUseRow.verdict_key == verdict_key)
                            .order_by(t.JudgeUseRow.created_at, t.JudgeUseRow.ref_hash)).all()
    return [JudgeUse(r.verdict_key, r.ref_hash, r.kind, r.case_id, json.loads(r.refs), r.queue_state,
                     r.review_item_id) for r in rows]
