"""The judge on the Anthropic Messages API, through ``AnthropicGateway`` (the only module importing the SDK).

``AnthropicJudge`` implements ``scorer.judging.Judge`` for direct use (``score(..., judge=...)``: one call
per question, no cache), and asks many stored questions at once with a bounded thread pool for the judge
step. The SDK retries 429/529/5xx/timeouts with backoff; what still fails comes back as a pending outcome
with the reason, so the caller keeps the question for ``toolgold judge`` instead of losing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from labeler.judge.pricing import estimate_cost
from labeler.judge.questions import semantic_question
from labeler.judge.verdicts import parse_reply
from labeler.llm.anthropic_gateway import AnthropicGateway, LLMUnavailable
from scorer.judging import ArgumentQuestion, ArgumentVerdict
from scorer.results import JudgeVerdict

DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class Outcome:
    """What asking one question gave. ``answered`` False: nothing usable came back (still pending, the
    reason in ``problem``). Answered with verdict ``needs_review``: a reply came but held no valid verdict."""

    answered: bool
    verdict: JudgeVerdict | None = None
    rationale: str = ""
    confidence: float | None = None
    problem: str | None = None
    reply: dict[str, Any] | None = field(default=None, repr=False)
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float | None = None
    cost_usd: float | None = None


class AnthropicJudge:
    """Asks the judge's questions of one model (stored requests carry their own model)."""

    def __init__(self, gateway: AnthropicGateway, model: str, *, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        self.gateway = gateway
        self.model = model
        self.concurrency = max(1, concurrency)

    def ask(self, request: dict[str, Any]) -> Outcome:
        """Send one prepared request (``Prompt.request``) and read the verdict from its tool input."""
        try:
            reply = self.gateway.create(**request)
        except LLMUnavailable as exc:
            return Outcome(answered=False, problem=exc.reason)
        parsed = parse_reply(reply)
        usage = reply.usage
        return Outcome(
            answered=True, verdict=parsed.verdict, rationale=parsed.rationale, confidence=parsed.confidence,
            problem=parsed.problem, reply=reply.raw, model=reply.model, input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens, latency_s=reply.latency_s,
            cost_usd=estimate_cost(str(request.get("model") or reply.model), usage.input_tokens,
                                   usage.output_tokens))

    def ask_many(self, requests: Iterable[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, Outcome]]:
        """``(key, outcome)`` for each ``(key, request)``, in completion order, with at most ``concurrency``
        requests in flight (the rest wait their turn, so a large backlog does not build up futures)."""
        todo = iter(requests)
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="judge") as pool:
            running: dict[Future[Outcome], str] = {}
            try:
                while True:
                    while len(running) < self.concurrency:
                        item = next(todo, None)
                        if item is None:
                            break
                        running[pool.submit(self.ask, item[1])] = item[0]
                    if not running:
                        return
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        yield running.pop(future), _outcome_of(future)
            finally:
                for future in running:
                    future.cancel()

    # -- scorer.judging.Judge ---------------------------------------------------------------------------

    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        outcome = self.ask(semantic_question(question).request(self.model))
        if not outcome.answered:
            return ArgumentVerdict(verdict="needs_review", reason=f"the judge could not answer: {outcome.problem}")
        if outcome.verdict == "needs_review" or outcome.verdict is None:
            return ArgumentVerdict(verdict="needs_review", reason=outcome.problem or "no usable verdict")
        return ArgumentVerdict(verdict=outcome.verdict, reason=outcome.rationale)


def _outcome_of(future: Future[Outcome]) -> Outcome:
    """The future's outcome; a question whose asking failed unexpectedly stays pending with the reason,
    so one bad reply never costs the answers that already arrived (they were paid for)."""
    try:
        return future.result()
    except Exception as exc:  # the other questions must go on; the reason is stored
        return Outcome(answered=False, problem=f"asking failed: {type(exc).__name__}")


__all__ = ["DEFAULT_CONCURRENCY", "AnthropicJudge", "Outcome"]
