"""What the judge is asked: the inputs of each question, which mismatches qualify, and the cache key.

The inputs are exactly what the prompt shows (after the same truncation), so the cache key, a hash of
(question kind, inputs, model, prompt version), changes whenever what the model would see changes, and
two cases that would show the model the same thing share one verdict. Where a question came from (case,
run, trial, gold version) is kept apart in ``refs``: it is not part of the key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from labeler.judge.prompts import CURRENT, Prompt, QuestionKind
from scorer import canonical
from scorer.codes import ErrorCode
from scorer.judging import ArgumentQuestion
from scorer.model import Answer, GoldCase, Message, RunRecord
from scorer.results import CaseResult

MAX_MESSAGES: Final = 40
"""Messages of the conversation shown (the latest ones; the count of earlier ones is stated)."""
MAX_CHARS: Final = 4000
"""Characters shown of one message's content or one tool result."""

MISMATCH_CODES: Final = frozenset({
    ErrorCode.WRONG_TOOL, ErrorCode.UNEXPECTED_CALL, ErrorCode.CALLED_INSTEAD_OF_ASKING, ErrorCode.MISSING_CALL,
    ErrorCode.WRONG_CALL_COUNT, ErrorCode.WRONG_ARG_VALUE,
})
"""Failures that may be a legitimate alternative the gold did not anticipate. A case is flagged only when
every error is one of these: a schema violation, a hallucinated parameter, an invented or ungrounded value
is a defect whatever else the agent did."""


@dataclass(frozen=True)
class Question:
    """One question for the judge. ``inputs`` is what the prompt shows; ``refs`` where it came from."""

    kind: QuestionKind
    inputs: dict[str, Any]
    refs: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def prompt(self) -> Prompt:
        return CURRENT[self.kind]

    def key(self, model: str) -> str:
        return question_key(self.kind, self.inputs, model, self.prompt.version)

    def request(self, model: str) -> dict[str, Any]:
        return self.prompt.request(self.inputs, model)

    @property
    def ref_hash(self) -> str:
        return canonical.content_hash(self.refs)


def question_key(kind: str, inputs: dict[str, Any], model: str, prompt_version: str) -> str:
    """The verdict cache key: sha256 of the canonical JSON of (kind, inputs, model, prompt version)."""
    body = canonical.dumps({"kind": kind, "inputs": inputs, "model": model, "prompt_version": prompt_version})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS] + f" …[{len(text) - MAX_CHARS} more characters not shown]"


def conversation(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages as plain JSON for the data block, the latest ``MAX_MESSAGES``, long texts clipped."""
    shown = list(messages[-MAX_MESSAGES:])
    out: list[dict[str, Any]] = []
    if len(messages) > len(shown):
        out.append({"omitted_earlier_messages": len(messages) - len(shown)})
    for m in shown:
        item: dict[str, Any] = {"role": m.role}
        if m.content is not None:
            item["content"] = _clip(m.content)
        if m.tool_calls:
            item["tool_calls"] = [{"id": c.id, "name": c.function.name,
                                   "arguments": _clip(c.function.arguments)} for c in m.tool_calls]
        if m.tool_call_id is not None:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def semantic_question(q: ArgumentQuestion, refs: dict[str, Any] | None = None) -> Question:
    """The semantic-argument question the scorer asks through ``scorer.judging.Judge``."""
    return Question("semantic_argument", canonical.normalize({
        "tool": q.tool, "argument": q.arg, "intent": q.intent, "gold_example": q.expected, "actual": q.actual,
        "gold_rationale": q.rationale, "conversation": conversation(q.context),
    }), dict(refs or {}))


def is_flagged(result: CaseResult) -> bool:
    """A failed turn result whose every error may be a legitimate alternative."""
    return (result.kind == "turn" and result.status == "fail" and bool(result.errors)
            and all(e.code in MISMATCH_CODES for e in result.errors))


def _answer(answer: Answer) -> dict[str, Any]:
    out: dict[str, Any] = {"behavior": answer.behavior,
                           "calls": [{"name": c.name, "arguments": c.arguments} for c in answer.calls]}
    if answer.tool_only:
        out["any_arguments"] = True
    return out


def agent_calls(run: RunRecord) -> list[dict[str, Any]]:
    """The agent's calls of a turn run as ``{name, arguments}`` (unparseable arguments kept as text)."""
    return [{"name": c.name, "arguments": c.arguments} for c in run.actual_calls()]


def mismatch_question(case: GoldCase, run: RunRecord, result: CaseResult,
                      refs: dict[str, Any] | None = None) -> Question | None:
    """The mismatch question for a flagged result, or None when the result is not flagged."""
    if not is_flagged(result):
        return None
    calls = agent_calls(run)
    involved = {c.name for c in case.expected.calls} | {c.name for a in case.alternatives for c in a.calls}
    involved |= {c["name"] for c in calls}
    tools = [{"name": t.name, "description": _clip(t.description), "parameters": t.parameters}
             for t in case.tools if t.name in involved]
    others = sorted(t.name for t in case.tools if t.name not in involved)
    agent: dict[str, Any] = {"calls": calls}
    if not calls:
        agent["text"] = _clip(run.text)
    inputs = {
        "conversation": conversation(case.messages),
        "tools": tools, "other_tools_offered": others,
        "gold": {"answer": _answer(case.expected), "alternatives": [_answer(a) for a in case.alternatives],
                 "rationale": case.rationale},
        "agent": agent,
        "differences": [e.note for e in result.errors],
    }
    return Question("mismatch", canonical.normalize(inputs), dict(refs or {}))


def run_refs(case: GoldCase, run: RunRecord) -> dict[str, Any]:
    """Where a question comes from: the case, the gold version it was frozen in, the run and the trial, and
    the agent's answer (what *accept as alternative* would add to the gold)."""
    refs: dict[str, Any] = {"case_id": case.id, "version": case.provenance.gold_version, "run": run.run_id,
                            "trial": run.trial, "actual": agent_calls(run)}
    if run.text is not None and not refs["actual"]:
        refs["text"] = run.text
    normalized: dict[str, Any] = canonical.normalize(refs)
    return normalized


__all__ = ["MAX_CHARS", "MAX_MESSAGES", "MISMATCH_CODES", "Question", "agent_calls", "conversation",
           "is_flagged", "mismatch_question", "question_key", "run_refs", "semantic_question"]
