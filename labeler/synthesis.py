"""``toolgold synthesize`` and the Gold set page's "propose N adversarial cases": propose candidates from the
store's approved gold (``scorer.synthesize``; the model-written ones through ``labeler.synthesis_llm``) and
hand them to the store, which queues them as drafts (``Store.propose_candidates``). No SQL here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final

from labeler.store import Store, StoreError, SyntheticCandidates
from labeler.store.synthetic import PROPOSER_ROLES
from scorer.model import GoldCase, Split
from scorer.synthesize import (
    JUDGE_TRANSFORMS,
    TRANSFORM_DESCRIPTION,
    TRANSFORMS,
    Proposal,
    ToolPool,
    Transform,
    propose,
)

PROPOSERS: Final = PROPOSER_ROLES


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
    store.require_proposer(actor)
    return actor


def approved_gold(store: Store) -> Iterator[GoldCase]:
    for line in store.iter_gold_lines(status="approved"):
        yield GoldCase.model_validate_json(line)


def _merged(first: Proposal, then: Proposal) -> Proposal:
    return Proposal(candidates=(*first.candidates, *then.candidates), skipped=(*first.skipped, *then.skipped),
                    already_proposed=first.already_proposed + then.already_proposed)


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
    exclude = store.synthetic_ids()
    ruled = [t for t in chosen if t in TRANSFORMS]
    pool = ToolPool.of_cases(approved)
    # The queue labels a candidate at one decision point, so a trajectory parent gives only its negative branch
    # there ("no tool call" right after the negative check); its other candidates are for -o. The rare
    # negative branches go first, so a small n does not crowd them out.
    groups: list[tuple[list[GoldCase], list[Transform]]] = [(parents, [t for t in ruled if t == "negative_branch"]),
              ([c for c in parents if c.kind == "turn"], [t for t in ruled if t != "negative_branch"])]
    proposal = Proposal()
    for group, kinds in groups:
        left = None if n is None else n - len(proposal.candidates)
        if kinds and (left is None or left > 0):
            proposal = _merged(proposal, propose(group, transforms=kinds, seed=seed, n=left, split=split, pool=pool,
                                                 exclude=exclude))
    left = None if n is None else n - len(proposal.candidates)
    if gateway is not None and model is not None and (left is None or left > 0):
        from labeler.synthesis_llm import propose_written

        proposal = _merged(proposal, propose_written(gateway, parents, written_kinds, model=model, seed=seed, n=left,
                                                     split=split, exclude=exclude))
    done = Enqueued(proposal, added=store.propose_candidates(proposal.candidates, actor=actor),
                    without_context=len(approved) - len(parents))
    user = store.get_user(actor)
    if user is not None and user.role == "admin" and proposal.candidates:
        known = {t.tag for t in store.tags()}
        for transform in sorted({c.synthesis.transform for c in proposal.candidates} - known):
            store.set_tag(transform, adversarial=True, description=TRANSFORM_DESCRIPTION[transform], actor=actor)
            done.tags_added.append(transform)
    return done


def waiting(store: Store, *, limit: int = 200) -> SyntheticCandidates:
    """The synthetic candidates in the store and how many wait for a label."""
    return store.synthetic_candidates(limit=limit)


__all__ = ["PROPOSERS", "Enqueued", "approved_gold", "require_proposer", "synthesize", "waiting"]
