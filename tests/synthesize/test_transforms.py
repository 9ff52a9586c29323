"""Each transformation on real gold (the demo's ToolTalk, BFCL and tau-bench cases, tau2-bench retail tasks):
what the candidate is, how the scorer then judges the agent's likely mistakes, and the cases it must refuse."""

from __future__ import annotations

import json

import pytest

from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.formats import dumps_record
from scorer.grounding import Context
from scorer.model import Call, GoldCase, Message, RunRecord
from scorer.report import report_of
from scorer.synthesize import (
    SYNTHETIC,
    Generation,
    NotApplicable,
    ToolPool,
    missing_information,
    near_duplicate_tool,
    negative_branch,
    paraphrase,
    stale_context,
    tool_shaped_no_intent,
    toolkit_growth,
)
from scorer.synthesize.decoy import decoy_name
from scorer.synthesize.negative import negative_result
from tests.synthesize.kit import demo, demo_gold, needs_data, run_of, tau2_retail

CREATE_EVENT = "tooltalk/Calendar-Messages-Reminder-CreateEvent-1/turn-7"
REGISTER = "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4"
DELETE_REMINDER = "tooltalk/DeleteReminder-easy/turn-2"
WALK = "tooltalk/golden_conversation_2/turn-5"
ALARM = "tooltalk/AddAlarm-easy/turn-2"
IRRELEVANT = "bfcl/irrelevance_0"


def expected_run(case: GoldCase, calls: tuple[Call, ...] | None = None) -> RunRecord:
    return run_of(case, *((c.name, c.arguments) for c in (calls or case.expected.calls)))


def assert_synthetic(candidate_case: GoldCase, parent: GoldCase, transform: str) -> None:
    assert candidate_case.provenance.source == SYNTHETIC
    assert candidate_case.provenance.status == "draft"
    assert candidate_case.tags == tuple(dict.fromkeys((*parent.tags, SYNTHETIC, transform)))
    assert candidate_case.id == f"{parent.id}~{transform}"
    assert candidate_case.rationale.startswith(f"Synthetic ({transform} of {parent.id}): ")


# -- near-duplicate tool ------------------------------------------------------------------------------


def test_a_decoy_sits_next_to_the_expected_tool_with_its_schema_and_the_expected_call_stays() -> None:
    parent = demo(CREATE_EVENT)
    candidate = near_duplicate_tool(parent, seed=7)
    case = candidate.case
    names = [t.name for t in case.tools]
    at = names.index("CreateEvent")
    decoy = case.tools[at + 1]
    assert decoy.name.startswith("CreateEvent") and decoy.name != "CreateEvent"
    assert decoy.parameters == parent.tool("CreateEvent").parameters  # type: ignore[union-attr]
    assert parent.tool("CreateEvent").description in decoy.description  # type: ignore[union-attr]
    assert [t for t in case.tools if t.name != decoy.name] == list(parent.tools)
    assert case.expected == parent.expected and case.messages == parent.messages
    assert_synthetic(case, parent, "near_duplicate_tool")
    assert candidate.synthesis.model_dump() == {
        "transform": "near_duplicate_tool", "parent": CREATE_EVENT, "seed": 7, "variant": "",
        "change": f"added the decoy {decoy.name} next to CreateEvent; the expected call is unchanged",
        "generation": None}

    assert score_case(case, expected_run(case)).status == "pass"
    confused = score_case(case, run_of(case, (decoy.name, parent.expected.calls[0].arguments)))
    assert confused.status == "fail"
    assert [(e.code, e.expected, e.actual) for e in confused.errors] == [
        (ErrorCode.WRONG_TOOL, "CreateEvent", decoy.name)]


@pytest.mark.parametrize(("name", "decoy"), [
    ("update_user", "update_user_preview"),
    ("CreateEvent", "CreateEventPreview"),
    ("math.gcd", "math.gcd_preview"),
    ("ChaDri.change_drink", "ChaDri.change_drink_preview"),
    ("get-weather", "get-weather-preview"),
    ("lookup", "lookup_preview"),
])
def test_decoy_names_keep_the_tools_naming_style(name: str, decoy: str) -> None:
    assert decoy_name(name, "preview") == decoy


def test_a_decoy_is_refused_without_an_expected_call_or_a_schema_to_build_it_from() -> None:
    with pytest.raises(NotApplicable, match=r"^bfcl/irrelevance_0: no expected call to put a decoy beside "
                                            r"\(the gold says no_call\)$"):
        near_duplicate_tool(demo(IRRELEVANT), seed=0)
    bare = demo(ALARM).model_copy(update={"tools": ()})
    with pytest.raises(NotApplicable, match="lists no schema for AddAlarm"):
        near_duplicate_tool(bare, seed=0)


# -- missing information --------------------------------------------------------------------------------


def test_missing_information_removes_a_user_given_value_and_expects_a_question() -> None:
    parent = demo(REGISTER)
    candidate = missing_information(parent, seed=3)
    case = candidate.case
    removed = [t for k, t in (("email", "j.hester@gahoo.com"), ("phone", "708-340-0190"), ("username", "hestler"))
               if k in candidate.synthesis.change]
    assert len(removed) == 1
    assert not Context(case.messages).contains(removed[0], phone=True)
    assert Context(parent.messages).contains(removed[0])
    assert case.expected.behavior == "clarify" and not case.alternatives and not case.arg_rules
    assert len(case.messages) == len(parent.messages) and case.turn == parent.turn
    assert_synthetic(case, parent, "missing_information")

    inventing = score_case(case, expected_run(case, parent.expected.calls))
    assert inventing.status == "fail"
    assert {e.code for e in inventing.errors} == {ErrorCode.CALLED_INSTEAD_OF_ASKING, ErrorCode.FABRICATED_VALUE}
    assert score_case(case, run_of(case)).status == "pass"  # no call: it asked


def test_missing_information_cuts_the_value_out_of_the_users_words_readably() -> None:
    case = missing_information(demo(REGISTER), seed=3).case
    user = case.messages[3].content or ""
    assert "  " not in user and " ," not in user and " ." not in user
    assert user.startswith("My name is Julian Hester")


@pytest.mark.parametrize(("case_id", "reason"), [
    (ALARM, "no grounded value to remove (no identifier-like argument of the expected calls comes from what the "
            "user said)"),
    (IRRELEVANT, "no grounded value to remove (the gold expects no_call)"),
    ("tau-bench/airline/task-1", "missing information is made from turn cases (this is a trajectory)"),
])
def test_missing_information_is_refused_where_no_user_given_value_grounds_a_call(case_id: str, reason: str) -> None:
    with pytest.raises(NotApplicable) as caught:
        missing_information(demo(case_id), seed=0)
    assert str(caught.value) == f"{case_id}: {reason}"


def test_a_value_that_is_also_in_the_system_prompt_is_not_removable() -> None:
    parent = demo(ALARM)
    said = parent.messages[1].model_copy(update={"content": "Set an alarm for 6:30, token 98a5a87a-7714-b404."})
    case = parent.model_copy(update={"messages": (parent.messages[0], said, *parent.messages[2:])})
    case = GoldCase.model_validate({**case.model_dump(), "arg_rules": {"AddAlarm": {"session_token": {
        "grounded": True}}}})
    with pytest.raises(NotApplicable, match="session_token '98a5a87a-7714-b404': it is also in a system message"):
        missing_information(case, seed=0)


# -- toolkit growth -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [5, 15, 30])
def test_toolkit_growth_adds_tools_from_other_sources_only(size: int) -> None:
    parent = demo(DELETE_REMINDER)
    pool = ToolPool.of_cases(demo_gold().values())
    candidate = toolkit_growth(parent, pool, size=size, seed=11)
    case = candidate.case
    assert candidate.id == f"{DELETE_REMINDER}~toolkit_growth+{size}" and candidate.synthesis.variant == f"+{size}"
    own = [t.name for t in parent.tools]
    assert len(case.tools) == len(own) + size
    assert [t.name for t in case.tools if t.name in own] == own  # the case's own tools keep their order
    tooltalk_tools = {t.name for c in demo_gold().values() if c.provenance.source == "tooltalk" for t in c.tools}
    extra = [t for t in case.tools if t.name not in own]
    assert not {t.name for t in extra} & tooltalk_tools
    assert case.expected == parent.expected
    assert score_case(case, expected_run(case)).status == "pass"


def test_toolkit_growth_shows_in_the_toolkit_size_breakdown() -> None:
    parent = demo(DELETE_REMINDER)
    pool = ToolPool.of_cases(demo_gold().values())
    cases = [parent, *(toolkit_growth(parent, pool, size=s, seed=1).case for s in (5, 15, 30))]
    report = report_of([[score_case(c, expected_run(c))] for c in cases])
    assert sorted(report.breakdowns["toolkit_size"]) == ["21+"]
    small = demo("bfcl/live_simple_0-0-0")
    grown = [small, *(toolkit_growth(small, pool, size=s, seed=1).case for s in (5, 15, 30))]
    report = report_of([[score_case(c, expected_run(c))] for c in grown])
    assert {k: g.results for k, g in report.breakdowns["toolkit_size"].items()} == {
        "1": 1, "6-10": 1, "11-20": 1, "21+": 1}


def test_toolkit_growth_is_refused_when_other_sources_have_too_few_tools() -> None:
    parent = demo(DELETE_REMINDER)
    small = ToolPool.of_cases(c for c in demo_gold().values() if c.provenance.source in ("tooltalk", "tau-bench"))
    available = len(small.others(parent))
    assert available == 14  # tau-bench airline's tools; ToolTalk's own do not count
    assert toolkit_growth(parent, small, size=5, seed=0).case.tools
    with pytest.raises(NotApplicable) as caught:
        toolkit_growth(parent, small, size=15, seed=0)
    assert str(caught.value) == (f"{DELETE_REMINDER}: only {available} tools from other sources to add (+15 needs 15); "
                                 "import gold from more sources")


# -- negative branch ------------------------------------------------------------------------------------


def test_negative_branch_of_a_turn_case_turns_the_check_negative_and_forbids_the_action() -> None:
    parent = demo(WALK)  # QueryCalendar ran, then the user asked to block the hour: CreateEvent expected
    candidate = negative_branch(parent, seed=0)
    case = candidate.case
    assert case.kind == "trajectory" and case.expected.behavior == "no_call" and case.order == "superset"
    assert [(f.name, f.arguments) for f in case.forbidden] == [
        ("CreateEvent", {"start_time": "2023-09-11 13:20:00", "end_time": "2023-09-11 14:20:00"})]
    result = next(m for m in case.messages if m.role == "tool")
    assert json.loads(result.content or "") == {"response": None,
                                                "exception": "QueryCalendar found no matching record"}
    # the assistant's words written for the real (empty calendar) result are gone; the user's are kept
    assert [m.content for m in case.messages if m.role == "assistant"] == [None]
    assert [m.content for m in case.messages if m.role == "user"] == [
        m.content for m in parent.messages if m.role == "user"]
    assert_synthetic(case, parent, "negative_branch")

    acting = score_case(case, expected_run(case, parent.expected.calls))
    assert acting.status == "fail" and [e.code for e in acting.errors] == [ErrorCode.FORBIDDEN_CALL]
    assert score_case(case, run_of(case)).status == "pass"
    assert score_case(case, run_of(case, ("QueryCalendar", {"session_token": "98a5a87a-7714-b404",
                                                            "start_time": "2023-09-11 13:20:00",
                                                            "end_time": "2023-09-11 14:20:00"}))).status == "pass"


@needs_data
def test_negative_branch_of_a_tau2_retail_task_inserts_the_failed_check_before_the_exchange() -> None:
    parent = tau2_retail()["tau2-bench/retail/task-0"]
    assert [c.name for c in parent.expected.calls] == ["find_user_id_by_name_zip", "get_order_details",
                                                       "get_product_details", "get_product_details",
                                                       "exchange_delivered_order_items"]
    case = negative_branch(parent, seed=0).case
    check, result = case.messages[-2:]
    assert check.tool_calls[0].function.name == "get_order_details"
    assert json.loads(check.tool_calls[0].function.arguments) == {"order_id": "#W2378156"}
    assert result.content == "Error: get_order_details found no matching record"
    assert case.forbidden[-1].model_dump() == {"name": "exchange_delivered_order_items",
                                               "arguments": {"order_id": "#W2378156"},
                                               "reason": "the check get_order_details came back negative"}
    assert case.forbidden[:-1] == parent.forbidden
    exchange = parent.expected.calls[-1]
    run = RunRecord(case_id=case.id, messages=(*case.messages, Message(role="assistant", tool_calls=(
        {"id": "x1", "function": {"name": exchange.name, "arguments": json.dumps(exchange.arguments)}},))))
    assert [e.code for e in score_case(case, run).errors] == [ErrorCode.FORBIDDEN_CALL]


@pytest.mark.parametrize(("case_id", "reason"), [
    (ALARM, "no check-before-action pattern (no reading call such as check_* or get_* before an action on the "
            "same thing among: AddAlarm)"),
    (IRRELEVANT, "no check-before-action pattern (the gold expects no action)"),
    ("tooltalk/Email-Messages-Reminder-SendEmail-2/turn-8",
     "no check-before-action pattern (no reading call such as check_* or get_* before an action on the same thing "
     "among: SendEmail)"),  # GetReminders ran before, but shares only the session token with SendEmail
])
def test_negative_branch_is_refused_without_a_check_before_an_action(case_id: str, reason: str) -> None:
    with pytest.raises(NotApplicable) as caught:
        negative_branch(demo(case_id), seed=0)
    assert str(caught.value) == f"{case_id}: {reason}"


@pytest.mark.parametrize(("original", "negative"), [
    ('{"response": {"events": []}, "exception": null}',
     '{"exception":"check found no matching record","response":null}'),
    ('{"sku": "A1", "in_stock": true, "quantity": 3}', '{"in_stock":false,"quantity":3,"sku":"A1"}'),
    ('{"order_id": "#W1", "status": "delivered"}', '{"error":"check found no matching record"}'),
    ("Order #W1 is delivered", "Error: check found no matching record"),
    (None, "Error: check found no matching record"),
])
def test_negative_results_follow_the_convention_of_the_real_result(original: str | None, negative: str) -> None:
    assert negative_result(original, "check") == negative


# -- stale context --------------------------------------------------------------------------------------


def test_stale_context_switches_the_entity_in_a_later_user_turn() -> None:
    parent = demo(DELETE_REMINDER)
    candidate = stale_context(parent, seed=5)
    case = candidate.case
    old = parent.expected.calls[0].arguments["reminder_id"]
    new = case.expected.calls[0].arguments["reminder_id"]
    assert old == "59-80bc" and new != old and len(new) == len(old) and new[:3] == "59-"
    assert case.messages[:-1] == parent.messages
    assert case.messages[-1].role == "user" and old in (case.messages[-1].content or "")
    assert new in (case.messages[-1].content or "") and "reminder ID" in (case.messages[-1].content or "")
    assert case.turn == (parent.turn or 0) + 1
    assert {k: v for k, v in case.expected.calls[0].arguments.items() if k != "reminder_id"} == {
        k: v for k, v in parent.expected.calls[0].arguments.items() if k != "reminder_id"}
    assert_synthetic(case, parent, "stale_context")

    stale = score_case(case, expected_run(case, parent.expected.calls))
    assert stale.status == "fail" and [e.code for e in stale.errors] == [ErrorCode.STALE_VALUE]
    assert score_case(case, expected_run(case)).status == "pass"


def test_stale_context_keeps_an_emails_domain() -> None:
    case = stale_context(demo(REGISTER), seed=0).case
    switched = {k: v for k, v in case.expected.calls[0].arguments.items()
                if v != demo(REGISTER).expected.calls[0].arguments[k]}
    assert len(switched) == 1
    ((key, value),) = switched.items()
    if key == "email":
        assert value.endswith("@gahoo.com")


@pytest.mark.parametrize(("case_id", "reason"), [
    (ALARM, "no user-given identifier to switch (no identifier-like argument of the expected calls comes from what "
            "the user said, or its schema allows no other value)"),
    (IRRELEVANT, "no expected argument to switch (the gold expects no_call)"),
    ("tau-bench/airline/task-1", "stale context is made from turn cases (this is a trajectory)"),
])
def test_stale_context_is_refused_without_a_user_given_identifier(case_id: str, reason: str) -> None:
    with pytest.raises(NotApplicable) as caught:
        stale_context(demo(case_id), seed=0)
    assert str(caught.value) == f"{case_id}: {reason}"


# -- every transformation -------------------------------------------------------------------------------


def test_the_same_seed_makes_the_same_bytes_and_another_seed_the_same_ids() -> None:
    pool = ToolPool.of_cases(demo_gold().values())
    makers = [lambda c, s: near_duplicate_tool(c, seed=s), lambda c, s: missing_information(c, seed=s),
              lambda c, s: stale_context(c, seed=s), lambda c, s: toolkit_growth(c, pool, size=15, seed=s)]
    for make in makers:
        first, again, other = (make(demo(REGISTER), s) for s in (1, 1, 2))
        assert dumps_record(first) == dumps_record(again)
        assert other.id == first.id and other.synthesis.seed == 2


def test_a_happy_path_parent_makes_candidates_that_are_not_happy_path() -> None:
    parent = demo(DELETE_REMINDER)
    happy = parent.model_copy(update={"tags": ("happy_path", *parent.tags)})
    for make in (near_duplicate_tool, missing_information, stale_context):
        assert make(happy, seed=0).case.tags == (*parent.tags, SYNTHETIC, make.__name__)


# -- model-written (pure half) ----------------------------------------------------------------------------

GENERATION = Generation(model="claude-test", prompt_version="synthesize-paraphrase/1")


def test_a_written_paraphrase_keeps_the_expected_call_and_records_its_generation() -> None:
    parent = demo(REGISTER)
    said = parent.messages[-1].content or ""
    candidate = paraphrase(parent, "Here you go: " + said, seed=0, generation=GENERATION)
    assert candidate.case.expected == parent.expected and candidate.synthesis.generation == GENERATION
    assert candidate.case.messages[-1].content == "Here you go: " + said
    assert_synthetic(candidate.case, parent, "paraphrase")


@pytest.mark.parametrize(("case_id", "text", "reason"), [
    (REGISTER, "Make the account, please.", "the paraphrase dropped the email 'j.hester@gahoo.com' the expected "
                                            "call needs"),
    (REGISTER, "   ", "the model wrote an empty turn"),
    ("tau-bench/airline/task-1", "x", "paraphrase is made from turn cases (this is a trajectory)"),
])
def test_a_paraphrase_is_refused_when_it_cannot_keep_the_intent(case_id: str, text: str, reason: str) -> None:
    with pytest.raises(NotApplicable) as caught:
        paraphrase(demo(case_id), text, seed=0, generation=GENERATION)
    assert str(caught.value) == f"{case_id}: {reason}"


def test_a_rewrite_needs_the_users_turn_right_before_the_decision() -> None:
    parent = demo(WALK)
    mid_task = parent.model_copy(update={"messages": parent.messages[:-1], "turn": 4})  # ends with a tool result
    with pytest.raises(NotApplicable) as caught:
        paraphrase(mid_task, "x", seed=0, generation=GENERATION)
    assert str(caught.value) == (f"{WALK}: paraphrase rewrites the user's turn right before the decision, and "
                                 "this case's context does not end with one")


def test_tool_shaped_language_expects_no_call_and_an_agent_that_calls_is_unexpected() -> None:
    parent = demo("bfcl/live_simple_0-0-0")
    case = tool_shaped_no_intent(parent, "I could really use some user info right now, my day is a mess.", seed=0,
                                 generation=GENERATION).case
    assert case.expected.behavior == "no_call" and not case.arg_rules
    call = parent.expected.calls[0]
    assert [e.code for e in score_case(case, run_of(case, (call.name, call.arguments))).errors] == [
        ErrorCode.UNEXPECTED_CALL]
    bare = parent.model_copy(update={"tools": ()})
    with pytest.raises(NotApplicable, match="no tools whose words the turn could borrow"):
        tool_shaped_no_intent(bare, "x", seed=0, generation=GENERATION)


def test_stale_context_finds_the_value_in_whichever_call_to_the_tool_has_it() -> None:
    parent = demo(DELETE_REMINDER)
    call = parent.expected.calls[0]
    token_only = Call(name=call.name, arguments={"session_token": call.arguments["session_token"]})
    both = parent.model_copy(update={"expected": parent.expected.model_copy(update={"calls": (token_only, call)})})
    case = stale_context(both, seed=5).case
    assert case.expected.calls[0] == token_only
    assert case.expected.calls[1].arguments["reminder_id"] != call.arguments["reminder_id"]
