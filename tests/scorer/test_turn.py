"""Hand-written turn scenarios: behavior, selection, arguments, grounding. Each asserts the whole result."""

from __future__ import annotations

from datetime import datetime

from scorer.api import score_case, score_trials
from scorer.codes import NO_CALL as NO
from scorer.codes import ErrorCode
from scorer.judging import ArgumentQuestion, ArgumentVerdict
from scorer.model import Answer, ArgRule, FunctionCall, Message, ToolCallRef
from scorer.results import CaseError, CaseResult, JudgeVerdict, PartialCredit, Review, Verdicts
from tests.scorer.kit import CLARIFY, NO_CALL, TOOLS, call, calls, case, rules, run, user

CALLED_OK = Verdicts(selection=True, arguments=True, abstention=True, grounding=True)
SIZE = len(TOOLS)


FULL = PartialCredit(argument_accuracy=1.0, call_precision=1.0, call_recall=1.0, call_f1=1.0)


def ok(c: str = "c1", *, tools: tuple[str, ...], matched: str | int = "expected", **fields: object) -> CaseResult:
    """A passing result of a call answer."""
    fields.setdefault("partial", FULL)
    return CaseResult(case_id=c, status="pass", matched=matched, compared_with=matched, verdicts=CALLED_OK,
                      expected_tools=tools, actual_tools=tools, confusion=tuple(sorted((t, t) for t in tools)),
                      calls=len(tools), toolkit_size=SIZE, **fields)  # type: ignore[arg-type]


def test_the_right_call_passes() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")), tags=("happy_path",))
    result = score_case(gold, run(("search_orders", '{"customer_id": "C-1042"}')))
    assert result == ok(tools=("search_orders",), tags=("happy_path",))


def test_a_wrong_value_names_the_value_and_the_rule() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")),
                messages=(user("I'm customer C-1042, and my old account was C-17."),))
    result = score_case(gold, run(("search_orders", {"customer_id": "C-17"})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=0.0, call_precision=0.0, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.WRONG_ARG_VALUE, tool="search_orders", arg="customer_id", expected="C-1042",
            actual="C-17", note="called search_orders with customer_id 'C-17'; expected 'C-1042' (exact)"),),
        verdicts=Verdicts(selection=True, arguments=False, abstention=True, grounding=True),
        expected_tools=("search_orders",), actual_tools=("search_orders",),
        confusion=(("search_orders", "search_orders"),), calls=1, toolkit_size=SIZE)


def test_near_duplicate_tools_report_the_confused_pair() -> None:
    gold = case(calls(call("update_user_profile", user_id="U-9", display_name="Ana")),
                messages=(user("I'm U-9; change my display name to Ana."),))
    result = score_case(gold, run(("update_user", {"user_id": "U-9"})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=0.0, call_precision=0.0, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.WRONG_TOOL, tool="update_user", expected="update_user_profile", actual="update_user",
            note="called update_user where update_user_profile was expected"),),
        verdicts=Verdicts(selection=False, abstention=True, grounding=True),
        expected_tools=("update_user_profile",), actual_tools=("update_user",),
        confusion=(("update_user_profile", "update_user"),), calls=1, toolkit_size=SIZE)


def test_a_tool_that_was_not_offered_is_a_wrong_tool_saying_so() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    result = score_case(gold, run(("delete_account", {})))
    assert result.errors == (CaseError(
        code=ErrorCode.WRONG_TOOL, tool="delete_account", expected="search_orders", actual="delete_account",
        note=f"called delete_account (not among the {SIZE} offered tools) where search_orders was expected"),)


def test_no_call_where_one_was_expected_is_a_missing_call() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    result = score_case(gold, run())
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=0.0, call_precision=None, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.MISSING_CALL, tool="search_orders", note="made no call; expected search_orders"),),
        verdicts=Verdicts(selection=False, abstention=False), actual_behavior="no_call",
        expected_tools=("search_orders",), confusion=(("search_orders", NO),), toolkit_size=SIZE)


def test_a_call_where_none_was_needed_is_unexpected() -> None:
    gold = case(NO_CALL, messages=(user("Thanks, that's all!"),))
    result = score_case(gold, run(("search_orders", {"customer_id": "C-1042"})))
    assert result == CaseResult(
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.UNEXPECTED_CALL, tool="search_orders", note="called search_orders where no call was needed"),),
        verdicts=Verdicts(selection=False, abstention=False, grounding=True), expected_behavior="no_call",
        actual_tools=("search_orders",), confusion=((NO, "search_orders"),), calls=1, toolkit_size=SIZE)


def test_no_call_where_none_was_needed_passes() -> None:
    gold = case(NO_CALL, messages=(user("Thanks, that's all!"),))
    assert score_case(gold, run()) == CaseResult(
        case_id="c1", status="pass", matched="expected", verdicts=Verdicts(selection=True, abstention=True),
        expected_behavior="no_call", actual_behavior="no_call", confusion=((NO, NO),), toolkit_size=SIZE)


def test_asking_when_the_gold_says_ask_passes() -> None:
    gold = case(CLARIFY, messages=(user("How much is shipping to my place?"),))
    assert score_case(gold, run()) == CaseResult(
        case_id="c1", status="pass", matched="expected", verdicts=Verdicts(selection=True, abstention=True),
        expected_behavior="clarify", actual_behavior="no_call", confusion=((NO, NO),), toolkit_size=SIZE)


def test_inventing_a_zip_code_instead_of_asking_is_fabrication() -> None:
    gold = case(CLARIFY, messages=(user("How much is shipping for a 2 kg parcel?"),))
    result = score_case(gold, run(("get_shipping_estimate", {"zip_code": "00000", "weight_kg": 2})))
    assert result == CaseResult(
        case_id="c1", status="fail", errors=(
            CaseError(code=ErrorCode.CALLED_INSTEAD_OF_ASKING, tool="get_shipping_estimate",
                      note="called get_shipping_estimate where the agent should have asked the user"),
            CaseError(code=ErrorCode.FABRICATED_VALUE, tool="get_shipping_estimate", arg="zip_code", actual="00000",
                      note="called get_shipping_estimate with zip_code '00000', which the user never gave; "
                           "the gold says to ask")),
        verdicts=Verdicts(selection=False, abstention=False, grounding=False), expected_behavior="clarify",
        actual_tools=("get_shipping_estimate",), confusion=((NO, "get_shipping_estimate"),), calls=1,
        toolkit_size=SIZE)


def test_an_alternative_answer_passes_and_is_named() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")), alternatives=(CLARIFY,))
    assert score_case(gold, run()) == CaseResult(
        case_id="c1", status="pass", matched=0, compared_with=0, verdicts=Verdicts(selection=True, abstention=True),
        expected_behavior="clarify", actual_behavior="no_call", confusion=((NO, NO),), toolkit_size=SIZE)


def test_a_tool_only_alternative_accepts_any_arguments() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")),
                alternatives=(Answer(behavior="call", calls=(call("get_order"),), tool_only=True),))
    result = score_case(gold, run(("get_order", {"order_id": "O-1"})), )
    assert (result.status, result.matched, result.errors) == ("pass", 0, ())


def test_when_nothing_matches_the_errors_compare_with_the_closest_answer() -> None:
    gold = case(calls(call("get_order", order_id="O-7")),
                alternatives=(calls(call("search_orders", customer_id="C-1042")),))
    result = score_case(gold, run(("search_orders", {"customer_id": "C-1043"})))
    assert (result.status, result.matched, result.compared_with) == ("fail", None, 0)
    assert [e.code for e in result.errors] == [ErrorCode.WRONG_ARG_VALUE, ErrorCode.UNGROUNDED_VALUE]


def test_fewer_parallel_calls_than_expected_is_a_wrong_call_count() -> None:
    gold = case(calls(call("get_order", order_id="O-1"), call("get_order", order_id="O-2")),
                messages=(user("Where are orders O-1 and O-2?"),))
    result = score_case(gold, run(("get_order", {"order_id": "O-2"})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=0.5, call_precision=1.0, call_recall=0.5, call_f1=2 / 3),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.WRONG_CALL_COUNT, expected=2, actual=1,
            note="made 1 call (get_order); expected 2 (get_order, get_order)"),),
        verdicts=Verdicts(selection=False, abstention=True, grounding=True),
        expected_tools=("get_order", "get_order"), actual_tools=("get_order",),
        confusion=(("get_order", NO), ("get_order", "get_order")), calls=1, toolkit_size=SIZE)


def test_missing_required_arguments_come_from_the_schema_and_the_gold() -> None:
    gold = case(calls(call("issue_refund", order_id="O-7", amount=20)),
                messages=(user("Refund 20 on O-7 please"),))
    result = score_case(gold, run(("issue_refund", {"order_id": "O-7"})))
    assert result.errors == (CaseError(
        code=ErrorCode.MISSING_REQUIRED_ARG, tool="issue_refund", arg="amount", expected=20,
        note="called issue_refund without required amount; expected 20 (exact)"),)
    assert result.verdicts == Verdicts(selection=True, arguments=False, abstention=True, grounding=True)

    gold_required = case(calls(call("update_user", user_id="U-9", email="a@b.co")),
                         required_args={"update_user": ("email",)}, messages=(user("I'm U-9, email a@b.co"),))
    result = score_case(gold_required, run(("update_user", {"user_id": "U-9"})))
    assert result.errors == (CaseError(
        code=ErrorCode.MISSING_REQUIRED_ARG, tool="update_user", arg="email", expected="a@b.co",
        note="called update_user without required email; expected 'a@b.co' (exact)"),)


def test_a_parameter_the_schema_does_not_have_is_hallucinated() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    result = score_case(gold, run(("search_orders", {"customer_id": "C-1042", "discount_code": "FREE"})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=1.0, call_precision=0.0, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.HALLUCINATED_PARAM, tool="search_orders", arg="discount_code", actual="FREE",
            note="called search_orders with discount_code 'FREE', which is not a parameter of search_orders"),),
        verdicts=Verdicts(selection=True, arguments=False, abstention=True, grounding=True),
        expected_tools=("search_orders",), actual_tools=("search_orders",),
        confusion=(("search_orders", "search_orders"),), calls=1, toolkit_size=SIZE)


def test_a_value_of_the_wrong_type_is_a_schema_type_error_only() -> None:
    gold = case(calls(call("issue_refund", order_id="O-7", amount=20)), messages=(user("Refund 20 on O-7"),))
    result = score_case(gold, run(("issue_refund", {"order_id": "O-7", "amount": "20"})))
    assert result.errors == (CaseError(
        code=ErrorCode.SCHEMA_TYPE_ERROR, tool="issue_refund", arg="amount", actual="20",
        note="called issue_refund with amount '20': '20' is not of type 'number'"),)


def test_unparseable_arguments_are_malformed_never_dropped() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    result = score_case(gold, run(("search_orders", '{"customer_id": "C-1042"')))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=0.0, call_precision=0.0, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.MALFORMED_ARGUMENTS, tool="search_orders", actual='{"customer_id": "C-1042"',
            note="called search_orders with arguments that are not a JSON object: '{\"customer_id\": \"C-1042\"'"),),
        verdicts=Verdicts(selection=True, arguments=False, abstention=True, grounding=True),
        expected_tools=("search_orders",), actual_tools=("search_orders",),
        confusion=(("search_orders", "search_orders"),), calls=1, toolkit_size=SIZE)


def test_an_order_number_never_looked_up_is_ungrounded() -> None:
    tool_result = Message(role="tool", tool_call_id="t1", content='{"orders": [{"order_id": "O-7"}]}')
    lookup = Message(role="assistant", tool_calls=(ToolCallRef(id="t1", function=FunctionCall(
        name="search_orders", arguments='{"customer_id": "C-1042"}')),))
    gold = case(calls(call("get_order", order_id="O-7")),
                messages=(user("Where is my order? I'm C-1042."), lookup, tool_result),
                arg_rules=rules(get_order={"order_id": ArgRule(match="regex", pattern=r"O-\d+")}))
    assert score_case(gold, run(("get_order", {"order_id": "O-7"}))).status == "pass"
    result = score_case(gold, run(("get_order", {"order_id": "O-8"})))
    assert result == CaseResult(
        partial=PartialCredit(argument_accuracy=1.0, call_precision=1.0, call_recall=1.0, call_f1=1.0),
        case_id="c1", status="fail", errors=(CaseError(
            code=ErrorCode.UNGROUNDED_VALUE, tool="get_order", arg="order_id", actual="O-8",
            note="called get_order with order_id 'O-8', which appears nowhere in the conversation"),),
        verdicts=Verdicts(selection=True, arguments=True, abstention=True, grounding=False),
        expected_tools=("get_order",), actual_tools=("get_order",), confusion=(("get_order", "get_order"),),
        calls=1, toolkit_size=SIZE)


def test_a_value_the_user_replaced_later_is_stale() -> None:
    gold = case(calls(call("get_account_balance", account_id="ACC-2")),
                messages=(user("What's the balance on ACC-1?"), user("Sorry, I meant my savings, ACC-2.")))
    result = score_case(gold, run(("get_account_balance", {"account_id": "ACC-1"})))
    assert result.errors == (CaseError(
        code=ErrorCode.STALE_VALUE, tool="get_account_balance", arg="account_id", expected="ACC-2", actual="ACC-1",
        note="called get_account_balance with account_id 'ACC-1', which the user later replaced with 'ACC-2'; "
             "expected 'ACC-2' (exact)"),)
    assert result.verdicts.arguments is False


def test_optional_arguments_may_be_left_out_but_other_gold_arguments_may_not() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042", status="open")),
                arg_rules=rules(search_orders={"status": ArgRule(optional=True)}))
    assert score_case(gold, run(("search_orders", {"customer_id": "C-1042"}))).status == "pass"
    strict = case(calls(call("search_orders", customer_id="C-1042", status="open")))
    assert score_case(strict, run(("search_orders", {"customer_id": "C-1042"}))).errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="search_orders", arg="status", expected="open",
        note="called search_orders without status; expected 'open' (exact)"),)


def test_an_extra_argument_at_its_schema_default_is_accepted_any_other_is_not() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    assert score_case(gold, run(("search_orders", {"customer_id": "C-1042", "limit": 10}))).status == "pass"
    assert score_case(gold, run(("search_orders", {"customer_id": "C-1042", "limit": 3}))).errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="search_orders", arg="limit", actual=3,
        note="called search_orders with limit 3, which the gold call does not set"),)


def test_next_tuesday_in_the_gold_resolves_against_the_reference_time() -> None:
    gold = case(calls(call("book_table", date="next Tuesday")),
                messages=(user("Book a table for next Tuesday"),),
                reference_time=datetime.fromisoformat("2026-07-01T10:00:00-05:00"),
                arg_rules=rules(book_table={"date": ArgRule(match="date", grounded=False)}))
    assert score_case(gold, run(("book_table", {"date": "2026-07-07"}))).status == "pass"
    assert score_case(gold, run(("book_table", {"date": "July 7, 2026"}))).status == "pass"
    result = score_case(gold, run(("book_table", {"date": "2026-07-03"})))
    assert result.errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="book_table", arg="date", expected="next Tuesday", actual="2026-07-03",
        note="called book_table with date '2026-07-03'; expected 2026-07-07 ('next Tuesday' from 2026-07-01) (date)"),)


def test_phone_and_currency_rules_normalize_both_sides() -> None:
    gold = case(calls(call("book_table", date="2026-07-07", phone="+14155550123", deposit="$100")),
                messages=(user("Book 2026-07-07, my number is (415) 555-0123, deposit $100"),),
                arg_rules=rules(book_table={"phone": ArgRule(match="phone", region="US"),
                                            "deposit": ArgRule(match="currency", currency="USD")}))
    agent = run(("book_table", {"date": "2026-07-07", "phone": "415-555-0123", "deposit": "100.00 USD"}))
    assert score_case(gold, agent).status == "pass"
    wrong = run(("book_table", {"date": "2026-07-07", "phone": "415-555-0123", "deposit": "€100"}))
    assert [e.code for e in score_case(gold, wrong).errors] == [ErrorCode.WRONG_ARG_VALUE]


class FakeJudge:
    """Answers every question with one verdict and records what it was asked."""

    def __init__(self, verdict: JudgeVerdict, reason: str = "") -> None:
        self.verdict, self.reason = verdict, reason
        self.asked: list[ArgumentQuestion] = []

    def judge_argument(self, question: ArgumentQuestion) -> ArgumentVerdict:
        self.asked.append(question)
        return ArgumentVerdict(verdict=self.verdict, reason=self.reason)


SEMANTIC = rules(book_table={"note": ArgRule(match="semantic", intent="a window seat request")})


def semantic_case() -> tuple:  # type: ignore[type-arg]
    gold = case(calls(call("book_table", date="2026-07-07", note="window seat please")), arg_rules=SEMANTIC,
                messages=(user("Table on 2026-07-07, by the window if you can"),))
    agent = run(("book_table", {"date": "2026-07-07", "note": "by the window"}))
    return gold, agent


def test_a_semantic_argument_without_a_judge_needs_review() -> None:
    gold, agent = semantic_case()
    result = score_case(gold, agent)
    assert result == CaseResult(
        # the date matched; the note waits for a judge, so it is not matched yet, nor is the call
        partial=PartialCredit(argument_accuracy=0.5, call_precision=0.0, call_recall=0.0, call_f1=0.0),
        case_id="c1", status="needs_review", reviews=(Review(
            tool="book_table", arg="note", match="semantic", intent="a window seat request",
            expected="window seat please", actual="by the window", reason="no judge configured"),),
        verdicts=Verdicts(selection=True, arguments=True, abstention=True, grounding=True),
        expected_tools=("book_table",), actual_tools=("book_table",), confusion=(("book_table", "book_table"),),
        calls=1, toolkit_size=SIZE)


def test_a_semantic_argument_goes_to_the_judge_with_a_narrow_question() -> None:
    gold, agent = semantic_case()
    judge = FakeJudge("equivalent")
    assert score_case(gold, agent, judge=judge).status == "pass"
    assert judge.asked == [ArgumentQuestion(case_id="c1", tool="book_table", arg="note", intent="a window seat request",
                                            expected="window seat please", actual="by the window",
                                            context=gold.messages)]
    failed = score_case(gold, agent, judge=FakeJudge("not_equivalent", "no seat preference"))
    assert failed.errors == (CaseError(
        code=ErrorCode.WRONG_ARG_VALUE, tool="book_table", arg="note", expected="window seat please",
        actual="by the window", note="called book_table with note 'by the window'; the judge found it does not "
                                     "capture: a window seat request (no seat preference)"),)
    unsure = score_case(gold, agent, judge=FakeJudge("ambiguous", "could be either"))
    assert unsure.status == "needs_review"
    assert (unsure.reviews[0].verdict, unsure.reviews[0].reason) == ("ambiguous", "could be either")


def test_the_judge_is_not_asked_when_the_case_fails_anyway() -> None:
    gold, _ = semantic_case()
    judge = FakeJudge("equivalent")
    result = score_case(gold, run(("book_table", {"date": "2026-07-08", "note": "by the window"})), judge=judge)
    assert result.status == "fail" and judge.asked == []


def test_every_trial_of_a_case_is_scored() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    results = score_trials(gold, [run(("search_orders", {"customer_id": "C-1042"}), trial=1),
                                  run(trial=0)])
    assert [(r.trial, r.status) for r in results] == [(0, "fail"), (1, "pass")]
