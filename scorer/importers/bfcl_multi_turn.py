"""BFCL v4 multi-turn questions (``BFCL_v4_multi_turn_*.json``) with ``possible_answer/`` and the
function docs in ``multi_turn_func_doc/`` beside them.

A question is ``{"id", "question": [[user messages of turn 1], [turn 2], ...], "involved_classes",
"excluded_function"?, "missed_function"?: {"<turn>": [names]}}``; its answer ``{"id", "ground_truth":
[["cd(folder='document')", ...], ...]}`` lists each turn's calls as Python call strings. Mapping:

- One transcript ``bfcl/<id>``: each turn's user messages, then one assistant message with the turn's
  gold calls (none for an empty turn) and a tool message per call. BFCL does not record results -- it runs
  the calls in its simulators -- so each result reads ``[not executed: ...]`` (``metadata.results:
  not_recorded``); the assistant messages are BFCL's reference path, not a model's output.
- Every user turn is a decision point: one turn case ``bfcl/<id>/turn-<message index>`` with the
  conversation so far as context. Its calls are matched without regard to order, as BFCL's response
  checker compares a turn's calls; an empty answer is ``no_call`` -- or ``clarify`` in the
  ``miss_param`` category, where the user left out what the call needs.
- Call strings are parsed with ``ast`` (never evaluated): keyword arguments by name, positional ones by
  the order of the function's parameters; values must be Python literals.
- Tools: the functions of every ``involved_classes`` entry, from ``multi_turn_func_doc/<file>.json``,
  minus ``excluded_function``; functions in ``missed_function`` are held back until their turn (the
  transcript lists them all; each case lists what the model had at that turn).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.importers.base import ImportOptions
from scorer.importers.bfcl_schema import json_schema
from scorer.importers.common import dumps_arguments, need_dict, need_list, need_str
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

SOURCE = "bfcl"
NOT_EXECUTED = "[not executed: BFCL runs this call in its simulator; the result is not recorded]"
CLASS_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json", "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json", "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json", "MemoryAPI_kv": "memory_kv.json", "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}


def is_multi_turn(record: Any, category: str) -> bool:
    return category.startswith("multi_turn") or (
        isinstance(record, dict) and "involved_classes" in record and "function" not in record)


class FunctionDocs:
    """The function docs of each class, read once per import from ``multi_turn_func_doc/``."""

    def __init__(self, question_file: Path) -> None:
        self.folder = question_file.parent / "multi_turn_func_doc"
        self._by_class: dict[str, list[dict[str, Any]]] = {}

    def of(self, cls: str) -> list[dict[str, Any]]:
        if cls not in self._by_class:
            name = CLASS_DOCS.get(cls)
            if name is None:
                raise InvalidRecord(f"involved class {cls!r} is not one of {', '.join(sorted(CLASS_DOCS))}")
            path = self.folder / name
            if not path.is_file():
                raise InvalidRecord(f"no function docs for {cls}: expected {path} (BFCL keeps them in "
                                    "multi_turn_func_doc/ beside the question file)")
            docs = []
            for n, text in enumerate(path.read_bytes().removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
                if text.strip():  # the strict reader: no NaN, no undecodable bytes
                    value = strict_json.loads(text, source=str(path), line=n)
                    try:
                        docs.append(need_dict(value, "the function doc"))
                    except InvalidRecord as err:
                        raise err.located(str(path), n) from None
            self._by_class[cls] = docs
        return self._by_class[cls]


def parse_call(text: str, parameters: dict[str, list[str]], where: str) -> Call:
    """``"mv(source='a', destination='b')"`` -> ``Call(name="mv", arguments={...})``, without evaluating."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise InvalidRecord(f"{where}: {text!r} is not a Python call ({exc.msg})") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        raise InvalidRecord(f"{where}: {text!r} is not a call of a function by name")
    name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
    if name not in parameters:
        raise InvalidRecord(f"{where}: {text!r} calls {name!r}, which is not among the question's functions")
    order = parameters[name]
    arguments: dict[str, Any] = {}
    if len(node.args) > len(order):
        raise InvalidRecord(f"{where}: {text!r} passes {len(node.args)} positional arguments; {name} takes "
                            f"{len(order)}")
    for position, value in enumerate(node.args):
        arguments[order[position]] = _literal(value, text, where)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise InvalidRecord(f"{where}: {text!r} uses **kwargs, which cannot be read without running it")
        arguments[keyword.arg] = _literal(keyword.value, text, where)
    return Call(name=name, arguments=arguments)


def _literal(node: ast.expr, text: str, where: str) -> Any:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError):
        raise InvalidRecord(f"{where}: {text!r} has an argument that is not a literal "
                            f"({ast.unparse(node)})") from None
    return list(value) if isinstance(value, tuple) else value


def records(record: dict[str, Any], category: str, answer: tuple[int, Any] | None, answers_file: Path,
            docs: FunctionDocs, options: ImportOptions) -> list[Transcript | GoldCase]:
    record_id = need_str(str(record.get("id", "")) or None, "id")
    turns = need_list(record.get("question"), "question")
    if answer is None:
        raise InvalidRecord(f"no answer for {record_id!r} in {answers_file}")
    ground_truth = need_list(answer[1], f"ground_truth (answer at {answers_file}:{answer[0]})")
    if len(ground_truth) != len(turns):
        raise InvalidRecord(f"{len(turns)} turns but {len(ground_truth)} answers (answer at "
                            f"{answers_file}:{answer[0]})")
    excluded = set(need_list(record.get("excluded_function") or [], "excluded_function"))
    missed = {int(turn): set(names) for turn, names in
              need_dict(record.get("missed_function") or {}, "missed_function").items()}
    functions: list[dict[str, Any]] = []
    for cls in need_list(record.get("involved_classes"), "involved_classes"):
        functions += [f for f in docs.of(str(cls)) if f.get("name") not in excluded]
    tools = tuple(ToolSpec(name=need_str(f.get("name"), "function name"), description=str(f.get("description", "")),
                           parameters=json_schema(f.get("parameters") or {"type": "dict", "properties": {}}))
                  for f in functions)
    order = {t.name: list(t.properties) for t in tools}
    messages: list[Message] = []
    cases: list[GoldCase] = []
    held_back = set().union(*missed.values()) if missed else set()
    for t, turn in enumerate(turns):
        held_back -= missed.get(t, set())
        for k, raw in enumerate(need_list(turn, f"question[{t}]")):
            message = need_dict(raw, f"question[{t}][{k}]")
            messages.append(Message(role=need_str(message.get("role"), f"question[{t}][{k}].role"),
                                    content=str(message.get("content", ""))))
        where = f"ground_truth[{t}] (answer at {answers_file}:{answer[0]})"
        calls = [parse_call(need_str(c, where), order, where) for c in need_list(ground_truth[t], where)]
        if calls:
            expected = Answer(behavior="call", calls=tuple(calls))
        else:
            expected = Answer(behavior="clarify" if "miss_param" in category else "no_call")
        offered = tuple(tool for tool in tools if tool.name not in held_back)
        index = len(messages)
        cases.append(GoldCase(
            id=f"bfcl/{record_id}/turn-{index}", conversation_id=f"bfcl/{record_id}", turn=index,
            split=options.split, kind="turn", tools=offered, messages=tuple(messages), expected=expected,
            tags=(SOURCE, category), provenance=Provenance(source=SOURCE),
            rationale=_rationale(category, t, expected)))
        refs = tuple(ToolCallRef(id=f"turn{t}_call{k}", function=FunctionCall(
            name=c.name, arguments=dumps_arguments(c.arguments))) for k, c in enumerate(calls))
        messages.append(Message(role="assistant", tool_calls=refs))
        messages += [Message(role="tool", tool_call_id=ref.id, content=NOT_EXECUTED) for ref in refs]
    transcript = Transcript(id=f"bfcl/{record_id}", messages=tuple(messages), tools=tools, metadata={
        "source": SOURCE, "category": category, "results": "not_recorded",
        "involved_classes": list(record.get("involved_classes") or [])})
    return [transcript, *cases]


def _rationale(category: str, turn: int, expected: Answer) -> str:
    if expected.behavior == "clarify":
        return (f"BFCL {category}, turn {turn + 1}: the user left out a parameter the call needs; BFCL expects "
                "no call, so the right move is to ask.")
    if expected.behavior == "no_call":
        return f"BFCL {category}, turn {turn + 1}: BFCL's answer makes no call in this turn."
    return (f"BFCL {category}, turn {turn + 1}: the calls of BFCL's possible answer for this turn, in any order "
            "(BFCL checks them by running them).")
