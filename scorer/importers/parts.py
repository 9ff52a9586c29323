"""The one adapter every message-shaped format goes through: a flat sequence of *parts* in, toolgold
(OpenAI-shaped) messages out.

A format module only has to say what each source item is -- text said by someone, a tool call, a tool
result, or something skipped -- and this module does the rest the same way for all of them:

- consecutive assistant parts (text and calls) form **one** assistant message, so parallel calls stay
  parallel; ``Turn()`` ends an assistant message explicitly (two model responses in a row);
- a call without an id gets ``call_<n>`` (n counts calls from 0);
- a result without an id answers the oldest unanswered call of its name (or, without a name, the oldest
  unanswered call): Gemini and ADK pair calls and responses by order and name;
- a result with ``is_error`` is prefixed ``Error: `` so the failure stays visible;
- arguments given as objects become the compact JSON string OpenAI sends; a string stays byte for byte;
- repeated call ids are renamed ``<id>~2``... (``common.unique_call_ids``);
- a result that answers no earlier call is an error naming its id, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.common import dumps_arguments, json_type, result_text, unique_call_ids
from scorer.model import FunctionCall, Message, ToolCallRef


@dataclass(frozen=True)
class Text:
    """Something said: a system prompt, a user message, or assistant text."""

    role: Literal["system", "user", "assistant"]
    text: str


@dataclass(frozen=True)
class Call:
    """A tool call the assistant made; ``arguments`` is a JSON string (kept as is) or a JSON value."""

    name: str
    arguments: Any = None
    id: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", _part_id(self.id, "a tool call"))


@dataclass(frozen=True)
class Result:
    """What a tool returned; ``content`` is text (kept as is) or a JSON value (stored as JSON)."""

    content: Any
    id: str | None = None
    name: str | None = None
    is_error: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", _part_id(self.id, "a tool result"))


def _part_id(value: Any, what: str) -> str | None:
    """A call or result id as the source gave it: a string, or None; a number is its text (JSON-RPC and some
    loggers number their calls). Anything else is refused here, where the part is made: ids are gathered in
    sets and compared, and an object or array there was a ``TypeError`` (unhashable), never a clear line."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidRecord(f"{what}'s id should be a string, got {json_type(value)}")


@dataclass(frozen=True)
class Turn:
    """Ends the current assistant message (the next assistant part starts a new one)."""


@dataclass(frozen=True)
class Skipped:
    """Something the source holds that is not part of the conversation (``reasoning``...): left out of the
    messages and counted in ``metadata.skipped`` (see ``skipped_counts``), never dropped unseen."""

    kind: str


Part = Text | Call | Result | Turn | Skipped


def skipped_counts(parts: Iterable[Part]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for part in parts:
        if isinstance(part, Skipped):
            counts[part.kind] = counts.get(part.kind, 0) + 1
    return dict(sorted(counts.items()))


def messages_from_parts(parts: Iterable[Part], where: str = "conversation",
                        lines: Sequence[int | None] | None = None,
                        rule: Callable[[ValidationError], str] = describe_validation_error) -> tuple[Message, ...]:
    """The toolgold messages for ``parts`` (see the module docstring for the rules).

    ``lines``, when given, holds the source line of each part (a conversation gathered from several
    records): an error found at a part -- or in the assistant message that starts at it -- is placed at
    that part's line (an ``InvalidRecord``; a model rule it breaks becomes one too, its message ``rule(exc)``,
    as the caller would have described it), so that it names the record that holds the bad value."""
    if lines is None:
        return _messages(parts, where)
    listed = list(parts)
    at: list[int | None] = [None]  # the line of the part being read
    try:
        return _messages(listed, where, lines, at)
    except InvalidRecord as err:
        raise err.located(None, at[0]) from None
    except ValidationError as exc:
        raise InvalidRecord(rule(exc), line=at[0]) from None


def _messages(parts: Iterable[Part], where: str, lines: Sequence[int | None] | None = None,
              at: list[int | None] | None = None) -> tuple[Message, ...]:
    messages: list[Message] = []
    open_texts: list[str] | None = None  # the assistant message being built
    open_calls: list[ToolCallRef] = []
    unanswered: list[tuple[str, str]] = []  # (call id, tool name), oldest first
    answered: set[str] = set()
    calls_made = 0
    open_line: int | None = None  # the line of the part the open assistant message starts at

    def close() -> None:
        nonlocal open_texts, open_calls
        if open_texts is not None:
            if at is not None:
                at[0] = open_line
            content = "\n".join(open_texts) if open_texts else None
            messages.append(Message(role="assistant", content=content, tool_calls=tuple(open_calls)))
        open_texts, open_calls = None, []

    for index, part in enumerate(parts):
        if isinstance(part, Skipped):
            continue
        line = lines[index] if lines is not None and index < len(lines) else None
        if isinstance(part, Turn):
            close()
        elif isinstance(part, Text) and part.role != "assistant":
            close()
            if at is not None:
                at[0] = line
            messages.append(Message(role=part.role, content=part.text))
        elif isinstance(part, (Text, Call)):
            if open_texts is None:
                open_texts, open_line = [], line
            if at is not None:
                at[0] = line
            if isinstance(part, Text):
                open_texts.append(part.text)
                continue
            if not part.name:
                raise InvalidRecord(f"{where}: a tool call without a name")
            call_id = part.id or f"call_{calls_made}"
            calls_made += 1
            open_calls.append(ToolCallRef(id=call_id, function=FunctionCall(
                name=part.name, arguments=dumps_arguments({} if part.arguments is None else part.arguments))))
            unanswered.append((call_id, part.name))
        else:
            close()
            if at is not None:
                at[0] = line
            answers = part.id or _pair_by_name(unanswered, part.name)
            if answers is None or not (any(cid == answers for cid, _ in unanswered) or answers in answered):
                if answers is None:
                    named = f" of {part.name!r}" if part.name else ""
                    raise InvalidRecord(f"{where}: a tool result{named} without an id, and no unanswered "
                                        "call of that name before it")
                raise InvalidRecord(f"{where}: a tool result answers {answers!r}, "
                                    "which no earlier assistant message called")
            unanswered = [(cid, tool) for cid, tool in unanswered if cid != answers]
            answered.add(answers)
            text = result_text(part.content)
            if part.is_error and not text.startswith("Error"):
                text = f"Error: {text}"
            messages.append(Message(role="tool", tool_call_id=answers, content=text))
    close()
    if at is not None:
        at[0] = None  # renaming repeated ids is about the conversation as a whole: its first line
    return unique_call_ids(messages)


def _pair_by_name(unanswered: list[tuple[str, str]], name: str | None) -> str | None:
    for call_id, tool in unanswered:
        if name is None or tool == name:
            return call_id
    return None


__all__ = ["Call", "Part", "Result", "Skipped", "Text", "Turn", "messages_from_parts", "skipped_counts"]
