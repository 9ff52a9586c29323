"""What every transformation shares: the seeded random source, name words and building the candidate."""

from __future__ import annotations

import random
import re
from typing import Any

from scorer.grounding import checked_keys, last_mention, scalar_texts, snake
from scorer.model import GoldCase, Message, Provenance, Split
from scorer.synthesize.model import SYNTHETIC, Candidate, Generation, Synthesis, Transform, candidate_id

HAPPY_PATH = "happy_path"
"""The tag the Gold set page counts as happy path."""
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def rng_for(seed: int, transform: Transform, parent: str, variant: str = "") -> random.Random:
    """A random source that depends only on the seed and what is being made (string seeds are stable)."""
    return random.Random(f"{seed}\0{transform}\0{parent}\0{variant}")


def words(name: str) -> list[str]:
    """``update_user``, ``UpdateUser``, ``user.update`` -> lower-case words."""
    return [w for w in _WORD_SPLIT.split(snake(name)) if w]


def derive(parent: GoldCase, transform: Transform, *, seed: int, change: str, variant: str = "",
           split: Split | None = None, generation: Generation | None = None, **updates: Any) -> Candidate:
    """The candidate made of ``parent`` with ``updates``: validated again as a whole gold case, marked
    synthetic (provenance, tags) and waiting for an annotator (status ``draft``)."""
    case_id = candidate_id(parent.id, transform, variant)
    # A made-up edge case is not a happy-path case, whatever its parent was.
    tags = tuple(dict.fromkeys((*(t for t in parent.tags if t != HAPPY_PATH), SYNTHETIC, transform)))
    body = parent.model_dump()
    body.update(
        id=case_id, split=split or parent.split, tags=tags,
        rationale=f"Synthetic ({transform} of {parent.id}): {change}",
        provenance=Provenance(status="draft", source=SYNTHETIC))
    body.update(updates)
    case = GoldCase.model_validate(body)
    return Candidate(id=case_id, case=case,
                     synthesis=Synthesis(transform=transform, parent=parent.id, seed=seed, variant=variant,
                                         change=change, generation=generation))


def user_grounded_values(case: GoldCase) -> list[tuple[str, str, str]]:
    """``(tool, key, text)`` of every identifier-like expected argument value that the user said, in the
    order of the expected calls (each text once)."""
    user_text = "\n".join(m.content or "" for m in case.messages if m.role == "user").casefold()
    found: dict[str, tuple[str, str, str]] = {}
    for call in case.expected.calls:
        for key in checked_keys(call.arguments, case.arg_rules.get(call.name, {})):
            for text in scalar_texts(call.arguments[key]):
                if text.casefold() not in found and last_mention(user_text, text.casefold()) >= 0:
                    found[text.casefold()] = (call.name, key, text)
    return list(found.values())


def replace_token(text: str, old: str, new: str) -> str:
    """``text`` with every whole-token, case-insensitive occurrence of ``old`` replaced by ``new``."""
    head = r"(?<![\w])" if old[:1].isalnum() or old[:1] == "_" else ""
    tail = r"(?![\w])" if old[-1:].isalnum() or old[-1:] == "_" else ""
    return re.sub(head + re.escape(old) + tail, lambda _: new, text, flags=re.IGNORECASE)


def mentions(messages: tuple[Message, ...], text: str) -> list[int]:
    """Indexes of the messages whose content, or tool call arguments, mention ``text`` as a whole token."""
    needle = text.casefold()
    out = []
    for i, m in enumerate(messages):
        blobs = [m.content or "", *(c.function.arguments for c in m.tool_calls)]
        if any(last_mention(b.casefold(), needle) >= 0 for b in blobs):
            out.append(i)
    return out


__all__ = ["derive", "mentions", "replace_token", "rng_for", "user_grounded_values", "words"]
