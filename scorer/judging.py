"""The seam for an LLM judge: the narrow question toolgold asks about a ``semantic`` argument.

The scorer never imports a model client. A judge is anything with ``judge_argument``; the Anthropic one
lives in its own module (the LLM-judge issue). Without a judge, semantic arguments stay ``needs_review``:
never silently passed or failed. A judge that cannot answer returns ``needs_review`` too.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from scorer.model import Frozen, Message
from scorer.results import JudgeVerdict


class ArgumentQuestion(Frozen):
    """Does ``actual`` capture the same constraint as the gold ``intent`` (and example ``expected``)?"""

    case_id: str
    tool: str
    arg: str
    intent: str
    expected: Any = None
    actual: Any = None
    context: tuple[Message, ...] = ()
    rationale: str = ""


class ArgumentVerdict(Frozen):
    verdict: JudgeVerdict
    reason: str = ""


@runtime_checkable
class Judge(Protocol):
    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        """Answer one question; ``equivalent`` passes the argument, ``not_equivalent`` fails it, and
        ``gold_wrong`` / ``ambiguous`` / ``needs_review`` leave the case for a person."""
        ...


__all__ = ["ArgumentQuestion", "ArgumentVerdict", "Judge"]
