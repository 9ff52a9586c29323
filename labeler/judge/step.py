"""The judge step: find what needs the judge, ask only what the cache lacks, queue what needs a person.

``toolgold score --judge`` runs it before scoring; ``toolgold judge`` resumes pending questions. Scoring
itself stays pure: the scorer gets a ``CachedJudge`` that only reads verdicts already in the store.

1. Score every (case, run) with a judge that answers from the cache and collects the semantic-argument
   questions it cannot answer; every flagged mismatch (``questions.is_flagged``) becomes a question too.
2. New questions are stored as ``pending`` with where they came from, then asked (bounded concurrency);
   each outcome is stored as it arrives, so an interruption loses nothing. Without a judge (no key) they
   stay pending with the reason.
3. Cases whose semantic questions were just answered are scored again for their mismatches.
4. Answered questions that need a person (or fall in the calibration sample) go to the reviewers' queue
   once per case, run and trial.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from labeler.judge.prompts import CURRENT
from labeler.judge.questions import Question, mismatch_question, run_refs, semantic_question
from labeler.store import REVIEW_KIND, NewQuestion, StoredVerdict
from scorer.api import score_case
from scorer.judging import ArgumentQuestion, ArgumentVerdict, JudgeUsage
from scorer.model import GoldCase, RunRecord

if TYPE_CHECKING:
    from labeler.judge.anthropic_judge import AnthropicJudge
    from labeler.store import Store

AUDIT_RATE: Final = 0.1
"""Share of confident verdicts (ones that need no person) still sent to review, so calibration sees every
kind of verdict, not only the doubtful ones. Chosen by the question's key: stable across re-scoring."""
ALWAYS_REVIEWED: Final[dict[str, frozenset[str]]] = {
    "semantic_argument": frozenset({"gold_wrong", "ambiguous", "needs_review"}),
    "mismatch": frozenset({"equivalent", "gold_wrong", "ambiguous", "needs_review"}),
}
WAITING: Final = "waiting for the judge (toolgold judge asks pending questions)"

Pairs = Callable[[], Iterable[tuple[GoldCase, Sequence[RunRecord]]]]
"""A fresh iteration over (case, its runs) each time it is called."""


def in_audit_sample(key: str, rate: float) -> bool:
    return int(key[:8], 16) / 0xFFFFFFFF < rate


def needs_review(kind: str, verdict: str | None, key: str, audit_rate: float) -> bool:
    return verdict in ALWAYS_REVIEWED.get(kind, frozenset()) or in_audit_sample(key, audit_rate)


class CachedJudge:
    """``scorer.judging.Judge`` over answered verdicts only: no API calls, safe to share with workers."""

    def __init__(self, model: str, answers: dict[str, tuple[str, str]]) -> None:
        self.model = model
        self.answers = answers

    def lookup(self, question: Question) -> tuple[str, tuple[str, str] | None]:
        key = question.key(self.model)
        return key, self.answers.get(key)

    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        _, hit = self.lookup(semantic_question(question))
        if hit is None:
            return ArgumentVerdict(verdict="needs_review", reason=WAITING)
        verdict, reason = hit
        return ArgumentVerdict(verdict=verdict, reason=reason)


class CollectingJudge(CachedJudge):
    """A ``CachedJudge`` that also collects the questions it could not answer, with where they came from."""

    def __init__(self, model: str, answers: dict[str, tuple[str, str]]) -> None:
        super().__init__(model, answers)
        self.refs: dict[str, Any] = {}
        self.seen: dict[str, Question] = {}
        self.misses: list[Question] = []

    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        asked = semantic_question(question, {**self.refs, "tool": question.tool, "argument": question.arg})
        key, hit = self.lookup(asked)
        self.seen.setdefault(key, asked)
        if hit is None:
            self.misses.append(asked)
        return super().judge_argument(question)


@dataclass
class Tally:
    """What one judge step did (becomes the report's ``judge`` section)."""

    semantic: set[str] = field(default_factory=set)
    mismatch: set[str] = field(default_factory=set)
    hits: set[str] = field(default_factory=set)
    api_calls: int = 0
    answered: int = 0
    needs_review: int = 0
    pending: set[str] = field(default_factory=set)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    queued: int = 0
    no_case: int = 0

    def usage(self, model: str, skipped: str | None) -> JudgeUsage:
        return JudgeUsage(
            model=model, prompt_versions=tuple(p.version for p in CURRENT.values()),
            questions=len(self.semantic) + len(self.mismatch), semantic_questions=len(self.semantic),
            mismatch_questions=len(self.mismatch), cache_hits=len(self.hits), api_calls=self.api_calls,
            answered=self.answered, needs_review=self.needs_review, pending=len(self.pending),
            input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            estimated_cost_usd=None if self.cost_usd is None else round(self.cost_usd, 6),
            queued_for_review=self.queued, not_queued_unknown_case=self.no_case, skipped=skipped)


class JudgeStep:
    """One judge step against one store and model. ``asker`` None: nothing is sent (``skipped`` says why)."""

    def __init__(self, store: Store, model: str, asker: AnthropicJudge | None, *, skipped: str | None = None,
                 audit_rate: float = AUDIT_RATE, on_answer: Callable[[], None] | None = None) -> None:
        self.store = store
        self.model = model
        self.asker = asker
        self.skipped = skipped if asker is None else None
        self.audit_rate = audit_rate
        self.on_answer = on_answer
        self.answers = store.judge_answers(model)
        self.tally = Tally()

    # -- before scoring -------------------------------------------------------------------------------------

    def run(self, pairs: Pairs) -> JudgeUsage:
        """Judge what scoring ``pairs`` needs; returns the report's ``judge`` section."""
        waiting_cases = self._collect(pairs(), only=None)
        if waiting_cases and self.asker is not None:
            # Their semantic verdicts may have changed the results: look at their mismatches now.
            self._collect((p for p in pairs() if p[0].id in waiting_cases), only=waiting_cases)
        self.queue_reviews()
        return self.tally.usage(self.model, self.skipped)

    def scoring_judge(self) -> CachedJudge:
        """The judge to score with: the cache as it stands after this step."""
        return CachedJudge(self.model, self.answers)

    def _collect(self, pairs: Iterable[tuple[GoldCase, Sequence[RunRecord]]], only: set[str] | None) -> set[str]:
        """Score, ask the semantic questions, collect and ask the mismatch questions; return the ids of cases
        whose results waited on a semantic verdict."""
        collector = CollectingJudge(self.model, self.answers)
        mismatches: list[Question] = []
        waiting: set[str] = set()
        for case, runs in pairs:
            for run in sorted(runs, key=lambda r: r.trial):
                refs = run_refs(case, run)
                collector.refs = refs
                before = len(collector.misses)
                result = score_case(case, run, judge=collector)
                if len(collector.misses) > before:
                    waiting.add(case.id)
                    continue
                asked = mismatch_question(case, run, result, refs)
                if asked is not None:
                    mismatches.append(asked)
        if only is None:
            for key in collector.seen:
                self._count("semantic_argument", key)
            self._ask(collector.misses)
        self._ask_new(mismatches)
        return waiting

    def _count(self, kind: str, key: str) -> None:
        (self.tally.semantic if kind == "semantic_argument" else self.tally.mismatch).add(key)
        if key in self.answers:
            self.tally.hits.add(key)

    def _ask_new(self, questions: list[Question]) -> None:
        for q in questions:
            self._count(q.kind, q.key(self.model))
        self._ask(questions)

    def _ask(self, questions: list[Question]) -> None:
        """Remember every use of the questions, and ask those without an answer."""
        if not questions:
            return
        self.store.remember_judge_questions([NewQuestion(
            key=q.key(self.model), kind=q.kind, model=self.model, prompt_version=q.prompt.version, inputs=q.inputs,
            request=q.request(self.model), refs=q.refs, ref_hash=q.ref_hash) for q in questions])
        keys = {q.key(self.model) for q in questions} - self.answers.keys()
        if not keys:
            return
        if self.asker is None:
            self.store.note_judge_skipped(keys, self.skipped or "the judge was not run")
            self.tally.pending |= keys
            return
        pending = self.store.pending_judge_questions(keys=keys)
        self.ask_pending([(p.key, dict(p.request)) for p in pending])

    # -- asking -------------------------------------------------------------------------------------------

    def ask_pending(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Ask stored pending questions and store each outcome as it arrives."""
        if self.asker is None:
            self.tally.pending |= {k for k, _ in requests}
            return
        for key, outcome in self.asker.ask_many(requests):
            self.tally.api_calls += 1
            self.store.record_judge_outcome(key, outcome)
            if not outcome.answered:
                self.tally.pending.add(key)
            else:
                self.tally.pending.discard(key)
                self.tally.answered += 1
                self.tally.needs_review += outcome.verdict == "needs_review"
                self.tally.input_tokens += outcome.input_tokens
                self.tally.output_tokens += outcome.output_tokens
                if outcome.cost_usd is None or self.tally.cost_usd is None:
                    self.tally.cost_usd = None
                else:
                    self.tally.cost_usd += outcome.cost_usd
                reason = outcome.rationale if outcome.verdict != "needs_review" else (outcome.problem or "")
                self.answers[key] = (outcome.verdict or "needs_review", reason)
            if self.on_answer is not None:
                self.on_answer()

    def resume(self, *, model: str | None = None, limit: int | None = None) -> JudgeUsage:
        """``toolgold judge``: ask pending questions (oldest first), then queue what needs review."""
        pending = self.store.pending_judge_questions(model=model, limit=limit)
        for p in pending:
            (self.tally.semantic if p.kind == "semantic_argument" else self.tally.mismatch).add(p.key)
        self.ask_pending([(p.key, dict(p.request)) for p in pending])
        self.queue_reviews()
        return self.tally.usage(model or self.model, self.skipped)

    # -- the reviewers' queue ---------------------------------------------------------------------------

    def queue_reviews(self) -> None:
        """Send answered questions that need a person (or are sampled for calibration) to the review queue,
        once per use; record the rest as not needing review."""
        known: dict[str, bool] = {}
        for use, verdict in self.store.judge_uses_to_queue():
            if not needs_review(use.kind, verdict.verdict, verdict.key, self.audit_rate):
                self.store.set_judge_use_state(use.verdict_key, use.ref_hash, "not_needed")
                continue
            if use.case_id not in known:
                known[use.case_id] = self.store.gold_case_known(use.case_id)
            if not known[use.case_id]:
                self.tally.no_case += 1
                self.store.set_judge_use_state(use.verdict_key, use.ref_hash, "no_case")
                continue
            item = self.store.enqueue_review(REVIEW_KIND, use.case_id, review_payload(use.refs, verdict),
                                             actor="judge")
            self.tally.queued += 1
            self.store.set_judge_use_state(use.verdict_key, use.ref_hash, "queued", item.id)


def review_payload(refs: Any, verdict: StoredVerdict) -> dict[str, Any]:
    """What the reviewer needs to decide, in the review queue's ``judge_mismatch`` shape (version, run,
    the agent's answer as ``actual``, the verdict and its rationale) plus the judge's own record."""
    payload = {**dict(refs), "question": verdict.kind, "judge_key": verdict.key, "verdict": verdict.verdict,
               "rationale": verdict.rationale or verdict.problem or "", "confidence": verdict.confidence,
               "model": verdict.model, "prompt_version": verdict.prompt_version}
    if verdict.verdict not in ALWAYS_REVIEWED.get(verdict.kind, frozenset()):
        payload["calibration_sample"] = True
    return payload


__all__ = ["ALWAYS_REVIEWED", "AUDIT_RATE", "CachedJudge", "CollectingJudge", "JudgeStep", "Pairs", "Tally",
           "in_audit_sample", "needs_review", "review_payload"]
