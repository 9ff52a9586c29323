"""Gold versions: immutable, content-hashed snapshots of one split.

A version lists ``(case id, blob hash)`` pairs; a blob is a case's canonical line with
``provenance.gold_version`` null, stored once however many versions share it. Exporting a version stamps
its id into each line, and the bytes are checked against the content hash recorded at freeze time, so a
frozen version's export never changes, or fails loudly if the store was tampered with.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import Connection, func, insert, select

from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, REVIEWER_ROLES, audit, blob, put_gold, require_role, stamp
from labeler.store.engine import CHUNK, Database, StoreError, now_iso
from scorer import canonical
from scorer.formats import dumps_record
from scorer.hygiene import duplicate_problems
from scorer.model import GoldCase

SPLITS: Final = ("regression", "rolling")


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


def version_id(split: str, number: int) -> str:
    return f"{split}-v{number}"


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise StoreError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")


def _version(row: Any) -> GoldVersion:
    return GoldVersion(row.id, row.split, row.number, row.parent_id, row.content_hash, row.n_cases,
                       row.created_at, row.created_by, row.note, json.loads(row.provenance))


# -- gold versions ----------------------------------------------------------------------------

def freeze(db: Database, split: str, *, actor: str, note: str = "") -> GoldVersion:
    """Snapshot the approved gold cases of ``split`` as a new immutable version (reviewers and admins).

    Refused when there is nothing approved, or when nothing changed since the split's latest version.
    """
    _check_split(split)
    with db.write() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "freeze a gold version")
        rows = conn.execute(select(t.GoldCaseRow.id, GOLD_BODY).where(
            t.GoldCaseRow.split == split, t.GoldCaseRow.status == "approved")).all()
        if not rows:
            raise StoreError(f"there are no approved {split} gold cases to freeze (approve cases on the "
                             "Review page first)")
        _refuse_conflicting(conn, split, rows)
        blobs = {r.id: blob(r.body) for r in rows}
        latest = _latest_version(conn, split)
        if latest is not None and _version_hashes(conn, latest.id) == {k: h for k, (h, _) in blobs.items()}:
            raise StoreError(f"nothing changed since {latest.id}: its {latest.n_cases} cases are the "
                             f"approved {split} gold set")
        return _write_version(conn, split, blobs, parent=latest.id if latest else None, actor=actor,
                              note=note, provenance={"made_by": "freeze"})


EXACT_ONLY: Final = 1.01
"""A similarity threshold no pair reaches: only exact duplicates (same context) count when freezing."""


def _refuse_conflicting(conn: Connection, split: str, approved: Sequence[Any]) -> None:
    """A version must not hold two gold cases for one decision point, nor two cases with the same context
    that expect different answers (``scorer.hygiene``'s exact conflicting duplicates)."""
    per_turn = conn.execute(
        select(t.GoldCaseRow.conversation_id, t.GoldCaseRow.turn, func.count())
        .where(t.GoldCaseRow.split == split, t.GoldCaseRow.kind == "turn", t.GoldCaseRow.status != "rejected",
               t.GoldCaseRow.conversation_id.is_not(None), t.GoldCaseRow.turn.is_not(None))
        .group_by(t.GoldCaseRow.conversation_id, t.GoldCaseRow.turn).having(func.count() > 1)).all()
    found = []
    for conversation, turn, _ in per_turn:
        ids = sorted(conn.scalars(select(t.GoldCaseRow.id).where(
            t.GoldCaseRow.conversation_id == conversation, t.GoldCaseRow.turn == turn,
            t.GoldCaseRow.kind == "turn", t.GoldCaseRow.status != "rejected")))
        found.append(f"{' and '.join(ids)} are two gold cases for one decision point ({conversation}, turn {turn})")
    cases = (GoldCase.model_validate_json(r.body) for r in approved)  # each read, grouped and let go
    found += [f"{p.case_id}: {p.message}" for p in duplicate_problems(cases, threshold=EXACT_ONLY)]
    if found:
        raise StoreError(f"not frozen: {len(found)} conflicting gold case(s); keep one of each (Gold hygiene, "
                         "Review) and freeze again: " + "; ".join(found))


def derive_version(db: Database, parent_version_id: str, changed: Sequence[GoldCase], *, actor: str, note: str,
                   provenance: Mapping[str, Any]) -> GoldVersion:
    """A new version of the parent's split: the parent's cases with ``changed`` replacing (same id) or
    joining them. The parent stays as it was. The live gold case is updated too when it still reads as in
    the parent (so the next freeze keeps the change); a live case edited since is left alone and named
    in the version's provenance (``live_not_updated``)."""
    with db.write() as conn:
        return derive_version_in(conn, parent_version_id, changed, actor=actor, note=note, provenance=provenance)


def derive_version_in(conn: Connection, parent_version_id: str, changed: Sequence[GoldCase], *, actor: str,
                      note: str, provenance: Mapping[str, Any]) -> GoldVersion:
    """``derive_version`` inside the caller's transaction (a decision that derives a version and records
    itself commits both or neither)."""
    if not changed:
        raise StoreError("derive_version needs at least one changed case")
    require_role(conn, actor, REVIEWER_ROLES, "create a gold version")
    parent = _version_row(conn, parent_version_id)
    wrong = sorted(c.id for c in changed if c.split != parent.split)
    if wrong:
        raise StoreError(f"cases {', '.join(wrong)} are not in the {parent.split} split of "
                         f"{parent.id}")
    ids = [c.id for c in changed]
    if len(set(ids)) != len(ids):
        raise StoreError("derive_version got the same case id twice")
    base = _version_hashes(conn, parent.id)
    bodies = dict(conn.execute(select(t.GoldBlobRow.hash, t.GoldBlobRow.body).where(
        t.GoldBlobRow.hash.in_([base[i] for i in ids if i in base]))).all())
    blobs: dict[str, tuple[str, str | None]] = {k: (h, None) for k, h in base.items()}
    for case in changed:
        blobs[case.id] = blob(dumps_record(case))
    if {k: h for k, (h, _) in blobs.items()} == base:
        raise StoreError(f"the changed cases are the same as in {parent.id}: nothing to derive")
    skipped = _update_live(conn, changed, {i: bodies[base[i]] for i in ids if i in base}, actor)
    extra = {"made_by": "derive", **dict(provenance)}
    if skipped:
        extra["live_not_updated"] = skipped
    return _write_version(conn, parent.split, blobs, parent=parent.id, actor=actor, note=note,
                          provenance=extra)


def _update_live(conn: Connection, changed: Sequence[GoldCase], parent_bodies: dict[str, str],
                 actor: str) -> list[str]:
    """Write derived cases into the live gold set where the live case still reads as in the parent version
    (or is missing); return the ids left alone because someone changed them since."""
    skipped = []
    for case in changed:
        live = conn.execute(select(GOLD_BODY).where(t.GoldCaseRow.id == case.id)).first()
        if live is not None and case.id in parent_bodies and blob(live.body)[1] != parent_bodies[case.id]:
            skipped.append(case.id)
            continue
        put_gold(conn, case, actor=actor, action="gold.derive",
                 before=None if live is None else {"content_hash": canonical.content_hash(
                     json.loads(live.body))})
    return skipped


def _write_version(conn: Connection, split: str, blobs: Mapping[str, tuple[str, str | None]], *,
                   parent: str | None, actor: str, note: str, provenance: Mapping[str, Any]) -> GoldVersion:
    number = (conn.scalar(select(func.max(t.GoldVersionRow.number)).where(t.GoldVersionRow.split == split))
              or 0) + 1
    vid = version_id(split, number)
    order = sorted(blobs)  # code point order, the same on every backend
    known = {h: b for h, b in conn.execute(select(t.GoldBlobRow.hash, t.GoldBlobRow.body).where(
        t.GoldBlobRow.hash.in_({h for h, _ in blobs.values()}))).all()}
    fresh = {h: b for h, b in blobs.values() if h not in known and b is not None}
    for start in range(0, len(fresh), CHUNK):
        conn.execute(insert(t.GoldBlobRow), [{"hash": h, "body": b}
                                             for h, b in list(fresh.items())[start:start + CHUNK]])
    digest = hashlib.sha256()
    for case_id in order:
        h, body = blobs[case_id]
        digest.update((stamp(body if body is not None else known[h], vid) + "\n").encode("utf-8"))
    stamped_at = now_iso()
    content_hash = digest.hexdigest()
    row = {"id": vid, "split": split, "number": number, "parent_id": parent, "content_hash": content_hash,
           "n_cases": len(order), "created_at": stamped_at, "created_by": actor, "note": note,
           "provenance": canonical.dumps_stored(dict(provenance))}
    conn.execute(insert(t.GoldVersionRow).values(**row))
    links = [{"version_id": vid, "case_id": c, "position": n, "blob_hash": blobs[c][0]}
             for n, c in enumerate(order)]
    for start in range(0, len(links), CHUNK):
        conn.execute(insert(t.GoldVersionCaseRow), links[start:start + CHUNK])
    audit(conn, actor=actor, action="version.create", entity="gold_version", entity_id=vid,
          after={"split": split, "parent": parent, "content_hash": content_hash,
                 "n_cases": len(order), "provenance": dict(provenance)}, note=note or None)
    return GoldVersion(vid, split, number, parent, content_hash, len(order), stamped_at, actor, note,
                       dict(provenance))


def _latest_version(conn: Connection, split: str) -> GoldVersion | None:
    row = conn.execute(select(t.GoldVersionRow).where(t.GoldVersionRow.split == split)
                       .order_by(t.GoldVersionRow.number.desc()).limit(1)).first()
    return _version(row) if row else None


def _version_row(conn: Connection, vid: str) -> Any:
    row = conn.execute(select(t.GoldVersionRow).where(t.GoldVersionRow.id == vid)).first()
    if row is None:
        raise StoreError(f"no gold version {vid!r} (toolgold versions lists them)")
    return row


def _version_hashes(conn: Connection, vid: str) -> dict[str, str]:
    return dict(conn.execute(select(t.GoldVersionCaseRow.case_id, t.GoldVersionCaseRow.blob_hash)
                             .where(t.GoldVersionCaseRow.version_id == vid)).all())


def list_versions(db: Database, split: str | None = None) -> list[GoldVersion]:
    """Every version, newest first within each split."""
    q = select(t.GoldVersionRow).order_by(t.GoldVersionRow.split, t.GoldVersionRow.number.desc())
    if split:
        q = q.where(t.GoldVersionRow.split == split)
    with db.read() as conn:
        return [_version(r) for r in conn.execute(q)]


def get_version(db: Database, vid: str) -> GoldVersion:
    with db.read() as conn:
        return _version(_version_row(conn, vid))


def latest_version(db: Database, split: str) -> GoldVersion | None:
    _check_split(split)
    with db.read() as conn:
        return _latest_version(conn, split)


def iter_version_lines(db: Database, vid: str, *, actor: str, batch: int = 2000) -> Iterator[str]:
    """The version's canonical lines ordered by case id, streamed (reviewers and admins: the regression
    split is held out). The bytes are checked against the version's content hash as they go; a mismatch
    raises ``StoreError`` after the last line."""
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "export a frozen gold version")
        expected = _version_row(conn, vid).content_hash
    q = (select(t.GoldBlobRow.body)
         .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)
         .where(t.GoldVersionCaseRow.version_id == vid).order_by(t.GoldVersionCaseRow.position))
    digest = hashlib.sha256()
    with db.engine.connect() as conn:
        for (body,) in conn.execution_options(stream_results=True, yield_per=batch).execute(q):
            line = stamp(body, vid)
            digest.update((line + "\n").encode("utf-8"))
            yield line
    if digest.hexdigest() != expected:
        raise StoreError(f"the export of {vid} does not match its content hash {expected[:12]}…: the "
                         "stored version was altered outside toolgold")


def version_cases(db: Database, vid: str, *, actor: str) -> list[GoldCase]:
    """The version's cases as domain objects (each stamped with the version id)."""
    return [GoldCase.model_validate_json(line) for line in iter_version_lines(db, vid, actor=actor)]


def version_case(db: Database, vid: str, case_id: str, *, actor: str) -> GoldCase:
    """One case as frozen in a version."""
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "read a frozen gold version")
        _version_row(conn, vid)
        body = conn.scalar(
            select(t.GoldBlobRow.body)
            .join(t.GoldVersionCaseRow, t.GoldVersionCaseRow.blob_hash == t.GoldBlobRow.hash)
            .where(t.GoldVersionCaseRow.version_id == vid, t.GoldVersionCaseRow.case_id == case_id))
    if body is None:
        raise StoreError(f"{vid} has no case {case_id!r}")
    return GoldCase.model_validate_json(stamp(body, vid))


def diff_versions(db: Database, a: str, b: str) -> VersionDiff:
    """Cases added, removed and changed from version ``a`` to version ``b`` (ids, sorted)."""
    with db.read() as conn:
        _version_row(conn, a)
        _version_row(conn, b)
        old, new = _version_hashes(conn, a), _version_hashes(conn, b)
    return VersionDiff(a, b, added=tuple(sorted(new.keys() - old.keys())),
                       removed=tuple(sorted(old.keys() - new.keys())),
                       changed=tuple(sorted(k for k in old.keys() & new.keys() if old[k] != new[k])))


def note_export(db: Database, vid: str | Sequence[str], *, actor: str, target: str) -> None:
    """Record in the audit log that ``actor`` exported a version, or several at once (``export --hf``) in one
    transaction: held-out data leaves the store, and either every version of the export is recorded or none."""
    with db.write() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "export a frozen gold version")
        for one in [vid] if isinstance(vid, str) else vid:
            version = _version_row(conn, one)
            audit(conn, actor=actor, action="version.export", entity="gold_version", entity_id=one,
                  after={"content_hash": version.content_hash, "target": target})


__all__ = ["SPLITS", "GoldVersion", "VersionDiff", "derive_version", "derive_version_in", "diff_versions", "freeze", "get_version",
           "iter_version_lines", "latest_version", "list_versions", "note_export", "stamp", "version_case",
           "version_cases", "version_id"]
