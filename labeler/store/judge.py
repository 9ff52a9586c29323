"""Judge verdicts and queue: the verdict cache, the pending queue, review hand-off and adjudications.

A question is a row of
``judge_verdicts`` keyed by a content hash of (kind, inputs, model, prompt version): ``pending`` until a
reply comes (``problem`` says why not yet), then ``answered`` with the verdict, the full request and reply,
usage, cost estimate and latency. Re-scoring looks answered keys up and makes no API call for them.
``judge_uses`` records where each question came from (case, run, trial) and whether it went to the
reviewers' queue, so a re-score never queues the same item twice. ``judge_adjudications`` holds the
reviewers' decisions on verdicts, which is what calibration compares the judge with.

No API key ever reaches these tables: requests are stored as the body sent, without headers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from sqlalchemy import delete, func, insert, select, update

from labeler.store import tables as t
from labeler.store.common import PermissionDenied, audit, require_user
from labeler.store.engine import Database, StoreError, insert_missing, now_iso
from scorer import canonical
from scorer.model import Answer, Call, GoldCase

REVIEW_KIND: Final = "judge_mismatch"
DECISIONS: Final = {"confirm_defect": "not_equivalent", "accept_alternative": "equivalent",
                    "fix_gold": "gold_wrong", "judge_wrong": None}
"""Reviewer decisions and the verdict each stands for (``judge_wrong`` names its own)."""
REVIEWER_VERDICTS: Final = ("equivalent", "not_equivalent", "gold_wrong", "ambiguous")
MODEL_SETTING: Final = "judge_model"
NOT_ASKED: Final = "not asked yet"
CHUNK: Final = 500


# --------------------------------------------------------------------------------------------------
# Read models
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewQuestion:
    """A question to remember (and ask): its key, what it shows, and where it came from."""

    key: str
    kind: str
    model: str
    prompt_version: str
    inputs: Mapping[str, Any]
    request: Mapping[str, Any]
    refs: Mapping[str, Any]
    ref_hash: str


@dataclass(frozen=True)
class StoredVerdict:
    key: str
    kind: str
    model: str
    prompt_version: str
    status: str  # pending | answered
    verdict: str | None
    rationale: str
    confidence: float | None
    problem: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float | None
    attempts: int
    created_at: str
    answered_at: str | None
    inputs: Mapping[str, Any] = field(default_factory=dict, hash=False)
    request: Mapping[str, Any] = field(default_factory=dict, hash=False)
    reply: Mapping[str, Any] | None = field(default=None, hash=False)


@dataclass(frozen=True)
class PendingQuestion:
    key: str
    kind: str
    model: str
    prompt_version: str
    request: Mapping[str, Any] = field(hash=False)
    attempts: int
    problem: str | None


@dataclass(frozen=True)
class JudgeUse:
    verdict_key: str
    ref_hash: str
    kind: str
    case_id: str
    refs: Mapping[str, Any] = field(hash=False)
    queue_state: str
    review_item_id: int | None


@dataclass(frozen=True)
class JudgeStatus:
    """The queue and the cache at a glance."""

    pending: Mapping[str, int]
    """Pending questions per model."""
    answered: Mapping[str, int]
    """Answered questions per verdict."""
    input_tokens: int
    output_tokens: int
    cost_usd: float
    last_problems: tuple[tuple[str, str], ...] = ()
    """(key, reason) of a few pending questions that were tried and failed."""


@dataclass(frozen=True)
class Adjudication:
    """A reviewer's decision on a judge verdict."""

    review_item_id: int
    verdict_key: str
    kind: str
    model: str
    prompt_version: str
    judge_verdict: str
    reviewer_verdict: str
    decision: str
    reviewer: str
    note: str
    new_version: str | None
    created_at: str


@dataclass(frozen=True)
class AdjudicationItem:
    """Everything the adjudication page shows for one queue item."""

    item_id: int
    status: str
    case_id: str
    payload: Mapping[str, Any] = field(hash=False)
    verdict: StoredVerdict | None
    case: GoldCase | None
    version: str | None
    """The frozen version the case is read from (None: the live gold case)."""


# --------------------------------------------------------------------------------------------------
# Helpers (pure)
# --------------------------------------------------------------------------------------------------


def _verdict(row: Any, *, full: bool = False) -> StoredVerdict:
    return StoredVerdict(
        key=row.key, kind=row.kind, model=row.model, prompt_version=row.prompt_version, status=row.status,
        verdict=row.verdict, rationale=row.rationale or "", confidence=row.confidence, problem=row.problem,
        input_tokens=row.input_tokens, output_tokens=row.output_tokens, cost_usd=row.cost_usd,
        latency_s=row.latency_s, attempts=row.attempts, created_at=row.created_at, answered_at=row.answered_at,
        inputs=json.loads(row.inputs) if full else {}, request=json.loads(row.request) if full else {},
        reply=json.loads(row.reply) if full and row.reply else None)


def _use(row: Any) -> JudgeUse:
    return JudgeUse(row.verdict_key, row.ref_hash, row.kind, row.case_id, json.loads(row.refs), row.queue_state,
                    row.review_item_id)


def agent_answer(refs: Mapping[str, Any]) -> Answer:
    """The agent's answer recorded in a question's refs, as a gold ``Answer`` (what *accept as alternative*
    adds). No call is an ``ask`` when the agent's text asks a question, else ``no call``."""
    calls = refs.get("actual") or []
    if not calls:
        text = str(refs.get("text") or "")
        return Answer(behavior="clarify" if "?" in text else "no_call")
    bad = [c.get("name") for c in calls if not isinstance(c.get("arguments"), dict)]
    if bad:
        raise StoreError(f"the agent's call to {bad[0]} has unparseable arguments: it cannot become an "
                              "acceptable alternative")
    return Answer(behavior="call", calls=tuple(Call(name=c["name"], arguments=c["arguments"]) for c in calls))


class JudgeOutcome(Protocol):
    """What asking one question gave (``labeler.judge.anthropic_judge.Outcome`` is one)."""

    @property
    def answered(self) -> bool: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def rationale(self) -> str: ...
    @property
    def confidence(self) -> float | None: ...
    @property
    def problem(self) -> str | None: ...
    @property
    def reply(self) -> Mapping[str, Any] | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def latency_s(self) -> float | None: ...
    @property
    def cost_usd(self) -> float | None: ...


def remember_judge_questions(db: Database, questions: Sequence[NewQuestion]) -> int:
    """Store new questions as ``pending`` and record where each came from; questions already known
    (pending or answered) are left as they are. Returns how many questions are new."""
    added = 0
    stamp = now_iso()
    with db.write() as conn:
        for start in range(0, len(questions), CHUNK):
            batch = questions[start:start + CHUNK]
            verdicts = {q.key: {"key": q.key, "kind": q.kind, "model": q.model, "prompt_version": q.prompt_version,
                                "inputs": canonical.dumps_stored(dict(q.inputs)),
                                "request": canonical.dumps_stored(dict(q.request)), "status": "pending",
                                "problem": NOT_ASKED, "created_at": stamp, "updated_at": stamp}
                        for q in batch}
            known = set(conn.scalars(select(t.JudgeVerdictRow.key).where(
                t.JudgeVerdictRow.key.in_(list(verdicts)))))
            added += len(verdicts.keys() - known)
            insert_missing(conn, t.JudgeVerdictRow,
                            [v for k, v in verdicts.items() if k not in known])
            uses = {(q.key, q.ref_hash): {"verdict_key": q.key, "ref_hash": q.ref_hash, "kind": q.kind,
                                          "case_id": str(q.refs.get("case_id", "")),
                                          "refs": canonical.dumps_stored(dict(q.refs)), "queue_state": "waiting",
                                          "created_at": stamp}
                    for q in batch}
            insert_missing(conn, t.JudgeUseRow, list(uses.values()))
    return added


def judge_answers(db: Database, model: str) -> dict[str, tuple[str, str]]:
    """``key -> (verdict, rationale or problem)`` of every answered question for ``model``: the cache
    scoring reads (small tuples, so a large cache stays cheap to hold)."""
    q = (select(t.JudgeVerdictRow.key, t.JudgeVerdictRow.verdict, t.JudgeVerdictRow.rationale,
                t.JudgeVerdictRow.problem)
         .where(t.JudgeVerdictRow.status == "answered", t.JudgeVerdictRow.model == model))
    with db.read() as conn:
        return {k: (v or "", (r if v != "needs_review" else p) or "") for k, v, r, p in conn.execute(q)}


def judge_verdict(db: Database, key: str) -> StoredVerdict:
    """One question with its full request, reply and verdict."""
    with db.read() as conn:
        row = conn.execute(select(t.JudgeVerdictRow).where(t.JudgeVerdictRow.key == key)).first()
    if row is None:
        raise StoreError(f"no judge question {key[:12]}…")
    return _verdict(row, full=True)


def judge_verdicts(db: Database, keys: Iterable[str]) -> dict[str, StoredVerdict]:
    wanted = list(dict.fromkeys(keys))
    out: dict[str, StoredVerdict] = {}
    with db.read() as conn:
        for start in range(0, len(wanted), CHUNK):
            for row in conn.execute(select(t.JudgeVerdictRow).where(
                    t.JudgeVerdictRow.key.in_(wanted[start:start + CHUNK]))):
                out[row.key] = _verdict(row)
    return out


def pending_judge_questions(db: Database, *, model: str | None = None, keys: Iterable[str] | None = None,
                            limit: int | None = None) -> list[PendingQuestion]:
    """Pending questions, oldest first (optionally only for ``model``, or only ``keys``)."""
    q = (select(t.JudgeVerdictRow.key, t.JudgeVerdictRow.kind, t.JudgeVerdictRow.model,
                t.JudgeVerdictRow.prompt_version, t.JudgeVerdictRow.request, t.JudgeVerdictRow.attempts,
                t.JudgeVerdictRow.problem)
         .where(t.JudgeVerdictRow.status == "pending")
         .order_by(t.JudgeVerdictRow.created_at, t.JudgeVerdictRow.key))
    if model:
        q = q.where(t.JudgeVerdictRow.model == model)
    wanted = set(keys) if keys is not None else None
    out = []
    with db.read() as conn:
        for row in conn.execute(q):
            if wanted is not None and row.key not in wanted:
                continue
            out.append(PendingQuestion(row.key, row.kind, row.model, row.prompt_version,
                                       json.loads(row.request), row.attempts, row.problem))
            if limit is not None and len(out) >= limit:
                break
    return out


def record_judge_outcome(db: Database, key: str, outcome: JudgeOutcome) -> None:
    """Store what asking gave: the verdict (``answered``), or the reason it stays ``pending``."""
    stamp = now_iso()
    values: dict[str, Any] = {"attempts": t.JudgeVerdictRow.attempts + 1, "updated_at": stamp,
                              "problem": outcome.problem}
    if outcome.answered:
        values.update(status="answered", verdict=outcome.verdict, rationale=outcome.rationale,
                      confidence=outcome.confidence,
                      reply=None if outcome.reply is None else canonical.dumps_stored(outcome.reply),
                      reply_model=outcome.model, input_tokens=outcome.input_tokens,
                      output_tokens=outcome.output_tokens, cost_usd=outcome.cost_usd,
                      latency_s=outcome.latency_s, answered_at=stamp)
    with db.write() as conn:
        done = conn.execute(update(t.JudgeVerdictRow).where(
            t.JudgeVerdictRow.key == key, t.JudgeVerdictRow.status == "pending").values(**values))
        if not done.rowcount:
            exists = conn.scalar(select(t.JudgeVerdictRow.status).where(t.JudgeVerdictRow.key == key))
            if exists is None:
                raise StoreError(f"no judge question {key[:12]}…")


def note_judge_skipped(db: Database, keys: Iterable[str], reason: str) -> None:
    """Say why pending questions were not asked (no key, judging switched off); no attempt is counted."""
    wanted = list(keys)
    with db.write() as conn:
        for start in range(0, len(wanted), CHUNK):
            conn.execute(update(t.JudgeVerdictRow).where(
                t.JudgeVerdictRow.key.in_(wanted[start:start + CHUNK]),
                t.JudgeVerdictRow.status == "pending").values(problem=reason, updated_at=now_iso()))


def judge_status(db: Database) -> JudgeStatus:
    with db.read() as conn:
        pending = dict(conn.execute(select(t.JudgeVerdictRow.model, func.count())
                                    .where(t.JudgeVerdictRow.status == "pending")
                                    .group_by(t.JudgeVerdictRow.model)).all())
        answered = {verdict or "": n for verdict, n in conn.execute(
            select(t.JudgeVerdictRow.verdict, func.count()).where(t.JudgeVerdictRow.status == "answered")
            .group_by(t.JudgeVerdictRow.verdict))}
        tokens = conn.execute(select(func.coalesce(func.sum(t.JudgeVerdictRow.input_tokens), 0),
                                     func.coalesce(func.sum(t.JudgeVerdictRow.output_tokens), 0),
                                     func.coalesce(func.sum(t.JudgeVerdictRow.cost_usd), 0.0))).one()
        problems = conn.execute(select(t.JudgeVerdictRow.key, t.JudgeVerdictRow.problem)
                                .where(t.JudgeVerdictRow.status == "pending", t.JudgeVerdictRow.attempts > 0)
                                .order_by(t.JudgeVerdictRow.updated_at.desc()).limit(5)).all()
    return JudgeStatus(pending=pending, answered=answered, input_tokens=int(tokens[0]),
                       output_tokens=int(tokens[1]), cost_usd=float(tokens[2] or 0.0),
                       last_problems=tuple((k, p or "") for k, p in problems))

# -- the hand-off to the reviewers' queue -----------------------------------------------------------

def judge_uses_to_queue(db: Database) -> list[tuple[JudgeUse, StoredVerdict]]:
    """Answered questions whose uses wait for a queue decision: new ones, and ones whose gold case was not
    in the store last time (it may have been imported since)."""
    q = (select(t.JudgeUseRow)
         .join(t.JudgeVerdictRow, t.JudgeVerdictRow.key == t.JudgeUseRow.verdict_key)
         .where(t.JudgeUseRow.queue_state.in_(["waiting", "no_case"]),
                t.JudgeVerdictRow.status == "answered")
         .order_by(t.JudgeUseRow.created_at, t.JudgeUseRow.verdict_key, t.JudgeUseRow.ref_hash))
    with db.read() as conn:
        uses = [_use(r) for r in conn.execute(q)]
    verdicts = judge_verdicts(db, (u.verdict_key for u in uses))
    return [(u, verdicts[u.verdict_key]) for u in uses]


def set_judge_use_state(db: Database, verdict_key: str, ref_hash: str, state: str,
                        review_item_id: int | None = None) -> None:
    with db.write() as conn:
        conn.execute(update(t.JudgeUseRow).where(t.JudgeUseRow.verdict_key == verdict_key,
                                                 t.JudgeUseRow.ref_hash == ref_hash)
                     .values(queue_state=state, review_item_id=review_item_id))


def gold_case_known(db: Database, case_id: str) -> bool:
    """Whether the store has this gold case (live or in a frozen version): review items need one."""
    with db.read() as conn:
        return (conn.scalar(select(t.GoldCaseRow.id).where(t.GoldCaseRow.id == case_id)) is not None
                or conn.scalar(select(t.GoldVersionCaseRow.case_id).where(
                    t.GoldVersionCaseRow.case_id == case_id).limit(1)) is not None)


def version_with(db: Database, case_id: str) -> str | None:
    """The newest frozen version that holds ``case_id``."""
    with db.read() as conn:
        return conn.scalar(
            select(t.GoldVersionRow.id)
            .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.version_id == t.GoldVersionRow.id)
            .where(t.GoldVersionCaseRow.case_id == case_id)
            .order_by(t.GoldVersionRow.created_at.desc(), t.GoldVersionRow.number.desc()).limit(1))


def judge_adjudications(db: Database) -> list[Adjudication]:
    """Every reviewer decision on a judge verdict, oldest first (what calibration reads). Judge items are
    decided on the Adjudication page only, so each decision is one recorded row."""
    with db.read() as conn:
        rows = conn.execute(select(t.JudgeAdjudicationRow).order_by(t.JudgeAdjudicationRow.created_at,
                                                                    t.JudgeAdjudicationRow.id)).all()
    return [Adjudication(r.review_item_id, r.verdict_key, r.kind, r.model, r.prompt_version, r.judge_verdict,
                         r.reviewer_verdict, r.decision, r.reviewer, r.note, r.new_version, r.created_at)
            for r in rows]

# -- settings ---------------------------------------------------------------------------------------

def judge_model_setting(db: Database) -> str | None:
    with db.read() as conn:
        raw = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == MODEL_SETTING))
    value = json.loads(raw) if raw else None
    return value if isinstance(value, str) and value else None


def set_judge_model_setting(db: Database, model: str | None, *, actor: str) -> None:
    """Save the judge model (admins); None or empty goes back to the default."""
    model = (model or "").strip() or None
    with db.write() as conn:
        if require_user(conn, actor) != "admin":
            raise PermissionDenied(f"only an admin can change the judge model ({actor!r} is not)")
        before = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == MODEL_SETTING))
        conn.execute(delete(t.ReviewSettingRow).where(t.ReviewSettingRow.key == MODEL_SETTING))
        if model is not None:
            conn.execute(insert(t.ReviewSettingRow).values(key=MODEL_SETTING, value=canonical.dumps_stored(model),
                                                           updated_at=now_iso(), updated_by=actor))
        audit(conn, actor=actor, action="setting.judge_model", entity="setting", entity_id=MODEL_SETTING,
              before=None if before is None else json.loads(before), after=model)


__all__ = [
    "DECISIONS",
    "MODEL_SETTING",
    "NOT_ASKED",
    "REVIEWER_VERDICTS",
    "REVIEW_KIND",
    "Adjudication",
    "AdjudicationItem",
    "JudgeOutcome",
    "JudgeStatus",
    "JudgeUse",
    "NewQuestion",
    "PendingQuestion",
    "StoredVerdict",
    "agent_answer",
    "gold_case_known",
    "judge_adjudications",
    "judge_answers",
    "judge_model_setting",
    "judge_status",
    "judge_uses_to_queue",
    "judge_verdict",
    "judge_verdicts",
    "note_judge_skipped",
    "pending_judge_questions",
    "record_judge_outcome",
    "remember_judge_questions",
    "set_judge_model_setting",
    "set_judge_use_state",
    "version_with",
]
