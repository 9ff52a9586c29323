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


class JudgeUsage(Frozen):
    """What the LLM judge did for a report: its questions, API calls, tokens and an estimated cost."""

    model: str
    prompt_versions: tuple[str, ...] = ()
    questions: int = 0
    """Distinct questions this scoring needed (semantic arguments and flagged mismatches)."""
    semantic_questions: int = 0
    mismatch_questions: int = 0
    cache_hits: int = 0
    """Questions answered from the verdict cache, with no API call."""
    api_calls: int = 0
    answered: int = 0
    needs_review: int = 0
    """Replies without a usable verdict (a refusal, no or malformed tool input): a person decides."""
    pending: int = 0
    """Questions still waiting (no key, or failing after retries); ``toolgold judge`` resumes them."""
    input_tokens: int = 0
    output_tokens: int = 0
    estimated_cost_usd: float | None = None
    """From a list-price table per model family; None when the model's family is not in it."""
    queued_for_review: int = 0
    not_queued_unknown_case: int = 0
    """Verdicts that needed a reviewer but whose gold case is not in the store (import it to queue them)."""
    skipped: str | None = None
    """Why the judge was not asked at all (e.g. no API key)."""


@runtime_checkable
class Judge(Protocol):
    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        """Answer one question; ``equivalent`` passes the argument, ``not_equivalent`` fails it, and
        ``gold_wrong`` / ``ambiguous`` / ``needs_review`` leave the case for a person."""
        ...


__all__ = ["ArgumentQuestion", "ArgumentVerdict", "Judge", "JudgeUsage"]
