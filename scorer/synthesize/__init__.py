"""Adversarial cases on demand: deterministic transformations of approved gold into candidate cases.

Each transformation is a pure function, a gold case (and a seed) in, one ``Candidate`` out, or
``NotApplicable`` saying why not; ``propose`` runs them over a gold set. Candidates are not gold: the
labeler puts them in the labeling queue as drafts (``source: synthetic``), and an annotator's submit plus
review make them gold. The seed decides every choice (which value, which decoy, which extra tools), never
a candidate's id, so running again proposes nothing already proposed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator

from scorer.model import Frozen, GoldCase, Split
from scorer.synthesize.common import rng_for
from scorer.synthesize.decoy import near_duplicate_tool
from scorer.synthesize.growth import GROWTH_SIZES, ToolPool, toolkit_growth
from scorer.synthesize.missing import missing_information
from scorer.synthesize.model import (
    ALL_TRANSFORMS,
    CANDIDATE_FORMAT,
    JUDGE_TRANSFORMS,
    SYNTHETIC,
    TRANSFORM_DESCRIPTION,
    TRANSFORMS,
    Candidate,
    Generation,
    NotApplicable,
    Synthesis,
    Transform,
    candidate_id,
)
from scorer.synthesize.negative import negative_branch
from scorer.synthesize.rewrite import paraphrase, tool_shaped_no_intent
from scorer.synthesize.stale import stale_context

Maker = Callable[[GoldCase], Candidate]


class Skipped(Frozen):
    """A transformation that did not apply to a parent, and why."""

    parent: str
    transform: Transform
    variant: str = ""
    reason: str


class Proposal(Frozen):
    """What one run of ``propose`` made: new candidates, and what it could not make."""

    candidates: tuple[Candidate, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    already_proposed: int = 0
    """Candidates that exist already (the ``exclude`` ids), not made again."""


def is_synthetic(case: GoldCase) -> bool:
    return case.provenance.source == SYNTHETIC or SYNTHETIC in case.tags


def makers(transform: Transform, *, seed: int, pool: ToolPool | None = None) -> list[tuple[str, Maker]]:
    """``(variant, make)`` for one transformation (toolkit growth makes one per size)."""
    if transform == "toolkit_growth":
        grown = pool or ToolPool()
        return [(f"+{size}", lambda case, size=size: toolkit_growth(case, grown, size=size, seed=seed))  # type: ignore[misc]
                for size in GROWTH_SIZES]
    single: dict[Transform, Callable[..., Candidate]] = {
        "near_duplicate_tool": near_duplicate_tool, "missing_information": missing_information,
        "negative_branch": negative_branch, "stale_context": stale_context}
    make = single[transform]
    return [("", lambda case: make(case, seed=seed))]


def _lane(transform: Transform, variant: str, make: Maker,
          parents: list[GoldCase]) -> Iterator[tuple[Transform, str, GoldCase, Maker]]:
    for parent in parents:
        yield transform, variant, parent, make


def propose(cases: Iterable[GoldCase], *, transforms: Collection[Transform] = TRANSFORMS, seed: int = 0,
            n: int | None = None, split: Split | None = None, pool: ToolPool | None = None,
            exclude: Collection[str] = ()) -> Proposal:
    """Up to ``n`` new candidates from the approved, real cases among ``cases``.

    The transformations take turns (a mix, not the first transformation's all), each walking the parents
    in an order the seed shuffles. ``exclude`` holds the ids of candidates proposed before: they are not
    made again. ``split`` is the split the candidates get (default: the parent's). ``pool`` supplies the
    extra tools for toolkit growth (default: the tools of ``cases`` themselves, by source).
    """
    parents = sorted((c for c in cases if c.provenance.status == "approved" and not is_synthetic(c)),
                     key=lambda c: c.id)
    if pool is None:
        pool = ToolPool.of_cases(parents)
    order = list(parents)
    rng_for(seed, "near_duplicate_tool", "parent order").shuffle(order)
    excluded = set(exclude)
    lanes = [_lane(transform, variant, make, order)
             for transform in TRANSFORMS if transform in transforms
             for variant, make in makers(transform, seed=seed, pool=pool)]
    made: list[Candidate] = []
    skipped: list[Skipped] = []
    already = 0
    while lanes and (n is None or len(made) < n):
        for lane in list(lanes):
            if n is not None and len(made) >= n:
                break
            for transform, variant, parent, make in lane:
                if candidate_id(parent.id, transform, variant) in excluded:
                    already += 1
                    continue
                try:
                    candidate = make(parent)
                except NotApplicable as exc:
                    skipped.append(Skipped(parent=parent.id, transform=transform, variant=variant, reason=str(exc)))
                    continue
                if split is not None:
                    candidate = candidate.model_copy(update={"case": candidate.case.model_copy(update={"split": split})})
                made.append(candidate)
                break
            else:
                lanes.remove(lane)
    return Proposal(candidates=tuple(made), skipped=tuple(skipped), already_proposed=already)


__all__ = [
    "ALL_TRANSFORMS",
    "CANDIDATE_FORMAT",
    "GROWTH_SIZES",
    "JUDGE_TRANSFORMS",
    "SYNTHETIC",
    "TRANSFORMS",
    "TRANSFORM_DESCRIPTION",
    "Candidate",
    "Generation",
    "NotApplicable",
    "Proposal",
    "Skipped",
    "Synthesis",
    "ToolPool",
    "Transform",
    "candidate_id",
    "is_synthetic",
    "makers",
    "missing_information",
    "near_duplicate_tool",
    "negative_branch",
    "paraphrase",
    "propose",
    "stale_context",
    "tool_shaped_no_intent",
    "toolkit_growth",
]
