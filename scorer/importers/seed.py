"""The seed format agent teams write by hand, one labeled turn per JSON line::

    {"turn_id": "support-17#2", "conversation": [{"role": "user", "content": "..."}],
     "expected_tool": "search_orders",          # null: no tool call is right
     "expected_args": {"customer_id": "C-1042"},
     "acceptable_alternatives": ["lookup_order"],
     "required_arg_keys": ["customer_id"]}

Each line becomes a turn gold case (id ``turn_id``, at the decision point after the conversation) and a
transcript of the conversation (same id, so the case shows up on it). Mapping decisions, chosen so a
case passes in toolgold exactly when the seed harness (``score_tool_selection``) would pass it:

- ``expected_tool: null`` -> ``behavior: no_call``; then ``expected_args`` and alternatives must be
  empty (a non-empty one is a labeling mistake and is reported).
- ``acceptable_alternatives`` (tool names) -> alternatives with ``tool_only: true``: the seed harness
  checks only the tool name against them. An entry may also be a full call ``{"name", "arguments"}``.
- ``required_arg_keys`` -> ``required_args`` for the expected tool.
- The seed harness compares an expected argument only when the agent passes it and checks presence only
  for ``required_arg_keys``; so every expected argument not listed there gets ``optional: true``.
- The conversation is read as OpenAI chat messages (``tool_calls``, ``tool`` results). Optional
  ``tools``, ``tags`` and ``rationale`` fields are kept (without ``tools``, ``ImportOptions.tools`` --
  ``toolgold import --tools`` -- are used, if given); any other field is an error naming it, so a
  typo never drops a label silently. Tags always include ``seed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.base import ImportOptions, Item
from scorer.importers.common import (
    each_json_line,
    guard,
    json_type,
    need_dict,
    need_list,
    need_str,
    openai_messages,
    tool_specs,
)
from scorer.model import Answer, ArgRule, Call, GoldCase, Provenance, Transcript

NAME = "seed"
DESCRIPTION = 'hand-written seed labels ({"turn_id", "conversation", "expected_tool", ...} per line)'
SOURCE = "seed"
FIELDS = ("turn_id", "conversation", "expected_tool", "expected_args", "acceptable_alternatives",
          "required_arg_keys", "tools", "tags", "rationale")


def sniff(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return first_line.startswith(b"{") and b'"turn_id"' in first_line and b'"expected_tool"' in first_line


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    yield from each_json_line(path, lambda line, value: guard(source, line, records, value, options))


def records(value: Any, options: ImportOptions) -> list[Transcript | GoldCase]:
    record = need_dict(value, "the line")
    unknown = [key for key in record if key not in FIELDS]
    if unknown:
        raise InvalidRecord(f"unknown field {unknown[0]!r}; the seed format has {', '.join(FIELDS)}")
    for key in ("turn_id", "conversation", "expected_tool"):
        if key not in record:
            raise InvalidRecord(f"no {key!r} (use null for 'no tool call')" if key == "expected_tool"
                                else f"no {key!r}")
    turn_id = record["turn_id"]
    if not isinstance(turn_id, (str, int)) or isinstance(turn_id, bool) or turn_id == "":
        raise InvalidRecord(f"turn_id should be a string, got {json_type(turn_id)}")
    case_id = str(turn_id)
    messages = openai_messages(record["conversation"], "conversation")
    if not messages:
        raise InvalidRecord("conversation is empty: a case needs the messages the agent saw")
    tools = tool_specs(record["tools"]) if "tools" in record else options.tools or ()
    tool = record["expected_tool"]
    args = need_dict(record.get("expected_args") or {}, "expected_args")
    alternatives_raw = need_list(record.get("acceptable_alternatives") or [], "acceptable_alternatives")
    required = need_list(record.get("required_arg_keys") or [], "required_arg_keys")
    if not all(isinstance(key, str) for key in required):
        raise InvalidRecord("required_arg_keys should be a list of argument names")
    if tool is None:
        if args or alternatives_raw or required:
            raise InvalidRecord("expected_tool is null (no call) but expected_args, acceptable_alternatives "
                                "or required_arg_keys are given")
        expected = Answer(behavior="no_call")
        arg_rules: dict[str, dict[str, ArgRule]] = {}
        required_args = None
    else:
        tool = need_str(tool, "expected_tool")
        expected = Answer(behavior="call", calls=(Call(name=tool, arguments=args),))
        optional = {arg: ArgRule(optional=True) for arg in args if arg not in required}
        arg_rules = {tool: optional} if optional else {}
        required_args = {tool: tuple(required)}
    tags = record.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise InvalidRecord("tags should be a list of strings")
    rationale = record.get("rationale") or ""
    if not isinstance(rationale, str):
        raise InvalidRecord(f"rationale should be a string, got {json_type(rationale)}")
    case = GoldCase(
        id=case_id, conversation_id=case_id, turn=len(messages), split=options.split, kind="turn", tools=tools,
        messages=messages, expected=expected, alternatives=tuple(_alternative(a, i) for i, a in
                                                                enumerate(alternatives_raw)),
        arg_rules=arg_rules, required_args=required_args, tags=tuple(dict.fromkeys([SOURCE, *tags])),
        rationale=rationale, provenance=Provenance(source=SOURCE))
    return [Transcript(id=case_id, messages=messages, tools=tools, metadata={"source": SOURCE}), case]


def _alternative(raw: Any, index: int) -> Answer:
    where = f"acceptable_alternatives[{index}]"
    if isinstance(raw, str):
        return Answer(behavior="call", calls=(Call(name=need_str(raw, where)),), tool_only=True)
    entry = need_dict(raw, where)
    return Answer(behavior="call", calls=(Call(name=need_str(entry.get("name"), f"{where}.name"),
                                               arguments=need_dict(entry.get("arguments") or {},
                                                                   f"{where}.arguments")),))
