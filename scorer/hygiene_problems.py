"""The problems ``scorer.hygiene`` reports: a pydantic model, so in a module of its own (``scorer.hygiene`` is
compiled by mypyc, and a model defined in a compiled module loses its field types: see ``scorer.native``)."""

from __future__ import annotations

from typing import Literal

from scorer.model import Frozen

ProblemCode = Literal["conflicting_duplicate", "conflicting_near_duplicate", "unknown_tool", "schema_violation",
                      "missing_required_value", "ungrounded_value"]


class HygieneProblem(Frozen):
    code: ProblemCode
    case_id: str
    message: str
    related: tuple[str, ...] = ()
    """The other cases involved (for duplicates)."""
    tool: str | None = None
    arg: str | None = None


__all__ = ["HygieneProblem", "ProblemCode"]
