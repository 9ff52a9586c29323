"""The label payload: drafts accept incomplete work; problems() and gold_case() decide what is gold."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from labeler.labels import (
    LabelBody,
    LabelIncomplete,
    RuleDraft,
    argument_errors,
    call_diff,
    gold_case,
    observed_as_calls,
    problems,
    same_as_observed,
    suggest_match,
)
from scorer.model import (
    Answer,
    ArgRule,
    Call,
    GoldCase,
    Message,
    Provenance,
    ToolCallRef,
    ToolSpec,
    Transcript,
)

BOOK = ToolSpec(name="book_table", parameters={
    "type": "object",
    "properties": {"restaurant": {"type": "string"}, "party_size": {"type": "integer", "minimum": 1},
                   "date": {"type": "string", "format": "date"}, "note": {"type": "string"}},
    "required": ["restaurant", "party_size"]})
SEARCH = ToolSpec(name="search", parameters={"type": "object", "properties": {"q": {"type": "string"}}})
TRANSCRIPT = Transcript(
    id="c1",
    messages=(
        Message(role="user", content="Table for 2 at Nopa tomorrow"),
        Message(role="assistant", tool_calls=(ToolCallRef(id="k1", function={
            "name": "book_table", "arguments": '{"restaurant": "Nopa", "party_size": 2}'}),)),
        Message(role="tool", tool_call_id="k1", content="ok"),
        Message(role="assistant", content="Booked."),
    ),
    tools=(BOOK, SEARCH),
)
AT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
NOPA = Call(name="book_table", arguments={"restaurant": "Nopa", "party_size": 2})


def test_a_draft_keeps_incomplete_rules_that_a_gold_case_refuses() -> None:
    body = LabelBody(decision="same", calls=(NOPA,), arg_rules={"book_table": {"restaurant": RuleDraft(match="regex")}})
    assert LabelBody.model_validate_json(body.canonical()) == body
    assert problems(body, TRANSCRIPT.tools) == ["rule for book_table.restaurant: match 'regex' needs a pattern"]
    with pytest.raises(LabelIncomplete):
        gold_case(body, transcript=TRANSCRIPT, message_index=1, annotators=("ann",), labeled_at=AT)


@pytest.mark.parametrize(("body", "expected"), [
    (LabelBody(), ["choose a decision (0 no call, 1 same as observed, 2 different call, 3 ask the user)"]),
    (LabelBody(decision="different"), ["add the expected call"]),
    (LabelBody(decision="different", calls=(Call(name="book_table", arguments={"party_size": 0}),)),
     ["call 1 book_table.party_size: 0 is less than the minimum of 1",
      "call 1 book_table.restaurant: required, but missing"]),
    (LabelBody(decision="different", calls=(Call(name="delete_all"),)),
     ["call 1: 'delete_all' is not among the tools offered at this turn"]),
    (LabelBody(decision="same", calls=(NOPA,), arg_rules={"book_table": {"party_size": RuleDraft(match="from_call",
                                                                                              from_call=1)}}),
     ["rule for book_table.party_size: 'comes from call' needs the number of an expected call (0 to 0)"]),
    (LabelBody(decision="no_call", calls=(Call(name="delete_all"),)), []),  # parked calls do not count
    (LabelBody(decision="clarify"), []),
])
def test_problems(body: LabelBody, expected: list[str]) -> None:
    assert problems(body, TRANSCRIPT.tools) == expected


def test_gold_case_from_a_call_label() -> None:
    body = LabelBody(
        decision="different",
        calls=(Call(name="book_table", arguments={"restaurant": "Nopa", "party_size": 2, "date": "2026-01-06"}),),
        arg_rules={"book_table": {"date": RuleDraft(match="date"), "restaurant": RuleDraft()}},
        required_args={"book_table": ("restaurant", "date")},  # party_size waived, date added
        alternatives=(Answer(behavior="clarify"),),
        tags=("relative_date",), rationale="tomorrow = Jan 6", reference_time=AT, split="rolling",
    )
    case = gold_case(body, transcript=TRANSCRIPT, message_index=1, annotators=("ann",), labeled_at=AT,
                     source="unit")
    assert case == GoldCase(
        id="c1#t1", conversation_id="c1", turn=1, split="rolling", kind="turn", tools=TRANSCRIPT.tools,
        messages=TRANSCRIPT.messages[:1], reference_time=AT, expected=Answer(behavior="call", calls=body.calls),
        alternatives=(Answer(behavior="clarify"),),
        arg_rules={"book_table": {"date": ArgRule(match="date"), "party_size": ArgRule(optional=True)}},
        required_args={"book_table": ("date",)}, tags=("relative_date",), rationale="tomorrow = Jan 6",
        provenance=Provenance(annotators=("ann",), status="submitted", labeled_at=AT, source="unit"))
    assert case.required_for("book_table") == ("restaurant", "party_size", "date")


def test_no_call_gold_drops_parked_calls() -> None:
    body = LabelBody(decision="no_call", calls=(NOPA,))
    case = gold_case(body, transcript=TRANSCRIPT, message_index=3, annotators=("ann",), labeled_at=AT)
    assert case.expected == Answer(behavior="no_call") and case.arg_rules == {}


def test_reference_time_needs_a_timezone() -> None:
    with pytest.raises(ValidationError, match="needs a timezone"):
        LabelBody(reference_time=datetime(2026, 1, 5, 10, 0))


def test_argument_errors_follow_the_chosen_required_keys() -> None:
    assert argument_errors(BOOK, {"restaurant": "Nopa"}) == [("party_size", "required, but missing")]
    assert argument_errors(BOOK, {"restaurant": "Nopa"}, required=("restaurant",)) == []
    assert argument_errors(BOOK, {"restaurant": 5, "party_size": 2}) == [("restaurant", "5 is not of type 'string'")]


@pytest.mark.parametrize(("name", "schema", "kind"), [
    ("cabin", {"type": "string", "enum": ["economy", "business"]}, "exact"),
    ("date", {"type": "string", "format": "date"}, "date"),
    ("start", {"type": "string", "format": "date-time"}, "datetime"),
    ("amount", {"type": "number"}, "number"),
    ("count", {"type": "integer"}, "exact"),
    ("contact", {"type": "string", "description": "Phone number"}, "phone"),
    ("price", {"type": "string"}, "currency"),
    ("summary", {"type": "string"}, "semantic"),
    ("first_name", {"type": "string"}, "ci"),
    ("user_id", {"type": "string"}, "exact"),
    ("flag", {"type": "boolean"}, "exact"),
])
def test_match_suggestions_from_the_schema(name: str, schema: dict[str, object], kind: str) -> None:
    assert suggest_match(name, schema) == kind


def test_call_diff_names_each_change() -> None:
    observed = [{"name": "book_table", "arguments": {"restaurant": "Nopa", "party_size": 2}}]
    assert call_diff(observed, (NOPA,)) == []
    assert same_as_observed(observed, observed_as_calls(observed))
    changed = (Call(name="book_table", arguments={"restaurant": "Nopa", "party_size": 3, "date": "2026-01-06"}),
               Call(name="search", arguments={"q": "Nopa"}))
    assert call_diff(observed, changed) == [
        '+ call 1 date: "2026-01-06"', "~ call 1 party_size: 2 → 3", '+ call 2: search({"q":"Nopa"})']
    assert call_diff([*observed, {"name": "search", "arguments": "{bad"}], (Call(name="search_v2"),)) == [
        "~ call 1: tool book_table → search_v2", "- call 1 party_size: 2", '- call 1 restaurant: "Nopa"',
        "- call 2: search (the agent's call is not expected)"]
    assert observed_as_calls([{"name": "search", "arguments": "{bad"}]) == (Call(name="search"),)


def test_trajectory_problems_and_case() -> None:
    from labeler.labels import TrajectoryBody, trajectory_case, trajectory_problems
    from scorer.model import Dependency

    search = Call(name="search", arguments={"q": "Nopa"})
    bad = TrajectoryBody(calls=(search, Call(name="book_table", arguments={"restaurant": "Nopa"})),
                         after=(Dependency(step=1, requires=(2,)),))
    assert trajectory_problems(bad, TRANSCRIPT.tools) == [
        "step 1 book_table.party_size: required, but missing", "step 1 depends on step 2, which does not exist"]
    good = TrajectoryBody(calls=(search, NOPA), order="superset", after=(Dependency(step=1, requires=(0,)),))
    case = trajectory_case(good, transcript=TRANSCRIPT, annotators=("ann",), labeled_at=AT)
    assert (case.id, case.kind, case.turn, case.order, case.messages) == (
        "c1#trajectory", "trajectory", None, "superset", TRANSCRIPT.messages[:1])
    assert case.expected == Answer(behavior="call", calls=(search, NOPA))
    nothing = trajectory_case(TrajectoryBody(no_action=True), transcript=TRANSCRIPT, annotators=("ann",),
                              labeled_at=AT)
    assert nothing.expected == Answer(behavior="no_call")


def test_a_rule_naming_a_step_that_is_gone_is_a_problem_not_a_crash_on_submit() -> None:
    """Removing the step a 'comes from call k' rule pointed at leaves the rule dangling: the label lists it as a
    problem (and cannot be submitted), instead of the gold case's own check raising on submit."""
    from labeler.labels import TrajectoryBody, trajectory_case, trajectory_problems

    search = Call(name="search", arguments={"q": "Nopa"})
    body = TrajectoryBody(calls=(search, NOPA),
                          arg_rules={"book_table": {"restaurant": RuleDraft(match="from_call", from_call=2)}})
    assert trajectory_problems(body, TRANSCRIPT.tools) == [
        "rule for book_table.restaurant: comes from step 2, which does not exist"]
    with pytest.raises(LabelIncomplete):
        trajectory_case(body, transcript=TRANSCRIPT, annotators=("ann",), labeled_at=AT)
    fine = body.model_copy(update={"arg_rules": {"book_table": {"restaurant": RuleDraft(match="from_call",
                                                                                       from_call=0)}}})
    assert trajectory_problems(fine, TRANSCRIPT.tools) == []
