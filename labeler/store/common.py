"""What every aggregate of the store shares, below all of them: roles, the audit log's writer, the one
writer of live gold cases, loading a stored transcript, review settings and the overlap sample.

Functions here take the ``Connection`` of a transaction the caller opened; none opens one.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import ColumnElement, Connection, and_, delete, exists, false, func, insert, select, update

from labeler.store import tables as t
from labeler.store.engine import StoreError, before_commit, now_iso, upsert
from scorer import canonical

if TYPE_CHECKING:  # pydantic's domain types load when a record is read or written: `users`, `export` never do
    from scorer.model import GoldCase, Transcript

ROLES: Final = ("annotator", "reviewer", "admin")
REVIEWER_ROLES: Final = ("reviewer", "admin")
OVERLAP_KEY: Final = "overlap"
OVERLAP_SPREAD: Final = 5761
"""Turn ids times this, modulo 10,000, pick the overlap sample. It is coprime with 10,000, so every run of
10,000 consecutive turns maps onto each residue once: the sample is exactly the asked share, spread out."""


class PermissionDenied(StoreError):
    """The acting user's role does not allow this action."""


class UnreadableRecord(StoreError):
    """A stored record this toolgold cannot load (written by an older version, or altered outside it)."""


def label_key(transcript_id: str, message_index: int, annotator: str) -> str:
    """How audit events name a label: ``<transcript>#t<message index>@<annotator>``."""
    return f"{transcript_id}#t{message_index}@{annotator}"


# -- the audit log ----------------------------------------------------------------------------------


def audit(conn: Connection, *, actor: str, action: str, entity: str, entity_id: str,
          before: Any = None, after: Any = None, note: str | None = None) -> None:
    """Append one event: who did what, when, with the state before and after."""
    conn.execute(insert(t.AuditRow).values(
        at=now_iso(), actor=actor, action=action, entity=entity, entity_id=entity_id,
        before=None if before is None else canonical.dumps_stored(before),
        after=None if after is None else canonical.dumps_stored(after),
        note=note,
    ))


# -- roles ------------------------------------------------------------------------------------------


def check_role(role: str) -> None:
    if role not in ROLES:
        raise StoreError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")


def require_user(conn: Connection, name: str) -> str:
    """The active user's role; ``PermissionDenied`` for anyone else."""
    role = conn.scalar(select(t.UserRow.role).where(t.UserRow.name == name, t.UserRow.active == True))  # noqa: E712
    if role is None:
        raise PermissionDenied(f"{name!r} is not an active user (an admin adds users on the Admin page)")
    return str(role)


def require_admin(conn: Connection, actor: str | None, what: str) -> None:
    role = require_user(conn, actor) if actor else None
    if role != "admin":
        raise PermissionDenied(f"only an admin can {what}" + (f" ({actor!r} is {role})" if actor else ""))


def require_role(conn: Connection, actor: str, roles: Sequence[str], what: str) -> str:
    role = require_user(conn, actor)
    if role not in roles:
        raise PermissionDenied(f"only a {' or '.join(roles)} can {what} ({actor!r} is {role})")
    return role


# -- transcripts and gold, as every aggregate reads and writes them ---------------------------------

GOLD_BODY: Final = (select(t.GoldBodyRow.body).where(t.GoldBodyRow.id == t.GoldCaseRow.body_id)
                    .scalar_subquery().label("body"))
"""A live gold case's body (``gold_bodies``, revision 0005), beside its other columns in a query of ``gold_cases``."""


def load_transcript(conn: Connection, external_id: str) -> tuple[Transcript, str]:
    """A stored transcript with its tools, and its source."""
    row = conn.execute(select(t.TranscriptBodyRow.body, t.TranscriptRow.source, t.TranscriptRow.tool_set_id)
                       .join(t.TranscriptBodyRow, t.TranscriptBodyRow.id == t.TranscriptRow.body_id)
                       .where(t.TranscriptRow.external_id == external_id)).first()
    if row is None:
        raise StoreError(f"no transcript with id {external_id!r}")
    return stored_transcript(external_id, row.body, tool_bodies(conn, row.tool_set_id)), str(row.source)


def tool_bodies(conn: Connection, tool_set_id: int | None) -> list[str]:
    """The stored schemas of a tool set (``transcripts.tool_set_id``), in order; none for no set."""
    if tool_set_id is None:
        return []
    return list(conn.scalars(
        select(t.ToolSchemaRow.body)
        .join(t.ToolSetToolRow, t.ToolSetToolRow.schema_hash == t.ToolSchemaRow.hash)
        .where(t.ToolSetToolRow.tool_set_id == tool_set_id)
        .order_by(t.ToolSetToolRow.position)))


def stored_transcript(external_id: str, body: str, tool_bodies: Sequence[str]) -> Transcript:
    """A transcript from its stored body and tool schemas; ``UnreadableRecord`` (one line) when this
    toolgold cannot load what is stored (an older toolgold kept a NaN bound as null, say)."""
    from pydantic import ValidationError

    from scorer.formats import describe_validation_error
    from scorer.model import Transcript

    try:
        return Transcript.model_validate({**json.loads(body), "tools": [json.loads(b) for b in tool_bodies]})
    except ValidationError as exc:
        problem = describe_validation_error(exc)
    except ValueError as exc:
        problem = f"not valid JSON: {exc}"
    raise UnreadableRecord(f"transcript {external_id!r} is stored in a form this toolgold cannot read ({problem});"
                           " the queue skips it")


def gold_changed(conn: Connection) -> None:
    """Note in the writing transaction that the live gold set changed (``GoldRevisionRow``): every writer of
    ``gold_cases`` calls it, so what was derived from an older revision is derived again. The row is written once,
    last, as the transaction commits (``engine.before_commit``): on PostgreSQL its lock is then never held while
    the transaction waits for another row (an approval writing several cases, against a label writing one of
    them), so two writers of gold cannot deadlock on it."""
    before_commit(conn, "gold_revision", _count_up_gold_revision)


def _count_up_gold_revision(conn: Connection) -> None:
    conn.execute(update(t.GoldRevisionRow).where(t.GoldRevisionRow.id == 1).values(
        revision=t.GoldRevisionRow.revision + 1, token=secrets.token_hex(16)))


def gold_state(conn: Connection) -> tuple[int, str] | None:
    """The live gold set's ``(revision, token)``; None in a store without the row (nothing derived is kept)."""
    row = conn.execute(select(t.GoldRevisionRow.revision, t.GoldRevisionRow.token)
                       .where(t.GoldRevisionRow.id == 1)).first()
    return None if row is None else (int(row.revision), str(row.token))


def put_gold(conn: Connection, case: GoldCase, *, actor: str, action: str, before: Any = None,
             note: str | None = None) -> None:
    """Insert or replace one live gold case (with its tags, each once) and audit it: the one writer of
    live gold for labels, reviews, versions and drift. Writing what is stored already changes nothing."""
    from scorer.formats import dumps_record

    body = dumps_record(case)
    stored = conn.execute(select(t.GoldCaseRow.body_id, GOLD_BODY).where(t.GoldCaseRow.id == case.id)).first()
    if stored is not None and stored.body == body:
        return
    stamp_now = now_iso()
    values = {"conversation_id": case.conversation_id, "turn": case.turn, "split": case.split,
              "kind": case.kind, "status": case.provenance.status, "behavior": case.expected.behavior,
              "tags": canonical.dumps_stored(list(case.tags)), "source": case.provenance.source,
              "content_hash": canonical.content_hash(json.loads(body)), "updated_at": stamp_now}
    if stored is not None:  # its body is its own (``gold_bodies``): rewritten in place
        conn.execute(update(t.GoldBodyRow).where(t.GoldBodyRow.id == stored.body_id).values(body=body))
        conn.execute(update(t.GoldCaseRow).where(t.GoldCaseRow.id == case.id).values(**values))
        conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == case.id))
    else:
        body_id = conn.scalar(insert(t.GoldBodyRow).values(body=body).returning(t.GoldBodyRow.id))
        conn.execute(insert(t.GoldCaseRow).values(id=case.id, body_id=body_id, created_at=stamp_now, **values))
    if case.tags:
        conn.execute(insert(t.GoldCaseTagRow), [{"case_id": case.id, "tag": tag}
                                                for tag in dict.fromkeys(case.tags)])
    gold_changed(conn)
    audit(conn, actor=actor, action=action, entity="gold_case", entity_id=case.id, before=before,
          after={"status": case.provenance.status, "reviewer": case.provenance.reviewer,
                 "annotators": list(case.provenance.annotators), "expected": json.loads(body)["expected"],
                 "tags": list(dict.fromkeys(case.tags)), "content_hash": values["content_hash"]}, note=note)


def withdraw_gold(conn: Connection, case_id: str, *, actor: str, note: str) -> None:
    """Remove one live gold case (and its tags) and audit it; frozen versions keep their copy."""
    row = conn.execute(select(t.GoldCaseRow.status, t.GoldCaseRow.body_id).where(t.GoldCaseRow.id == case_id)).first()
    if row is None:
        return
    status = row.status
    conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == case_id))
    conn.execute(delete(t.GoldCaseRow).where(t.GoldCaseRow.id == case_id))
    conn.execute(delete(t.GoldBodyRow).where(t.GoldBodyRow.id == row.body_id))  # no other case refers to it
    gold_changed(conn)
    audit(conn, actor=actor, action="gold.withdraw", entity="gold_case", entity_id=case_id,
          before={"status": status}, note=note)


# -- gold lines as frozen versions hold them --------------------------------------------------------


def blob(line: str) -> tuple[str, str]:
    """``(hash, body)`` of a gold line with its version stamp cleared (what versions share)."""
    record = json.loads(line)
    record["provenance"]["gold_version"] = None
    body = canonical.dumps_stored(record)
    return hashlib.sha256(body.encode("utf-8")).hexdigest(), body


def stamp(body: str, version: str) -> str:
    """The exported line of a frozen case: its blob with ``provenance.gold_version`` set."""
    record = json.loads(body)
    record["provenance"]["gold_version"] = version
    return canonical.dumps_stored(record)


# -- settings and the overlap sample ----------------------------------------------------------------


def put_setting(conn: Connection, key: str, value: Any, actor: str) -> None:
    """Set one setting: an upsert, so two writers at once both succeed (the later one wins)."""
    upsert(conn, t.ReviewSettingRow, {"key": key, "value": canonical.dumps_stored(value),
                                      "updated_at": now_iso(), "updated_by": actor}, key=("key",))


@dataclass(frozen=True)
class Overlap:
    """How many annotators label the same turn, on what share of turns."""

    annotators: int = 1
    percent: float = 0.0

    @property
    def active(self) -> bool:
        return self.annotators >= 2 and self.percent > 0

    @property
    def threshold(self) -> int:
        """Turns whose spread id falls below this (out of 10,000) are in the sample."""
        return round(self.percent * 100)

    def covers(self, turn_pk: int) -> bool:
        return self.active and (turn_pk * OVERLAP_SPREAD) % 10_000 < self.threshold


def read_overlap(conn: Connection) -> Overlap:
    raw = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == OVERLAP_KEY))
    return Overlap(**json.loads(raw)) if raw else Overlap()


def in_sample(overlap: Overlap) -> ColumnElement[bool]:
    """SQL: the turn (``turns.id``) is in the overlap sample."""
    return (t.TurnRow.id * OVERLAP_SPREAD) % 10_000 < overlap.threshold


def overlap_pending(annotator: str | None, overlap: Overlap) -> ColumnElement[bool]:
    """SQL over ``turns``: an overlap turn that still needs labels and has none submitted by ``annotator``.
    The label queue and the turn states use it, so a sampled turn goes to N different annotators."""
    if not overlap.active or annotator is None:
        return false()
    submitted = (select(func.count()).select_from(t.LabelRow)
                 .where(t.LabelRow.turn_id == t.TurnRow.id, t.LabelRow.status == "submitted")
                 .correlate(t.TurnRow).scalar_subquery())
    mine = exists(select(t.LabelRow.id).where(t.LabelRow.turn_id == t.TurnRow.id,
                                              t.LabelRow.annotator == annotator,
                                              t.LabelRow.status == "submitted")).correlate(t.TurnRow)
    return and_(in_sample(overlap), submitted < overlap.annotators, ~mine)


__all__ = [
    "OVERLAP_KEY",
    "REVIEWER_ROLES",
    "ROLES",
    "Overlap",
    "PermissionDenied",
    "UnreadableRecord",
    "audit",
    "blob",
    "check_role",
    "in_sample",
    "label_key",
    "load_transcript",
    "overlap_pending",
    "put_gold",
    "put_setting",
    "read_overlap",
    "require_admin",
    "require_role",
    "require_user",
    "stamp",
    "stored_transcript",
    "withdraw_gold",
]
