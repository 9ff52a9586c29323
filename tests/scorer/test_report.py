"""The aggregate report: dimensions apart, P/R/F1 with NO_CALL, abstention, pass^k, patterns, baselines."""

from __future__ import annotations

from scipy.stats import binomtest

from scorer.api import score, score_trials
from scorer.codes import NO_CALL as NO
from scorer.compare import Paired, compare, pair_outcomes
from scorer.gates import check_gates, parse_threshold
from scorer.report import (
    Averages,
    ClassScores,
    ConfusionCell,
    GateResult,
    PassHatK,
    Report,
    ReportBuilder,
    rate,
    toolkit_bucket,
)
from scorer.stats import mcnemar_exact, pass_hat_k, wilson
from tests.scorer.kit import CLARIFY, NO_CALL, call, calls, case, run, user


def profile_cases(n: int, *, prefix: str = "p") -> list:  # type: ignore[type-arg]
    return [case(calls(call("update_user_profile", user_id="U-1", display_name="Ana")), id=f"{prefix}{i}",
                 messages=(user("I'm U-1, call me Ana"),), tags=("near_duplicate",)) for i in range(n)]


def test_failure_patterns_are_grouped_ranked_and_said_in_words() -> None:
    cases = profile_cases(7)
    runs = [run(("update_user", {"user_id": "U-1"}), case_id=f"p{i}") for i in range(5)]
    runs += [run(("update_user_profile", {"user_id": "U-1", "display_name": "Bob"}), case_id=f"p{i}")
             for i in (5, 6)]
    report = score(cases, runs)
    assert [p.sentence for p in report.failure_patterns] == [
        "5 of 7 failures: update_user called where update_user_profile expected",
        "2 of 7 failures: update_user_profile.display_name has the wrong value",
    ]
    assert report.failure_patterns[0].examples == ("p0", "p1", "p2")


def mixed_report() -> Report:
    """Four turn cases: right call, wrong tool, over-call, correct abstention; plus a clarify that asked."""
    cases = [
        case(calls(call("search_orders", customer_id="C-1042")), id="a", tags=("x",)),
        case(calls(call("search_orders", customer_id="C-1042")), id="b", tags=("x", "y"), split="rolling"),
        case(NO_CALL, id="c"),
        case(NO_CALL, id="d"),
        case(CLARIFY, id="e"),
    ]
    runs = [run(("search_orders", {"customer_id": "C-1042"}), case_id="a"),
            run(("get_order", {"order_id": "C-1042"}), case_id="b"),
            run(("search_orders", {"customer_id": "C-1042"}), case_id="c"),
            run(case_id="d"), run(case_id="e")]
    return score(cases, runs)


def test_selection_precision_recall_f1_with_no_call_as_a_class() -> None:
    report = mixed_report()
    assert report.confusion == (
        ConfusionCell(gold=NO, actual=NO, count=2), ConfusionCell(gold=NO, actual="search_orders", count=1),
        ConfusionCell(gold="search_orders", actual="get_order", count=1),
        ConfusionCell(gold="search_orders", actual="search_orders", count=1))
    s = report.selection
    assert s.accuracy == rate(3, 5)
    assert s.per_tool == {
        NO: ClassScores(support=3, predicted=2, precision=rate(2, 2), recall=rate(2, 3), f1=0.8),
        "get_order": ClassScores(support=0, predicted=1, precision=rate(0, 1), recall=rate(0, 0), f1=0.0),
        "search_orders": ClassScores(support=2, predicted=2, precision=rate(1, 2), recall=rate(1, 2), f1=0.5),
    }
    assert s.macro == Averages(precision=(1 + 0 + 0.5) / 3, recall=(2 / 3 + 0.5) / 2, f1=(0.8 + 0 + 0.5) / 3)
    assert s.micro == Averages(precision=0.6, recall=0.6, f1=0.6)


def test_abstention_and_the_other_dimensions_are_reported_apart() -> None:
    report = mixed_report()
    a = report.abstention
    assert (a.no_call_precision, a.no_call_recall) == (rate(2, 2), rate(2, 3))
    assert (a.over_call, a.under_call) == (rate(1, 3), rate(0, 2))
    assert (a.clarify_asked, a.clarify_fabricated) == (rate(1, 1), rate(0, 1))
    assert report.arguments.accuracy == rate(1, 1)
    assert report.sequencing.accuracy == rate(0, 0)
    assert report.totals.pass_rate == rate(3, 5)
    assert report.error_counts == {"wrong_tool": 1, "unexpected_call": 1}


def test_breakdowns_by_tag_split_tool_and_toolkit_size() -> None:
    b = mixed_report().breakdowns
    assert {k: (g.results, g.passed.count) for k, g in b["tag"].items()} == {"x": (2, 1), "y": (1, 0)}
    assert {k: (g.results, g.passed.count) for k, g in b["split"].items()} == {"regression": (4, 3),
                                                                                  "rolling": (1, 0)}
    assert {k: (g.results, g.passed.count) for k, g in b["tool"].items()} == {NO: (3, 2), "search_orders": (2, 1)}
    assert list(b["toolkit_size"]) == ["6-10"]


def test_toolkit_buckets() -> None:
    assert [toolkit_bucket(n) for n in (0, 1, 2, 5, 6, 10, 11, 20, 21, 90)] == [
        "0", "1", "2-5", "2-5", "6-10", "6-10", "11-20", "11-20", "21+", "21+"]


def test_pass_hat_k_over_trials() -> None:
    gold = case(calls(call("search_orders", customer_id="C-1042")))
    right, wrong = ("search_orders", {"customer_id": "C-1042"}), ("get_order", {"order_id": "O-1"})
    trials = [run(right, trial=0), run(wrong, trial=1), run(right, trial=2), run(wrong, trial=3)]
    builder = ReportBuilder()
    builder.add(score_trials(gold, trials))
    report = builder.finish()
    assert report.pass_hat_k == (PassHatK(k=1, value=0.5, cases=1), PassHatK(k=2, value=1 / 6, cases=1),
                                 PassHatK(k=3, value=0.0, cases=1), PassHatK(k=4, value=0.0, cases=1))
    assert pass_hat_k({(2, 2): 1, (2, 0): 1}, 2) == (0.5, 2)
    assert pass_hat_k({}, 1) is None


def test_wilson_matches_scipy_and_mcnemar_is_the_exact_binomial() -> None:
    for k, n in ((0, 10), (43, 50), (7, 7), (1, 3)):
        ci = binomtest(k, n).proportion_ci(method="wilson")
        low, high = wilson(k, n) or (None, None)
        assert abs(low - ci.low) < 1e-12 and abs(high - ci.high) < 1e-12  # type: ignore[operator]
    assert wilson(0, 0) is None
    assert mcnemar_exact(1, 9) == 2 * (1 + 10) / 1024
    assert mcnemar_exact(0, 0) == 1.0


def test_merged_shards_equal_one_builder() -> None:
    cases = profile_cases(6)
    runs = {f"p{i}": run(("update_user", {"user_id": "U-1"}) if i % 2 else
                         ("update_user_profile", {"user_id": "U-1", "display_name": "Ana"}), case_id=f"p{i}")
            for i in range(6)}
    whole, first, second = ReportBuilder(), ReportBuilder(), ReportBuilder()
    for i, c in enumerate(cases):
        results = score_trials(c, [runs[c.id]])
        whole.add(results)
        (first if i < 3 else second).add(results)
    first.merge(second)
    assert first.finish() == whole.finish()


def per_tool_report(prefix: str, passes: dict[str, int], total: int = 100) -> tuple[Report, dict[str, bool]]:
    """A report where tool T passes ``passes[T]`` of ``total`` cases."""
    cases, runs = [], []
    for tool, n_pass in passes.items():
        for i in range(total):
            cid = f"{tool}-{i}"
            args = {"user_id": "U-1"}
            cases.append(case(calls(call(tool, **args)), id=cid, messages=(user("I'm U-1"),)))
            runs.append(run((tool, args) if i < n_pass else (tool, {"user_id": "U-1", "email": "x@y.z"}),
                            case_id=cid))
    report = score(cases, runs)
    return report, {c.case_id: c.status == "pass" for c in report.cases}


def test_a_tool_that_drops_fails_the_comparison_even_when_the_average_holds() -> None:
    baseline, before = per_tool_report("b", {"update_user": 98, "update_user_profile": 90})
    current, after = per_tool_report("c", {"update_user": 91, "update_user_profile": 97})
    assert baseline.totals.pass_rate.value == current.totals.pass_rate.value == 0.94
    paired = pair_outcomes({(k, 0): v for k, v in before.items()}, ((k, 0, v) for k, v in after.items()))
    assert paired == Paired(both_pass=181, only_baseline=7, only_current=7, both_fail=5)
    comparison = compare(current, baseline, paired)
    assert [(r.tool, r.baseline.count, r.current.count) for r in comparison.regressions] == [("update_user", 98, 91)]
    assert comparison.mcnemar is not None and comparison.mcnemar.p_value == 1.0
    assert next(d for d in comparison.dimensions if d.metric == "pass_rate").delta == 0.0


def test_a_drop_of_exactly_the_threshold_is_not_a_regression() -> None:
    baseline, _ = per_tool_report("b", {"update_user": 100})
    current, _ = per_tool_report("c", {"update_user": 95})
    assert compare(current, baseline, max_tool_drop=0.05).regressions == ()
    assert [r.tool for r in compare(current, baseline, max_tool_drop=0.04).regressions] == ["update_user"]


def test_gates() -> None:
    report = mixed_report()
    thresholds = [parse_threshold(t) for t in ("selection=0.5", "pass_rate=70%", "sequencing=0.1", "tool:NO_CALL=0.5",
                                               "pass^1=0.6")]
    assert check_gates(report, thresholds) == (
        GateResult(metric="selection", threshold=0.5, value=0.6, passed=True),
        GateResult(metric="pass_rate", threshold=0.7, value=0.6, passed=False),
        GateResult(metric="sequencing", threshold=0.1, value=None, passed=False),
        GateResult(metric="tool:NO_CALL", threshold=0.5, value=2 / 3, passed=True),
        GateResult(metric="pass^1", threshold=0.6, value=0.6, passed=True),
    )


def varied_results() -> list[list]:  # type: ignore[type-arg]
    """Results with many distinct signatures: each case its own tag and toolkit, some failing."""
    groups = []
    for i in range(60):
        c = case(calls(call("update_user_profile", user_id="U-1", display_name="Ana")), id=f"v{i}",
                 messages=(user("I'm U-1, call me Ana"),), tags=(f"tag-{i % 23}", "near_duplicate"),
                 split="rolling" if i % 3 else "regression")
        made = ("update_user", {"user_id": "U-1"}) if i % 4 == 0 else (
            "update_user_profile", {"user_id": "U-1", "display_name": "Ana" if i % 5 else "Bob"})
        groups.append(score_trials(c, [run(made, case_id=c.id)]))
    return groups


def test_memory_holds_a_bounded_number_of_signatures_and_the_report_is_the_same() -> None:
    unbounded, bounded = ReportBuilder(max_signatures=10**9), ReportBuilder(max_signatures=4)
    for results in varied_results():
        unbounded.add(results)
        bounded.add(results)
        assert len(bounded.signatures) <= 5
    assert len(unbounded.signatures) > 20
    assert bounded.finish() == unbounded.finish()


def test_shards_that_folded_merge_into_the_report_of_one_builder() -> None:
    groups = varied_results()
    whole, first, second = ReportBuilder(max_signatures=10**9), ReportBuilder(max_signatures=3), ReportBuilder()
    for i, results in enumerate(groups):
        whole.add(results)
        (first if i < 35 else second).add(results)
    first.merge(second)
    assert first.finish() == whole.finish()


def test_a_compacted_shard_merges_into_the_report_of_one_builder() -> None:
    groups = varied_results()
    whole, first, second = ReportBuilder(max_signatures=10**9), ReportBuilder(), ReportBuilder()
    for i, results in enumerate(groups):
        whole.add(results)
        (first if i < 35 else second).add(results)
    second.compact()
    assert not second.signatures
    first.merge(second)
    assert first.finish() == whole.finish()
