"""The names of the synthetic-case transformations and the tag of synthetic cases: what a report breaks
results down by. A leaf module, so the report reads them without loading the synthesizer (``scorer.synthesize``
and its models: a tenth of ``toolgold score``'s start-up)."""

from __future__ import annotations

from typing import Final, Literal

SYNTHETIC: Final = "synthetic"
"""``provenance.source`` of every candidate, and the tag that tells real cases from synthetic ones."""

Transform = Literal["near_duplicate_tool", "missing_information", "toolkit_growth", "negative_branch",
                    "stale_context", "paraphrase", "tool_shaped_no_intent"]
ALL_TRANSFORMS: Final[tuple[Transform, ...]] = Transform.__args__  # type: ignore[attr-defined]

__all__ = ["ALL_TRANSFORMS", "SYNTHETIC", "Transform"]
