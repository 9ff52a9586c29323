"""The model-written transformations, pure half: a new user turn in, a candidate out.

Writing the turn is the labeler's job (``labeler.synthesis_llm``, through the judge's gateway, only with
a key); this half decides whether a case can take a rewrite and checks what came back:

- ``paraphrase``: the user's last turn in other words. The expected behaviour stays, so every value the
  expected calls took from that turn (an order id, an email) must still be in it, or the rewrite is refused.
- ``tool_shaped_no_intent``: the last turn rewritten to use a tool's words without asking for it ("I could
  really use a refund right about now" inside a complaint about something else); expected ``no_call``.

Both apply to turn cases whose decision follows a user message, and never approve anything: the candidate
is a draft like every other, for an annotator to check that the model did what it was asked.
"""

from __future__ import annotations

from scorer.grounding import Context
from scorer.model import Answer, GoldCase
from scorer.synthesize.common import derive, user_grounded_values
from scorer.synthesize.model import Candidate, Generation, NotApplicable, Transform

MAX_TURN_CHARS = 4000


def rewrite_target(case: GoldCase, transform: Transform) -> int:
    """Index of the user message a rewrite replaces (the last message); raises ``NotApplicable``."""
    if case.kind != "turn":
        raise NotApplicable(f"{case.id}: {transform} is made from turn cases (this is a {case.kind})")
    if not case.messages or case.messages[-1].role != "user" or not (case.messages[-1].content or "").strip():
        raise NotApplicable(f"{case.id}: {transform} rewrites the user's turn right before the decision, and this "
                            "case's context does not end with one")
    if transform == "tool_shaped_no_intent" and not case.tools:
        raise NotApplicable(f"{case.id}: no tools whose words the turn could borrow")
    return len(case.messages) - 1


def _checked(case: GoldCase, transform: Transform, text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise NotApplicable(f"{case.id}: the model wrote an empty turn")
    if len(cleaned) > MAX_TURN_CHARS:
        raise NotApplicable(f"{case.id}: the model wrote {len(cleaned)} characters (at most {MAX_TURN_CHARS})")
    if cleaned == (case.messages[-1].content or "").strip():
        raise NotApplicable(f"{case.id}: the model returned the turn unchanged")
    return cleaned


def paraphrase(case: GoldCase, text: str, *, seed: int, generation: Generation) -> Candidate:
    """The case with its last user turn replaced by ``text`` (same intent); raises ``NotApplicable``."""
    at = rewrite_target(case, "paraphrase")
    new = _checked(case, "paraphrase", text)
    said = Context(case.messages[at:])
    rewritten = Context.of_text(new)
    for _, key, value in user_grounded_values(case):
        if said.contains(value) and not rewritten.contains(value):
            raise NotApplicable(f"{case.id}: the paraphrase dropped the {key} {value!r} the expected call needs")
    messages = (*case.messages[:at], case.messages[at].model_copy(update={"content": new}))
    return derive(case, "paraphrase", seed=seed, generation=generation, messages=messages,
                  change="the user's last turn says the same in other words; the expected behaviour is unchanged")


def tool_shaped_no_intent(case: GoldCase, text: str, *, seed: int, generation: Generation) -> Candidate:
    """The case with its last user turn replaced by tool-shaped words without the intent; ``no_call``."""
    at = rewrite_target(case, "tool_shaped_no_intent")
    new = _checked(case, "tool_shaped_no_intent", text)
    messages = (*case.messages[:at], case.messages[at].model_copy(update={"content": new}))
    return derive(case, "tool_shaped_no_intent", seed=seed, generation=generation, messages=messages,
                  expected=Answer(behavior="no_call"), alternatives=(), arg_rules={}, required_args=None,
                  change="the user's last turn uses a tool's words without asking for it; no call is expected")


__all__ = ["MAX_TURN_CHARS", "paraphrase", "rewrite_target", "tool_shaped_no_intent"]
