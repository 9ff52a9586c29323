"""Pieces the importers share: shape checks with clear messages, OpenAI-style messages and tools, and
guarding one record so that its error is reported at its file and line while reading goes on."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ParamSpec

from pydantic import ValidationError

from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error, iter_json_lines_tolerant
from scorer.importers.base import Converted, Item
from scorer.model import FunctionCall, GoldCase, Message, ToolCallRef, ToolSpec, Transcript

Record = Transcript | GoldCase
P = ParamSpec("P")


# --------------------------------------------------------------------------------------------------
# Shape checks: one clear sentence per problem (the caller adds FILE:LINE)
# --------------------------------------------------------------------------------------------------


def json_type(value: Any) -> str:
    """``an object``, ``an array``, ``a string`` ... for error messages."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)


def need_dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidRecord(f"{what} should be an object, got {json_type(value)}")
    return value


def need_list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidRecord(f"{what} should be an array, got {json_type(value)}")
    return value


def need_str(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidRecord(f"{what} should be a non-empty string, got {json_type(value)}")
    return value


def type_of(obj: dict[str, Any], where: str, default: str | None = None) -> str | None:
    """``obj["type"]`` (``default`` when absent or null): a string, or an ``InvalidRecord`` naming it. Looked up
    in a set of known types, an object or an array would raise ``TypeError`` (unhashable)."""
    kind = obj.get("type", default)
    if kind is None or isinstance(kind, str):
        return kind
    raise InvalidRecord(f"{where}.type should be a string, got {json_type(kind)}")


def need_key(obj: dict[str, Any], key: str, what: str = "record") -> Any:
    if key not in obj:
        raise InvalidRecord(f"{what} has no {key!r}")
    return obj[key]


def guard(source: str, line: int | None, build: Callable[P, Record | Iterable[Record]],
          *args: P.args, **kwargs: P.kwargs) -> list[Item]:
    """Call ``build(*args, **kwargs)`` for one source record; any problem becomes one ``InvalidRecord``
    at source:line. All or nothing per source record: a record that fails half-way yields only its error.
    """
    try:
        built = build(*args, **kwargs)
        records = [built] if isinstance(built, (Transcript, GoldCase)) else list(built)
        return [Converted(record, line) for record in records]
    except InvalidRecord as err:
        return [err.located(source, line)]
    except ValidationError as exc:
        return [InvalidRecord(describe_validation_error(exc), source=source, line=line)]


def each_json_line(path: Path, convert_line: Callable[[int, Any], list[Item]]) -> Iterator[Item]:
    """The items of a JSON Lines file: a line that is not JSON yields its error and reading goes on;
    every other line goes through ``convert_line(line_number, value)`` (usually a ``guard``)."""
    source = str(path)
    with path.open("rb") as fh:
        for line, value in iter_json_lines_tolerant(fh, source):
            if isinstance(value, InvalidRecord):
                yield value
            else:
                yield from convert_line(line, value)


def json_text(value: Any, what: str, *, separators: tuple[str, str] | None = None) -> str:
    """``value`` as JSON text. A NaN or ±Infinity in it (a trace's JSON text written by Python's ``json``, which
    writes them) is refused: ``InvalidRecord`` naming where it sits (``arguments: days: NaN is not a JSON
    number``), which the importer places at its file and line. Written as Python would (``NaN``) it would be
    text no JSON reader accepts; converted by pydantic or orjson it would silently become ``null``."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=separators, allow_nan=False)
    except ValueError:
        try:
            canonical.refuse_non_finite(value)
        except canonical.NonFiniteNumber as exc:
            raise InvalidRecord(f"{what}: {exc.message} (JSON has no NaN or Infinity)") from None
        raise


def dumps_arguments(value: Any) -> str:
    """Tool-call arguments as the JSON string OpenAI messages carry (a string stays as it is)."""
    if isinstance(value, str):
        return value
    return json_text(value, "tool-call arguments", separators=(",", ":"))


def text_of(content: Any, what: str = "content") -> str | None:
    """Message content as text: a string, null, or a list of parts whose text is joined by newlines.

    Non-text parts (images, audio) become a short placeholder such as ``[image_url]`` so the transcript
    shows that something was there without fetching it.
    """
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
                continue
            part = need_dict(part, f"{what}[{i}]")
            kind = part.get("type", "text")
            if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                texts.append(f"[{kind}]")
        return "\n".join(texts)
    if isinstance(content, dict):
        return json_text(content, what)
    raise InvalidRecord(f"{what} should be a string, null or a list of parts, got {json_type(content)}")


def result_text(content: Any) -> str:
    """A tool result as text: strings stay, anything else is JSON."""
    if isinstance(content, str):
        return content
    return json_text(content, "tool result")


# --------------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------------


def tool_spec(raw: Any, what: str) -> ToolSpec:
    """A tool in any of the common shapes: OpenAI ``{"type": "function", "function": {...}}``, plain
    ``{name, description, parameters}``, or Anthropic ``{name, description, input_schema}``. Vendor
    extras (``strict``, ``cache_control`` ...) are dropped: they do not change what the tool takes."""
    spec = need_dict(raw, what)
    if isinstance(spec.get("function"), dict):
        spec = spec["function"]
    name = need_str(spec.get("name"), f"{what}.name")
    description = spec.get("description") or ""
    if not isinstance(description, str):
        raise InvalidRecord(f"{what}.description should be a string, got {json_type(description)}")
    schema = spec.get("parameters", spec.get("input_schema"))
    if schema is None:
        return ToolSpec(name=name, description=description)
    parameters = need_dict(schema, f"{what}.parameters")
    try:
        return ToolSpec(name=name, description=description, parameters=parameters)
    except ValidationError as exc:  # not a JSON Schema: one sentence naming the tool, never pydantic's dump
        raise InvalidRecord(f"{what}.{describe_validation_error(exc)}") from None


def tool_specs(raw: Any, what: str = "tools") -> tuple[ToolSpec, ...]:
    if raw is None:
        return ()
    return tuple(tool_spec(entry, f"{what}[{i}]") for i, entry in enumerate(need_list(raw, what)))


# --------------------------------------------------------------------------------------------------
# OpenAI chat messages
# --------------------------------------------------------------------------------------------------

ROLE_ALIASES = {"developer": "system", "function": "tool"}


def openai_messages(raw: Any, what: str = "messages") -> tuple[Message, ...]:
    """Messages in the OpenAI chat shape, including the legacy ``function_call`` / ``function`` role.

    Calls without an id get ``call_<message>_<k>``; a legacy function result answers the latest
    unanswered call of that name. Duplicate call ids are renamed (see ``unique_call_ids``).
    """
    messages: list[Message] = []
    unanswered: list[tuple[str, str]] = []  # (call id, tool name), oldest first
    for index, entry in enumerate(need_list(raw, what)):
        where = f"{what}[{index}]"
        entry = need_dict(entry, where)
        role = entry.get("role")
        if not isinstance(role, str):
            raise InvalidRecord(f"{where}.role should be a string, got {json_type(role)}")
        legacy_function = role == "function"
        role = ROLE_ALIASES.get(role, role)
        content = text_of(entry.get("content"), f"{where}.content")
        name = entry.get("name") if isinstance(entry.get("name"), str) else None
        if role == "assistant":
            calls = _assistant_calls(entry, index, where)
            unanswered += [(c.id, c.function.name) for c in calls]
            messages.append(Message(role="assistant", content=content, tool_calls=calls, name=name))
        elif role == "tool":
            call_id = entry.get("tool_call_id")
            if legacy_function and not call_id:
                call_id = next((cid for cid, tool in unanswered if tool == name), None)
                if call_id is None:
                    raise InvalidRecord(f"{where}: function result for {name!r}, which no earlier message called")
            if not isinstance(call_id, str) or not call_id:
                raise InvalidRecord(f"{where}: a tool message needs the tool_call_id it answers")
            unanswered = [(cid, tool) for cid, tool in unanswered if cid != call_id]
            messages.append(Message(role="tool", content=result_text(entry.get("content", "")),
                                    tool_call_id=call_id, name=name))
        elif role in ("system", "user"):
            messages.append(Message(role=role, content=content, name=name))
        else:
            raise InvalidRecord(f"{where}.role {role!r} is not one of system, developer, user, assistant, tool")
    return unique_call_ids(messages)


def _assistant_calls(entry: dict[str, Any], index: int, where: str) -> tuple[ToolCallRef, ...]:
    raw_calls = entry.get("tool_calls") or []
    legacy = entry.get("function_call")
    if legacy and not raw_calls:
        raw_calls = [{"id": f"call_{index}_0", "function": legacy}]
    calls = []
    for k, raw in enumerate(need_list(raw_calls, f"{where}.tool_calls")):
        call_where = f"{where}.tool_calls[{k}]"
        raw = need_dict(raw, call_where)
        function = need_dict(raw.get("function", raw), f"{call_where}.function")
        name = need_str(function.get("name"), f"{call_where}.function.name")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else f"call_{index}_{k}"
        calls.append(ToolCallRef(id=call_id, function=FunctionCall(
            name=name, arguments=dumps_arguments(function.get("arguments", {})))))
    return tuple(calls)


def unique_call_ids(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Rename repeated tool-call ids (``call_x`` -> ``call_x~2``) and point each tool result at the latest
    call with its original id. Real logs reuse ids (49 of tau-bench's 200 gpt-4o runs do); toolgold
    needs them unique to link each result to its call."""
    used: set[str] = set()
    last_suffix: dict[str, int] = {}
    current: dict[str, str] = {}  # original id -> the id its latest call got
    out: list[Message] = []
    for message in messages:
        if message.tool_calls:
            renamed = []
            for call in message.tool_calls:
                new_id = call.id
                if new_id in used:
                    suffix = last_suffix.get(call.id, 1)
                    while new_id in used:
                        suffix += 1
                        new_id = f"{call.id}~{suffix}"
                    last_suffix[call.id] = suffix
                used.add(new_id)
                current[call.id] = new_id
                renamed.append(call if new_id == call.id else call.model_copy(update={"id": new_id}))
            if any(r is not c for r, c in zip(renamed, message.tool_calls, strict=True)):
                message = message.model_copy(update={"tool_calls": tuple(renamed)})
        elif message.role == "tool" and message.tool_call_id in current:
            target = current[message.tool_call_id]
            if target != message.tool_call_id:
                message = message.model_copy(update={"tool_call_id": target})
        out.append(message)
    return tuple(out)


def metadata_of(record: dict[str, Any], what: str = "metadata") -> dict[str, Any]:
    raw = record.get("metadata")
    return {} if raw is None else dict(need_dict(raw, what))
