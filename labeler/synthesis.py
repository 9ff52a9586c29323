"""Synthetic candidates into the labeling queue: each becomes a transcript that awaits the agent's reply, with
the proposed label attached, so an annotator starts from it, edits, submits; review then makes it gold.

The candidate's provenance rides in the transcript's metadata (``source: synthetic``, ``synthesis``: the
transformation, the parent case, the seed, what changed) and in the label's tags, so the gold case an
annotator submits carries ``provenance.source: synthetic`` and the transformation's tag into every report.

A trajectory candidate (``negative_branch``: nothing required, the action forbidden) is labeled at its last
decision point, right after the negative check result: the proposal is "no tool call", which scores the
forbidden action (or any call) as ``unexpected_call`` there; ``toolgold synthesize -o`` keeps the exact
trajectory form.

Only SQL-free code here: it goes through the store's public methods (``import_items``, ``list_transcripts``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from labeler.labels import LabelBody, RuleDraft, gold_case_id
from labeler.store import ImportItem, Store, StoreError
from scorer.model import GoldCase, Split, Transcript
from scorer.synthesize import (
    ALL_TRANSFORMS,
    JUDGE_TRANSFORMS,
    SYNTHETIC,
    TRANSFORM_DESCRIPTION,
    TRANSFORMS,
    Candidate,
    Proposal,
    ToolPool,
    Transform,
    propose,
)

PROPOSED_LABEL: Final = "proposed_label"
"""Transcript metadata key of the label an annotator starts from (``LabelBody`` JSON)."""
PROPOSERS: Final = ("reviewer", "admin")
MAX_LISTED = 1_000_000


def proposed_body(candidate: Candidate) -> LabelBody:
    """The label draft an annotator starts from: the candidate's expected answer, tags and rationale."""
    case = candidate.case
    common: dict[str, Any] = {"tags": case.tags, "rationale": case.rationale, "split": case.split,
                              "reference_time": case.reference_time}
    if case.kind == "trajectory" or case.expected.behavior == "no_call":
        return LabelBody(decision="no_call", **common)
    if case.expected.behavior == "clarify":
        return LabelBody(decision="clarify", **common)
    rules = {tool: {arg: RuleDraft.model_validate(rule.model_dump(exclude_defaults=True))
                    for arg, rule in args.items()} for tool, args in case.arg_rules.items()}
    required: dict[str, tuple[str, ...]] = {}
    for tool, extra in (case.required_args or {}).items():
        spec = case.tool(tool)
        required[tool] = tuple(dict.fromkeys((*(spec.required if spec else ()), *extra)))
    return LabelBody(decision="different", calls=case.expected.calls, arg_rules=rules, required_args=required,
                     alternatives=case.alternatives, **common)


def candidate_transcript(candidate: Candidate) -> Transcript:
    """The transcript the candidate is labeled in: its context, awaiting the agent's reply."""
    case = candidate.case
    return Transcript(
        id=candidate.id, messages=case.messages, tools=case.tools,
        metadata={"source": SYNTHETIC, "awaiting_reply": True, "synthesis": candidate.synthesis.model_dump(),
                  "candidate_kind": case.kind, PROPOSED_LABEL: proposed_body(candidate).to_json()})


def proposed_label(transcript: Transcript) -> LabelBody | None:
    """The label a synthetic transcript proposes (None for any other transcript, or an unreadable one)."""
    raw = transcript.metadata.get(PROPOSED_LABEL)
    if not isinstance(raw, dict):
        return None
    try:
        return LabelBody.model_validate(raw)
    except ValueError:
        return None


@dataclass
class Enqueued:
    """What one ``toolgold synthesize`` (or the page's button) did."""

    proposal: Proposal
    added: int = 0
    tags_added: list[str] = field(default_factory=list)
    without_context: int = 0
    """Approved cases left out as parents: they have no conversation (task-level trajectory gold)."""

    @property
    def by_transform(self) -> Counter[str]:
        return Counter(c.synthesis.transform for c in self.proposal.candidates)

    @property
    def summary(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.by_transform.items()))
        parts = [f"{self.added} candidates added to the labeling queue" + (f" ({kinds})" if kinds else "")]
        if self.proposal.already_proposed:
            parts.append(f"{self.proposal.already_proposed} proposed before")
        written = [c.synthesis.generation for c in self.proposal.candidates if c.synthesis.generation]
        if written:
            costs = [g.cost_usd for g in written]
            cost = (f"est. ${sum(c for c in costs if c is not None):.4f}" if all(c is not None for c in costs)
                    else "cost unknown for this model")
            parts.append(f"{len(written)} written by {written[0].model} ({cost})")
        if self.without_context:
            parts.append(f"{self.without_context} approved cases without a conversation left out")
        return "; ".join(parts)


def require_proposer(store: Store, actor: str | None) -> str:
    """Only reviewers and admins propose synthetic cases (they grow the set annotators then label)."""
    if not actor:
        raise StoreError("proposing synthetic cases needs --user NAME (a reviewer or admin), or TOOLGOLD_USER")
    user = store.get_user(actor)
    if user is None or not user.active:
        raise StoreError(f"{actor!r} is not an active user (toolgold users, or the Users & tags page)")
    if user.role not in PROPOSERS:
        raise StoreError(f"{actor} is an {user.role}; only a reviewer or admin proposes synthetic cases")
    return actor


def approved_gold(store: Store) -> Iterator[GoldCase]:
    for line in store.iter_gold_lines(status="approved"):
        yield GoldCase.model_validate_json(line)


def proposed_ids(store: Store) -> set[str]:
    """Ids of the candidates already in the store (labeled or not): each is proposed once."""
    return {t.id for t in store.list_transcripts(source=SYNTHETIC, limit=MAX_LISTED)}


def enqueue(store: Store, candidates: Sequence[Candidate], *, actor: str) -> int:
    """Put ``candidates`` into the labeling queue in one transaction; returns how many were new."""
    if not candidates:
        return 0
    result = store.import_items([ImportItem(candidate_transcript(c), source=SYNTHETIC) for c in candidates],
                                actor=actor)
    return result.transcripts_added


def synthesize(store: Store, *, actor: str, transforms: Iterable[Transform] = TRANSFORMS, n: int | None = None,
               seed: int = 0, split: Split | None = None, judge_model_flag: str | None = None) -> Enqueued:
    """Propose up to ``n`` candidates from the store's approved gold and queue them (the store part of
    ``toolgold synthesize``). The model-written transformations run only when named, through the judge's
    gateway (no key: ``MissingAPIKey`` before anything is written). The transformations' tags join the
    vocabulary as adversarial when an admin runs it."""
    require_proposer(store, actor)
    chosen = tuple(dict.fromkeys(transforms))
    written_kinds = [t for t in chosen if t in JUDGE_TRANSFORMS]
    gateway = model = None
    if written_kinds:
        from labeler.judge import config

        gateway = config.open_gateway()
        model, _ = config.judge_model(judge_model_flag, store.judge_model_setting())
    approved = list(approved_gold(store))
    # A task-level trajectory case (tau-bench's gold actions) has no conversation to label a candidate in.
    parents = [case for case in approved if case.messages]
    exclude = proposed_ids(store)
    ruled = [t for t in chosen if t in TRANSFORMS]
    proposal = propose(parents, transforms=ruled, seed=seed, n=n, split=split, pool=ToolPool.of_cases(approved),
                       exclude=exclude) if ruled else Proposal()
    left = None if n is None else n - len(proposal.candidates)
    if gateway is not None and model is not None and (left is None or left > 0):
        from labeler.synthesis_llm import propose_written

        written = propose_written(gateway, parents, written_kinds, model=model, seed=seed, n=left, split=split,
                                  exclude=exclude)
        proposal = Proposal(candidates=(*proposal.candidates, *written.candidates),
                            skipped=(*proposal.skipped, *written.skipped),
                            already_proposed=proposal.already_proposed + written.already_proposed)
    done = Enqueued(proposal, added=enqueue(store, proposal.candidates, actor=actor),
                    without_context=len(approved) - len(parents))
    user = store.get_user(actor)
    if user is not None and user.role == "admin" and proposal.candidates:
        known = {t.tag for t in store.tags()}
        for transform in sorted({c.synthesis.transform for c in proposal.candidates} - known):
            store.set_tag(transform, adversarial=True, description=TRANSFORM_DESCRIPTION[transform], actor=actor)
            done.tags_added.append(transform)
    return done


@dataclass(frozen=True)
class Proposed:
    """One candidate in the store, for browsing."""

    id: str
    transform: str
    title: str
    labeled: bool
    """Its last decision point (where the candidate's label goes) has a submitted label."""


@dataclass(frozen=True)
class Waiting:
    """Synthetic candidates in the store: how many, and how many still wait for a submitted label."""

    candidates: int
    waiting: int
    by_transform: dict[str, int]
    """Waiting candidates per transformation."""
    proposed: tuple[Proposed, ...] = ()


def _transform_of(candidate_id: str) -> str:
    name = candidate_id.rpartition("~")[2].split("+")[0]
    return name if name in ALL_TRANSFORMS else "?"


def waiting(store: Store, *, limit: int = MAX_LISTED) -> Waiting:
    """The synthetic candidates in the store (the first ``limit`` listed in ``proposed``)."""
    rows = store.list_transcripts(source=SYNTHETIC, limit=MAX_LISTED)
    proposed = []
    for r in rows:
        try:
            store.get_gold(gold_case_id(r.id, r.n_messages))
            labeled = True
        except StoreError:
            labeled = False
        proposed.append(Proposed(r.id, _transform_of(r.id), r.title, labeled))
    kinds = Counter(p.transform for p in proposed if not p.labeled)
    return Waiting(candidates=len(rows), waiting=sum(not p.labeled for p in proposed),
                   by_transform=dict(sorted(kinds.items())), proposed=tuple(proposed[:limit]))


__all__ = ["PROPOSED_LABEL", "Enqueued", "Proposed", "Waiting", "approved_gold", "candidate_transcript", "enqueue",
           "proposed_body", "proposed_ids", "proposed_label", "require_proposer", "synthesize", "waiting"]
