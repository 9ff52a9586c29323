"""Reading a verdict from a reply: only the structured ``record_verdict`` tool input counts.

Text in the reply is never read for a verdict, so words in a transcript that talk the model into writing
"equivalent" somewhere decide nothing. Anything but one valid tool input (a refusal, text only, a missing
or malformed input, contradicting tool calls) is ``needs_review``, never a failure: a person decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from labeler.judge.prompts import TOOL_NAME, VERDICTS
from labeler.llm.anthropic_gateway import Reply
from scorer.results import JudgeVerdict

MAX_RATIONALE = 2000


@dataclass(frozen=True)
class ParsedVerdict:
    verdict: JudgeVerdict
    rationale: str = ""
    confidence: float | None = None
    problem: str | None = None
    """Why the reply gave no usable verdict (the verdict is then ``needs_review``)."""


def _unusable(problem: str) -> ParsedVerdict:
    return ParsedVerdict("needs_review", problem=problem)


def _check_input(data: Any) -> ParsedVerdict:
    if not isinstance(data, dict):
        return _unusable("the record_verdict input is not an object")
    verdict, rationale, confidence = data.get("verdict"), data.get("rationale"), data.get("confidence")
    if verdict not in VERDICTS:
        return _unusable(f"the record_verdict input has no valid verdict (got {str(verdict)[:40]!r})")
    if not isinstance(rationale, str):
        return _unusable("the record_verdict input has no rationale text")
    if (isinstance(confidence, bool) or not isinstance(confidence, int | float) or not math.isfinite(confidence)
            or not 0 <= confidence <= 1):
        return _unusable(f"the record_verdict confidence is not a number from 0 to 1 (got {str(confidence)[:40]!r})")
    return ParsedVerdict(verdict, rationale.strip()[:MAX_RATIONALE], float(confidence))


def parse_reply(reply: Reply) -> ParsedVerdict:
    """The verdict in ``reply``'s ``record_verdict`` tool input, or ``needs_review`` with the reason."""
    if reply.stop_reason == "refusal":
        return _unusable("the model declined to answer (stop_reason refusal)")
    uses = [u for u in reply.tool_uses if u.name == TOOL_NAME]
    if not uses:
        return _unusable("the reply has no record_verdict tool call" + (" (text only)" if reply.text else ""))
    parsed = [_check_input(u.input) for u in uses]
    bad = next((p for p in parsed if p.problem), None)
    if bad is not None:
        return bad
    if len({p.verdict for p in parsed}) > 1:
        return _unusable("the reply records contradicting verdicts")
    return parsed[0]


__all__ = ["ParsedVerdict", "parse_reply"]
