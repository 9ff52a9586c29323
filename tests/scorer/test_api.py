"""The Python API: score and evaluate, and inputs that do not fit together."""

from __future__ import annotations

from typing import Any

import pytest

from scorer.api import evaluate, run_record, score, score_case
from scorer.errors import ScoringInputError
from scorer.judging import Judge
from scorer.model import Call, Message, RunCall, RunRecord, ToolSpec
from scorer.report import Unscored
from tests.scorer.kit import call, calls, case, run
from tests.scorer.test_turn import FakeJudge

GOLD = [case(calls(call("search_orders", customer_id="C-1042")), id="a"),
        case(calls(call("get_order", order_id="C-1042")), id="b")]


def test_cases_without_runs_and_runs_for_unknown_cases_are_counted_not_skipped() -> None:
    report = score(GOLD, [run(("search_orders", {"customer_id": "C-1042"}), case_id="a"),
                          run(case_id="zz"), run(case_id="zz", trial=1)])
    assert report.unscored == Unscored(cases_without_run=1, runs_for_unknown_cases=2,
                                       examples_without_run=("b",), examples_unknown=("zz",))
    assert report.totals.results == 1


def test_duplicate_case_ids_and_duplicate_trials_are_errors() -> None:
    with pytest.raises(ScoringInputError, match="gold case id 'a' appears twice"):
        score([GOLD[0], GOLD[0]], [])
    with pytest.raises(ScoringInputError, match="case 'a' has two runs for trial 0"):
        score(GOLD[:1], [run(case_id="a"), run(case_id="a")])
    with pytest.raises(ScoringInputError, match="scored against case"):
        score_case(GOLD[0], run(case_id="b"))


def test_evaluate_runs_the_agent_on_each_case_and_trial() -> None:
    seen: list[tuple[int, int]] = []

    def agent(messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> list[Any]:
        seen.append((len(messages), len(tools)))
        if "C-1042" in (messages[-1].content or "") and len(seen) % 2:
            return [{"name": "search_orders", "arguments": '{"customer_id": "C-1042"}'}]
        return []

    report = evaluate(GOLD[:1], agent, trials=4)
    assert len(seen) == 4
    assert (report.totals.cases, report.totals.results, report.totals.passed) == (1, 4, 2)
    assert [p.value for p in report.pass_hat_k] == [0.5, 1 / 6, 0.0, 0.0]
    assert [r.trial for r in report.cases] == [0, 1, 2, 3]


def test_agent_outputs_of_every_shape_become_run_records() -> None:
    gold = GOLD[0]
    expected = RunRecord(case_id="a", calls=(RunCall(name="search_orders", arguments={"customer_id": "C-1042"}),))
    assert run_record(gold, [Call(name="search_orders", arguments={"customer_id": "C-1042"})]) == expected
    assert run_record(gold, [RunCall(name="search_orders", arguments='{"customer_id": "C-1042"}')]) == expected
    assert run_record(gold, [{"name": "search_orders", "arguments": {"customer_id": "C-1042"}}]) == expected
    assert run_record(gold, None) == RunRecord(case_id="a", calls=())
    assert run_record(gold, RunRecord(case_id="other", calls=()), trial=2) == RunRecord(case_id="a", calls=(),
                                                                                       trial=2)
    messages = [Message(role="assistant", content="Which order?")]
    assert run_record(gold, messages) == RunRecord(case_id="a", messages=tuple(messages))
    with pytest.raises(ScoringInputError, match="returned int"):
        run_record(gold, [3])  # type: ignore[list-item]


def test_a_fake_judge_satisfies_the_protocol() -> None:
    assert isinstance(FakeJudge("equivalent"), Judge)


def test_the_package_exports_its_public_api() -> None:
    import scorer

    for name in scorer.__all__:
        assert getattr(scorer, name) is not None, name
    assert scorer.score is score and scorer.evaluate is evaluate
    with pytest.raises(AttributeError):
        scorer.not_a_name  # noqa: B018
