"""A reviewer edits a gold case in the labeling editor: the case becomes a label body and back unchanged
(every turn case of the bundled demo), and an edit that breaks the tool schema is refused with what breaks."""

from __future__ import annotations

import pytest

from labeler.demo import demo_dir
from labeler.labels import LabelIncomplete, body_from_case, case_from_body, schema_problems
from scorer.formats import iter_json_lines, parse_record
from scorer.model import Call, GoldCase


def demo_turn_cases() -> list[GoldCase]:
    cases = []
    for path in sorted(demo_dir().glob("*.jsonl")):
        for n, value in iter_json_lines(path.read_bytes().splitlines(keepends=True), str(path)):
            record = parse_record(value, source=str(path), line=n)
            if isinstance(record, GoldCase) and record.kind == "turn":
                cases.append(record)
    return cases


CASES = demo_turn_cases()


def test_the_demo_has_turn_cases_to_edit() -> None:
    assert len(CASES) == 43


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_case_survives_the_editor_unchanged(case: GoldCase) -> None:
    assert case_from_body(body_from_case(case), case) == case  # even one whose imported gold breaks its schema


def test_the_demo_gold_fits_its_own_schemas_and_a_value_outside_an_enum_does_not() -> None:
    # The bundled gold fits its tools (ToolTalk's CreateEvent enum sits on event_type, not on the free-text name;
    # a BFCL relevance case whose answers are "tool only" has no arguments to check).
    assert {c.id: schema_problems(c) for c in CASES if schema_problems(c)} == {}
    case = next(c for c in CASES if c.id == "tooltalk/golden_conversation_2/turn-5")
    call = case.expected.calls[0]
    assert (call.arguments["name"], call.arguments["event_type"]) == ("Walk", "event")
    wrong = case.model_copy(update={"expected": case.expected.model_copy(update={"calls": (
        call.model_copy(update={"arguments": {**call.arguments, "event_type": "Walk"}}),)})})
    assert schema_problems(wrong) == ["call 1 CreateEvent.event_type: 'Walk' is not one of ['meeting', 'event']"]


def test_an_edit_that_breaks_the_schema_says_what_breaks() -> None:
    case = next(c for c in CASES if c.expected.behavior == "call" and c.tools[0].required)
    call = case.expected.calls[0]
    spec = next(t for t in case.tools if t.name == call.name)
    missing = spec.required[0]
    body = body_from_case(case)
    broken = body.model_copy(update={"calls": (Call(name=call.name, arguments={
        k: v for k, v in call.arguments.items() if k != missing}),)})
    with pytest.raises(LabelIncomplete) as raised:
        case_from_body(broken, case)
    assert f"call 1 {call.name}.{missing}: required, but missing" in raised.value.problems
