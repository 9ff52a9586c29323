"""A synthetic candidate: a proposed gold case made from an approved one, with where it came from.

``toolgold.candidate/1`` is the saved form (``toolgold synthesize -o``). A candidate is not gold: it enters the
labeling queue as a draft, and becomes gold only when an annotator submits it and review passes. Its id is
the parent's id, the transformation and the variant (never the seed), so proposing the same transformation
of the same parent again gives the same id and the store keeps one candidate.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, model_validator

from scorer.errors import ToolgoldError
from scorer.model import Frozen, GoldCase
from scorer.transforms import ALL_TRANSFORMS, SYNTHETIC, Transform

CANDIDATE_FORMAT: Final = "toolgold.candidate/1"
JUDGE_TRANSFORMS: Final[tuple[Transform, ...]] = ("paraphrase", "tool_shaped_no_intent")
"""Written by the model behind the judge's gateway (only with a key, only when asked for)."""
TRANSFORMS: Final[tuple[Transform, ...]] = tuple(t for t in ALL_TRANSFORMS if t not in JUDGE_TRANSFORMS)
"""The deterministic ones: no API key, reproducible with a seed."""

TRANSFORM_DESCRIPTION: Final[dict[Transform, str]] = {
    "near_duplicate_tool": "a decoy tool with a similar name and description beside the expected one; "
                           "the expected call is unchanged",
    "missing_information": "the value an expected argument was grounded in is removed from the context; "
                           "the agent should ask (clarify), and inventing the value is fabricated_value",
    "toolkit_growth": "the same case with 5, 15 or 30 extra tools drawn from other sources",
    "negative_branch": "the check before an action comes back negative; the action is forbidden",
    "stale_context": "a later user turn switches the entity, so the expected argument changes to the new value",
    "paraphrase": "the user's last turn in other words, same intent (written by the judge's model)",
    "tool_shaped_no_intent": "the user's last turn rewritten to use a tool's words without asking for it "
                             "(a sarcastic aside, a complaint about something else); expected no_call "
                             "(written by the judge's model)",
}


class Generation(Frozen):
    """What a model-written candidate cost and which prompt wrote it."""

    model: str = Field(min_length=1)
    prompt_version: str = Field(min_length=1)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cost_usd: float | None = None
    """An estimate from list prices; None for a model family without a listed price."""


class Synthesis(Frozen):
    """How a candidate was made: the transformation, its parent case, the seed and what changed."""

    transform: Transform
    parent: str = Field(min_length=1)
    """The id of the approved gold case it was made from."""
    seed: int
    variant: str = ""
    """Tells apart the candidates one transformation makes of one parent (``+5``, ``+15``, ``+30``)."""
    change: str = Field(min_length=1)
    """What the transformation changed, in a sentence for the annotator."""
    generation: Generation | None = None
    """For the model-written transformations: the model, prompt version and cost."""


class Candidate(Frozen):
    """A proposed case (``format: toolgold.candidate/1``): ``case`` is what the annotator starts from."""

    format: Literal["toolgold.candidate/1"] = CANDIDATE_FORMAT
    id: str = Field(min_length=1)
    synthesis: Synthesis
    case: GoldCase

    @model_validator(mode="after")
    def _consistent(self) -> Candidate:
        expected = candidate_id(self.synthesis.parent, self.synthesis.transform, self.synthesis.variant)
        if self.id != expected:
            raise ValueError(f"id must be {expected!r} (parent, transformation and variant)")
        if self.case.id != self.id:
            raise ValueError(f"case.id must be the candidate's id {self.id!r}")
        if self.case.provenance.source != SYNTHETIC:
            raise ValueError(f"case.provenance.source must be {SYNTHETIC!r}")
        return self


def candidate_id(parent: str, transform: Transform, variant: str = "") -> str:
    """``<parent>~<transform>[<variant>]``: the dedupe key, independent of the seed."""
    return f"{parent}~{transform}{variant}"


class NotApplicable(ToolgoldError):
    """A transformation cannot be applied to this case (the message says why, naming the case)."""


__all__ = ["ALL_TRANSFORMS", "CANDIDATE_FORMAT", "JUDGE_TRANSFORMS", "SYNTHETIC", "TRANSFORMS", "TRANSFORM_DESCRIPTION",
           "Candidate", "Generation", "NotApplicable", "Synthesis", "Transform", "candidate_id"]
