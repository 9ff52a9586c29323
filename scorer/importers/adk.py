"""Google ADK (Agent Development Kit): eval sets (``*.evalset.json``, ``*.test.json``) and session dumps.

**Eval sets** ``{"eval_set_id", "eval_cases": [{"eval_id", "conversation": [invocations]}]}``; an
invocation has ``user_content``, ``intermediate_data.tool_uses`` (the expected calls) and
``final_response``. ADK keeps the expected calls but not their results. The older list form
``[{"query", "expected_tool_use": [{"tool_name", "tool_input"}], "reference"}]`` reads the same.

- One transcript ``adk/<eval_set_id>/<eval_id>``: per invocation the user message, one assistant message
  per expected call, each followed by ``[not recorded: ...]`` as its result (``metadata.results:
  not_recorded``), then the final response.
- One gold case per invocation, ``.../invocation-<n>``, with the conversation before it as context: no
  tool use is ``no_call``; one is a turn case; several are a **trajectory** case with ``order: strict``,
  which is how ADK's ``tool_trajectory_avg_score`` compares them (the exact calls in order).
- ADK files carry no tool schemas: pass ``--tools``.

**Session dumps** ``{"id", "events": [{"author", "content": {"role", "parts"}}]}``: the events'
google-genai contents (``function_call`` / ``function_response`` parts, paired by order and name, as for
Gemini) become one transcript ``adk-session/<id>``; the authors (agents) are in ``metadata.authors``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord
from scorer.formats import describe_validation_error
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.importers.common import dumps_arguments, need_dict, need_list, need_str
from scorer.importers.gemini import content_parts
from scorer.importers.jsondoc import JsonDocument, member_items, starts_with
from scorer.importers.parts import Part, messages_from_parts, skipped_counts
from scorer.model import Answer, Call, FunctionCall, GoldCase, Message, Provenance, ToolCallRef, Transcript

NAME = "adk"
DESCRIPTION = "Google ADK eval sets (.evalset.json / .test.json) and session dumps"
NOT_RECORDED = "[not recorded: ADK eval sets keep the expected calls, not their results]"
EXPECTED = ("expected an ADK eval set {\"eval_set_id\", \"eval_cases\": [...]}, a list of "
            "{\"query\", \"expected_tool_use\"} or a session {\"id\", \"events\": [...]}")

_MARKERS = re.compile(rb'"(eval_set_id|eval_cases|expected_tool_use|invocation_id)"\s*:|"author"\s*:')


def sniff(path: Path, head: bytes) -> bool:
    return bool(_MARKERS.search(head)) and (b'"eval_' in head or b'"expected_tool_use"' in head
                                           or b'"events"' in head)


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    # An eval set as ADK writes it (eval_set_id before eval_cases), a block at a time: memory for a case.
    streamed = member_items(path, "eval_cases", ("eval_set_id",)) if starts_with(path, b"{") else None
    if streamed is not None:
        head, cases = streamed
        set_id = str(head["eval_set_id"] or path.stem)
        try:
            for line, case in cases:
                yield from _guarded(lambda c=case: eval_case(c, set_id, options), source, line)
        except InvalidRecord as err:
            yield err.located(source, None)
        return
    try:
        doc = JsonDocument.read(path)
        root = doc.root()
        if doc.kind(root) == "array":
            entries = [(line, value) for line, _, value in doc.items(root)]
            yield from _guarded(lambda: legacy_eval(entries, path.stem, options), source, doc.line(root))
            return
        value, _ = doc.decode(root)
    except InvalidRecord as err:
        yield err
        return
    record = value if isinstance(value, dict) else {}
    if "eval_cases" in record:
        set_id = str(record.get("eval_set_id") or path.stem)
        try:  # (eval_cases not a list: one error, as for any other flaw of the document)
            for line, _, case in doc.items(next(pos for key, pos, _ in doc.members(root) if key == "eval_cases")):
                yield from _guarded(lambda c=case: eval_case(c, set_id, options), source, line)
        except InvalidRecord as err:
            yield err.located(source, None)
    elif "events" in record:
        yield from _guarded(lambda: session(record, path.stem, options), source, doc.line(root))
    else:
        yield InvalidRecord(EXPECTED, source=source, line=doc.line(root))


def _guarded(build: Any, source: str, line: int | None) -> list[Item]:
    try:
        built = build()
        return [Converted(r, line) for r in (built if isinstance(built, list) else [built])]
    except InvalidRecord as err:
        return [err.located(source, line)]
    except ValidationError as exc:
        return [InvalidRecord(describe_validation_error(exc), source=source, line=line)]


def _text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = need_list(need_dict(content, where).get("parts") or [], f"{where}.parts")
    return "\n".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _tool_uses(raw: Any, where: str) -> list[Call]:
    calls = []
    for k, use in enumerate(need_list(raw or [], where)):
        use = need_dict(use, f"{where}[{k}]")
        name = use.get("name", use.get("tool_name"))
        arguments = use.get("args", use.get("tool_input")) or {}
        calls.append(Call(name=need_str(name, f"{where}[{k}].name"), arguments=need_dict(arguments, f"{where}[{k}].args")))
    return calls


def _records(conversation_id: str, invocations: list[tuple[str, str, list[Call]]], options: ImportOptions,
             metadata: dict[str, Any]) -> list[Transcript | GoldCase]:
    messages: list[Message] = []
    cases: list[GoldCase] = []
    for n, (user, final, calls) in enumerate(invocations, start=1):
        messages.append(Message(role="user", content=user))
        expected = Answer(behavior="call", calls=tuple(calls)) if calls else Answer(behavior="no_call")
        several = len(calls) > 1
        cases.append(GoldCase(
            id=f"{conversation_id}/invocation-{n}", conversation_id=conversation_id, turn=len(messages),
            split=options.split, kind="trajectory" if several else "turn", order="strict" if several else None,
            tools=options.tools or (), messages=tuple(messages), expected=expected, tags=("adk",),
            provenance=Provenance(source="adk"),
            rationale=f"ADK eval invocation {n}: the expected tool uses" + (", in this order." if several else ".")))
        for k, call in enumerate(calls):
            call_id = f"inv{n}_call{k}"
            messages.append(Message(role="assistant", tool_calls=(ToolCallRef(id=call_id, function=FunctionCall(
                name=call.name, arguments=dumps_arguments(call.arguments))),)))
            messages.append(Message(role="tool", tool_call_id=call_id, content=NOT_RECORDED))
        messages.append(Message(role="assistant", content=final))
    transcript = Transcript(id=conversation_id, messages=tuple(messages), tools=options.tools or (),
                            metadata={"source": "adk", "results": "not_recorded", **metadata})
    return [transcript, *cases]


def eval_case(value: Any, set_id: str, options: ImportOptions) -> list[Transcript | GoldCase]:
    case = need_dict(value, "the eval case")
    eval_id = need_str(str(case.get("eval_id") or "") or None, "eval_id")
    invocations = []
    for i, raw in enumerate(need_list(case.get("conversation"), "conversation")):
        where = f"conversation[{i}]"
        invocation = need_dict(raw, where)
        data = need_dict(invocation.get("intermediate_data") or {}, f"{where}.intermediate_data")
        invocations.append((_text(invocation.get("user_content"), f"{where}.user_content"),
                            _text(invocation.get("final_response"), f"{where}.final_response"),
                            _tool_uses(data.get("tool_uses"), f"{where}.intermediate_data.tool_uses")))
    return _records(f"adk/{set_id}/{eval_id}", invocations, options, {"eval_set_id": set_id, "eval_id": eval_id})


def legacy_eval(entries: list[tuple[int, Any]], stem: str, options: ImportOptions) -> list[Transcript | GoldCase]:
    invocations = []
    for i, (_, raw) in enumerate(entries):
        entry = need_dict(raw, f"[{i}]")
        if "query" not in entry:
            raise InvalidRecord(f"[{i}] has no 'query': {EXPECTED}")
        invocations.append((str(entry["query"]), str(entry.get("reference") or ""),
                            _tool_uses(entry.get("expected_tool_use"), f"[{i}].expected_tool_use")))
    return _records(f"adk/{stem}", invocations, options, {"eval_set_id": stem})


def session(record: dict[str, Any], stem: str, options: ImportOptions) -> Transcript:
    parts: list[Part] = []
    authors: list[str] = []
    for i, raw in enumerate(need_list(record.get("events"), "events")):
        event = need_dict(raw, f"events[{i}]")
        author = event.get("author")
        if isinstance(author, str) and author != "user" and author not in authors:
            authors.append(author)
        content = event.get("content")
        if content is None:
            continue
        parts += content_parts(need_dict(content, f"events[{i}].content"), f"events[{i}].content")
    metadata: dict[str, Any] = {"source": "adk", "authors": authors}
    for key in ("app_name", "user_id"):
        if isinstance(record.get(key), str):
            metadata[key] = record[key]
    skipped = skipped_counts(parts)
    if skipped:
        metadata["skipped"] = skipped
    session_id = str(record.get("id") or stem)
    return Transcript(id=f"adk-session/{session_id}", messages=messages_from_parts(parts, "events"),
                      tools=options.tools or (), metadata=metadata)
