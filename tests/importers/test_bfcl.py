"""BFCL questions + possible answers -> transcripts and turn gold cases, on the real data."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scorer.importers import detect
from scorer.importers.bfcl_schema import json_schema
from scorer.model import Answer, ArgRule, Call, GoldCase, Message, Provenance, ToolSpec, Transcript
from tests.importers.helpers import REAL, SHARED, convert, needs_shared, write_lines

BFCL = REAL / "bfcl"


def question(path: Path, record_id: str) -> dict[str, Any]:
    return next(json.loads(x) for x in path.read_text().splitlines() if json.loads(x)["id"] == record_id)


def test_a_simple_question_gives_a_transcript_and_a_case_after_its_last_message() -> None:
    src = BFCL / "BFCL_v4_simple_python.json"
    assert detect(src).NAME == "bfcl"
    result = convert(src)
    assert result.errors == []
    tool = ToolSpec(name="calculate_triangle_area", description="Calculate the area of a triangle given its base and height.",
                    parameters={"type": "object", "properties": {
                        "base": {"type": "integer", "description": "The base of the triangle."},
                        "height": {"type": "integer", "description": "The height of the triangle."},
                        "unit": {"type": "string", "description": "The unit of measure (defaults to 'units' if not specified)"}},
                        "required": ["base", "height"]})
    messages = (Message(role="user", content="Find the area of a triangle with a base of 10 units and height of 5 units."),)
    assert result.transcript("bfcl/simple_python_0") == Transcript(
        id="bfcl/simple_python_0", messages=messages, tools=(tool,),
        metadata={"source": "bfcl", "category": "simple_python", "awaiting_reply": True})
    # ground truth: {"base": [10], "height": [5], "unit": ["units", ""]}
    assert result.case("bfcl/simple_python_0") == GoldCase(
        id="bfcl/simple_python_0", conversation_id="bfcl/simple_python_0", turn=1, tools=(tool,), messages=messages,
        expected=Answer(behavior="call", calls=(
            Call(name="calculate_triangle_area", arguments={"base": 10, "height": 5, "unit": "units"}),)),
        arg_rules={"calculate_triangle_area": {"unit": ArgRule(match="normalized", optional=True)}},
        tags=("bfcl", "simple_python"), rationale="BFCL simple_python: BFCL's possible answer.",
        provenance=Provenance(source="bfcl"))


def test_parallel_answers_are_several_calls_each_with_its_own_accept_list() -> None:
    result = convert(BFCL / "BFCL_v4_parallel.json")
    artist = {"artist": ArgRule(match="normalized")}  # a string, compared as BFCL does; the durations are ints
    assert result.case("bfcl/parallel_0").expected == Answer(behavior="call", calls=(
        Call(name="spotify.play", arguments={"artist": "Taylor Swift", "duration": 20}, arg_rules=artist),
        Call(name="spotify.play", arguments={"artist": "Maroon 5", "duration": 15}, arg_rules=artist)))
    # resistivity is ["", "copper"] in one call and ["aluminum"] in the other: each call says so itself
    case = result.case("bfcl/parallel_2")
    copper = {"length": 5, "area": 0.01, "resistivity": "copper"}
    aluminum = {"length": 5, "area": 0.01, "resistivity": "aluminum"}
    assert case.expected == Answer(behavior="call", calls=(
        Call(name="calculate_resistance", arguments=copper,
             arg_rules={"resistivity": ArgRule(match="normalized", optional=True)}),
        Call(name="calculate_resistance", arguments=aluminum,
             arg_rules={"resistivity": ArgRule(match="normalized")})))
    assert case.arg_rules == {}
    assert case.alternatives == ()


def test_value_lists_become_one_of_and_dict_patterns_are_expanded() -> None:
    case = convert(BFCL / "BFCL_v4_live_multiple.json").case("bfcl/live_multiple_0-0-0")
    preferences = {"size": "large", "milk_type": "coconut", "sweetness_level": "extra", "temperature": "hot"}
    said = ["served boiling hot", "serve boiling hot", "boiling hot", "served 'boiling hot'"]
    assert case.expected.calls == (Call(name="ChaDri.change_drink", arguments={
        "drink_id": "latte", "new_preferences": {**preferences, "special_instructions": said[0]}}),)
    assert case.arg_rules == {"ChaDri.change_drink": {
        "drink_id": ArgRule(match="normalized"),
        "new_preferences": ArgRule(
            match="normalized", accept=tuple({**preferences, "special_instructions": s} for s in said))}}

    # eight keys, seven of which may be left out: 2^7 acceptable bodies, the first values first
    body = convert(BFCL / "BFCL_v4_live_simple.json").case("bfcl/live_simple_44-18-0")
    rule = body.arg_rules["ThinQ_Connect"]["body"]
    assert rule.match == "normalized" and len(rule.accept) == 128
    assert rule.accept[0] == body.expected.calls[0].arguments["body"] == {
        "currentJobMode": "COOL", "windStrength": "MID", "monitoringEnabled": False, "airCleanOperationMode": "STOP",
        "airConOperationMode": "POWER_ON", "powerSaveEnabled": False, "coolTargetTemperature": 24,
        "targetTemperature": 22}
    assert {"airConOperationMode": "POWER_ON", "airCleanOperationMode": "STOP"} in rule.accept


def test_irrelevance_is_no_call_and_relevance_is_any_call() -> None:
    for name, count in (("BFCL_v4_irrelevance.json", 3), ("BFCL_v4_live_irrelevance.json", 2)):
        result = convert(BFCL / name)
        assert [c.expected for c in result.gold] == [Answer(behavior="no_call")] * count
        assert all(c.arg_rules == {} and c.alternatives == () for c in result.gold)
    relevance, = convert(BFCL / "BFCL_v4_live_relevance.json").gold
    names = [t.name for t in relevance.tools]
    assert names == ["search_engine.query", "generate_image", "generate_human_image"]
    assert [relevance.expected, *relevance.alternatives] == [
        Answer(behavior="call", calls=(Call(name=n),), tool_only=True) for n in names]


def test_pseudo_types_map_to_json_schema_recursively() -> None:
    assert json_schema({"type": "dict", "required": ["a"], "properties": {
        "a": {"type": "float", "description": "kept"},
        "b": {"type": "tuple", "items": {"type": "dict", "properties": {"c": {"type": "any"}}}},
        "d": {"type": "string", "enum": ["x", "y"], "default": None},
        "type": {"type": "integer", "optional": True},
    }}) == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "number", "description": "kept"},
        "b": {"type": "array", "items": {"type": "object", "properties": {"c": {}}}},
        "d": {"type": ["string", "null"], "enum": ["x", "y", None], "default": None},
        "type": {"type": "integer", "optional": True},
    }}


def test_answers_missing_or_imported_alone_are_clear_errors(tmp_path: Path) -> None:
    lone = tmp_path / "BFCL_v4_simple_python.json"
    shutil.copyfile(BFCL / "BFCL_v4_simple_python.json", lone)
    assert convert(lone).error_lines == [
        f"{lone}: no answers: expected {tmp_path}/possible_answer/BFCL_v4_simple_python.json "
        "(BFCL keeps them in possible_answer/ beside the question file)"] + [
        f"{lone}:{n}: no answer for 'simple_python_{n - 1}' in {tmp_path}/possible_answer/BFCL_v4_simple_python.json"
        for n in (1, 2, 3)]
    answers = BFCL / "possible_answer" / "BFCL_v4_parallel.json"
    assert detect(answers).NAME == "bfcl"
    assert convert(answers).error_lines == [
        f"{answers}:1: this is a BFCL answer file; import the question file of the same name (e.g. "
        f"{BFCL / 'BFCL_v4_parallel.json'}), which reads its answers from possible_answer/"]


def test_a_bad_question_or_answer_is_reported_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    src = BFCL / "BFCL_v4_parallel.json"
    lines = src.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["question"] = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    copy = write_lines(tmp_path / src.name, [lines[0], json.dumps(broken), lines[2][:40]])
    answers = (BFCL / "possible_answer" / src.name).read_text().splitlines()
    write_lines(tmp_path / "possible_answer" / src.name, [answers[0].replace('"ground_truth": [', '"ground_truth": [7, ')])
    result = convert(copy)
    assert result.transcripts == [] and result.gold == []
    assert result.error_lines == [
        f"{copy}:1: ground_truth[0] should be an object, got a number (answer at "
        f"{tmp_path}/possible_answer/{src.name}:1)",
        f"{copy}:2: question has 2 turns; multi-turn BFCL categories are not supported "
        "(their gold is checked by executing the calls)",
        f"{copy}:3: not valid JSON: Unterminated string starting at (column 37)",
    ]


CATEGORY_COUNTS = {
    # category: (questions, calls per case -> cases, no_call cases)
    "simple_python": (400, {1: 400}, 0),
    "multiple": (200, {1: 200}, 0),
    "parallel": (200, {2: 109, 3: 52, 4: 36, 6: 1, 8: 2}, 0),
    "parallel_multiple": (200, {2: 64, 3: 66, 4: 69, 5: 1}, 0),
    "irrelevance": (240, {0: 240}, 240),
    "live_simple": (258, {1: 258}, 0),
    "live_multiple": (1053, {1: 1053}, 0),
    "live_parallel": (16, {2: 13, 3: 1, 4: 1, 6: 1}, 0),
    "live_parallel_multiple": (24, {2: 20, 3: 2, 4: 1, 5: 1}, 0),
    "live_irrelevance": (884, {0: 884}, 884),
    "live_relevance": (16, {1: 16}, 0),
}


@needs_shared
@pytest.mark.parametrize("category", sorted(CATEGORY_COUNTS))
def test_every_category_converts_with_its_real_counts(category: str) -> None:
    result = convert(SHARED / "bfcl" / f"BFCL_v4_{category}.json")
    questions, calls, no_calls = CATEGORY_COUNTS[category]
    assert result.errors == []
    assert len(result.transcripts) == len(result.gold) == questions
    assert Counter(len(c.expected.calls) for c in result.gold) == calls
    assert sum(c.expected.behavior == "no_call" for c in result.gold) == no_calls
    assert all(c.turn == len(c.messages) and c.tags[:2] == ("bfcl", category) for c in result.gold)
    if category == "parallel":
        assert len(result.case("bfcl/parallel_0").expected.calls) == 2


@needs_shared
def test_no_pseudo_type_survives_and_no_case_is_cut_short() -> None:
    def types(node: Any) -> Iterator[Any]:
        if isinstance(node, dict):
            if "type" in node and not isinstance(node["type"], dict):
                yield node["type"]
            for value in node.values():
                yield from types(value)
        elif isinstance(node, list):
            for value in node:
                yield from types(value)

    seen: Counter[str] = Counter()
    truncated = []
    for path in sorted((SHARED / "bfcl").glob("BFCL_v4_*.json")):
        result = convert(path)
        for tool in {t.name: t for t in result.transcripts for t in t.tools}.values():
            seen.update(json.dumps(t) for t in types(tool.parameters.get("properties", {})))
        truncated += [c.id for c in result.gold if "bfcl:truncated" in c.tags]
    assert not {'"dict"', '"float"', '"tuple"', '"any"'} & set(seen)
    assert truncated == []  # per-call accept lists: nothing is expanded combination by combination
