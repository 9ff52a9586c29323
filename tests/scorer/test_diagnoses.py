"""Diagnoses a person acts on: stale values only where the conversation replaced one, swapped arguments,
notes that show what they compared (issue 14)."""

from __future__ import annotations

from datetime import datetime

import pytest
from pydantic import ValidationError

from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.importers import Converted, convert
from scorer.matchers import match_value
from scorer.model import ArgRule, FunctionCall, GoldCase, Message, ToolCallRef, ToolSpec
from scorer.results import CaseError
from tests.conftest import TEST_DATA
from tests.scorer.kit import call, calls, case, run, user


def test_notes_quote_string_values_so_a_string_never_reads_as_a_number() -> None:
    gold = case(calls(call("place_order", sku="SKU-1", quantity=2)), tools=(),
                messages=(user("Two of SKU-1, please."),))
    result = score_case(gold, run(("place_order", {"sku": "SKU-1", "quantity": "2"})))
    assert result.errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="place_order", arg="quantity", expected=2, actual="2",
        note="called place_order with quantity '2'; expected 2 (exact)"),)


ACCOUNTS = (ToolSpec(name="get_account_balance", parameters={
                "type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]}),
            ToolSpec(name="transfer", parameters={
                "type": "object", "required": ["from_account", "to_account", "amount"],
                "properties": {"from_account": {"type": "string"}, "to_account": {"type": "string"},
                               "amount": {"type": "number"}}}))


def balance(*said: str) -> object:
    return case(calls(call("get_account_balance", account_id="SAV-2")), tools=ACCOUNTS,
                messages=tuple(user(text) for text in said))


def codes(gold: object, account: str) -> list[ErrorCode]:
    return [e.code for e in score_case(gold, run(("get_account_balance", {"account_id": account}))).errors]  # type: ignore[arg-type]


def test_the_seed_scenario_an_account_the_user_switched_away_from_is_stale() -> None:
    # The seed: "using an account ID it extracted three turns ago before the user switched accounts".
    gold = balance("What's the balance on my checking account CHK-1?", "Thanks. Also, when does it renew?",
                   "Now switch to my savings account SAV-2 and check that one.")
    result = score_case(gold, run(("get_account_balance", {"account_id": "CHK-1"})))
    assert result.errors == (CaseError(
        code=ErrorCode.STALE_VALUE, tool="get_account_balance", arg="account_id", expected="SAV-2", actual="CHK-1",
        note="called get_account_balance with account_id 'CHK-1', which the user later replaced with 'SAV-2'; "
             "expected 'SAV-2' (exact)"),)


def test_both_values_in_one_message_is_not_stale() -> None:
    # The gold value merely mentioned later in the same sentence: the agent picked the wrong one.
    assert codes(balance("I have CHK-1 and SAV-2; what's the balance of SAV-2?"), "CHK-1") == [
        ErrorCode.WRONG_ARG_VALUE]
    assert codes(balance("Not CHK-1 today: what's on SAV-2?"), "CHK-1") == [ErrorCode.WRONG_ARG_VALUE]


def test_a_gold_value_inside_the_agents_value_is_not_stale() -> None:
    gold = balance("Balance of SAV-2 savings please.", "Sorry, I meant SAV-2 of course.")
    assert codes(gold, "SAV-2 savings") == [ErrorCode.WRONG_ARG_VALUE]
    assert codes(balance("Balance of SAV-2-OLD please.", "Sorry, I meant SAV-2."), "SAV-2-OLD") == [
        ErrorCode.WRONG_ARG_VALUE]


def test_a_later_message_that_adds_a_value_without_taking_one_back_is_not_stale() -> None:
    gold = balance("Balance of CHK-1 please.", "And SAV-2 too, after that.")
    assert codes(gold, "CHK-1") == [ErrorCode.WRONG_ARG_VALUE]
    # A tool result naming the gold value later is not the user replacing anything either.
    lookup = Message(role="assistant", tool_calls=(ToolCallRef(id="t1", function=FunctionCall(
        name="get_account_balance", arguments='{"account_id": "CHK-1"}')),))
    said = (user("Balance of CHK-1 please."), lookup,
            Message(role="tool", tool_call_id="t1", content="closed, not in use; replaced by SAV-2"))
    assert codes(case(calls(call("get_account_balance", account_id="SAV-2")), tools=ACCOUNTS, messages=said),
                 "CHK-1") == [ErrorCode.WRONG_ARG_VALUE]


def test_swapped_arguments_get_their_own_code_and_one_note_for_the_pair() -> None:
    gold = case(calls(call("transfer", from_account="CHK-1", to_account="SAV-2", amount=50)), tools=ACCOUNTS,
                messages=(user("Move $50 from CHK-1 to SAV-2."),))
    result = score_case(gold, run(("transfer", {"from_account": "SAV-2", "to_account": "CHK-1", "amount": 50})))
    assert result.errors == (CaseError(
        code=ErrorCode.SWAPPED_ARGS, tool="transfer", arg="from_account",
        expected={"from_account": "CHK-1", "to_account": "SAV-2"},
        actual={"from_account": "SAV-2", "to_account": "CHK-1"},
        note="called transfer with from_account and to_account swapped: from_account 'SAV-2', to_account "
             "'CHK-1'; expected from_account 'CHK-1', to_account 'SAV-2'"),)
    assert result.verdicts.arguments is False
    # One of the two wrong without the other is no swap.
    other = score_case(gold, run(("transfer", {"from_account": "SAV-2", "to_account": "SAV-2", "amount": 50})))
    assert [e.code for e in other.errors] == [ErrorCode.WRONG_ARG_VALUE]


MEETINGS = (ToolSpec(name="schedule", parameters={"type": "object", "properties": {"start": {"type": "string"}}}),)
FRIDAY_NY = datetime.fromisoformat("2026-03-06T10:00:00-05:00")  # DST starts Sunday 2026-03-08 in New York


def meeting(**fields: object) -> GoldCase:
    rule = ArgRule(match="datetime", grounded=False, **fields.pop("rule", {}))  # type: ignore[arg-type]
    return case(calls(call("schedule", start="2026-03-10T15:00-04:00")), tools=MEETINGS,
                messages=(user("Set it up for 3pm next Tuesday."),), reference_time=FRIDAY_NY,
                arg_rules={"schedule": {"start": rule}}, **fields)


def test_a_naive_time_after_the_dst_change_is_read_in_the_zone_in_force_on_its_date() -> None:
    naive = run(("schedule", {"start": "2026-03-10T15:00:00"}))
    assert score_case(meeting(tz="America/New_York"), naive).status == "pass"
    assert score_case(meeting(rule={"tz": "America/New_York"}), naive).status == "pass"
    # The zone says which offset, so 15:00 at the old offset (16:00 EDT) is still an hour off.
    assert score_case(meeting(tz="America/New_York"), run(("schedule", {"start": "2026-03-10T15:00-05:00"}))
                      ).status == "fail"


def test_without_a_zone_the_note_shows_the_values_it_compared() -> None:
    result = score_case(meeting(), run(("schedule", {"start": "2026-03-10T15:00:00"})))
    assert result.errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="schedule", arg="start", expected="2026-03-10T15:00-04:00",
        actual="2026-03-10T15:00:00",
        note="called schedule with start '2026-03-10T15:00:00' (read as 2026-03-10T15:00:00-05:00); expected "
             "2026-03-10T15:00:00-04:00 (from '2026-03-10T15:00-04:00') (datetime)"),)


def test_relative_gold_phrases_keep_the_wall_clock_time_across_the_change() -> None:
    gold = case(calls(call("schedule", start="in 4 days")), tools=MEETINGS, messages=(user("Same time Tuesday."),),
                reference_time=FRIDAY_NY, tz="America/New_York",
                arg_rules={"schedule": {"start": ArgRule(match="datetime", grounded=False)}})
    assert score_case(gold, run(("schedule", {"start": "2026-03-10T10:00:00"}))).status == "pass"
    assert score_case(gold, run(("schedule", {"start": "2026-03-10T10:00:00-04:00"}))).status == "pass"


def test_an_unknown_zone_is_refused_with_what_to_write() -> None:
    with pytest.raises(ValidationError, match="unknown time zone 'Eastern' \\(an IANA name such as America/New_York"):
        meeting(tz="Eastern")


def test_the_normalized_rule_is_bfcls_string_leniency_and_exact_stays_exact() -> None:
    rule = ArgRule(match="normalized")
    for gold_value, sent in (("3*x**2", "3x**2"), ("New York, NY", "new york ny"), ("-5", "5"),
                             (["San Francisco", "L.A."], ["san francisco", "LA"]), ({"city": "Paris"}, {"city": "PARIS"})):
        assert match_value(rule, gold_value, sent, None) is True
        assert match_value(ArgRule(), gold_value, sent, None) is False
    assert match_value(rule, "3*x**2", "3*x**3", None) is False
    assert match_value(ArgRule(match="normalized", accept=("NYC",)), "New York", "nyc", None) is True
    assert match_value(rule, 5, 5.0, None) is True and match_value(rule, 5, "5", None) is False


def test_imported_bfcl_gold_scores_strings_as_bfcl_does() -> None:
    converted = [item.record for item in convert(TEST_DATA / "real" / "bfcl" / "BFCL_v4_simple_python.json")
                 if isinstance(item, Converted) and isinstance(item.record, GoldCase)]
    triangle = next(c for c in converted if c.id == "bfcl/simple_python_0")
    lenient = run(("calculate_triangle_area", {"base": 10, "height": 5, "unit": "Units"}), case_id=triangle.id)
    assert score_case(triangle, lenient).status == "pass"
    # the same gold labeled by hand (no rule) compares the string exactly
    exact = triangle.model_copy(update={"arg_rules": {}})
    assert [e.code for e in score_case(exact, lenient).errors] == [ErrorCode.WRONG_ARG_VALUE]


def test_a_correction_that_repeats_the_old_value_is_still_a_replacement() -> None:
    gold = balance("What's on CHK-1?", "Sorry, I gave you the wrong account: it's SAV-2, not CHK-1.")
    assert codes(gold, "CHK-1") == [ErrorCode.STALE_VALUE]
