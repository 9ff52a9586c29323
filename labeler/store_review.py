"""Review and the gold-set lifecycle: frozen versions, the reviewer's queue, overlap, schema drift.

A mixin of ``labeler.store.Store`` (SQL stays in the store modules): every method runs in the store's own
transactions (``self.write()`` / ``self.read()``), checks the acting user's role here, on the server side,
and writes an audit event for every decision. What comes out are the frozen read models below.

Gold versions are immutable snapshots of one split. A version lists ``(case id, blob hash)`` pairs; a blob
is a case's canonical line with ``provenance.gold_version`` null, stored once however many versions share
it. Exporting a version stamps its id into each line, and the bytes are checked against the content hash
recorded at freeze time, so a frozen version's export never changes, or fails loudly if the store was
tampered with.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError
from sqlalchemy import Connection, and_, delete, exists, false, func, insert, select, update
from sqlmodel import SQLModel

from labeler import tables as t
from labeler.labels import LabelBody, LabelIncomplete, gold_case, gold_case_id, observed_as_calls
from scorer import canonical
from scorer.agreement import disagreeing_fields, label_ratings, majority
from scorer.drift import DriftReason, StaleCase, case_drift, migrate_case
from scorer.formats import describe_validation_error, dumps_record
from scorer.model import Answer, Call, GoldCase, ToolSpec

SPLITS: Final = ("regression", "rolling")
REVIEW_KINDS: Final = ("disagreement", "unsure", "judge_mismatch")
REVIEWER_ROLES: Final = ("reviewer", "admin")
CHUNK: Final = 500
SYNC_MARK: Final = "review_queue_synced_through"
OVERLAP_KEY: Final = "overlap"
OVERLAP_SPREAD: Final = 5761
"""Turn ids times this, modulo 10,000, pick the overlap sample. It is coprime with 10,000, so every run of
10,000 consecutive turns maps onto each residue once: the sample is exactly the asked share, spread out."""

REVIEW_TABLES = [t.GoldBlobRow, t.GoldVersionRow, t.GoldVersionCaseRow, t.ReviewItemRow, t.ReviewSettingRow,
                 t.RelabelItemRow]


def migrate_review(conn: Connection) -> None:
    """Migration 3: gold versions, the review queue, review settings, the re-labeling queue."""
    SQLModel.metadata.create_all(conn, tables=[m.__table__ for m in REVIEW_TABLES])  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------------
# Read models
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldVersion:
    """An immutable, content-hashed snapshot of one split's gold cases."""

    id: str
    split: str
    number: int
    parent: str | None
    content_hash: str
    """sha256 of the exported bytes (every line followed by a newline)."""
    n_cases: int
    created_at: str
    created_by: str
    note: str = ""
    provenance: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)


@dataclass(frozen=True)
class VersionDiff:
    """Case ids added, removed and changed going from version ``a`` to version ``b``."""

    a: str
    b: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


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


@dataclass(frozen=True)
class RelabelItem:
    """A gold case whose tools changed under it, waiting for a reviewer to migrate, edit or dismiss it."""

    id: int
    case_id: str
    status: str  # open | resolved | dismissed
    reasons: tuple[DriftReason, ...]
    tools: tuple[ToolSpec, ...]
    """The current schemas the case was checked against."""
    detected_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None

    @property
    def blocking(self) -> bool:
        return any(r.blocking for r in self.reasons)


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


# --------------------------------------------------------------------------------------------------
# Helpers (pure)
# --------------------------------------------------------------------------------------------------


def version_id(split: str, number: int) -> str:
    return f"{split}-v{number}"


def _blob(line: str) -> tuple[str, str]:
    """``(hash, body)`` of a gold line with its version stamp cleared (what versions share)."""
    record = json.loads(line)
    record["provenance"]["gold_version"] = None
    body = canonical.dumps(record)
    return hashlib.sha256(body.encode("utf-8")).hexdigest(), body


def stamp(body: str, version: str) -> str:
    """The exported line of a frozen case: its blob with ``provenance.gold_version`` set."""
    record = json.loads(body)
    record["provenance"]["gold_version"] = version
    return canonical.dumps(record)


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise core.StoreError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")


def _require_role(conn: Connection, actor: str, roles: Sequence[str], what: str) -> str:
    role = core._require_user(conn, actor)
    if role not in roles:
        raise core.PermissionDenied(f"only a {' or '.join(roles)} can {what} ({actor!r} is {role})")
    return role


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


def _put_setting(conn: Connection, key: str, value: Any, actor: str) -> None:
    conn.execute(delete(t.ReviewSettingRow).where(t.ReviewSettingRow.key == key))
    conn.execute(insert(t.ReviewSettingRow).values(key=key, value=canonical.dumps(value),
                                                   updated_at=core.now_iso(), updated_by=actor))


def _overlap(conn: Connection) -> Overlap:
    raw = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == OVERLAP_KEY))
    return Overlap(**json.loads(raw)) if raw else Overlap()


def _in_sample(overlap: Overlap) -> Any:
    """SQL: the turn (``turns.id``) is in the overlap sample."""
    return (t.TurnRow.id * OVERLAP_SPREAD) % 10_000 < overlap.threshold  # type: ignore[operator]


def _relabel_item(row: Any) -> RelabelItem:
    data = json.loads(row.reasons)
    return RelabelItem(row.id, row.case_id, row.status,
                       tuple(DriftReason.model_validate(r) for r in data["reasons"]),
                       tuple(ToolSpec.model_validate(x) for x in data["tools"]), row.detected_at, row.decided_at,
                       row.decided_by, row.note)


def _version(row: Any) -> GoldVersion:
    return GoldVersion(row.id, row.split, row.number, row.parent_id, row.content_hash, row.n_cases,
                       row.created_at, row.created_by, row.note, json.loads(row.provenance))


def _review_item(row: Any) -> ReviewItem:
    return ReviewItem(row.id, row.kind, row.ref, row.status, json.loads(row.payload), row.created_at,
                      row.created_by, row.decided_at, row.decided_by, row.decision, row.comment)


# --------------------------------------------------------------------------------------------------
# The mixin
# --------------------------------------------------------------------------------------------------


class ReviewStore:
    """Gold versions, the review queue, overlap and schema drift (mixed into ``Store``)."""

    # These come from Store; declared for readers and type checkers.
    write: Any
    read: Any
    engine: Any
    _audit: Any

    # -- gold versions ----------------------------------------------------------------------------

    def freeze(self, split: str, *, actor: str, note: str = "") -> GoldVersion:
        """Snapshot the approved gold cases of ``split`` as a new immutable version (reviewers and admins).

        Refused when there is nothing approved, or when nothing changed since the split's latest version.
        """
        _check_split(split)
        with self.write() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "freeze a gold version")
            rows = conn.execute(select(t.GoldCaseRow.id, t.GoldCaseRow.body).where(
                t.GoldCaseRow.split == split, t.GoldCaseRow.status == "approved")).all()
            if not rows:
                raise core.StoreError(f"there are no approved {split} gold cases to freeze (approve cases on the "
                                      "Review page first)")
            blobs = {r.id: _blob(r.body) for r in rows}
            latest = self._latest_version(conn, split)
            if latest is not None and self._version_hashes(conn, latest.id) == {k: h for k, (h, _) in blobs.items()}:
                raise core.StoreError(f"nothing changed since {latest.id}: its {latest.n_cases} cases are the "
                                      f"approved {split} gold set")
            return self._write_version(conn, split, blobs, parent=latest.id if latest else None, actor=actor,
                                       note=note, provenance={"made_by": "freeze"})

    def derive_version(self, parent_version_id: str, changed: Sequence[GoldCase], *, actor: str, note: str,
                       provenance: Mapping[str, Any]) -> GoldVersion:
        """A new version of the parent's split: the parent's cases with ``changed`` replacing (same id) or
        joining them. The parent stays as it was. The live gold case is updated too when it still reads as in
        the parent (so the next freeze keeps the change); a live case edited since is left alone and named
        in the version's provenance (``live_not_updated``)."""
        if not changed:
            raise core.StoreError("derive_version needs at least one changed case")
        with self.write() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "create a gold version")
            parent = self._version_row(conn, parent_version_id)
            wrong = sorted(c.id for c in changed if c.split != parent.split)
            if wrong:
                raise core.StoreError(f"cases {', '.join(wrong)} are not in the {parent.split} split of "
                                      f"{parent.id}")
            ids = [c.id for c in changed]
            if len(set(ids)) != len(ids):
                raise core.StoreError("derive_version got the same case id twice")
            base = self._version_hashes(conn, parent.id)
            bodies = dict(conn.execute(select(t.GoldBlobRow.hash, t.GoldBlobRow.body).where(
                t.GoldBlobRow.hash.in_([base[i] for i in ids if i in base]))).all())  # type: ignore[attr-defined]
            blobs: dict[str, tuple[str, str | None]] = {k: (h, None) for k, h in base.items()}
            for case in changed:
                blobs[case.id] = _blob(dumps_record(case))
            if {k: h for k, (h, _) in blobs.items()} == base:
                raise core.StoreError(f"the changed cases are the same as in {parent.id}: nothing to derive")
            skipped = self._update_live(conn, changed, {i: bodies[base[i]] for i in ids if i in base}, actor)
            extra = {"made_by": "derive", **dict(provenance)}
            if skipped:
                extra["live_not_updated"] = skipped
            return self._write_version(conn, parent.split, blobs, parent=parent.id, actor=actor, note=note,
                                       provenance=extra)

    def _update_live(self, conn: Connection, changed: Sequence[GoldCase], parent_bodies: dict[str, str],
                     actor: str) -> list[str]:
        """Write derived cases into the live gold set where the live case still reads as in the parent version
        (or is missing); return the ids left alone because someone changed them since."""
        skipped = []
        for case in changed:
            live = conn.execute(select(t.GoldCaseRow.body).where(t.GoldCaseRow.id == case.id)).first()
            if live is not None and case.id in parent_bodies and _blob(live.body)[1] != parent_bodies[case.id]:
                skipped.append(case.id)
                continue
            self._put_gold(conn, case, actor=actor, action="gold.derive",
                           before=None if live is None else {"content_hash": canonical.content_hash(
                               json.loads(live.body))})
        return skipped

    def _put_gold(self, conn: Connection, case: GoldCase, *, actor: str, action: str, before: Any = None,
                  note: str | None = None) -> None:
        """Insert or replace one live gold case (with its tags) and audit it."""
        body = dumps_record(case)
        stamp_now = core.now_iso()
        values = {"conversation_id": case.conversation_id, "turn": case.turn, "split": case.split,
                  "kind": case.kind, "status": case.provenance.status, "behavior": case.expected.behavior,
                  "tags": canonical.dumps(list(case.tags)), "source": case.provenance.source, "body": body,
                  "content_hash": canonical.content_hash(json.loads(body)), "updated_at": stamp_now}
        exists_already = conn.scalar(select(t.GoldCaseRow.id).where(t.GoldCaseRow.id == case.id)) is not None
        if exists_already:
            conn.execute(update(t.GoldCaseRow).where(t.GoldCaseRow.id == case.id).values(**values))
            conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == case.id))
        else:
            conn.execute(insert(t.GoldCaseRow).values(id=case.id, created_at=stamp_now, **values))
        if case.tags:
            conn.execute(insert(t.GoldCaseTagRow), [{"case_id": case.id, "tag": tag}
                                                    for tag in dict.fromkeys(case.tags)])
        self._audit(conn, actor=actor, action=action, entity="gold_case", entity_id=case.id, before=before,
                    after={"status": case.provenance.status, "reviewer": case.provenance.reviewer,
                           "annotators": list(case.provenance.annotators), "expected": json.loads(body)["expected"],
                           "content_hash": values["content_hash"]}, note=note)

    def _write_version(self, conn: Connection, split: str, blobs: Mapping[str, tuple[str, str | None]], *,
                       parent: str | None, actor: str, note: str, provenance: Mapping[str, Any]) -> GoldVersion:
        number = (conn.scalar(select(func.max(t.GoldVersionRow.number)).where(t.GoldVersionRow.split == split))
                  or 0) + 1
        vid = version_id(split, number)
        order = sorted(blobs)  # code point order, the same on every backend
        known = {h: b for h, b in conn.execute(select(t.GoldBlobRow.hash, t.GoldBlobRow.body).where(
            t.GoldBlobRow.hash.in_({h for h, _ in blobs.values()}))).all()}  # type: ignore[attr-defined]
        fresh = {h: b for h, b in blobs.values() if h not in known and b is not None}
        for start in range(0, len(fresh), CHUNK):
            conn.execute(insert(t.GoldBlobRow), [{"hash": h, "body": b}
                                                 for h, b in list(fresh.items())[start:start + CHUNK]])
        digest = hashlib.sha256()
        for case_id in order:
            h, body = blobs[case_id]
            digest.update((stamp(body if body is not None else known[h], vid) + "\n").encode("utf-8"))
        stamped_at = core.now_iso()
        row = {"id": vid, "split": split, "number": number, "parent_id": parent, "content_hash": digest.hexdigest(),
               "n_cases": len(order), "created_at": stamped_at, "created_by": actor, "note": note,
               "provenance": canonical.dumps(dict(provenance))}
        conn.execute(insert(t.GoldVersionRow).values(**row))
        links = [{"version_id": vid, "case_id": c, "position": n, "blob_hash": blobs[c][0]}
                 for n, c in enumerate(order)]
        for start in range(0, len(links), CHUNK):
            conn.execute(insert(t.GoldVersionCaseRow), links[start:start + CHUNK])
        self._audit(conn, actor=actor, action="version.create", entity="gold_version", entity_id=vid,
                    after={"split": split, "parent": parent, "content_hash": row["content_hash"],
                           "n_cases": len(order), "provenance": dict(provenance)}, note=note or None)
        return GoldVersion(vid, split, number, parent, row["content_hash"], len(order), stamped_at, actor, note,
                           dict(provenance))

    @staticmethod
    def _latest_version(conn: Connection, split: str) -> GoldVersion | None:
        row = conn.execute(select(t.GoldVersionRow).where(t.GoldVersionRow.split == split)
                           .order_by(t.GoldVersionRow.number.desc()).limit(1)).first()  # type: ignore[attr-defined]
        return _version(row) if row else None

    @staticmethod
    def _version_row(conn: Connection, vid: str) -> Any:
        row = conn.execute(select(t.GoldVersionRow).where(t.GoldVersionRow.id == vid)).first()
        if row is None:
            raise core.StoreError(f"no gold version {vid!r} (toolgold versions lists them)")
        return row

    @staticmethod
    def _version_hashes(conn: Connection, vid: str) -> dict[str, str]:
        return dict(conn.execute(select(t.GoldVersionCaseRow.case_id, t.GoldVersionCaseRow.blob_hash)
                                 .where(t.GoldVersionCaseRow.version_id == vid)).all())

    def list_versions(self, split: str | None = None) -> list[GoldVersion]:
        """Every version, newest first within each split."""
        q = select(t.GoldVersionRow).order_by(t.GoldVersionRow.split, t.GoldVersionRow.number.desc())  # type: ignore[attr-defined]
        if split:
            q = q.where(t.GoldVersionRow.split == split)
        with self.read() as conn:
            return [_version(r) for r in conn.execute(q)]

    def get_version(self, vid: str) -> GoldVersion:
        with self.read() as conn:
            return _version(self._version_row(conn, vid))

    def latest_version(self, split: str) -> GoldVersion | None:
        _check_split(split)
        with self.read() as conn:
            return self._latest_version(conn, split)

    def iter_version_lines(self, vid: str, *, actor: str, batch: int = 2000) -> Iterator[str]:
        """The version's canonical lines ordered by case id, streamed (reviewers and admins: the regression
        split is held out). The bytes are checked against the version's content hash as they go; a mismatch
        raises ``StoreError`` after the last line."""
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "export a frozen gold version")
            expected = self._version_row(conn, vid).content_hash
        q = (select(t.GoldBlobRow.body)
             .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)  # type: ignore[arg-type]
             .where(t.GoldVersionCaseRow.version_id == vid).order_by(t.GoldVersionCaseRow.position))
        digest = hashlib.sha256()
        with self.engine.connect() as conn:
            for (body,) in conn.execution_options(stream_results=True, yield_per=batch).execute(q):
                line = stamp(body, vid)
                digest.update((line + "\n").encode("utf-8"))
                yield line
        if digest.hexdigest() != expected:
            raise core.StoreError(f"the export of {vid} does not match its content hash {expected[:12]}…: the "
                                  "stored version was altered outside toolgold")

    def version_cases(self, vid: str, *, actor: str) -> list[GoldCase]:
        """The version's cases as domain objects (each stamped with the version id)."""
        return [GoldCase.model_validate_json(line) for line in self.iter_version_lines(vid, actor=actor)]

    def version_case(self, vid: str, case_id: str, *, actor: str) -> GoldCase:
        """One case as frozen in a version."""
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "read a frozen gold version")
            self._version_row(conn, vid)
            body = conn.scalar(
                select(t.GoldBlobRow.body)
                .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)  # type: ignore[arg-type]
                .where(t.GoldVersionCaseRow.version_id == vid, t.GoldVersionCaseRow.case_id == case_id))
        if body is None:
            raise core.StoreError(f"{vid} has no case {case_id!r}")
        return GoldCase.model_validate_json(stamp(body, vid))

    def diff_versions(self, a: str, b: str) -> VersionDiff:
        """Cases added, removed and changed from version ``a`` to version ``b`` (ids, sorted)."""
        with self.read() as conn:
            self._version_row(conn, a)
            self._version_row(conn, b)
            old, new = self._version_hashes(conn, a), self._version_hashes(conn, b)
        return VersionDiff(a, b, added=tuple(sorted(new.keys() - old.keys())),
                           removed=tuple(sorted(old.keys() - new.keys())),
                           changed=tuple(sorted(k for k in old.keys() & new.keys() if old[k] != new[k])))

    def note_export(self, vid: str, *, actor: str, target: str) -> None:
        """Record in the audit log that ``actor`` exported a version (held-out data leaves the store)."""
        with self.write() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "export a frozen gold version")
            version = self._version_row(conn, vid)
            self._audit(conn, actor=actor, action="version.export", entity="gold_version", entity_id=vid,
                        after={"content_hash": version.content_hash, "target": target})

    # -- the review queue: the hook other parts (the LLM judge) put items into ------------------------

    def enqueue_review(self, kind: str, ref: str, payload: Mapping[str, Any] | None = None, *,
                       actor: str = "judge") -> ReviewItem:
        """Put an item in the reviewers' queue. ``ref`` is a gold case id (``<transcript>#t<message index>``
        for labeled turns); ``payload`` is what the reviewer needs to decide (for ``judge_mismatch``: the
        version, the run, the agent's calls, the verdict and its rationale). An open item of the same kind,
        case and payload is returned instead of a duplicate. Creating an item decides nothing, so any caller
        may (the judge runs without a user); the audit log names ``actor``."""
        if kind not in REVIEW_KINDS:
            raise core.StoreError(f"unknown review kind {kind!r}; choose one of {', '.join(REVIEW_KINDS)}")
        text = canonical.dumps(dict(payload or {}))
        with self.write() as conn:
            known = conn.scalar(select(t.GoldCaseRow.id).where(t.GoldCaseRow.id == ref)) or conn.scalar(
                select(t.GoldVersionCaseRow.case_id).where(t.GoldVersionCaseRow.case_id == ref).limit(1))
            if known is None:
                raise core.StoreError(f"no gold case {ref!r} to review")
            return self._enqueue(conn, kind, ref, text, actor)

    def _enqueue(self, conn: Connection, kind: str, ref: str, payload: str, actor: str) -> ReviewItem:
        row = conn.execute(select(t.ReviewItemRow).where(
            t.ReviewItemRow.kind == kind, t.ReviewItemRow.ref == ref, t.ReviewItemRow.payload == payload,
            t.ReviewItemRow.status != "resolved")).first()
        if row is not None:
            return _review_item(row)
        values = {"kind": kind, "ref": ref, "status": "open", "payload": payload, "created_at": core.now_iso(),
                  "created_by": actor}
        new_id = conn.execute(insert(t.ReviewItemRow).values(**values).returning(t.ReviewItemRow.id)).scalar_one()  # type: ignore[arg-type]
        self._audit(conn, actor=actor, action="review.enqueue", entity="review_item", entity_id=ref,
                    after={"item": new_id, "kind": kind, "payload": json.loads(payload)})
        return ReviewItem(new_id, kind, ref, "open", json.loads(payload), values["created_at"], actor)

    # -- the review queue: what needs a reviewer's decision -----------------------------------------

    def sync_review_queue(self) -> int:
        """Bring the label-driven items up to date and return how many are open.

        A decision point with two or more submitted labels that disagree (on the decision kind, the tool or any
        argument under its match rule) gets a ``disagreement`` item; a submitted label flagged unsure gets an
        ``unsure`` item. Only turns whose gold case awaits a decision (status ``submitted``) count; an item
        whose reason went away (the labels now agree, the flag was lifted) is withdrawn. Only turns with labels
        changed since the last sync are looked at again.
        """
        with self.write() as conn:
            mark = conn.scalar(select(t.ReviewSettingRow.value).where(t.ReviewSettingRow.key == SYNC_MARK))
            since = json.loads(mark) if mark else ""
            newest = conn.scalar(select(func.max(t.LabelRow.updated_at))) or ""
            touched = select(t.LabelRow.turn_id).where(t.LabelRow.updated_at >= since).distinct()
            turns = conn.execute(
                select(t.TurnRow.id, t.TurnRow.message_index, t.TranscriptRow.external_id)
                .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)  # type: ignore[arg-type]
                .where(t.TurnRow.id.in_(touched))).all()  # type: ignore[union-attr]
            loaded: dict[str, Any] = {}
            for turn_pk, message_index, transcript_id in turns:
                self._sync_turn(conn, turn_pk, transcript_id, message_index, loaded)
            _put_setting(conn, SYNC_MARK, newest, "review")
            return conn.scalar(select(func.count()).select_from(t.ReviewItemRow)
                               .where(t.ReviewItemRow.status != "resolved")) or 0

    def _submitted_cases(self, conn: Connection, turn_pk: int, transcript_id: str, message_index: int,
                         loaded: dict[str, Any] | None = None) -> dict[str, tuple[GoldCase | None, bool, list[str]]]:
        """Each annotator's submitted label of a turn as a gold case (None when it no longer builds), whether
        it is flagged unsure, and what keeps it from building; in order of submission. ``loaded`` caches
        parsed transcripts across calls."""
        rows = conn.execute(
            select(t.LabelRow.annotator, t.LabelRow.body, t.LabelRow.submitted_at)
            .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
            .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all()  # type: ignore[arg-type]
        if not rows:
            return {}
        cache = loaded if loaded is not None else {}
        if transcript_id not in cache:
            cache[transcript_id] = self._load_transcript(conn, transcript_id)  # type: ignore[attr-defined]
        transcript, source = cache[transcript_id]
        out: dict[str, tuple[GoldCase | None, bool, list[str]]] = {}
        for annotator, text, submitted_at in rows:
            body = LabelBody.model_validate_json(text)
            try:
                case: GoldCase | None = gold_case(
                    body, transcript=transcript, message_index=message_index, annotators=(annotator,),
                    labeled_at=core._parse_iso(submitted_at), source=source)
                found: list[str] = []
            except LabelIncomplete as exc:
                case, found = None, exc.problems
            out[annotator] = (case, body.unsure, found)
        return out

    def _sync_turn(self, conn: Connection, turn_pk: int, transcript_id: str, message_index: int,
                   loaded: dict[str, Any]) -> None:
        ref = gold_case_id(transcript_id, message_index)
        status = conn.scalar(select(t.GoldCaseRow.status).where(t.GoldCaseRow.id == ref))
        submitted = conn.execute(
            select(t.LabelRow.annotator, t.LabelRow.unsure)
            .where(t.LabelRow.turn_id == turn_pk, t.LabelRow.status == "submitted")
            .order_by(t.LabelRow.submitted_at, t.LabelRow.annotator)).all() if status == "submitted" else []  # type: ignore[arg-type]
        wanted: dict[str, dict[str, Any]] = {}
        if len(submitted) >= 2:  # only then is there anything to compare (and a transcript worth parsing)
            labels = self._submitted_cases(conn, turn_pk, transcript_id, message_index, loaded)
            cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
            fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
            if fields:
                wanted["disagreement"] = {"annotators": list(cases), "fields": list(fields)}
        unsure = [annotator for annotator, flagged in submitted if flagged]
        if unsure:
            wanted["unsure"] = {"annotators": unsure}
        for kind in ("disagreement", "unsure"):
            open_row = conn.execute(select(t.ReviewItemRow).where(
                t.ReviewItemRow.kind == kind, t.ReviewItemRow.ref == ref,
                t.ReviewItemRow.status != "resolved")).first()
            if kind in wanted:
                payload = canonical.dumps(wanted[kind])
                if open_row is None:
                    self._enqueue(conn, kind, ref, payload, "review")
                elif open_row.payload != payload:
                    conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == open_row.id)
                                 .values(payload=payload))
            elif open_row is not None and open_row.status == "open":
                self._close(conn, open_row.id, actor="review", decision="withdrawn",
                            comment="the labels changed: nothing to decide any more")

    def _close(self, conn: Connection, item_id: int, *, actor: str, decision: str, comment: str | None,
               extra: Mapping[str, Any] | None = None) -> None:
        row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)).first()
        stamp_now = core.now_iso()
        values: dict[str, Any] = {"status": "resolved", "decided_at": stamp_now, "decided_by": actor,
                                  "decision": decision, "comment": comment}
        if extra:
            values["payload"] = canonical.dumps({**json.loads(row.payload), **extra})
        conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id).values(**values))
        self._audit(conn, actor=actor, action=f"review.{decision}", entity="review_item", entity_id=row.ref,
                    before={"item": item_id, "kind": row.kind, "status": row.status},
                    after={"item": item_id, "status": "resolved", "decision": decision, **(extra or {})},
                    note=comment)

    def review_queue(self, *, actor: str, kinds: Sequence[str] | None = None,
                     include_resolved: bool = False, limit: int = 500) -> list[ReviewItem]:
        """Items awaiting a decision (escalated ones first), for reviewers and admins."""
        q = select(t.ReviewItemRow).order_by(
            (t.ReviewItemRow.status != "escalated"), t.ReviewItemRow.id).limit(limit)  # type: ignore[arg-type]
        if not include_resolved:
            q = q.where(t.ReviewItemRow.status != "resolved")
        if kinds:
            q = q.where(t.ReviewItemRow.kind.in_(list(kinds)))  # type: ignore[attr-defined]
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "see the review queue")
            return [_review_item(r) for r in conn.execute(q)]

    def review_counts(self) -> dict[str, int]:
        """Open items per kind (escalated ones under ``escalated``)."""
        with self.read() as conn:
            rows = conn.execute(select(t.ReviewItemRow.kind, t.ReviewItemRow.status, func.count())
                                .where(t.ReviewItemRow.status != "resolved")
                                .group_by(t.ReviewItemRow.kind, t.ReviewItemRow.status)).all()
        out: dict[str, int] = {}
        for kind, status, n in rows:
            key = "escalated" if status == "escalated" else kind
            out[key] = out.get(key, 0) + n
        return out

    def review_detail(self, item_id: int, *, actor: str) -> ReviewDetail:
        """The item with the versions to choose from side by side: each annotator's label, the agent's
        observed call, the current gold (and for a judge mismatch the agent's answer), the majority
        pre-selected."""
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "review gold cases")
            return self._detail(conn, self._item_row(conn, item_id))

    def _detail(self, conn: Connection, row: Any) -> ReviewDetail:
        item = _review_item(row)
        turn = self._turn_of(conn, item.ref)
        candidates: list[ReviewCandidate] = []
        preselected: str | None = None
        fields: tuple[str, ...] = ()
        live_row = conn.execute(select(t.GoldCaseRow.body, t.GoldCaseRow.status)
                                .where(t.GoldCaseRow.id == item.ref)).first()
        live = GoldCase.model_validate_json(live_row.body) if live_row else None
        if turn is not None:
            turn_pk, transcript_id, message_index, observed, behavior = turn
            labels = self._submitted_cases(conn, turn_pk, transcript_id, message_index)
            cases = {a: c for a, (c, _, _) in labels.items() if c is not None}
            agreeing = majority(cases) if cases else ()
            for annotator, (case, unsure, found) in labels.items():
                title = annotator + (" (unsure)" if unsure else "")
                candidates.append(ReviewCandidate(f"label:{annotator}", title, case, tuple(found),
                                                  self._agreeing(cases, annotator), unsure,
                                                  case.rationale if case else ""))
            if agreeing:
                preselected = f"label:{agreeing[0]}"
                fields = disagreeing_fields(label_ratings(cases)) if len(cases) >= 2 else ()
            if behavior != "open":
                candidates.append(self._observed_candidate(conn, transcript_id, message_index, observed,
                                                           next(iter(cases.values()), live)))
        if live is not None and (turn is None or item.kind == "judge_mismatch" or not candidates):
            candidates.insert(0, ReviewCandidate("gold", f"Gold ({live_row.status})", live, (),
                                                 live.provenance.annotators, False, live.rationale))
        base = live or (self._frozen_case(conn, item) if item.kind == "judge_mismatch" else None)
        if item.kind == "judge_mismatch" and base is not None:
            if live is None:
                candidates.insert(0, ReviewCandidate("gold", "Gold (as frozen)", base, (),
                                                     base.provenance.annotators, False, base.rationale))
            candidates.extend(_agent_candidates(base, item.payload))
            preselected = "gold"
        if preselected is None and candidates:
            preselected = candidates[0].key
        others = tuple(_review_item(r) for r in conn.execute(select(t.ReviewItemRow).where(
            t.ReviewItemRow.ref == item.ref, t.ReviewItemRow.id != item.id, t.ReviewItemRow.status != "resolved")))
        return ReviewDetail(item, turn[1] if turn else None, turn[2] if turn else None, tuple(candidates),
                            preselected, fields, others)

    @staticmethod
    def _agreeing(cases: Mapping[str, GoldCase], annotator: str) -> tuple[str, ...]:
        if annotator not in cases:
            return (annotator,)
        whole = label_ratings(cases)["label"] if len(cases) >= 2 else {annotator: ""}
        return (annotator, *(a for a in cases if a != annotator and whole.get(a) == whole[annotator]))

    def _observed_candidate(self, conn: Connection, transcript_id: str, message_index: int,
                            observed: list[dict[str, Any]], like: GoldCase | None) -> ReviewCandidate:
        """What the agent did, as a gold case (tags and reference time from ``like``)."""
        transcript, source = self._load_transcript(conn, transcript_id)  # type: ignore[attr-defined]
        body = LabelBody(decision="same" if observed else "no_call", calls=observed_as_calls(observed),
                         tags=like.tags if like else (), reference_time=like.reference_time if like else None,
                         split=like.split if like else "regression")
        title = "Observed agent call" if observed else "Observed agent (no call)"
        try:
            case = gold_case(body, transcript=transcript, message_index=message_index, annotators=(),
                             labeled_at=core._parse_iso(core.now_iso()), source=source)
        except LabelIncomplete as exc:
            return ReviewCandidate("observed", title, None, tuple(exc.problems))
        return ReviewCandidate("observed", title, case)

    def _frozen_case(self, conn: Connection, item: ReviewItem) -> GoldCase | None:
        version = item.payload.get("version")
        if not isinstance(version, str):
            return None
        body = conn.scalar(
            select(t.GoldBlobRow.body)
            .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)  # type: ignore[arg-type]
            .where(t.GoldVersionCaseRow.version_id == version, t.GoldVersionCaseRow.case_id == item.ref))
        return GoldCase.model_validate_json(stamp(body, version)) if body else None

    @staticmethod
    def _turn_of(conn: Connection, ref: str) -> tuple[int, str, int, list[dict[str, Any]], str] | None:
        transcript_id, sep, index = ref.rpartition("#t")
        if not sep or not index.isdigit():
            return None
        row = conn.execute(
            select(t.TurnRow.id, t.TurnRow.observed, t.TurnRow.observed_behavior)
            .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)  # type: ignore[arg-type]
            .where(t.TranscriptRow.external_id == transcript_id, t.TurnRow.message_index == int(index))).first()
        if row is None:
            return None
        return row.id, transcript_id, int(index), json.loads(row.observed), row.observed_behavior

    @staticmethod
    def _item_row(conn: Connection, item_id: int) -> Any:
        row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)).first()
        if row is None:
            raise core.StoreError(f"no review item {item_id}")
        return row

    def _deciding(self, conn: Connection, item_id: int, actor: str) -> Any:
        """The item, when ``actor`` may decide it now: a reviewer or admin, an admin for escalated items."""
        role = _require_role(conn, actor, REVIEWER_ROLES, "approve or reject gold cases")
        row = self._item_row(conn, item_id)
        if row.status == "resolved":
            raise core.StoreError(f"review item {item_id} was already decided by {row.decided_by} "
                                  f"({row.decision}, {row.decided_at})")
        if row.status == "escalated" and role != "admin":
            raise core.PermissionDenied(f"review item {item_id} was escalated: only an admin can decide it "
                                        f"({actor!r} is {role})")
        return row

    def accept_review(self, item_id: int, choice: str, *, actor: str, comment: str = "") -> GoldCase:
        """Approve one of the versions shown side by side (``choice`` is its key, e.g. ``label:ann``,
        ``observed``, ``gold``, ``agent``): it becomes the approved gold case, with the reviewer and the
        annotators it stands for in its provenance."""
        with self.write() as conn:
            row = self._deciding(conn, item_id, actor)
            detail = self._detail(conn, row)
            chosen = next((c for c in detail.candidates if c.key == choice), None)
            if chosen is None:
                raise core.StoreError(f"review item {item_id} has no version {choice!r}; choose one of "
                                      f"{', '.join(c.key for c in detail.candidates)}")
            if chosen.case is None:
                raise core.StoreError(f"{chosen.title} cannot be approved: " + "; ".join(chosen.problems))
            return self._approve(conn, row, chosen.case, chosen.annotators, actor=actor, decision="accept",
                                 comment=comment or None, extra={"chosen": choice})

    def edit_and_accept(self, item_id: int, case: GoldCase, *, actor: str, comment: str = "") -> GoldCase:
        """Approve the reviewer's own edit of the case (same id)."""
        with self.write() as conn:
            row = self._deciding(conn, item_id, actor)
            if case.id != row.ref:
                raise core.StoreError(f"the edited case is {case.id!r}, but review item {item_id} is about "
                                      f"{row.ref!r}")
            try:  # model_copy(update=...) skips validation: check the edit as a whole
                case = GoldCase.model_validate(case.model_dump())
            except ValidationError as exc:
                raise core.StoreError(f"the edited case is not valid: {describe_validation_error(exc)}") from None
            return self._approve(conn, row, case, case.provenance.annotators, actor=actor, decision="edit",
                                 comment=comment or None, extra={})

    def _approve(self, conn: Connection, row: Any, case: GoldCase, annotators: Sequence[str], *, actor: str,
                 decision: str, comment: str | None, extra: Mapping[str, Any]) -> GoldCase:
        approved = case.model_copy(update={"provenance": case.provenance.model_copy(update={
            "status": "approved", "reviewer": actor, "annotators": tuple(annotators), "gold_version": None})})
        before = conn.scalar(select(t.GoldCaseRow.content_hash).where(t.GoldCaseRow.id == row.ref))
        self._put_gold(conn, approved, actor=actor, action="gold.approve",
                       before=None if before is None else {"content_hash": before}, note=comment)
        self._close(conn, row.id, actor=actor, decision=decision, comment=comment, extra=extra)
        self._close_label_items(conn, row, actor, f"decided with item {row.id}")
        return approved

    def _close_label_items(self, conn: Connection, row: Any, actor: str, comment: str) -> None:
        """A decision about a turn settles its other label-driven items too (not other judge mismatches)."""
        for other in conn.scalars(select(t.ReviewItemRow.id).where(
                t.ReviewItemRow.ref == row.ref, t.ReviewItemRow.id != row.id,
                t.ReviewItemRow.status != "resolved",
                t.ReviewItemRow.kind.in_(["disagreement", "unsure"]))):  # type: ignore[attr-defined]
            self._close(conn, other, actor=actor, decision="settled", comment=comment)

    def reject_review(self, item_id: int, *, actor: str, comment: str) -> list[str]:
        """Reject and requeue: the turn's submitted labels go back to their annotators as drafts (with the
        comment, which is required) and the undecided gold case is withdrawn until they resubmit. A gold case
        without labels (imported) is marked rejected. Returns the annotators it went back to."""
        if not comment.strip():
            raise core.StoreError("say why when you reject: the annotators will read it")
        with self.write() as conn:
            row = self._deciding(conn, item_id, actor)
            requeued = self._requeue(conn, row.ref, actor=actor, comment=comment)
            self._close(conn, row.id, actor=actor, decision="reject", comment=comment,
                        extra={"requeued": requeued})
            self._close_label_items(conn, row, actor, f"rejected with item {row.id}")
            return requeued

    def _requeue(self, conn: Connection, ref: str, *, actor: str, comment: str) -> list[str]:
        turn = self._turn_of(conn, ref)
        labels = conn.execute(select(t.LabelRow).where(t.LabelRow.turn_id == turn[0],
                                                       t.LabelRow.status == "submitted")
                              .order_by(t.LabelRow.id)).all() if turn else []  # type: ignore[arg-type]
        stamp_now = core.now_iso()
        for label in labels:
            conn.execute(update(t.LabelRow).where(t.LabelRow.id == label.id).values(
                status="draft", version=label.version + 1, updated_at=stamp_now, submitted_at=None))
            self._audit(conn, actor=actor, action="label.requeue", entity="label",
                        entity_id=core.label_key(turn[1], turn[2], label.annotator),  # type: ignore[index]
                        before={"status": "submitted", "version": label.version},
                        after={"status": "draft", "version": label.version + 1}, note=comment)
        live = conn.execute(select(t.GoldCaseRow.body, t.GoldCaseRow.status)
                            .where(t.GoldCaseRow.id == ref)).first()
        if live is None:
            return [r.annotator for r in labels]
        if labels:
            conn.execute(delete(t.GoldCaseTagRow).where(t.GoldCaseTagRow.case_id == ref))
            conn.execute(delete(t.GoldCaseRow).where(t.GoldCaseRow.id == ref))
            self._audit(conn, actor=actor, action="gold.withdraw", entity="gold_case", entity_id=ref,
                        before={"status": live.status}, note=comment)
        else:
            case = GoldCase.model_validate_json(live.body)
            self._put_gold(conn, case.model_copy(update={"provenance": case.provenance.model_copy(
                update={"status": "rejected", "reviewer": actor, "gold_version": None})}),
                actor=actor, action="gold.reject", before={"status": live.status}, note=comment)
        return [r.annotator for r in labels]

    def escalate_review(self, item_id: int, *, actor: str, comment: str) -> ReviewItem:
        """Hand the item to an admin (a comment saying why is required)."""
        if not comment.strip():
            raise core.StoreError("say why you escalate: the admin will read it")
        with self.write() as conn:
            row = self._deciding(conn, item_id, actor)
            if row.status == "escalated":
                raise core.StoreError(f"review item {item_id} is already escalated")
            escalation = {"by": actor, "at": core.now_iso(), "comment": comment}
            payload = canonical.dumps({**json.loads(row.payload), "escalation": escalation})
            conn.execute(update(t.ReviewItemRow).where(t.ReviewItemRow.id == item_id)
                         .values(status="escalated", payload=payload))
            self._audit(conn, actor=actor, action="review.escalate", entity="review_item", entity_id=row.ref,
                        before={"item": item_id, "status": row.status}, after={"item": item_id, "status": "escalated"},
                        note=comment)
            return _review_item(self._item_row(conn, item_id))

    # -- approving what needs no decision ---------------------------------------------------------------

    def approvable_cases(self, split: str | None = None) -> list[str]:
        """Submitted gold cases nobody contests: no open review or re-labeling item, and as many submitted
        labels as the overlap asks for."""
        self.sync_review_queue()
        with self.read() as conn:
            overlap = _overlap(conn)
            q = select(t.GoldCaseRow.id).where(t.GoldCaseRow.status == "submitted").order_by(t.GoldCaseRow.id)
            if split:
                q = q.where(t.GoldCaseRow.split == split)
            contested = set(conn.scalars(select(t.ReviewItemRow.ref).where(t.ReviewItemRow.status != "resolved")))
            contested |= set(conn.scalars(select(t.RelabelItemRow.case_id).where(t.RelabelItemRow.status == "open")))
            waiting = self._waiting_for_overlap(conn, overlap) if overlap.active else set()
            return [c for c in conn.scalars(q) if c not in contested and c not in waiting]

    def approve_cases(self, case_ids: Sequence[str], *, actor: str, comment: str = "") -> int:
        """Approve submitted gold cases as they stand (reviewers and admins); returns how many."""
        with self.write() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "approve gold cases")
            done = 0
            for case_id in case_ids:
                row = conn.execute(select(t.GoldCaseRow.body, t.GoldCaseRow.status, t.GoldCaseRow.content_hash)
                                   .where(t.GoldCaseRow.id == case_id)).first()
                if row is None:
                    raise core.StoreError(f"no gold case {case_id!r}")
                if row.status != "submitted":
                    continue
                case = GoldCase.model_validate_json(row.body)
                approved = case.model_copy(update={"provenance": case.provenance.model_copy(
                    update={"status": "approved", "reviewer": actor, "gold_version": None})})
                self._put_gold(conn, approved, actor=actor, action="gold.approve",
                               before={"content_hash": row.content_hash}, note=comment or "uncontested")
                done += 1
            return done

    # -- overlap: several annotators on a share of the turns ------------------------------------------------

    def overlap(self) -> Overlap:
        with self.read() as conn:
            return _overlap(conn)

    def set_overlap(self, annotators: int, percent: float, *, actor: str) -> Overlap:
        """Have ``annotators`` different annotators label ``percent``% of the turns (admins only). The sample
        is fixed per turn, so raising the share keeps the turns already in it."""
        if not 1 <= annotators <= 10:
            raise core.StoreError("overlap: the number of annotators per turn is between 1 and 10")
        if not 0 <= percent <= 100:
            raise core.StoreError("overlap: the share of turns is a percentage between 0 and 100")
        with self.write() as conn:
            _require_role(conn, actor, ("admin",), "set the overlap")
            before = _overlap(conn)
            after = Overlap(annotators, float(percent))
            _put_setting(conn, OVERLAP_KEY, {"annotators": annotators, "percent": float(percent)}, actor)
            self._audit(conn, actor=actor, action="overlap.set", entity="setting", entity_id=OVERLAP_KEY,
                        before={"annotators": before.annotators, "percent": before.percent},
                        after={"annotators": annotators, "percent": float(percent)})
            return after

    def _overlap_pending(self, annotator: str | None, overlap: Overlap | None = None) -> Any:
        """SQL over ``turns``: an overlap turn that still needs labels and has none submitted by ``annotator``.
        The label queue and the turn states use it, so a sampled turn goes to N different annotators."""
        overlap = overlap or self.overlap()
        if not overlap.active or annotator is None:
            return false()
        submitted = (select(func.count()).select_from(t.LabelRow)
                     .where(t.LabelRow.turn_id == t.TurnRow.id, t.LabelRow.status == "submitted")
                     .correlate(t.TurnRow).scalar_subquery())
        mine = exists(select(t.LabelRow.id).where(t.LabelRow.turn_id == t.TurnRow.id,
                                                  t.LabelRow.annotator == annotator,
                                                  t.LabelRow.status == "submitted")).correlate(t.TurnRow)
        return and_(_in_sample(overlap), submitted < overlap.annotators, ~mine)

    def _overlap_pending_turns(self, conn: Connection, transcript_pk: int, annotator: str | None) -> set[int]:
        """Message indexes of the transcript's turns that still wait for ``annotator``'s label (overlap)."""
        pending = self._overlap_pending(annotator, _overlap(conn))
        return set(conn.scalars(select(t.TurnRow.message_index).where(t.TurnRow.transcript_id == transcript_pk,
                                                                       pending)))

    def _waiting_for_overlap(self, conn: Connection, overlap: Overlap) -> set[str]:
        counts = (select(t.LabelRow.turn_id, func.count().label("n")).where(t.LabelRow.status == "submitted")
                  .group_by(t.LabelRow.turn_id).subquery())
        rows = conn.execute(
            select(t.TranscriptRow.external_id, t.TurnRow.message_index)
            .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)  # type: ignore[arg-type]
            .outerjoin(counts, counts.c.turn_id == t.TurnRow.id)
            .where(_in_sample(overlap), func.coalesce(counts.c.n, 0) < overlap.annotators)).all()
        return {gold_case_id(tid, index) for tid, index in rows}

    # -- schema drift: the re-labeling queue ---------------------------------------------------------------

    def current_tools(self, source: str) -> list[ToolSpec]:
        """The newest schema of each tool offered in the source's transcripts (by import order)."""
        with self.read() as conn:
            return self._current_tools(conn, source)

    @staticmethod
    def _current_tools(conn: Connection, source: str) -> list[ToolSpec]:
        rows = conn.execute(
            select(t.ToolSchemaRow.name, t.ToolSchemaRow.hash, func.max(t.TranscriptRow.id))
            .join(t.TranscriptToolRow, t.TranscriptToolRow.schema_hash == t.ToolSchemaRow.hash)  # type: ignore[arg-type]
            .join(t.TranscriptRow, t.TranscriptRow.id == t.TranscriptToolRow.transcript_id)  # type: ignore[arg-type]
            .where(t.TranscriptRow.source == source)
            .group_by(t.ToolSchemaRow.name, t.ToolSchemaRow.hash)).all()
        newest: dict[str, tuple[int, str]] = {}
        for name, digest, last in rows:
            if name not in newest or last > newest[name][0]:
                newest[name] = (last, digest)
        bodies = dict(conn.execute(select(t.ToolSchemaRow.hash, t.ToolSchemaRow.body).where(
            t.ToolSchemaRow.hash.in_([d for _, d in newest.values()]))).all())  # type: ignore[attr-defined]
        return [ToolSpec.model_validate_json(bodies[newest[name][1]]) for name in sorted(newest)]

    def check_schema_drift(self, *, tools: Sequence[ToolSpec] | None = None, source: str | None = None,
                           actor: str = "drift") -> list[StaleCase]:
        """Flag every gold case the current tool schemas no longer fit into the re-labeling queue, with the
        reasons, and return them.

        With ``tools`` (a declared toolset) cases are checked against exactly those: removed and added tools
        count. Without, each case is checked against the newest schema of each of its own tools in its source,
        so a re-imported tool with a renamed parameter or a new required field is caught on import. A case a
        reviewer dismissed is not flagged again for the same schemas; an open item whose case fits again is
        closed.
        """
        with self.write() as conn:
            q = select(t.GoldCaseRow.body, t.GoldCaseRow.source).where(t.GoldCaseRow.status != "rejected")
            if source:
                q = q.where(t.GoldCaseRow.source == source)
            per_source: dict[str, list[ToolSpec]] = {}
            found: list[StaleCase] = []
            for body, case_source in conn.execute(q).all():
                case = GoldCase.model_validate_json(body)
                if tools is not None:
                    current, added = list(tools), True
                elif case.tools:
                    if case_source not in per_source:
                        per_source[case_source] = self._current_tools(conn, case_source or "")
                    newest = {x.name: x for x in per_source[case_source]}
                    current, added = [newest.get(x.name, x) for x in case.tools], False
                else:
                    continue
                drift = case_drift(case, current, added_tools=added)
                self._flag_drift(conn, case.id, drift, current, actor)
                if drift is not None:
                    found.append(drift)
            return found

    def _flag_drift(self, conn: Connection, case_id: str, drift: StaleCase | None, current: Sequence[ToolSpec],
                    actor: str) -> None:
        tools_hash = canonical.content_hash([x.model_dump(mode="json") for x in current])
        open_row = conn.execute(select(t.RelabelItemRow).where(t.RelabelItemRow.case_id == case_id,
                                                               t.RelabelItemRow.status == "open")).first()
        if drift is None:
            if open_row is not None:
                conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == open_row.id).values(
                    status="resolved", decided_at=core.now_iso(), decided_by=actor, note="the schemas fit again"))
                self._audit(conn, actor=actor, action="relabel.close", entity="gold_case", entity_id=case_id,
                            note="the schemas fit again")
            return
        dismissed = conn.scalar(select(t.RelabelItemRow.id).where(
            t.RelabelItemRow.case_id == case_id, t.RelabelItemRow.status == "dismissed",
            t.RelabelItemRow.tools_hash == tools_hash))
        if dismissed is not None:
            return
        reasons = canonical.dumps({"reasons": [r.model_dump(mode="json") for r in drift.reasons],
                                   "tools": [x.model_dump(mode="json") for x in current]})
        if open_row is not None:
            if open_row.reasons != reasons:
                conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == open_row.id)
                             .values(reasons=reasons, tools_hash=tools_hash))
            return
        conn.execute(insert(t.RelabelItemRow).values(case_id=case_id, status="open", reasons=reasons,
                                                     tools_hash=tools_hash, detected_at=core.now_iso()))
        self._audit(conn, actor=actor, action="relabel.flag", entity="gold_case", entity_id=case_id,
                    after={"reasons": [r.message for r in drift.reasons]})

    def relabel_queue(self, *, actor: str, include_closed: bool = False) -> list[RelabelItem]:
        """Gold cases flagged for re-labeling because their tools changed (reviewers and admins)."""
        q = select(t.RelabelItemRow).order_by(t.RelabelItemRow.id)  # type: ignore[arg-type]
        if not include_closed:
            q = q.where(t.RelabelItemRow.status == "open")
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "see the re-labeling queue")
            return [_relabel_item(r) for r in conn.execute(q)]

    def _relabel_row(self, conn: Connection, item_id: int, actor: str) -> Any:
        _require_role(conn, actor, REVIEWER_ROLES, "decide re-labeling items")
        row = conn.execute(select(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id)).first()
        if row is None:
            raise core.StoreError(f"no re-labeling item {item_id}")
        if row.status != "open":
            raise core.StoreError(f"re-labeling item {item_id} is {row.status} already")
        return row

    def resolve_relabel(self, item_id: int, case: GoldCase | None = None, *, actor: str,
                        note: str = "") -> GoldCase:
        """Settle a flagged case: with ``case`` (the reviewer's fix, same id), approve it; without, migrate it
        mechanically onto the current schemas (renamed parameters) and approve that. Refused when the drift
        needs a person and no fix is given."""
        with self.write() as conn:
            row = self._relabel_row(conn, item_id, actor)
            item = _relabel_item(row)
            live = conn.scalar(select(t.GoldCaseRow.body).where(t.GoldCaseRow.id == row.case_id))
            if live is None:
                raise core.StoreError(f"gold case {row.case_id!r} is gone")
            how = "edited"
            if case is None:
                case = migrate_case(GoldCase.model_validate_json(live), item.tools)
                if case is None:
                    raise core.StoreError(f"{row.case_id} cannot be migrated mechanically ("
                                          + "; ".join(r.message for r in item.reasons)
                                          + "): edit it, or dismiss the flag")
                how = "migrated"
            elif case.id != row.case_id:
                raise core.StoreError(f"the fix is for {case.id!r}, but the item is about {row.case_id!r}")
            approved = case.model_copy(update={"provenance": case.provenance.model_copy(
                update={"status": "approved", "reviewer": actor, "gold_version": None})})
            self._put_gold(conn, approved, actor=actor, action="gold.relabel",
                           before={"content_hash": canonical.content_hash(json.loads(live))},
                           note=note or f"{how} onto the current tool schemas")
            conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id).values(
                status="resolved", decided_at=core.now_iso(), decided_by=actor, note=note or how))
            return approved

    def dismiss_relabel(self, item_id: int, *, actor: str, note: str) -> None:
        """The drift does not matter for this case (say why): it is not flagged again for these schemas."""
        if not note.strip():
            raise core.StoreError("say why the case still holds: the next reviewer will read it")
        with self.write() as conn:
            row = self._relabel_row(conn, item_id, actor)
            conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id).values(
                status="dismissed", decided_at=core.now_iso(), decided_by=actor, note=note))
            self._audit(conn, actor=actor, action="relabel.dismiss", entity="gold_case", entity_id=row.case_id,
                        note=note)

    # -- labels are personal ------------------------------------------------------------------------------

    def edit_label(self, transcript_id: str, message_index: int, owner: str, body: LabelBody, *, version: int,
                   actor: str) -> core.LabelRecord:
        """Save a draft of ``owner``'s label on behalf of ``actor``: only the owner may. Nobody edits another
        person's label (a reviewer changes the gold with *edit and accept*, which keeps the labels as given)."""
        if actor != owner:
            with self.read() as conn:
                role = core._require_user(conn, actor)
            raise core.PermissionDenied(f"{actor!r} ({role}) cannot edit {owner!r}'s label: labels are personal; "
                                        "a reviewer changes the gold with 'edit and accept'")
        return self.save_label(transcript_id, message_index, owner, body, version=version)  # type: ignore[attr-defined, no-any-return]

    # -- agreement and hygiene inputs ------------------------------------------------------------------------

    def agreement_labels(self, *, actor: str) -> dict[str, dict[str, GoldCase]]:
        """Every turn with two or more submitted labels: case id -> annotator -> that label as a gold case
        (reviewers and admins: annotators label blind)."""
        with self.read() as conn:
            _require_role(conn, actor, REVIEWER_ROLES, "see how annotators agree")
            shared = (select(t.LabelRow.turn_id).where(t.LabelRow.status == "submitted")
                      .group_by(t.LabelRow.turn_id).having(func.count() >= 2))
            turns = conn.execute(
                select(t.TurnRow.id, t.TranscriptRow.external_id, t.TurnRow.message_index)
                .join(t.TranscriptRow, t.TranscriptRow.id == t.TurnRow.transcript_id)  # type: ignore[arg-type]
                .where(t.TurnRow.id.in_(shared))  # type: ignore[union-attr]
                .order_by(t.TranscriptRow.external_id, t.TurnRow.message_index)).all()
            loaded: dict[str, Any] = {}
            out = {}
            for turn_pk, transcript_id, index in turns:
                labels = self._submitted_cases(conn, turn_pk, transcript_id, index, loaded)
                out[gold_case_id(transcript_id, index)] = {a: c for a, (c, _, _) in labels.items() if c is not None}
            return out

    def gold_cases(self, *, split: str | None = None, status: str | None = None) -> list[GoldCase]:
        """The live gold cases (for hygiene checks), ordered by id."""
        return [GoldCase.model_validate_json(line)
                for line in self.iter_gold_lines(split=split, status=status)]  # type: ignore[attr-defined]

    def review_item_for(self, ref: str) -> ReviewItem | None:
        """The undecided item about a case, if any (escalated first)."""
        with self.read() as conn:
            row = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.ref == ref,
                                                             t.ReviewItemRow.status != "resolved")
                               .order_by((t.ReviewItemRow.status != "escalated"), t.ReviewItemRow.id)  # type: ignore[arg-type]
                               .limit(1)).first()
        return _review_item(row) if row else None

    # -- what annotators may see --------------------------------------------------------------------------

    def labels_visible_to(self, actor: str, transcript_id: str, message_index: int) -> list[core.LabelRecord]:
        """The labels of a decision point ``actor`` may see: reviewers and admins see all; an annotator sees
        their own, and the others' only once their own is submitted (annotators label blind)."""
        with self.read() as conn:
            role = core._require_user(conn, actor)
        labels = self.labels_for_turn(transcript_id, message_index)  # type: ignore[attr-defined]
        if role in REVIEWER_ROLES:
            return labels  # type: ignore[no-any-return]
        mine = next((r for r in labels if r.annotator == actor), None)
        if mine is not None and mine.status == "submitted":
            return labels  # type: ignore[no-any-return]
        return [mine] if mine is not None else []

    def returned_to(self, annotator: str, *, limit: int = 50) -> list[ReviewItem]:
        """Items a reviewer rejected and sent back to this annotator, newest first."""
        with self.read() as conn:
            rows = conn.execute(select(t.ReviewItemRow).where(t.ReviewItemRow.decision == "reject")
                                .order_by(t.ReviewItemRow.id.desc()).limit(limit * 10)).all()  # type: ignore[union-attr]
        items = [_review_item(r) for r in rows]
        return [i for i in items if annotator in i.payload.get("requeued", ())][:limit]


# Imported last: store.py imports this module at its top, so the store module is bound here once both exist.
from labeler import store as core  # noqa: E402
