"""Missing information: remove the value an expected argument was grounded in; the agent should ask.

Only identifier-like values the *user* said qualify (the keys ``scorer.grounding`` checks: ``*_id``,
``email``, ``phone``, ``zip``, …): a value that also appears in the system prompt, a tool result or an
earlier call would still be in the context, and one that came from a tool result calls for a lookup, not a
question. The value is cut from the user's (and the assistant's) words; the expected behaviour becomes
``clarify``, so an agent that calls anyway is ``called_instead_of_asking``, and one that invents the value
is ``fabricated_value``.
"""

from __future__ import annotations

import re

from scorer.grounding import Context, is_phone_key
from scorer.model import Answer, GoldCase, Message
from scorer.synthesize.common import derive, mentions, replace_token, rng_for, user_grounded_values
from scorer.synthesize.model import Candidate, NotApplicable

_SPACE_BEFORE_PUNCT = re.compile(r"[ \t]+([,.;:!?)])")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\"\s*\"|#(?=[\s,.;:!?]|$)")
_SPACES = re.compile(r"[ \t]{2,}")


def without(text: str, value: str) -> str:
    """``text`` with ``value`` cut out and the punctuation around the gap tidied."""
    cut = replace_token(text, value, "")
    cut = _EMPTY_BRACKETS.sub("", cut)
    cut = _SPACE_BEFORE_PUNCT.sub(r"\1", cut)
    return _SPACES.sub(" ", cut).strip()


def _removed(messages: tuple[Message, ...], value: str) -> tuple[Message, ...] | str:
    """The messages without ``value``, or why it cannot be removed."""
    where = mentions(messages, value)
    out = list(messages)
    for i in where:
        m = messages[i]
        if m.role not in ("user", "assistant"):
            return f"it is also in a {m.role} message"
        if any(value.casefold() in c.function.arguments.casefold() for c in m.tool_calls):
            return "an earlier call already used it"
        content = without(m.content or "", value)
        if m.role == "user" and not re.search(r"\w", content):
            return "the user's message is nothing but the value"
        out[i] = m.model_copy(update={"content": content})
    return tuple(out)


def missing_information(case: GoldCase, *, seed: int) -> Candidate:
    """The case with one user-given value removed and ``clarify`` expected; raises ``NotApplicable``."""
    if case.kind != "turn":
        raise NotApplicable(f"{case.id}: missing information is made from turn cases (this is a {case.kind})")
    if case.expected.behavior != "call":
        raise NotApplicable(f"{case.id}: no grounded value to remove (the gold expects {case.expected.behavior})")
    options: list[tuple[str, str, str, tuple[Message, ...]]] = []
    reasons = []
    for tool, key, text in user_grounded_values(case):
        messages = _removed(case.messages, text)
        if isinstance(messages, str):
            reasons.append(f"{key} {text!r}: {messages}")
        elif Context(messages).contains(text, phone=is_phone_key(key)):
            reasons.append(f"{key} {text!r}: still in the context in another form")
        else:
            options.append((tool, key, text, messages))
    if not options:
        why = "; ".join(reasons) or "no identifier-like argument of the expected calls comes from what the user said"
        raise NotApplicable(f"{case.id}: no grounded value to remove ({why})")
    rng = rng_for(seed, "missing_information", case.id)
    tool, key, text, messages = options[rng.randrange(len(options))]
    return derive(case, "missing_information", seed=seed, messages=messages, expected=Answer(behavior="clarify"),
                  alternatives=(), arg_rules={}, required_args=None,
                  change=f"removed the {key} {text!r} that {tool} needs from what the user said; the agent should "
                         "ask for it, and inventing it is fabricated_value")


__all__ = ["missing_information", "without"]
