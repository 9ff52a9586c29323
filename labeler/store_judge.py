"""Judge verdicts and queue: the verdict cache, the pending queue, review hand-off and adjudications.

A mixin of ``labeler.store.Store`` (SQL stays in the store modules). A question is a row of
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
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import SQLModel

from labeler import tables as t
from scorer import canonical
from scorer.model import Answer, Call, GoldCase

if TYPE_CHECKING:  # the SDK-backed module is imported only by commands that judge
    from labeler.judge.anthropic_judge import Outcome

JUDGE_TABLES = [t.JudgeVerdictRow, t.JudgeUseRow, t.JudgeAdjudicationRow]
REVIEW_KIND: Final = "judge_mismatch"
DECISIONS: Final = {"confirm_defect": "not_equivalent", "accept_alternative": "equivalent",
                    "fix_gold": "gold_wrong", "judge_wrong": None}
"""Reviewer decisions and the verdict each stands for (``judge_wrong`` names its own)."""
REVIEWER_VERDICTS: Final = ("equivalent", "not_equivalent", "gold_wrong", "ambiguous")
MODEL_SETTING: Final = "judge_model"
NOT_ASKED: Final = "not asked yet"
CHUNK: Final = 500


def migrate_judge(conn: Connection) -> None:
    """Migration 5: judge verdicts (cache and pending queue), their uses, reviewers' adjudications."""
    SQLModel.metadata.create_all(conn, tables=[m.__table__ for m in JUDGE_TABLES])  # type: ignore[attr-defined]


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
        raise core.StoreError(f"the agent's call to {bad[0]} has unparseable arguments: it cannot become an "
                              "acceptable alternative")
    return Answer(behavior="call", calls=tuple(Call(name=c["name"], arguments=c["arguments"]) for c in calls))


# --------------------------------------------------------------------------------------------------
# The mixin
# --------------------------------------------------------------------------------------------------


class JudgeStore:
    """The judge's cache, queue and adjudications (mixed into ``Store``)."""

    # These come from Store and ReviewStore; declared for readers and type checkers.
    write: Any
    read: Any
    is_sqlite: bool
    _audit: Any
    _close: Any
    _deciding: Any
    derive_version: Any
    version_case: Any
    enqueue_review: Any

    # -- questions and verdicts -------------------------------------------------------------------------

    def _insert_missing(self, conn: Connection, table: Any, rows: list[dict[str, Any]]) -> None:
        """Insert rows whose primary key is not there yet (a concurrent writer's row wins, quietly)."""
        if rows:
            dialect = sqlite if self.is_sqlite else postgresql
            conn.execute(dialect.insert(table).on_conflict_do_nothing(), rows)

    def remember_judge_questions(self, questions: Sequence[NewQuestion]) -> int:
        """Store new questions as ``pending`` and record where each came from; questions already known
        (pending or answered) are left as they are. Returns how many questions are new."""
        added = 0
        stamp = core.now_iso()
        with self.write() as conn:
            for start in range(0, len(questions), CHUNK):
                batch = questions[start:start + CHUNK]
                verdicts = {q.key: {"key": q.key, "kind": q.kind, "model": q.model, "prompt_version": q.prompt_version,
                                    "inputs": canonical.dumps(dict(q.inputs)),
                                    "request": canonical.dumps(dict(q.request)), "status": "pending",
                                    "problem": NOT_ASKED, "created_at": stamp, "updated_at": stamp}
                            for q in batch}
                known = set(conn.scalars(select(t.JudgeVerdictRow.key).where(
                    t.JudgeVerdictRow.key.in_(list(verdicts)))))  # type: ignore[attr-defined]
                added += len(verdicts.keys() - known)
                self._insert_missing(conn, t.JudgeVerdictRow.__table__,  # type: ignore[attr-defined]
                                     [v for k, v in verdicts.items() if k not in known])
                uses = {(q.key, q.ref_hash): {"verdict_key": q.key, "ref_hash": q.ref_hash, "kind": q.kind,
                                              "case_id": str(q.refs.get("case_id", "")),
                                              "refs": canonical.dumps(dict(q.refs)), "queue_state": "waiting",
                                              "created_at": stamp}
                        for q in batch}
                self._insert_missing(conn, t.JudgeUseRow.__table__, list(uses.values()))  # type: ignore[attr-defined]
        return added

    def judge_answers(self, model: str) -> dict[str, tuple[str, str]]:
        """``key -> (verdict, rationale or problem)`` of every answered question for ``model``: the cache
        scoring reads (small tuples, so a large cache stays cheap to hold)."""
        q = (select(t.JudgeVerdictRow.key, t.JudgeVerdictRow.verdict, t.JudgeVerdictRow.rationale,
                    t.JudgeVerdictRow.problem)
             .where(t.JudgeVerdictRow.status == "answered", t.JudgeVerdictRow.model == model))
        with self.read() as conn:
            return {k: (v, (r if v != "needs_review" else p) or "") for k, v, r, p in conn.execute(q)}

    def judge_verdict(self, key: str) -> StoredVerdict:
        """One question with its full request, reply and verdict."""
        with self.read() as conn:
            row = conn.execute(select(t.JudgeVerdictRow).where(t.JudgeVerdictRow.key == key)).first()
        if row is None:
            raise core.StoreError(f"no judge question {key[:12]}…")
        return _verdict(row, full=True)

    def judge_verdicts(self, keys: Iterable[str]) -> dict[str, StoredVerdict]:
        wanted = list(dict.fromkeys(keys))
        out: dict[str, StoredVerdict] = {}
        with self.read() as conn:
            for start in range(0, len(wanted), CHUNK):
                for row in conn.execute(select(t.JudgeVerdictRow).where(
                        t.JudgeVerdictRow.key.in_(wanted[start:start + CHUNK]))):  # type: ignore[attr-defined]
                    out[row.key] = _verdict(row)
        return out

    def pending_judge_questions(self, *, model: str | None = None, keys: Iterable[str] | None = None,
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
        with self.read() as conn:
            for row in conn.execute(q):
                if wanted is not None and row.key not in wanted:
                    continue
                out.append(PendingQuestion(row.key, row.kind, row.model, row.prompt_version,
                                           json.loads(row.request), row.attempts, row.problem))
                if limit is not None and len(out) >= limit:
                    break
        return out

    def record_judge_outcome(self, key: str, outcome: Outcome) -> None:
        """Store what asking gave: the verdict (``answered``), or the reason it stays ``pending``."""
        stamp = core.now_iso()
        values: dict[str, Any] = {"attempts": t.JudgeVerdictRow.attempts + 1, "updated_at": stamp,
                                  "problem": outcome.problem}
        if outcome.answered:
            values.update(status="answered", verdict=outcome.verdict, rationale=outcome.rationale,
                          confidence=outcome.confidence,
                          reply=None if outcome.reply is None else canonical.dumps(outcome.reply),
                          reply_model=outcome.model, input_tokens=outcome.input_tokens,
                          output_tokens=outcome.output_tokens, cost_usd=outcome.cost_usd,
                          latency_s=outcome.latency_s, answered_at=stamp)
        with self.write() as conn:
            done = conn.execute(update(t.JudgeVerdictRow).where(
                t.JudgeVerdictRow.key == key, t.JudgeVerdictRow.status == "pending").values(**values))
            if not done.rowcount:
                exists = conn.scalar(select(t.JudgeVerdictRow.status).where(t.JudgeVerdictRow.key == key))
                if exists is None:
                    raise core.StoreError(f"no judge question {key[:12]}…")

    def note_judge_skipped(self, keys: Iterable[str], reason: str) -> None:
        """Say why pending questions were not asked (no key, judging switched off); no attempt is counted."""
        wanted = list(keys)
        with self.write() as conn:
            for start in range(0, len(wanted), CHUNK):
                conn.execute(update(t.JudgeVerdictRow).where(
                    t.JudgeVerdictRow.key.in_(wanted[start:start + CHUNK]),  # type: ignore[attr-defined]
                    t.JudgeVerdictRow.status == "pending").values(problem=reason, updated_at=core.now_iso()))

    def judge_status(self) -> JudgeStatus:
        with self.read() as conn:
            pending = dict(conn.execute(select(t.JudgeVerdictRow.model, func.count())
                                        .where(t.JudgeVerdictRow.status == "pending")
                                        .group_by(t.JudgeVerdictRow.model)).all())
            answered = dict(conn.execute(select(t.JudgeVerdictRow.verdict, func.count())
                                         .where(t.JudgeVerdictRow.status == "answered")
                                         .group_by(t.JudgeVerdictRow.verdict)).all())
            tokens = conn.execute(select(func.coalesce(func.sum(t.JudgeVerdictRow.input_tokens), 0),
                                         func.coalesce(func.sum(t.JudgeVerdictRow.output_tokens), 0),
                                         func.coalesce(func.sum(t.JudgeVerdictRow.cost_usd), 0.0))).one()
            problems = conn.execute(select(t.JudgeVerdictRow.key, t.JudgeVerdictRow.problem)
                                    .where(t.JudgeVerdictRow.status == "pending", t.JudgeVerdictRow.attempts > 0)
                                    .order_by(t.JudgeVerdictRow.updated_at.desc()).limit(5)).all()  # type: ignore[attr-defined]
        return JudgeStatus(pending=pending, answered=answered, input_tokens=int(tokens[0]),
                           output_tokens=int(tokens[1]), cost_usd=float(tokens[2]),
                           last_problems=tuple((k, p or "") for k, p in problems))

    # -- the hand-off to the reviewers' queue -----------------------------------------------------------

    def judge_uses_to_queue(self) -> list[tuple[JudgeUse, StoredVerdict]]:
        """Answered questions whose uses wait for a queue decision: new ones, and ones whose gold case was not
        in the store last time (it may have been imported since)."""
        q = (select(t.JudgeUseRow)
             .join(t.JudgeVerdictRow, t.JudgeVerdictRow.key == t.JudgeUseRow.verdict_key)  # type: ignore[arg-type]
             .where(t.JudgeUseRow.queue_state.in_(["waiting", "no_case"]),  # type: ignore[attr-defined]
                    t.JudgeVerdictRow.status == "answered")
             .order_by(t.JudgeUseRow.created_at, t.JudgeUseRow.verdict_key, t.JudgeUseRow.ref_hash))
        with self.read() as conn:
            uses = [_use(r) for r in conn.execute(q)]
        verdicts = self.judge_verdicts(u.verdict_key for u in uses)
        return [(u, verdicts[u.verdict_key]) for u in uses]

    def set_judge_use_state(self, verdict_key: str, ref_hash: str, state: str,
                            review_item_id: int | None = None) -> None:
        with self.write() as conn:
            conn.execute(update(t.JudgeUseRow).where(t.JudgeUseRow.verdict_key == verdict_key,
                                                     t.JudgeUseRow.ref_hash == ref_hash)
                         .values(queue_state=state, review_item_id=review_item_id))

    def judge_uses(self, verdict_key: str) -> list[JudgeUse]:
        with self.read() as conn:
            return [_use(r) for r in conn.execute(select(t.JudgeUseRow)
                                                  .where(t.JudgeUseRow.verdict_key == verdict_key)
                                                  .order_by(t.JudgeUseRow.created_at, t.JudgeUseRow.ref_hash))]

    def gold_case_known(self, case_id: str) -> bool:
        """Whether the store has this gold case (live or in a frozen version): review items need one."""
        with self.read() as conn:
            return (conn.scalar(select(t.GoldCaseRow.id).where(t.GoldCaseRow.id == case_id)) is not None
                    or conn.scalar(select(t.GoldVersionCaseRow.case_id).where(
                        t.GoldVersionCaseRow.case_id == case_id).limit(1)) is not None)

    # -- adjudication -------------------------------------------------------------------------------------

    def adjudication_queue(self, *, actor: str, include_resolved: bool = False) -> list[AdjudicationItem]:
        """Judge items in the reviewers' queue (reviewers and admins), oldest first."""
        items = self.review_queue(actor=actor, kinds=[REVIEW_KIND],  # type: ignore[attr-defined]
                                  include_resolved=include_resolved)
        keys = [str(i.payload.get("judge_key", "")) for i in items]
        verdicts = self.judge_verdicts(k for k in keys if k)
        return [AdjudicationItem(i.id, i.status, i.ref, i.payload, verdicts.get(k), None,
                                 i.payload.get("version")) for i, k in zip(items, keys, strict=True)]

    def adjudication_item(self, item_id: int, *, actor: str) -> AdjudicationItem:
        """One item with the verdict in full and the gold case as frozen in its version (or live)."""
        with self.read() as conn:
            _require_reviewer(conn, actor, "see the adjudication queue")
            row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)).first()
            if row is None or row.kind != REVIEW_KIND:
                raise core.StoreError(f"no judge item {item_id} in the review queue")
            payload = json.loads(row.payload)
        key = payload.get("judge_key")
        verdict = self.judge_verdict(key) if isinstance(key, str) else None
        version = payload.get("version") or self._version_with(row.ref)
        if version:
            case: GoldCase | None = self.version_case(version, row.ref, actor=actor)
        else:
            try:
                case = self.get_gold(row.ref)  # type: ignore[attr-defined]
            except core.StoreError:
                case = None
        return AdjudicationItem(row.id, row.status, row.ref, payload, verdict, case, version)

    def _version_with(self, case_id: str) -> str | None:
        """The newest frozen version that holds ``case_id``."""
        with self.read() as conn:
            return conn.scalar(
                select(t.GoldVersionRow.id)
                .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.version_id == t.GoldVersionRow.id)  # type: ignore[arg-type]
                .where(t.GoldVersionCaseRow.case_id == case_id)
                .order_by(t.GoldVersionRow.created_at.desc(), t.GoldVersionRow.number.desc()).limit(1))  # type: ignore[attr-defined]

    def adjudicate(self, item_id: int, decision: str, *, actor: str, note: str = "",
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
            raise core.StoreError(f"unknown decision {decision!r}; choose one of {', '.join(DECISIONS)}")
        item = self.adjudication_item(item_id, actor=actor)
        with self.read() as conn:
            self._deciding(conn, item_id, actor)  # role, not decided yet, escalation rules
        verdict = item.verdict
        if verdict is None or verdict.status != "answered" or verdict.verdict is None:
            raise core.StoreError(f"judge item {item_id} has no answered verdict to decide on")
        said = DECISIONS[decision]
        if decision == "judge_wrong":
            if not note.strip():
                raise core.StoreError("say why the judge is wrong: the note goes into calibration")
            said = reviewer_verdict
            if said not in REVIEWER_VERDICTS or said == verdict.verdict:
                raise core.StoreError(f"name the right verdict (one of {', '.join(REVIEWER_VERDICTS)}, other than "
                                      f"the judge's {verdict.verdict})")
        new_version = None
        if decision in ("accept_alternative", "fix_gold"):
            new_version = self._derive_for(item, decision, actor=actor, note=note, fixed=fixed, verdict=verdict)
        stamp = core.now_iso()
        record = {"review_item_id": item_id, "verdict_key": verdict.key, "kind": verdict.kind,
                  "model": verdict.model, "prompt_version": verdict.prompt_version,
                  "judge_verdict": verdict.verdict, "reviewer_verdict": said, "decision": decision,
                  "reviewer": actor, "note": note, "new_version": new_version, "created_at": stamp}
        with self.write() as conn:
            self._deciding(conn, item_id, actor)
            conn.execute(insert(t.JudgeAdjudicationRow).values(**record))
            extra = {"reviewer_verdict": said} | ({"new_version": new_version} if new_version else {})
            self._close(conn, item_id, actor=actor, decision=decision, comment=note or None, extra=extra)
        return Adjudication(**record)

    def _derive_for(self, item: AdjudicationItem, decision: str, *, actor: str, note: str, fixed: Answer | None,
                    verdict: StoredVerdict) -> str:
        if item.case is None or item.version is None:
            raise core.StoreError(f"{item.case_id} is in no frozen gold version: freeze its split first, then "
                                  "decide (the new answer goes into a version derived from the frozen one)")
        case = item.case
        if decision == "accept_alternative":
            answer = agent_answer(item.payload)
            if answer == case.expected or answer in case.alternatives:
                raise core.StoreError(f"{item.version} already accepts this answer for {case.id}")
            changed = case.model_copy(update={"alternatives": (*case.alternatives, answer)})
            action = "accepted the agent's answer as an alternative"
        else:
            if fixed is None:
                raise core.StoreError("fixing the gold needs the corrected answer")
            changed = case.model_copy(update={"expected": fixed, "alternatives": tuple(
                a for a in case.alternatives if a != fixed)})
            action = "fixed the gold answer"
        changed = GoldCase.model_validate(changed.model_dump())  # re-check the case's own consistency rules
        provenance = {"action": decision, "reviewer": actor, "judge_verdict": verdict.verdict,
                      "judge_key": verdict.key, "judge_model": verdict.model,
                      "prompt_version": verdict.prompt_version, "run": item.payload.get("run"),
                      "trial": item.payload.get("trial"), "review_item": item.item_id, "case_id": case.id}
        derived = self.derive_version(item.version, [changed], actor=actor,
                                      note=note or f"{action} ({case.id}, review item {item.item_id})",
                                      provenance=provenance)
        return str(derived.id)

    def judge_adjudications(self) -> list[Adjudication]:
        """Every reviewer decision on a judge verdict, oldest first (what calibration reads).

        Besides the Adjudication page's decisions, a judge item approved on the Review page counts when the
        version chosen says what the reviewer thought: the gold (the defect stands: ``not_equivalent``) or
        the agent's answer (``equivalent``). Other decisions there (edits, rejections) say nothing about the
        verdict and are left out."""
        with self.read() as conn:
            rows = conn.execute(select(t.JudgeAdjudicationRow).order_by(t.JudgeAdjudicationRow.created_at,
                                                                        t.JudgeAdjudicationRow.id)).all()
            decided_here = {r.review_item_id for r in rows}
            elsewhere = conn.execute(select(t.ReviewItemRow).where(
                t.ReviewItemRow.kind == REVIEW_KIND, t.ReviewItemRow.status == "resolved",
                t.ReviewItemRow.decision == "accept")).all()
        out = [Adjudication(r.review_item_id, r.verdict_key, r.kind, r.model, r.prompt_version, r.judge_verdict,
                            r.reviewer_verdict, r.decision, r.reviewer, r.note, r.new_version, r.created_at)
               for r in rows]
        for item in elsewhere:
            payload = json.loads(item.payload)
            chosen = str(payload.get("chosen", ""))
            said = "not_equivalent" if chosen == "gold" else (
                "equivalent" if chosen.startswith(("agent", "alternative")) else None)
            if item.id in decided_here or said is None or not payload.get("judge_key") or not payload.get("verdict"):
                continue
            out.append(Adjudication(item.id, payload["judge_key"], str(payload.get("question", "mismatch")),
                                    str(payload.get("model", "")), str(payload.get("prompt_version", "")),
                                    payload["verdict"], said, f"review:{chosen}", item.decided_by or "",
                                    item.comment or "", None, item.decided_at or item.created_at))
        return sorted(out, key=lambda a: (a.created_at, a.review_item_id))

    # -- settings ---------------------------------------------------------------------------------------

    def judge_model_setting(self) -> str | None:
        with self.read() as conn:
            raw = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == MODEL_SETTING))
        value = json.loads(raw) if raw else None
        return value if isinstance(value, str) and value else None

    def set_judge_model_setting(self, model: str | None, *, actor: str) -> None:
        """Save the judge model (admins); None or empty goes back to the default."""
        model = (model or "").strip() or None
        with self.write() as conn:
            if core._require_user(conn, actor) != "admin":
                raise core.PermissionDenied(f"only an admin can change the judge model ({actor!r} is not)")
            before = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == MODEL_SETTING))
            conn.execute(t.ReviewSettingRow.__table__.delete().where(  # type: ignore[attr-defined]
                t.ReviewSettingRow.key == MODEL_SETTING))
            if model is not None:
                conn.execute(insert(t.ReviewSettingRow).values(key=MODEL_SETTING, value=canonical.dumps(model),
                                                               updated_at=core.now_iso(), updated_by=actor))
            self._audit(conn, actor=actor, action="setting.judge_model", entity="setting", entity_id=MODEL_SETTING,
                        before=None if before is None else json.loads(before), after=model)


def _require_reviewer(conn: Connection, actor: str, what: str) -> None:
    role = core._require_user(conn, actor)
    if role not in ("reviewer", "admin"):
        raise core.PermissionDenied(f"only a reviewer or admin can {what} ({actor!r} is {role})")


# Imported last: store.py imports this module at its top, so the store module is bound here once both exist.
from labeler import store as core  # noqa: E402
