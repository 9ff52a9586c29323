"""BFCL (Berkeley Function Calling Leaderboard) question files with their answers.

A question file ``BFCL_v4_<category>.json`` is JSON Lines despite its name: ``{"id", "question":
[[{role, content}, ...]], "function": [{name, description, parameters}]}``. Its answers are in
``possible_answer/`` beside it, under the same file name: ``{"id", "ground_truth": [{"<tool>":
{"<arg>": [acceptable values]}}]}``. Mapping decisions:

- Each question becomes a transcript ``bfcl/<id>`` (messages from ``question[0]``, tools from
  ``function``; metadata ``source: bfcl``, ``category`` and ``awaiting_reply: true``) and a turn gold case ``bfcl/<id>`` at the
  decision point after the last message (``turn = len(messages)``). The multi-turn categories
  (``multi_turn_*``) are read by ``bfcl_multi_turn``. An older-style ``question`` given as a string or
  a flat message list is read as one turn.
- Tool schemas: BFCL's pseudo-types are mapped to JSON Schema (``bfcl_schema``).
- Answers: see ``bfcl_answers`` (first value expected, the list as ``accept`` with ``one_of``, ``""`` ->
  ``optional``, dict patterns expanded, strings ``normalized`` as BFCL compares them, per-call
  differences in parallel answers as the calls' own rules).
  Several calls in one answer (the ``parallel`` categories) are the case's parallel calls, matched
  without regard to order, as in BFCL.
- ``irrelevance`` and ``live_irrelevance`` have no answer file: none of the functions fits, so the
  gold is ``behavior: no_call``.
- ``live_relevance`` has no answer file either: BFCL only checks that some function is called, so the
  gold is a tool-only call to the first function with every other function as a tool-only alternative.
- The category comes from the file name (``BFCL_v4_parallel.json`` -> ``parallel``) or else the id;
  tags are ``["bfcl", <category>]``.
- An answer file imported on its own is refused with a message naming the question file to import.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scorer.errors import InvalidRecord
from scorer.formats import iter_json_lines_tolerant
from scorer.importers import bfcl_multi_turn
from scorer.importers.base import ImportOptions, Item
from scorer.importers.bfcl_answers import GoldAnswer, gold_answer
from scorer.importers.bfcl_schema import json_schema
from scorer.importers.common import guard, need_dict, need_list, need_str, openai_messages
from scorer.model import Answer, Call, GoldCase, Provenance, ToolSpec, Transcript

NAME = "bfcl"
DESCRIPTION = "BFCL question files (BFCL_v4_<category>.json) with possible_answer/ beside them"
SOURCE = "bfcl"
NO_CALL_CATEGORIES = frozenset({"irrelevance", "live_irrelevance"})
ANY_CALL_CATEGORIES = frozenset({"live_relevance"})
PARALLEL_CATEGORIES = frozenset({"parallel", "parallel_multiple", "live_parallel", "live_parallel_multiple"})

_FILE_CATEGORY = re.compile(r"^BFCL_v\d+_(?P<category>.+)$")
_ID_SUFFIX = re.compile(r"_\d+(-\d+)*$")


def sniff(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    if not first_line.startswith(b"{"):
        return False
    question = b'"question"' in first_line and (b'"function"' in first_line or b'"involved_classes"' in first_line)
    return question or (b'"ground_truth"' in first_line and b'"id"' in first_line)


def category_of(path: Path, record_id: str) -> str:
    match = _FILE_CATEGORY.match(path.stem)
    return match.group("category") if match else _ID_SUFFIX.sub("", record_id)


def answer_path(path: Path) -> Path:
    return path.parent / "possible_answer" / path.name


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    answers: dict[str, tuple[int, Any]] | None = None
    docs = bfcl_multi_turn.FunctionDocs(path)
    with path.open("rb") as fh:
        for line, value in iter_json_lines_tolerant(fh, source):
            if isinstance(value, InvalidRecord):
                yield value
                continue
            if isinstance(value, dict) and "ground_truth" in value and "question" not in value:
                yield InvalidRecord(
                    f"this is a BFCL answer file; import the question file of the same name (e.g. "
                    f"{path.parent.parent / path.name}), which reads its answers from possible_answer/",
                    source=source, line=line)
                return
            record_id = str(value.get("id", "")) if isinstance(value, dict) else ""
            category = category_of(path, record_id)
            needs_answer = category not in NO_CALL_CATEGORIES | ANY_CALL_CATEGORIES
            if needs_answer and answers is None:
                answers = {}
                yield from _read_answers(path, answers)
            answer = (answers or {}).get(record_id) if needs_answer else None
            if bfcl_multi_turn.is_multi_turn(value, category):
                yield from guard(source, line, bfcl_multi_turn.records, value, category, answer, answer_path(path),
                                 docs, options)
                continue
            yield from guard(source, line, _records, value, category, answer, needs_answer, options,
                             answer_path(path))


def _read_answers(path: Path, into: dict[str, tuple[int, Any]]) -> Iterator[InvalidRecord]:
    target = answer_path(path)
    if not target.is_file():
        yield InvalidRecord(f"no answers: expected {target} (BFCL keeps them in possible_answer/ beside "
                            "the question file)", source=str(path))
        return
    with target.open("rb") as fh:
        for line, value in iter_json_lines_tolerant(fh, str(target)):
            if isinstance(value, InvalidRecord):
                yield value
            elif not isinstance(value, dict) or not isinstance(value.get("id"), str):
                yield InvalidRecord("expected an answer {\"id\", \"ground_truth\"}", source=str(target), line=line)
            else:
                into[value["id"]] = (line, value.get("ground_truth"))


def _records(value: Any, category: str, answer: tuple[int, Any] | None, needs_answer: bool,
             options: ImportOptions, answers_file: Path) -> list[Transcript | GoldCase]:
    record = need_dict(value, "the line")
    record_id = need_str(str(record.get("id", "")) or None, "id")
    messages = openai_messages(_first_turn(record.get("question")), "question[0]")
    functions = record.get("function")
    raw_functions = need_list([functions] if isinstance(functions, dict) else functions, "function")
    schemas: dict[str, Any] = {}
    tools = []
    for i, raw in enumerate(raw_functions):
        function = need_dict(raw, f"function[{i}]")
        name = need_str(function.get("name"), f"function[{i}].name")
        parameters = need_dict(function.get("parameters") or {"type": "dict", "properties": {}},
                               f"function[{i}].parameters")
        schemas[name] = parameters
        tools.append(ToolSpec(name=name, description=str(function.get("description") or ""),
                              parameters=json_schema(parameters)))
    case_id = f"bfcl/{record_id}"
    transcript = Transcript(id=case_id, messages=messages, tools=tuple(tools),
                            metadata={"source": SOURCE, "category": category, "awaiting_reply": True})
    if needs_answer:
        if answer is None:
            raise InvalidRecord(f"no answer for {record_id!r} in {answers_file}")
        try:
            gold = gold_answer(answer[1], schemas)
        except InvalidRecord as err:
            raise InvalidRecord(f"{err.message} (answer at {answers_file}:{answer[0]})") from None
    elif category in NO_CALL_CATEGORIES:
        gold = GoldAnswer(expected=Answer(behavior="no_call"), alternatives=(), arg_rules={})
    else:
        answers = [Answer(behavior="call", calls=(Call(name=t.name),), tool_only=True) for t in tools]
        if not answers:
            raise InvalidRecord("a relevance question needs at least one function")
        gold = GoldAnswer(expected=answers[0], alternatives=tuple(answers[1:]), arg_rules={})
    case = GoldCase(
        id=case_id, conversation_id=case_id, turn=len(messages), split=options.split, kind="turn",
        tools=tuple(tools), messages=messages, expected=gold.expected, alternatives=gold.alternatives,
        arg_rules=gold.arg_rules, tags=(SOURCE, category) + (("bfcl:truncated",) if gold.truncated else ()),
        rationale=_rationale(category, gold), provenance=Provenance(source=SOURCE))
    return [transcript, case]


def _first_turn(question: Any) -> list[Any]:
    if isinstance(question, str):
        return [{"role": "user", "content": question}]
    turns = need_list(question, "question")
    if not turns:
        raise InvalidRecord("question is empty")
    if all(isinstance(t, dict) for t in turns):
        return turns
    if len(turns) > 1:
        raise InvalidRecord(f"question has {len(turns)} turns; multi-turn BFCL categories are not supported "
                            "(their gold is checked by executing the calls)")
    return need_list(turns[0], "question[0]")


def _rationale(category: str, gold: GoldAnswer) -> str:
    if category in NO_CALL_CATEGORIES:
        text = f"BFCL {category}: none of the offered functions fits the request, so no call is right."
    elif category in ANY_CALL_CATEGORIES:
        text = f"BFCL {category}: any call to an offered function counts; BFCL does not check the arguments."
    elif category in PARALLEL_CATEGORIES:
        text = f"BFCL {category}: the parallel calls of BFCL's possible answer, in any order."
    else:
        text = f"BFCL {category}: BFCL's possible answer."
    if gold.truncated:
        text += " BFCL accepts more combinations than this case lists (expansion was cut short)."
    return text
