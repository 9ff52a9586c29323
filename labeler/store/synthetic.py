"""Synthetic candidates: proposing them into the labeling queue, and what still waits for a label.

A workflow above the transcripts aggregate: a candidate enters the queue as a transcript (``source:
synthetic``) carrying its provenance and proposed label (``labeler.candidates``), imported like any other,
so its id (parent, transformation, variant) is what keeps it from being proposed twice. Only reviewers and
admins propose. A candidate is labeled at its last decision point only (``transcripts`` makes no turn of the
earlier ones: they are the parent's, labeled there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, exists, select

from labeler.candidates import candidate_transcript
from labeler.store import tables as t
from labeler.store.common import REVIEWER_ROLES, require_role
from labeler.store.engine import Database
from labeler.store.staging import ImportItem
from labeler.store.transcripts import import_items
from scorer.synthesize import ALL_TRANSFORMS, SYNTHETIC, Candidate

PROPOSER_ROLES = REVIEWER_ROLES


@dataclass(frozen=True)
class Proposed:
    """One candidate in the store, for browsing."""

    id: str
    parent: str
    transform: str
    title: str
    labeled: bool
    """Its decision point has a submitted label (its gold case exists)."""


@dataclass(frozen=True)
class SyntheticCandidates:
    """The synthetic candidates in the store: how many, and how many still wait for a submitted label."""

    candidates: int
    waiting: int
    by_transform: dict[str, int]
    """Waiting candidates per transformation."""
    proposed: tuple[Proposed, ...] = ()
    """The first ones, in the order they were proposed."""


def require_proposer(db: Database, actor: str) -> str:
    """The actor's role, when it may propose synthetic cases; ``PermissionDenied`` otherwise."""
    with db.read() as conn:
        return require_role(conn, actor, PROPOSER_ROLES, "propose synthetic cases")


def propose_candidates(db: Database, candidates: Sequence[Candidate], *, actor: str) -> int:
    """Put ``candidates`` into the labeling queue in one transaction; returns how many were new (one already
    there with the same content is left alone; the same id with other content is refused, nothing written)."""
    require_proposer(db, actor)
    if not candidates:
        return 0
    items = [ImportItem(candidate_transcript(c), source=SYNTHETIC) for c in candidates]
    return import_items(db, items, actor=actor).transcripts_added


def synthetic_ids(db: Database) -> set[str]:
    """Ids of every candidate in the store, labeled or not."""
    with db.read() as conn:
        return set(conn.scalars(select(t.TranscriptRow.external_id).where(t.TranscriptRow.source == SYNTHETIC)))


def _transform_of(candidate_id: str) -> tuple[str, str]:
    parent, _, name = candidate_id.rpartition("~")
    name = name.split("+")[0]
    return parent, name if name in ALL_TRANSFORMS else "?"


def synthetic_candidates(db: Database, *, limit: int = 200) -> SyntheticCandidates:
    """Every candidate's state, counted in the database; the first ``limit`` listed."""
    tr = t.TranscriptRow
    labeled = exists(select(t.GoldCaseRow.id).where(and_(
        t.GoldCaseRow.conversation_id == tr.external_id, t.GoldCaseRow.kind == "turn",
        t.GoldCaseRow.turn == tr.n_messages)))
    q = select(tr.external_id, tr.title, labeled).where(tr.source == SYNTHETIC).order_by(tr.id)
    with db.read() as conn:
        rows = conn.execute(q).all()
    kinds: Counter[str] = Counter()
    listed = []
    for n, (case_id, title, done) in enumerate(rows):
        parent, transform = _transform_of(case_id)
        if not done:
            kinds[transform] += 1
        if n < limit:
            listed.append(Proposed(case_id, parent, transform, title, bool(done)))
    return SyntheticCandidates(candidates=len(rows), waiting=sum(kinds.values()),
                               by_transform=dict(sorted(kinds.items())), proposed=tuple(listed))


__all__ = ["PROPOSER_ROLES", "Proposed", "SyntheticCandidates", "propose_candidates", "require_proposer",
           "synthetic_candidates", "synthetic_ids"]
