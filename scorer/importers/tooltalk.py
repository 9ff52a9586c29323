"""ToolTalk conversations (``data/<split>/<name>.json``, one conversation per file).

A file is ``{"name", "conversation_id", "metadata": {"location", "timestamp", "username"?,
"session_token"?}, "apis_used", "conversation": [{"role": "user"|"assistant", "text", "apis"?:
[{"request": {"api_name", "parameters"}, "response", "exception"}]}]}``. Mapping decisions:

- Transcript ``tooltalk/<name>``. The first message is the system prompt ToolTalk's own evaluation
  gives the model (``evaluate_openai.py``): the user's location, the timestamp, the username and the
  session token -- without it the agent could not make a single authenticated call.
- An assistant turn becomes one assistant message with its text and its ``apis`` as ``tool_calls``,
  followed by one tool message per call whose content is ``{"response": ..., "exception": ...}`` as
  JSON (again as ToolTalk replays its history: text first, then each call with its result). Call ids
  are ``tt<message>_<k>``.
- Tools: ``converted/apis.json`` (ToolTalk's 28 APIs), found by walking up from the file, or
  ``ImportOptions.tools``. ToolTalk's ``{"param": {"type", "description", "required"}}`` becomes a JSON
  Schema object with a ``required`` list; APIs that need authentication also take a required
  ``session_token`` string, as the gold calls pass it. Every transcript gets all 28 APIs (ToolTalk's
  default ``all`` mode). One slip in ToolTalk's own API docs is corrected (``ENUM_MOVED``): CreateEvent
  gives ``["meeting", "event"]`` as the enum of ``name``, which its gold fills freely ("Birthday Party"),
  while ``event_type``'s description says "either 'meeting' or 'event'"; the enum moves to ``event_type``.
- Each assistant turn becomes a turn gold case ``tooltalk/<name>/turn-<message index>`` whose expected
  calls are the turn's gold calls exactly; a turn without calls is ``no_call``. ToolTalk makes a turn's
  calls one after another and matches them to the gold without regard to order, so several calls in
  one case are compared the same way (toolgold's parallel calls).
- ``reference_time`` is ``metadata.timestamp``. ToolTalk's timestamps carry no zone and its APIs
  compare them as naive local times; toolgold needs an aware datetime, so they are read as UTC, which
  keeps every date and clock time as written.
- Tags ``["tooltalk", <split folder>]`` (``easy`` or ``tooltalk``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import guard, need_dict, need_key, need_list, need_str
from scorer.importers.jsondoc import JsonDocument
from scorer.model import (
    Answer,
    Call,
    FunctionCall,
    GoldCase,
    Message,
    Provenance,
    ToolCallRef,
    ToolSpec,
    Transcript,
)

NAME = "tooltalk"
DESCRIPTION = "ToolTalk conversation files (one JSON object per file)"
SOURCE = "tooltalk"
SESSION_TOKEN = {"type": "string", "description": "The session token of the logged-in user (authentication)."}
ENUM_MOVED: dict[tuple[str, str], str] = {("CreateEvent", "name"): "event_type"}
"""(API, parameter) whose ``enum`` ToolTalk put on the wrong parameter -> the parameter it belongs to."""
SYSTEM_PROMPT = ("You are a helpful assistant. Here is some user data:\nlocation: {location}\ntimestamp: {timestamp}"
                 "\nusername (if logged in): {username}\nsession_token (if logged in): {session_token}")


def sniff(path: Path, head: bytes) -> bool:
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return body.startswith(b"{") and b'"conversation"' in body and (b'"apis_used"' in body or b'"suites_used"' in body)


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    try:
        tools = options.tools if options.tools is not None else find_tools(path)
        doc = JsonDocument.read(path)
        root = doc.root()
        if doc.kind(root) != "object":
            raise InvalidRecord("expected one ToolTalk conversation (a JSON object)", line=1)
        value: dict[str, Any] = {}
        turn_lines: list[int] = []
        for key, pos, member in doc.members(root):
            value[key] = member
            if key == "conversation" and doc.kind(pos) == "array":
                turn_lines = [line for line, _, _ in doc.items(pos)]
    except InvalidRecord as err:
        yield err.located(str(path), None)
        return
    yield from guard(str(path), doc.line(root), conversation_records, value, path, tools, options, turn_lines)


def find_tools(path: Path) -> tuple[ToolSpec, ...]:
    """ToolTalk's ``converted/apis.json``, looked for beside the file and in up to three parent folders."""
    for folder in list(path.parents)[:4]:
        candidate = folder / "converted" / "apis.json"
        if candidate.is_file():
            doc = JsonDocument.read(candidate)
            try:
                return api_tools(doc.decode(doc.root())[0])
            except InvalidRecord as err:
                raise err.located(str(candidate), None) from None
    return ()


def api_tools(raw: Any) -> tuple[ToolSpec, ...]:
    """ToolTalk API docs -> tool specs (see the module docstring)."""
    tools = []
    for i, entry in enumerate(need_list(raw, "APIs")):
        api = need_dict(entry, f"APIs[{i}]")
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, spec in need_dict(api.get("parameters") or {}, f"APIs[{i}].parameters").items():
            spec = dict(need_dict(spec, f"APIs[{i}].parameters.{name}"))
            if spec.pop("required", False):
                required.append(name)
            properties[name] = spec
        api_name = need_str(api.get("name"), f"APIs[{i}].name")
        for (owner, wrong), right in ENUM_MOVED.items():
            if (owner == api_name and "enum" in properties.get(wrong, {}) and right in properties
                    and "enum" not in properties[right]):
                properties[right] = {**properties[right], "enum": properties[wrong].pop("enum")}
        if api.get("requires_auth"):
            properties["session_token"] = SESSION_TOKEN
            required.append("session_token")
        tools.append(ToolSpec(name=api_name,
                              description=str(api.get("description") or ""),
                              parameters={"type": "object", "properties": properties, "required": required}))
    return tuple(tools)


def reference_time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidRecord(f"metadata.timestamp {raw!r} is not a date and time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def conversation_records(value: Any, path: Path, tools: tuple[ToolSpec, ...], options: ImportOptions,
                         turn_lines: list[int] | None = None) -> list[Transcript | GoldCase]:
    """The transcript and its gold cases; a bad turn is reported at its own line when known."""
    record = need_dict(value, "conversation file")
    name = str(record.get("name") or path.stem)
    metadata = need_dict(record.get("metadata") or {}, "metadata")
    messages = [Message(role="system", content=SYSTEM_PROMPT.format(
        location=metadata.get("location"), timestamp=metadata.get("timestamp"),
        username=metadata.get("username"), session_token=metadata.get("session_token")))]
    decisions: list[tuple[int, tuple[Call, ...]]] = []
    for index, raw in enumerate(need_list(need_key(record, "conversation", "conversation file"), "conversation")):
        try:
            messages += _turn(raw, index, len(messages), decisions)
        except InvalidRecord as err:
            raise err.located(None, turn_lines[index] if turn_lines else None) from None
    conversation_id = f"tooltalk/{name}"
    split = path.parent.name
    transcript_metadata = {"source": SOURCE, "split": split, **{k: v for k, v in {
        "conversation_id": record.get("conversation_id"), "scenario": record.get("scenario"),
        "timestamp": metadata.get("timestamp"), "location": metadata.get("location"),
        "apis_used": record.get("apis_used")}.items() if v is not None}}
    transcript = Transcript(id=conversation_id, messages=tuple(messages), tools=tools, metadata=transcript_metadata)
    now = reference_time(metadata.get("timestamp"))
    cases: list[Transcript | GoldCase] = [transcript]
    for turn_index, gold in decisions:
        expected = Answer(behavior="call", calls=gold) if gold else Answer(behavior="no_call")
        cases.append(GoldCase(
            id=f"{conversation_id}/turn-{turn_index}", conversation_id=conversation_id, turn=turn_index,
            split=options.split, kind="turn", tools=tools, messages=tuple(messages[:turn_index]),
            reference_time=now, expected=expected, tags=(SOURCE, split),
            rationale="ToolTalk's gold calls for this assistant turn." if gold
            else "ToolTalk's gold makes no call in this assistant turn.",
            provenance=Provenance(source=SOURCE)))
    return cases


def _turn(raw: Any, index: int, position: int, decisions: list[tuple[int, tuple[Call, ...]]]) -> list[Message]:
    """One conversation turn as messages; an assistant turn also adds its decision (position, gold calls)."""
    where = f"conversation[{index}]"
    turn = need_dict(raw, where)
    role = turn.get("role")
    text = turn.get("text") if isinstance(turn.get("text"), str) else None
    if role == "user":
        return [Message(role="user", content=text)]
    if role != "assistant":
        raise InvalidRecord(f"{where}.role should be 'user' or 'assistant', got {role!r}")
    calls, results, gold = _calls(turn.get("apis") or [], position, where)
    decisions.append((position, gold))
    return [Message(role="assistant", content=text, tool_calls=calls), *results]


def _calls(raw: Any, position: int, where: str) -> tuple[tuple[ToolCallRef, ...], list[Message], tuple[Call, ...]]:
    """The turn's calls as tool calls, their results as tool messages, and the same calls as gold."""
    calls: list[ToolCallRef] = []
    results: list[Message] = []
    gold: list[Call] = []
    for k, entry in enumerate(need_list(raw, f"{where}.apis")):
        api = need_dict(entry, f"{where}.apis[{k}]")
        request = need_dict(api.get("request"), f"{where}.apis[{k}].request")
        parameters = need_dict(request.get("parameters") or {}, f"{where}.apis[{k}].request.parameters")
        call_id = f"tt{position}_{k}"
        name = need_str(request.get("api_name"), f"{where}.apis[{k}].request.api_name")
        calls.append(ToolCallRef(id=call_id, function=FunctionCall(
            name=name, arguments=json.dumps(parameters, ensure_ascii=False))))
        gold.append(Call(name=name, arguments=parameters))
        results.append(Message(role="tool", tool_call_id=call_id, content=json.dumps(
            {"response": api.get("response"), "exception": api.get("exception")}, ensure_ascii=False)))
    return tuple(calls), results, tuple(gold)
