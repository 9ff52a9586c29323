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

from sqlalchemy import Connection, delete, func, insert, select, update
from sqlmodel import SQLModel

from labeler import tables as t
from scorer import canonical
from scorer.formats import dumps_record
from scorer.model import GoldCase

SPLITS: Final = ("regression", "rolling")
REVIEW_KINDS: Final = ("disagreement", "unsure", "judge_mismatch")
REVIEWER_ROLES: Final = ("reviewer", "admin")
CHUNK: Final = 500

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


# Imported last: store.py imports this module at its top, so the store module is bound here once both exist.
from labeler import store as core  # noqa: E402
