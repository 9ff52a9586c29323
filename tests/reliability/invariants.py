"""The invariants a database must keep after any fault (a kill -9, a full disk, a held lock, bad input).

One checker for every fault test, on SQLite and PostgreSQL: ``assert_invariants(db)`` reads the database
afresh (its own connections, nothing cached from the process that was killed) and fails naming every broken
invariant at once:

- storage: SQLite ``PRAGMA integrity_check`` is ``ok`` and ``PRAGMA foreign_key_check`` is empty; on both
  backends every foreign key of the schema holds (an anti-join per key), and on PostgreSQL no constraint is
  left unvalidated;
- every submitted label has its gold case (the turn's or the trajectory's, or the imported gold it agrees
  with or disputes);
- audit count equals label versions: every version a label reached was audited once (``label.save``,
  ``label.submit``, ``label.requeue``; ``trajectory.save``, ``trajectory.submit``);
- no unsure or disagreeing label is approvable: ``approvable_cases`` offers none, and ``approve_cases``
  refuses each;
- no transcript is leased twice, and nobody holds two live leases;
- every judge question is pending or answered; an answered one keeps its verdict and reply; the questions
  and answers a test knew of before the fault (``judge_before``) are all still there, none dropped;
- no two open review items of one kind for one case.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import create_engine, select, text

from labeler.labels import gold_case_id, trajectory_case_id
from labeler.store import Store, StoreError, database_url, label_key
from labeler.store.tables import Base

LABEL_VERSION_ACTIONS = ("label.save", "label.submit", "label.requeue")
TRAJECTORY_VERSION_ACTIONS = ("trajectory.save", "trajectory.submit")


@dataclass(frozen=True)
class JudgeState:
    """The judge questions a database holds: key -> status (``pending`` | ``answered``)."""

    status: dict[str, str]

    @property
    def answered(self) -> set[str]:
        return {k for k, s in self.status.items() if s == "answered"}

    @property
    def pending(self) -> set[str]:
        return {k for k, s in self.status.items() if s == "pending"}


def judge_state(db: str | Path) -> JudgeState:
    engine = create_engine(database_url(str(db)))
    try:
        with engine.connect() as conn:
            return JudgeState(dict(conn.execute(text("SELECT key, status FROM judge_verdicts")).all()))
    finally:
        engine.dispose()


def problems(db: str | Path, *, judge_before: JudgeState | None = None) -> list[str]:
    """Every broken invariant of the database ``db`` (a path or URL), one line each; [] when all hold."""
    url = database_url(str(db))
    found: list[str] = []
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        con = sqlite3.connect(path)
        try:
            integrity = con.execute("PRAGMA integrity_check").fetchall()
            if integrity != [("ok",)]:
                found.append(f"integrity_check: {integrity[:5]}")
            fk = con.execute("PRAGMA foreign_key_check").fetchall()
            if fk:
                found.append(f"foreign_key_check: {fk[:5]}")
        finally:
            con.close()
        if found:
            return found  # a damaged file: the rest would only repeat it
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found += _foreign_keys(conn, postgres=not url.startswith("sqlite"))
            found += _labels(conn)
            found += _leases(conn)
            found += _judge(conn, judge_before)
            found += _review_items(conn)
    finally:
        engine.dispose()
    found += _approvable(url)
    return found


def assert_invariants(db: str | Path, *, judge_before: JudgeState | None = None) -> None:
    found = problems(db, judge_before=judge_before)
    assert not found, "broken invariants after the fault:\n" + "\n".join(found)


def _foreign_keys(conn, *, postgres: bool) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for table in Base.metadata.sorted_tables:
        for fk in table.foreign_key_constraints:
            cols = [c.name for c in fk.columns]
            ref = fk.referred_table.name
            ref_cols = [e.column.name for e in fk.elements]
            match = " AND ".join(f"p.{r} = c.{c}" for c, r in zip(cols, ref_cols, strict=True))
            present = " AND ".join(f"c.{c} IS NOT NULL" for c in cols)
            n = conn.execute(text(f"SELECT count(*) FROM {table.name} c WHERE {present} AND NOT EXISTS "
                                  f"(SELECT 1 FROM {ref} p WHERE {match})")).scalar_one()
            if n:
                found.append(f"{n} row(s) of {table.name}({', '.join(cols)}) point to no {ref} row")
    if postgres:
        unvalidated = conn.execute(text("SELECT conname FROM pg_constraint WHERE NOT convalidated")).scalars().all()
        if unvalidated:
            found.append(f"unvalidated constraints: {unvalidated}")
    return found


def _labels(conn) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    gold = {r.id: r for r in conn.execute(text("SELECT id, conversation_id, turn, kind FROM gold_cases"))}
    gold_at = {(r.conversation_id, r.turn) for r in gold.values() if r.kind == "turn"}
    audits = Counter(conn.execute(text(
        "SELECT entity_id, action FROM audit_log WHERE entity IN ('label', 'trajectory_label')")).all())
    rows = conn.execute(text(
        "SELECT tr.external_id, tu.message_index, l.annotator, l.status, l.version FROM labels l "
        "JOIN turns tu ON tu.id = l.turn_id JOIN transcripts tr ON tr.id = l.transcript_id")).all()
    for tid, index, annotator, status, version in rows:
        key = label_key(tid, index, annotator)
        if status == "submitted" and gold_case_id(tid, index) not in gold and (tid, index) not in gold_at:
            found.append(f"submitted label {key} has no gold case")
        audited = sum(audits[(key, a)] for a in LABEL_VERSION_ACTIONS)
        if audited != version:
            found.append(f"label {key} is at version {version} but {audited} version(s) were audited")
    rows = conn.execute(text(
        "SELECT tr.external_id, l.annotator, l.status, l.version FROM trajectory_labels l "
        "JOIN transcripts tr ON tr.id = l.transcript_id")).all()
    for tid, annotator, status, version in rows:
        key = f"{tid}#trajectory@{annotator}"
        if status == "submitted" and trajectory_case_id(tid) not in gold:
            found.append(f"submitted trajectory label {key} has no gold case")
        audited = sum(audits[(key, a)] for a in TRAJECTORY_VERSION_ACTIONS)
        if audited != version:
            found.append(f"trajectory label {key} is at version {version} but {audited} version(s) were audited")
    return found


def _leases(conn) -> list[str]:  # type: ignore[no-untyped-def]
    leases = Base.metadata.tables["leases"]
    rows = conn.execute(select(leases.c.transcript_id, leases.c.holder)).all()
    # Compared in SQL through the column's type: the stored form differs by backend (timestamptz, UTC DATETIME).
    live = conn.execute(select(leases.c.holder).where(leases.c.expires_at > datetime.now(UTC))).all()
    found = [f"transcript {pk} is leased {n} times" for pk, n in Counter(r.transcript_id for r in rows).items()
             if n > 1]
    found += [f"{holder} holds {n} live leases" for holder, n in Counter(r.holder for r in live).items() if n > 1]
    return found


def _judge(conn, before: JudgeState | None) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    rows = conn.execute(text("SELECT key, status, verdict, reply FROM judge_verdicts")).all()
    for key, status, verdict, reply in rows:
        if status not in ("pending", "answered"):
            found.append(f"judge question {key[:12]} is {status!r}")
        elif status == "answered" and (verdict is None or reply is None):
            found.append(f"judge question {key[:12]} is answered without its verdict or reply")
        elif status == "pending" and verdict is not None:
            found.append(f"judge question {key[:12]} is pending with a verdict")
    if before is not None:
        now = {r.key: r.status for r in rows}
        dropped = before.status.keys() - now.keys()
        if dropped:
            found.append(f"{len(dropped)} judge question(s) were dropped")
        lost = {k for k in before.answered if now.get(k) != "answered"}
        if lost:
            found.append(f"{len(lost)} judge answer(s) already paid for are no longer stored")
    return found


def _review_items(conn) -> list[str]:  # type: ignore[no-untyped-def]
    rows = conn.execute(text("SELECT kind, ref FROM review_items WHERE status = 'open' "
                             "AND kind IN ('unsure', 'disagreement')")).all()
    return [f"{n} open {kind} items for {ref}" for (kind, ref), n in Counter(map(tuple, rows)).items() if n > 1]


def _approvable(url: str) -> list[str]:
    """Cases whose submitted labels carry an unsure flag or disagree on the decision: never approvable."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT tr.external_id, tu.message_index, l.unsure, l.decision FROM labels l "
                "JOIN turns tu ON tu.id = l.turn_id JOIN transcripts tr ON tr.id = l.transcript_id "
                "WHERE l.status = 'submitted'")).all()
            submitted_gold = set(conn.execute(text("SELECT id FROM gold_cases WHERE status = 'submitted'"))
                                 .scalars())
            reviewer = conn.execute(text("SELECT name FROM users WHERE active = :t AND role IN "
                                         "('reviewer', 'admin') ORDER BY name LIMIT 1"), {"t": True}).scalar()
    finally:
        engine.dispose()
    decisions: dict[str, set[str | None]] = {}
    contested: set[str] = set()
    for tid, index, unsure, decision in rows:
        case_id = gold_case_id(tid, index)
        decisions.setdefault(case_id, set()).add(decision)
        if unsure:
            contested.add(case_id)
    contested |= {c for c, d in decisions.items() if len(d) > 1}
    if not contested:
        return []
    store = Store(url)
    try:
        found = [f"{c} is approvable although its labels are unsure or disagree"
                 for c in sorted(contested & set(store.approvable_cases()))]
        if reviewer is not None:
            for case_id in sorted(contested):
                if case_id not in submitted_gold:
                    continue
                try:
                    store.approve_cases([case_id], actor=reviewer, comment="invariant check")
                except StoreError:
                    continue
                found.append(f"approve_cases approved {case_id} although its labels are unsure or disagree")
    finally:
        store.close()
    return found


__all__ = ["JudgeState", "assert_invariants", "judge_state", "problems"]
