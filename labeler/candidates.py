"""A synthetic candidate as the labeling app holds it: a transcript that awaits the agent's reply, carrying the
candidate's provenance and the label it proposes, which is where an annotator starts.

The provenance rides in the transcript's metadata (``source: synthetic``, ``synthesis``: the transformation,
the parent case, the seed, what changed) and in the proposed label's tags, so the gold case an annotator
submits carries ``provenance.source: synthetic`` and the transformation's tag into every report.

A trajectory candidate (``negative_branch``: nothing required, the action forbidden) is labeled at its last
decision point, right after the negative check result: the proposal is "no tool call", which scores the
forbidden action (or any call) as ``unexpected_call`` there; ``toolgold synthesize -o`` keeps the exact
trajectory form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from scorer.model import Transcript
from scorer.transforms import SYNTHETIC

if TYPE_CHECKING:  # imported where used: the store imports this module (is_candidate) for every import
    from labeler.labels import LabelBody
    from scorer.synthesize import Candidate

PROPOSED_LABEL: Final = "proposed_label"
"""Transcript metadata key of the label an annotator starts from (``LabelBody`` JSON)."""


def proposed_body(candidate: Candidate) -> LabelBody:
    """The label draft an annotator starts from: the candidate's expected answer, tags and rationale."""
    from labeler.labels import LabelBody, RuleDraft

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


def is_candidate(transcript: Transcript) -> bool:
    return transcript.metadata.get("source") == SYNTHETIC and isinstance(transcript.metadata.get("synthesis"), dict)


def proposed_label(transcript: Transcript) -> LabelBody | None:
    """The label a synthetic transcript proposes (None for any other transcript, or an unreadable one)."""
    raw = transcript.metadata.get(PROPOSED_LABEL)
    if not isinstance(raw, dict):
        return None
    from labeler.labels import LabelBody

    try:
        return LabelBody.model_validate(raw)
    except ValueError:
        return None


__all__ = ["PROPOSED_LABEL", "candidate_transcript", "is_candidate", "proposed_body", "proposed_label"]
