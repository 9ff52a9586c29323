"""Stale context: a later user turn switches the entity, so the expected argument changes to the new value.

Takes an identifier-like expected argument the user gave (an order, account or reminder id, an email, a
phone number), makes another value of the same shape (the last few letters and digits changed, same case
and punctuation; an email's domain kept), and appends a user message that corrects it. The expected calls
use the new value; an agent that keeps the old one gets ``stale_value``.
"""

from __future__ import annotations

import random
import string
from typing import Any

from scorer.grounding import Context
from scorer.model import Call, GoldCase, Message
from scorer.synthesize.common import derive, rng_for, user_grounded_values, words
from scorer.synthesize.model import Candidate, NotApplicable

SWITCHES: tuple[str, ...] = (
    "Sorry, I gave you the wrong {noun}: it's {new}, not {old}.",
    "Actually, please use {noun} {new} instead of {old}.",
    "Wait, not {old}. The {noun} I meant is {new}.",
)
_NOUN_WORD = {"id": "ID", "ids": "IDs", "uuid": "UUID", "sku": "SKU", "zip": "ZIP code", "iban": "IBAN"}


def noun(key: str) -> str:
    """``reservation_id`` -> ``reservation ID``, ``phoneNumber`` -> ``phone number``."""
    return " ".join(_NOUN_WORD.get(w, w) for w in words(key)) or key


def variant_of(value: str, rng: random.Random) -> str:
    """Another value shaped like ``value``: its last few letters and digits changed (an email's domain kept)."""
    local, at, domain = value.partition("@")
    core = local if at else value
    positions = [i for i, c in enumerate(core) if c.isalnum()]
    if not positions:
        return value
    change = positions[-max(2, min(4, len(positions) // 2)):]
    chars = list(core)
    for i in change:
        c = chars[i]
        pool = string.digits if c.isdigit() else string.ascii_uppercase if c.isupper() else string.ascii_lowercase
        chars[i] = rng.choice(pool.replace(c, ""))
    if chars[positions[0]] == "0" and core[positions[0]] != "0":
        chars[positions[0]] = core[positions[0]]
    return "".join(chars) + (at + domain if at else "")


def _replace(value: Any, old: str, new: Any) -> Any:
    if isinstance(value, str) and value.strip().casefold() == old.casefold():
        return new
    if isinstance(value, int) and not isinstance(value, bool) and str(value) == old:
        return new
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    return value


def _valid(case: GoldCase, calls: tuple[Call, ...]) -> bool:
    """Every call the switch changed still fits its tool's schema (the others are the gold's as it was)."""
    import jsonschema  # here: importing the synthesizer's names (the store does, for every import) needs none of it

    for call, before in zip(calls, case.expected.calls, strict=True):
        spec = case.tool(call.name)
        if spec is None or call == before:
            continue
        validator = jsonschema.validators.validator_for(spec.parameters, default=jsonschema.Draft202012Validator)
        if not validator(spec.parameters).is_valid(call.arguments):
            return False
    return True


def stale_context(case: GoldCase, *, seed: int) -> Candidate:
    """The case with a later user turn that switches one user-given value; raises ``NotApplicable``."""
    if case.kind != "turn":
        raise NotApplicable(f"{case.id}: stale context is made from turn cases (this is a {case.kind})")
    if case.expected.behavior != "call":
        raise NotApplicable(f"{case.id}: no expected argument to switch (the gold expects {case.expected.behavior})")
    rng = rng_for(seed, "stale_context", case.id)
    context = Context(case.messages)
    options = []
    for tool, key, text in user_grounded_values(case):
        rule = case.rule_for(tool, key)
        if rule.match == "one_of" or rule.accept:
            continue  # the gold accepts a list of values: a switch would need the annotator to rewrite it
        for _ in range(5):
            new_text = variant_of(text, rng)
            if new_text != text and not context.contains(new_text):
                break
        else:
            continue
        original = next(c.arguments[key] for c in case.expected.calls if c.name == tool and key in c.arguments)
        new_value: Any = int(new_text) if isinstance(original, int) and new_text.isdigit() else new_text
        calls = tuple(Call(name=c.name, arguments={k: _replace(v, text, new_value) for k, v in c.arguments.items()})
                      for c in case.expected.calls)
        if _valid(case, calls):
            options.append((tool, key, text, new_text, calls))
    if not options:
        raise NotApplicable(f"{case.id}: no user-given identifier to switch (no identifier-like argument of the "
                            "expected calls comes from what the user said, or its schema allows no other value)")
    tool, key, old, new, calls = options[rng.randrange(len(options))]
    line = SWITCHES[rng.randrange(len(SWITCHES))].format(noun=noun(key), new=new, old=old)
    messages = (*case.messages, Message(role="user", content=line))
    return derive(case, "stale_context", seed=seed, messages=messages, turn=None if case.turn is None else case.turn + 1,
                  expected=case.expected.model_copy(update={"calls": calls}), alternatives=(),
                  change=f"a later user turn switches {key} from {old!r} to {new!r}; {tool} must use the new value")


__all__ = ["SWITCHES", "noun", "stale_context", "variant_of"]
