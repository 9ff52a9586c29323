"""Agreement statistics against values computed by hand (and published worked examples)."""

from __future__ import annotations

import pytest

from scorer.agreement import (
    NO_OVERLAP,
    AnnotatorAgreement,
    ItemDisagreement,
    Stat,
    agreement,
    cohen_kappa,
    disagreeing_fields,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    label_ratings,
    majority,
    percent_agreement,
)
from scorer.model import Answer, ArgRule, Call, GoldCase
from tests.review.kit import gold

approx = pytest.approx


def stat(method: str, value: float | None, observed: float | None, expected: float | None, n_items: int,
         n_ratings: int, reason: str | None = None) -> Stat:
    """The expected Stat, with the floats compared approximately (built unvalidated to hold ``approx``)."""
    def near(x: float | None) -> object:
        return x if x is None else approx(x)

    return Stat.model_construct(method=method, value=near(value), observed=near(observed),
                                expected=near(expected), n_items=n_items, n_ratings=n_ratings, reason=reason)


# -- the coefficients -------------------------------------------------------------------------------------


def test_cohen_kappa_of_the_textbook_example() -> None:
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    # p_o = 35/50 = 0.7; A says yes 25/50, B 30/50: p_e = 0.5·0.6 + 0.5·0.4 = 0.5; κ = 0.2/0.5 = 0.4.
    pairs = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
    assert cohen_kappa(pairs) == stat("cohen_kappa", 0.4, 0.7, 0.5, 50, 100)


@pytest.mark.parametrize(("pairs", "kappa", "p_o", "p_e"), [
    # p_o = 3/4; A: a 2, b 2; B: a 1, b 3; p_e = (2·1 + 2·3)/16 = 1/2; κ = (3/4 - 1/2)/(1/2) = 1/2.
    ([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")], 0.5, 0.75, 0.5),
    # Always opposite: p_o = 0, p_e = 1/2, κ = -1.
    ([("a", "b"), ("b", "a")], -1.0, 0.0, 0.5),
    # Perfect agreement over two categories: κ = 1.
    ([("a", "a"), ("b", "b")], 1.0, 1.0, 0.5),
    # A always a, B always b: p_o = 0, p_e = 0, κ = 0.
    ([("a", "b"), ("a", "b")], 0.0, 0.0, 0.0),
])
def test_cohen_kappa_by_hand(pairs: list[tuple[str, str]], kappa: float, p_o: float, p_e: float) -> None:
    assert cohen_kappa(pairs) == stat("cohen_kappa", kappa, p_o, p_e, len(pairs), 2 * len(pairs))


def test_fleiss_kappa_of_the_published_example() -> None:
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories; P̄ = 0.378, P̄_e = 0.213.
    rows = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
            [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    items = [[str(k) for k, n in enumerate(row) for _ in range(n)] for row in rows]
    result = fleiss_kappa(items)
    assert (round(result.value or 0, 3), round(result.observed or 0, 3), round(result.expected or 0, 3)) == (
        0.210, 0.378, 0.213)
    assert (result.n_items, result.n_ratings) == (10, 140)


def test_fleiss_kappa_by_hand() -> None:
    # P_1 = 1, P_2 = (2·1)/(3·2) = 1/3, P_3 = 1: P̄ = 7/9. a: 5 of 9, b: 4 of 9: P̄_e = 41/81.
    # κ = (63/81 - 41/81) / (40/81) = 22/40 = 0.55.
    assert fleiss_kappa([["a", "a", "a"], ["a", "a", "b"], ["b", "b", "b"]]) == stat(
        "fleiss_kappa", 0.55, 7 / 9, 41 / 81, 3, 9)


def test_fleiss_kappa_lets_the_number_of_raters_vary() -> None:
    # Item 1: three raters all a (P = 1); item 2: two raters a, b (P = 0); a single rating is left out.
    # P̄ = 1/2; a: 4 of 5, b: 1 of 5: P̄_e = 17/25; κ = (1/2 - 17/25) / (8/25) = -9/16.
    assert fleiss_kappa([["a", "a", "a"], ["a", "b"], ["b"]]) == stat("fleiss_kappa", -9 / 16, 0.5, 17 / 25, 2, 5)


def test_krippendorff_alpha_of_the_published_nominal_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units with missing
    # values; nominal alpha = 0.743. Unit 12 has a single value and is not pairable.
    units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
             [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]
    result = krippendorff_alpha([[str(v) for v in unit] for unit in units])
    assert round(result.value or 0, 3) == 0.743
    assert (result.n_items, result.n_ratings) == (11, 40)


def test_krippendorff_alpha_by_hand() -> None:
    # Units (a,a), (a,b), (b,b): o_ab = o_ba = 1, n = 6, n_a = n_b = 3.
    # D_o = 2/6 = 1/3; D_e = (3·3 + 3·3)/(6·5) = 0.6; α = 1 - (1/3)/0.6 = 4/9.
    assert krippendorff_alpha([["a", "a"], ["a", "b"], ["b", "b"]]) == stat(
        "krippendorff_alpha", 4 / 9, 2 / 3, 0.4, 3, 6)


def test_percent_agreement_counts_rater_pairs() -> None:
    # Item 1: 3 pairs, all agree; item 2: 3 pairs, one agrees (a,a): 4 of 6.
    assert percent_agreement([["a", "a", "a"], ["a", "a", "b"]]) == approx(4 / 6)
    assert percent_agreement([["a"]]) is None


ONE_CATEGORY = ("every rating is 'call': chance agreement is 1, so the coefficient is undefined (the raters "
                "agree on every item)")


def test_one_category_gives_no_coefficient_and_says_why() -> None:
    items = [["call", "call"], ["call", "call", "call"]]
    assert cohen_kappa([("call", "call")] * 2) == stat("cohen_kappa", None, 1.0, 1.0, 2, 4, ONE_CATEGORY)
    assert fleiss_kappa(items) == stat("fleiss_kappa", None, 1.0, 1.0, 2, 5, ONE_CATEGORY)
    assert krippendorff_alpha(items) == stat("krippendorff_alpha", None, 1.0, 1.0, 2, 5, ONE_CATEGORY)


def test_no_overlap_gives_no_coefficient_and_says_why() -> None:
    assert cohen_kappa([]) == Stat(method="cohen_kappa", value=None, reason=NO_OVERLAP)
    assert fleiss_kappa([["a"], ["b"]]) == Stat(method="fleiss_kappa", value=None, reason=NO_OVERLAP)
    assert krippendorff_alpha([]) == Stat(method="krippendorff_alpha", value=None, reason=NO_OVERLAP)
    report = agreement({"t1": {"ann": call("search_orders")}})
    assert (report.n_items, report.fields, report.disagreements) == (0, (), ())


# -- labels to categories ---------------------------------------------------------------------------------


def call(tool: str | None, rules: dict[str, ArgRule] | None = None, tags: tuple[str, ...] = (),
         **arguments: object) -> GoldCase:
    """One annotator's label: a call to ``tool`` (None: no call) with ``arguments`` and per-argument rules."""
    if tool is None:
        return gold("t#t2", expected=Answer(behavior="no_call"), tags=tags)
    return gold("t#t2", expected=Answer(behavior="call", calls=(Call(name=tool, arguments=arguments),)),
                rules={tool: rules} if rules else None, tags=tags)


def test_arguments_agree_under_their_match_rules() -> None:
    ci = {"customer": ArgRule(match="ci")}
    labels = {"ann": call("search_orders", ci, customer="C-1042"),
              "bob": call("search_orders", ci, customer="c-1042"),
              "cat": call("search_orders", customer="c-1042"),  # exact: "C-1042" is not the same to cat
              "dan": call(None)}
    ratings = label_ratings(labels)
    assert ratings["decision"] == {"ann": "call", "bob": "call", "cat": "call", "dan": "no_call"}
    assert ratings["tool"] == {"ann": "search_orders", "bob": "search_orders", "cat": "search_orders"}
    assert ratings["arg:search_orders.customer"] == {"ann": '"C-1042"', "bob": '"C-1042"', "cat": '"c-1042"'}
    assert disagreeing_fields(ratings) == ("arg:search_orders.customer", "decision")
    assert majority(labels) == ("ann", "bob")


def test_numbers_within_tolerance_and_missing_arguments() -> None:
    tol = {"amount": ArgRule(match="number", tolerance=0.5)}
    labels = {"ann": call("refund_order", tol, order_id="O-7", amount=10),
              "bob": call("refund_order", tol, order_id="O-7", amount=10.4),
              "cat": call("refund_order", tol, order_id="O-7")}
    ratings = label_ratings(labels)
    assert ratings["arg:refund_order.amount"] == {"ann": "10", "bob": "10", "cat": "(absent)"}
    assert ratings["arg:refund_order.order_id"] == {"ann": '"O-7"', "bob": '"O-7"', "cat": '"O-7"'}
    assert disagreeing_fields(ratings) == ("arg:refund_order.amount",)


def test_the_majority_ties_go_to_the_first_group() -> None:
    assert majority({"bob": call(None), "ann": call("search_orders", customer="C-1")}) == ("bob",)


# -- the report -------------------------------------------------------------------------------------------


def test_agreement_per_field_annotator_tool_and_tag_by_hand() -> None:
    items = {
        "i1": {"ann": call("search_orders", tags=("happy_path",), customer="C-1"),
               "bob": call("search_orders", tags=("happy_path",), customer="C-1")},
        "i2": {"ann": call("search_orders", customer="C-2"), "bob": call(None, tags=("underspecified",))},
        "i3": {"ann": call(None), "bob": call(None)},
        "i4": {"ann": call("refund_order", order_id="O-1"), "bob": call("search_orders", customer="C-4")},
        "solo": {"ann": call(None)},
    }
    report = agreement(items)
    assert (report.n_items, report.raters) == (4, ("ann", "bob"))
    # decision: (call,call) (call,no_call) (no_call,no_call) (call,call): p_o = 3/4;
    # ann: call 3, no_call 1; bob: call 2, no_call 2: p_e = (3·2 + 1·2)/16 = 1/2; κ = 1/2.
    decision = report.field("decision")
    assert decision is not None and decision.cohen == stat("cohen_kappa", 0.5, 0.75, 0.5, 4, 8)
    assert decision.percent == approx(0.75)
    # tool, on the items both called a tool (i1, i4): p_o = 1/2; ann: s 1, r 1; bob: s 2: p_e = 2/4; κ = 0.
    tool = report.field("tool")
    assert tool is not None and tool.cohen == stat("cohen_kappa", 0.0, 0.5, 0.5, 2, 4)
    assert [f.field for f in report.fields] == ["label", "decision", "tool", "arg:search_orders.customer"]
    assert report.annotators == (
        AnnotatorAgreement(annotator="ann", n_items=4, n_pairs=4, percent=0.5,
                           decision_kappa=stat("cohen_kappa", 0.5, 0.75, 0.5, 4, 8)),
        AnnotatorAgreement(annotator="bob", n_items=4, n_pairs=4, percent=0.5,
                           decision_kappa=stat("cohen_kappa", 0.5, 0.75, 0.5, 4, 8)),
    )
    assert [(g.group, g.n_items, g.percent) for g in report.tools] == [("refund_order", 1, 0.0),
                                                                       ("search_orders", 3, approx(1 / 3))]
    # One item, where both agree: alpha is undefined (a single category), the raw agreement is 100%.
    happy = report.tags[0]
    assert (happy.group, happy.n_items, happy.percent, happy.alpha.value) == ("happy_path", 1, 1.0, None)
    assert [t.group for t in report.tags] == ["happy_path", "underspecified"]
    assert report.disagreements == (
        ItemDisagreement(item="i2", raters=("ann", "bob"), fields=("decision",), share=1.0),
        ItemDisagreement(item="i4", raters=("ann", "bob"), fields=("tool",), share=1.0),
    )


def test_three_annotators_get_fleiss_and_alpha_but_no_cohen() -> None:
    items = {"i1": {"ann": call(None), "bob": call(None), "cat": call(None)},
             "i2": {"ann": call(None), "bob": call(None), "cat": call("search_orders", customer="C-1")}}
    decision = agreement(items).field("decision")
    assert decision is not None and decision.cohen is None
    # P_1 = 1, P_2 = 2/6: P̄ = 2/3; no_call 5/6, call 1/6: P̄_e = 26/36; κ = (24/36 - 26/36)/(10/36) = -0.2.
    assert decision.fleiss == stat("fleiss_kappa", -0.2, 2 / 3, 26 / 36, 2, 6)
    assert decision.headline == decision.alpha


def test_gwet_ac1_stays_informative_where_one_label_dominates_and_kappa_collapses() -> None:
    # 100 turns, both annotators say "call" on 90, each says no_call on 5 the other calls: 90% agreement
    pairs = [("call", "call")] * 90 + [("call", "no_call")] * 5 + [("no_call", "call")] * 5
    kappa = cohen_kappa(pairs)
    assert kappa.value == pytest.approx((0.90 - 0.905) / (1 - 0.905))  # below zero: kappa's paradox
    ac1 = gwet_ac1([list(p) for p in pairs])
    # pi_call = 0.95, pi_no_call = 0.05: p_e = 2 * 0.95 * 0.05 / (2 - 1) = 0.095
    assert (ac1.observed, ac1.expected) == (pytest.approx(0.90), pytest.approx(0.095))
    assert ac1.value == pytest.approx((0.90 - 0.095) / (1 - 0.095))


def test_gwet_ac1_by_hand_with_three_raters_and_its_degenerate_cases() -> None:
    items = [["a", "a", "b"], ["a", "a", "a"], ["b", "b", "c"]]
    # P_i = 1/3, 1, 1/3 -> p_a = 5/9; pi = (5/9, 3/9, 1/9) -> p_e = (5*4 + 3*6 + 1*8) / 81 / 2 = 46/162
    ac1 = gwet_ac1(items)
    assert ac1.value == pytest.approx((5 / 9 - 46 / 162) / (1 - 46 / 162))
    one = gwet_ac1([["call", "call"]])
    assert one.value is None and one.reason is not None and "every rating is 'call'" in one.reason
    assert gwet_ac1([["call"]]).reason == NO_OVERLAP


def test_each_field_reports_ac1_beside_kappa_and_alpha() -> None:
    from scorer.agreement import _field_agreement

    field = _field_agreement("decision", [{"ann": "call", "bob": "call"}] * 9 + [{"ann": "call", "bob": "no_call"}])
    assert field.ac1 is not None and field.ac1.method == "gwet_ac1"
    assert field.ac1.value == gwet_ac1([["call", "call"]] * 9 + [["call", "no_call"]]).value


# -- the decision confusion matrix between two annotators ---------------------------------------------------


def _decided(cid: str, behavior: str, *tools: str) -> GoldCase:
    calls = tuple(Call(name=t, arguments={}) for t in tools)
    base = gold(cid)
    return base.model_copy(update={"expected": Answer(behavior=behavior, calls=calls)})


def test_decision_matrix_counts_what_each_of_two_annotators_decided() -> None:
    from scorer.agreement import DecisionCell, decision_category, decision_matrix

    items = {
        "t1": {"ann": _decided("t1", "call", "lookup"), "bob": _decided("t1", "call", "lookup")},
        "t2": {"ann": _decided("t2", "call", "lookup"), "bob": _decided("t2", "call", "refund")},
        "t3": {"ann": _decided("t3", "no_call"), "bob": _decided("t3", "clarify")},
        "t4": {"ann": _decided("t4", "clarify"), "bob": _decided("t4", "clarify"),
               "cy": _decided("t4", "no_call")},
        "t5": {"ann": _decided("t5", "call", "refund", "lookup")},  # bob did not label it: not compared
        "t6": {"bob": _decided("t6", "no_call"), "cy": _decided("t6", "no_call")},
    }
    assert decision_category(items["t5"]["ann"]) == "call: lookup + refund"
    matrix = decision_matrix(items, "ann", "bob")
    assert (matrix.first, matrix.second, matrix.n_items, matrix.n_agree) == ("ann", "bob", 4, 2)
    # Every category either annotator used, calls by tool first, then ask the user, then no call.
    assert matrix.categories == ("call: lookup", "call: refund", "ask_user", "no_call")
    assert matrix.cells == (
        DecisionCell(first="call: lookup", second="call: lookup", count=1),
        DecisionCell(first="call: lookup", second="call: refund", count=1),
        DecisionCell(first="ask_user", second="ask_user", count=1),
        DecisionCell(first="no_call", second="ask_user", count=1),
    )
    assert matrix.count("no_call", "ask_user") == 1 and matrix.count("ask_user", "no_call") == 0
    assert matrix.items("call: lookup", "call: refund") == ("t2",)
    # The same pairs the agreement statistics count: the matrix agrees with Cohen's kappa on the decision.
    swapped = decision_matrix(items, "bob", "ann")
    assert swapped.count("ask_user", "no_call") == 1 and swapped.n_items == 4


def test_decision_matrix_of_annotators_who_share_no_turn_is_empty() -> None:
    from scorer.agreement import decision_matrix

    items = {"t1": {"ann": _decided("t1", "no_call"), "bob": _decided("t1", "no_call")}}
    matrix = decision_matrix(items, "ann", "cy")
    assert (matrix.n_items, matrix.cells, matrix.categories) == (0, (), ())
    with pytest.raises(ValueError, match="two different annotators"):
        decision_matrix(items, "ann", "ann")
