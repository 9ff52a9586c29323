"""Gold hygiene: suspect gold found without an agent (pure functions)."""

from __future__ import annotations

from collections.abc import Iterator

from labeler.store import Store
from scorer.hygiene import HygieneProblem, _Duplicates, duplicate_problems, lint
from scorer.model import Answer, ArgRule, Call, GoldCase
from tests.review.kit import gold, put

LONG = ("Hello there, I ordered a pair of running shoes last week and the tracking page has not changed "
        "since Monday. My customer number is C-1042 and I would like to know where the parcel is now")


def calls(*made: Call) -> Answer:
    return Answer(behavior="call", calls=made)


def test_a_clean_gold_set_has_no_problems() -> None:
    assert lint([gold("a#t2"), gold("b#t2", user_text="Orders for C-7?", customer="C-7")]) == []


def test_the_same_context_with_conflicting_answers() -> None:
    problems = lint([gold("a#t2"), gold("b#t2", expected=Answer(behavior="clarify"))])
    assert problems == [HygieneProblem(
        code="conflicting_duplicate", case_id="a#t2", related=("b#t2",),
        message='the same context as `b#t2`, but expects search_orders({"customer":"C-1042"}) where `b#t2` '
                "expects ask the user")]


def test_duplicates_that_agree_or_accept_each_other_are_fine() -> None:
    clarify = Answer(behavior="clarify")
    assert duplicate_problems([gold("a#t2"), gold("b#t2")]) == []
    assert duplicate_problems([gold("a#t2", alternatives=(clarify,)), gold("b#t2", expected=clarify)]) == []


def test_nearly_the_same_context_with_conflicting_answers() -> None:
    near = lint([gold("a#t2", user_text=LONG), gold("b#t2", user_text=LONG + " please", customer="C-2042"),
                 gold("c#t2", user_text="Cancel everything I ever ordered", customer="C-1")])
    assert [(p.code, p.case_id, p.related) for p in near] == [("conflicting_near_duplicate", "a#t2", ("b#t2",))]
    assert near[0].message.startswith("nearly the same context as `b#t2`")


def test_expected_calls_that_fail_their_own_schema_or_lack_required_values() -> None:
    case = gold("a#t2", expected=calls(
        Call(name="search_orders", arguments={"customer": "C-1042", "status": "lost", "cust": 1}),
        Call(name="refund_order", arguments={"amount": "ten"}),
        Call(name="cancel_order", arguments={})))
    assert [(p.code, p.tool, p.arg, p.message) for p in lint([case])] == [
        ("missing_required_value", "refund_order", "order_id", "required `refund_order.order_id` has no value"),
        ("schema_violation", "refund_order", "amount", "`refund_order.amount`: 'ten' is not of type 'number'"),
        ("schema_violation", "search_orders", "cust", "`search_orders` has no parameter `cust`"),
        ("schema_violation", "search_orders", "status", "`search_orders.status`: 'lost' is not one of "
                                                        "['open', 'shipped']"),
        ("unknown_tool", "cancel_order", None, "expected call to `cancel_order`, which the case does not offer"),
    ]


def test_empty_required_values_unless_the_rule_lets_them_be_omitted() -> None:
    empty = gold("a#t2", customer="  ")
    assert [p.message for p in lint([empty])] == ["required `search_orders.customer` is empty"]
    waived = gold("a#t2", expected=calls(Call(name="search_orders", arguments={})),
                  rules={"search_orders": {"customer": ArgRule(optional=True)}})
    assert lint([waived]) == []


def test_expected_identifiers_that_appear_nowhere_in_the_context() -> None:
    # The order id O-7 only shows up in the tool result after this decision point: the gold made it up.
    invented = gold("a#t2", expected=calls(Call(name="refund_order", arguments={"order_id": "O-7"})))
    assert lint([invented]) == [HygieneProblem(
        code="ungrounded_value", case_id="a#t2", tool="refund_order", arg="order_id",
        message='expected `refund_order.order_id` = "O-7" appears nowhere in the context')]
    said = gold("b#t2", user_text="Refund order O-7 please",
                expected=calls(Call(name="refund_order", arguments={"order_id": "O-7"})))
    waived = invented.model_copy(update={"id": "c#t2", "arg_rules": {"refund_order": {
        "order_id": ArgRule(grounded=False)}}})
    assert lint([said]) == [] and lint([waived]) == []


# -- groups: k cases with one context are one problem, not k² pairs --------------------------------------------

CLARIFY = Answer(behavior="clarify")


def test_a_group_of_duplicates_with_two_answers_is_one_problem() -> None:
    cases = [gold(f"{c}#t2", expected=CLARIFY) if c in "bdf" else gold(f"{c}#t2") for c in "abcdef"]
    problems = duplicate_problems(cases)
    assert problems == [HygieneProblem(
        code="conflicting_duplicate", case_id="a#t2", related=("b#t2", "c#t2", "d#t2", "e#t2", "f#t2"),
        message='6 cases have the same context but expect 2 different answers: search_orders({"customer":"C-1042"}) '
                "(`a#t2`, `c#t2`, `e#t2`); ask the user (`b#t2`, `d#t2`, `f#t2`)")]


def test_a_case_that_accepts_every_answer_of_its_group_is_left_out() -> None:
    tolerant = gold("g#t2", alternatives=(CLARIFY,))
    problems = duplicate_problems([gold("a#t2"), gold("b#t2", expected=CLARIFY), gold("c#t2", expected=CLARIFY),
                                   tolerant])
    assert [(p.case_id, p.related) for p in problems] == [("a#t2", ("b#t2", "c#t2"))]


def test_a_large_group_names_a_few_cases_per_answer_and_counts_the_rest() -> None:
    cases = [gold(f"c{n:03}#t2", expected=CLARIFY) if n % 3 == 0 else gold(f"c{n:03}#t2") for n in range(300)]
    problems = duplicate_problems(cases)
    assert len(problems) == 1
    [problem] = problems
    assert problem.case_id == "c000#t2" and len(problem.related) == 299
    assert problem.message == (
        "300 cases have the same context but expect 2 different answers: ask the user (`c000#t2`, `c003#t2`, "
        "`c006#t2` and 97 more); search_orders({\"customer\":\"C-1042\"}) (`c001#t2`, `c002#t2`, `c004#t2` and "
        "197 more)")


def test_a_group_with_many_answers_describes_five_and_counts_the_rest() -> None:
    cases = [gold(f"c{n}#t2", expected=calls(Call(name="search_orders", arguments={"customer": f"C-{n}"})))
             for n in range(8)] + [gold("c8#t2", expected=calls(Call(name="search_orders",
                                                                   arguments={"customer": "C-7"})))]
    [problem] = duplicate_problems(cases)
    assert problem.related == tuple(f"c{n}#t2" for n in range(1, 9))
    assert problem.message.startswith("9 cases have the same context but expect 8 different answers: "
                                      'search_orders({"customer":"C-0"}) (`c0#t2`); ')
    assert problem.message.endswith('search_orders({"customer":"C-4"}) (`c4#t2`); 3 other answers (4 cases)')


def test_near_duplicate_groups_are_one_problem_per_pair_of_groups() -> None:
    near = [gold(f"a{n}#t2", user_text=LONG) for n in range(4)] + \
           [gold(f"b{n}#t2", user_text=LONG + " please", customer="C-2042") for n in range(3)]
    problems = duplicate_problems(near)
    assert [(p.code, p.case_id, p.related) for p in problems] == [
        ("conflicting_near_duplicate", "a0#t2", ("a1#t2", "a2#t2", "a3#t2", "b0#t2", "b1#t2", "b2#t2"))]
    assert problems[0].message == (
        "7 cases have nearly the same context but expect 2 different answers: "
        'search_orders({"customer":"C-1042"}) (`a0#t2`, `a1#t2`, `a2#t2` and 1 more); '
        'search_orders({"customer":"C-2042"}) (`b0#t2`, `b1#t2`, `b2#t2`)')


def test_the_store_lints_its_gold_as_it_reads_it(store: Store) -> None:
    put(store, *[gold(f"{c}#t2", expected=CLARIFY) if c in "bd" else gold(f"{c}#t2") for c in "abcd"],
        gold("e#t2", customer="C-9", split="rolling"), gold("f#t2", customer="C-9", split="rolling",
                                                              expected=CLARIFY))
    everything = store.gold_hygiene()
    assert everything == (lint(store.gold_cases()), 6)
    assert [(p.case_id, p.related) for p in everything.problems if p.code == "conflicting_duplicate"] == [
        ("a#t2", ("b#t2", "c#t2", "d#t2")), ("e#t2", ("f#t2",))]
    rolling = store.gold_hygiene(split="rolling")
    assert rolling.cases == 2 and [p.case_id for p in rolling.problems] == ["e#t2"]
    assert store.gold_hygiene(split="rolling", status="submitted") == ([], 0)


def test_gold_read_from_the_store_shares_the_tools_its_cases_share(store: Store) -> None:
    put(store, gold("a#t2"), gold("b#t2", customer="C-9"), gold("c#t2", customer="C-10"))
    first, *others = list(store.iter_gold_cases())
    assert others and all(case.tools[0] is first.tools[0] for case in others)
    assert store.gold_cases() == [first, *others]


def test_linting_keeps_a_few_hundred_bytes_per_case_not_the_case() -> None:
    # What duplicate detection keeps of each case (its id, its context's hash, its answer's key: ~800 bytes for
    # these cases, each with an answer of its own) stays while the rest of the file is read; the answer objects
    # (2.7 KB a case here) must not.
    import tracemalloc

    def cases() -> Iterator[GoldCase]:
        for n in range(3000):
            yield gold(f"c{n:04}#t2", user_text=f"{LONG} ({n})", customer=f"C-{n}", expected=calls(
                Call(name="search_orders", arguments={"customer": f"C-{n}", "status": "open"}),
                Call(name="refund_order", arguments={"order_id": f"O-{n}", "amount": n})))

    tracemalloc.start()
    try:
        duplicates = _Duplicates(threshold=1.01)  # exact duplicates only: no 3-grams kept
        first = next(iter(cases()))
        duplicates.add(first)
        before = tracemalloc.get_traced_memory()[0]
        for case in cases():
            duplicates.add(case)
        kept = (tracemalloc.get_traced_memory()[0] - before) / 3000
    finally:
        tracemalloc.stop()
    assert kept < 1000, f"{kept:.0f} bytes kept per case"
