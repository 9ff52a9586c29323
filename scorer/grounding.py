"""Grounding: does an identifier-like argument value come from the context the agent had?

An order number the agent never looked up, or a zip code it made up instead of asking, is a value that
appears nowhere in what the agent saw: the system prompt, the user's messages and earlier tool results
(the agent's own earlier text does not count: it may be where the invention started). Values the gold
itself uses count as grounded: the annotator vouches for them.

Which arguments are checked: keys that look like identifiers (``*_id``, ``order_number``, ``zip``,
``email``, ``phone``, …, camelCase too) and arguments whose rule says ``grounded: true``; a rule with
``grounded: false`` waives the check. Matching is case-insensitive and respects word boundaries, so
``C-10`` is not found inside ``C-1042``; phone numbers compare by their digits.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from scorer import canonical
from scorer.model import ArgRule, Message

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_IDENTIFIER_KEY: Final = re.compile(
    r"(?:^|_)(?:id|ids|uuid|guid)$"
    r"|^(?:.*_)?(?:order|account|booking|reservation|confirmation|tracking|invoice|ticket|card|phone|"
    r"policy|case|member|membership|passport|license|serial|flight)_?(?:number|num|no|code)$"
    r"|^(?:.*_)?(?:zip|zipcode|zip_code|postcode|postal_code|email|email_address|phone|phone_number|"
    r"mobile|telephone|sku|iban|username|user_name)$")
_PHONE_KEY: Final = re.compile(r"phone|mobile|telephone|(?:^|_)tel(?:$|_)")
_MIN_LENGTH = 2


_KEY_MEMO_SIZE: Final = 8192
_SNAKE: Final[dict[str, str]] = {}
_IDENTIFIER: Final[dict[str, bool]] = {}
_PHONE: Final[dict[str, bool]] = {}
"""What each key was found to be: plain dicts, not ``lru_cache`` (asked of every argument of every call
scored; a dict lookup costs a fifth of the cache's call), emptied when full (keys an agent makes up are
unbounded)."""


def _remembered(memo: dict[str, Any], key: str, value: Any) -> Any:
    if len(memo) >= _KEY_MEMO_SIZE:
        memo.clear()
    memo[key] = value
    return value


def snake(key: str) -> str:
    found = _SNAKE.get(key)
    if found is None:
        found = _remembered(_SNAKE, key, canonical.lowered(_CAMEL.sub("_", key)))
    return found


def is_identifier_key(key: str) -> bool:
    """``customer_id``, ``orderNumber``, ``zip``, ``email``, ``phone_number``, … (not ``query``)."""
    found = _IDENTIFIER.get(key)
    if found is None:
        found = _remembered(_IDENTIFIER, key, _IDENTIFIER_KEY.search(snake(key)) is not None)
    return found


def is_phone_key(key: str) -> bool:
    found = _PHONE.get(key)
    if found is None:
        found = _remembered(_PHONE, key, _PHONE_KEY.search(snake(key)) is not None)
    return found


def checked_keys(args: dict[str, Any], rules: dict[str, ArgRule]) -> Iterator[str]:
    """The argument keys whose values must be grounded."""
    for key in args:
        rule = rules.get(key)
        forced = rule.grounded if rule is not None else None
        if forced is True or (forced is None and is_identifier_key(key)):
            yield key


def scalar_texts(value: Any) -> Iterator[str]:
    """The strings to look for: a string, an integer, or those inside a list (booleans and floats aside)."""
    if isinstance(value, str):
        if len(value.strip()) >= _MIN_LENGTH:
            yield value.strip()
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, list):
        for item in value:
            yield from scalar_texts(item)


def gold_texts(values: Iterable[Any]) -> frozenset[str]:
    """Every scalar in the gold's values, casefolded, recursively (the annotator vouches for them)."""
    found: set[str] = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)
        elif isinstance(value, str):
            found.add(value.strip().casefold())
        elif isinstance(value, int | float) and not isinstance(value, bool):
            found.add(str(value).casefold())
    return frozenset(found)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def last_mention(text: str, needle: str) -> int:
    """Offset of the last occurrence of ``needle`` in ``text`` as a whole token, or -1."""
    end = len(text)
    head_word, tail_word = _is_word(needle[0]), _is_word(needle[-1])
    while True:
        at = text.rfind(needle, 0, end)
        if at < 0:
            return -1
        after = at + len(needle)
        if (not head_word or at == 0 or not _is_word(text[at - 1])) and (
                not tail_word or after == len(text) or not _is_word(text[after])):
            return at
        end = at + len(needle) - 1


class Context:
    """What the agent could see: system, user and tool message text, searched case-insensitively."""

    __slots__ = ("_digits", "_folded", "_messages", "text")

    def __init__(self, messages: Iterable[Message]) -> None:
        self._messages = tuple([m for m in messages if m.role != "assistant" and m.content])
        self.text = "\n".join([m.content or "" for m in self._messages]).casefold()
        self._digits: str | None = None
        self._folded: list[tuple[str, str]] | None = None

    @classmethod
    def of_text(cls, text: str) -> Context:
        context = cls(())
        context.text = text.casefold()
        return context

    def contains(self, value: str, *, phone: bool = False) -> bool:
        if phone:
            digits = re.sub(r"\D", "", value)
            if len(digits) >= 7:
                if self._digits is None:
                    self._digits = re.sub(r"\D", "", self.text)
                return digits in self._digits or (len(digits) > 10 and digits[-10:] in self._digits)
        return last_mention(self.text, value.casefold()) >= 0

    def last_mention(self, value: str) -> int:
        return last_mention(self.text, value.casefold())

    @property
    def folded(self) -> list[tuple[str, str]]:
        """``(role, casefolded content)`` of each message, in order (built once)."""
        if self._folded is None:
            self._folded = [(m.role, (m.content or "").casefold()) for m in self._messages]
        return self._folded

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages the text was built from, in order (system, user and tool messages)."""
        return self._messages


def ungrounded(args: dict[str, Any], rules: dict[str, ArgRule], context: Callable[[], Context],
               gold: Callable[[], frozenset[str]]) -> list[tuple[str, str]]:
    """``(key, value)`` of every checked value found neither in the context nor in the gold (both built
    only when a value needs checking)."""
    missing = []
    said: Context | None = None  # each built once, when first needed (each call here is a Python call)
    vouched: frozenset[str] | None = None
    for key, value in args.items():  # ``checked_keys``, inline: this runs for every call scored
        rule = rules.get(key) if rules else None
        forced = rule.grounded if rule is not None else None
        if forced is not True and (forced is not None or not is_identifier_key(key)):
            continue
        phone = is_phone_key(key)
        for text in scalar_texts(value):
            if said is None:
                said = context()
            if said.contains(text, phone=phone):
                continue
            if vouched is None:
                vouched = gold()
            if text.casefold() not in vouched:
                missing.append((key, text))
    return missing


_CORRECTION: Final = re.compile(
    r"\b(?:actually|instead|switch(?:ed|ing)?|chang(?:e|ed|ing)|meant|rather|correction|sorry|mistake|wrong|"
    r"updated?|replac(?:e|ed|ing)|other|no|not)\b")
"""Words with which a person takes back what they said ("actually", "switch to", "I meant", "not …")."""


def _mentions(text: str, value: str) -> bool:
    return last_mention(text, value) >= 0


def superseding(actual: Any, wanted: Iterable[Any], context: Context) -> str | None:
    """The gold value that explicitly replaced ``actual`` in the conversation, if that is what happened.

    Stale means: the agent's value was said, and a *later* user message names the gold value in words that
    take something back ("switch to my savings account SAV-2", "sorry, I meant ACC-2", "it's SAV-2, not
    CHK-1"). Not stale: both values only in the message that first says the agent's ("from CHK-1 to SAV-2":
    the agent mixed them up, or the gold value is merely mentioned later in the sentence), a value that
    contains the other ("Boston" and "Boston, MA"), a later message that adds a value without taking one
    back, a tool result.
    """
    actual_texts = list(scalar_texts(actual))
    if len(actual_texts) != 1:
        return None
    said = actual_texts[0].casefold()
    if said not in context.text:  # said nowhere (each message's folded text is part of the whole)
        return None
    messages = context.folded
    first_said = next((k for k, (_, text) in enumerate(messages) if _mentions(text, said)), -1)
    if first_said < 0:
        return None
    for value in wanted:
        for gold in scalar_texts(value):
            new = gold.casefold()
            if new in said or said in new:
                continue
            for role, text in messages[first_said + 1:]:
                if role == "user" and _mentions(text, new) and _CORRECTION.search(text):
                    return gold
    return None


__all__ = ["Context", "checked_keys", "gold_texts", "is_identifier_key", "is_phone_key", "last_mention",
           "scalar_texts", "superseding", "ungrounded"]
