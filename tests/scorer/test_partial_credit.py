"""Partial credit beside the strict verdicts: per case, in the report, in every output format and in the
baseline comparison (issue 14)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from scorer.api import score, score_case
from scorer.codes import ErrorCode
from scorer.facts import CaseFacts
from scorer.formats import dumps_record
from scorer.results import PartialCredit
from tests.scorer.kit import call, calls, case, run, user

ASK = (user("Refund 20 on O-7 and 5 on O-8, I'm C-1042."),)


def refunds() -> object:
    return case(calls(call("issue_refund", order_id="O-7", amount=20), call("issue_refund", order_id="O-8", amount=5)),
                messages=ASK)


def test_a_half_right_parallel_answer_gets_half_the_argument_credit() -> None:
    result = score_case(refunds(), run(("issue_refund", {"order_id": "O-7", "amount": 20}),  # type: ignore[arg-type]
                                       ("issue_refund", {"order_id": "O-8", "amount": 50})))
    assert result.status == "fail"
    assert result.partial == PartialCredit(argument_accuracy=3 / 4, call_precision=1 / 2, call_recall=1 / 2,
                                           call_f1=1 / 2)


def test_a_trajectory_gets_call_precision_recall_and_sequence_alignment() -> None:
    from tests.scorer.test_trajectory import GET, NAMES, REFUND_FLOW, agent, trajectory

    gold = trajectory(*REFUND_FLOW, mode="unordered")
    # the lookup is skipped and the refund comes with a wrong amount: 1 of 3 steps exactly right
    result = score_case(gold, agent(GET, ("issue_refund", {"order_id": "O-7", "amount": 99}, {})))
    assert [c.name for c in gold.expected.calls] == list(NAMES)
    # gold arguments: customer_id, order_id, order_id, amount; matched: both order ids
    assert result.partial == PartialCredit(argument_accuracy=2 / 4, call_precision=1 / 2, call_recall=1 / 3,
                                           call_f1=2 / 5, sequence_alignment=2 * 2 / 5)


def test_no_call_and_ask_answers_have_no_partial_credit() -> None:
    from tests.scorer.kit import NO_CALL

    assert score_case(case(NO_CALL), run()).partial is None


def write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(dumps_record(r) + "\n" for r in records), encoding="utf-8")  # type: ignore[arg-type]
    return path


def test_every_output_format_and_the_baseline_comparison_carry_partial_credit(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.jsonl", [refunds()])
    good = write(tmp_path / "good.jsonl", [run(("issue_refund", {"order_id": "O-7", "amount": 20}),
                                               ("issue_refund", {"order_id": "O-8", "amount": 5}))])
    half = write(tmp_path / "half.jsonl", [run(("issue_refund", {"order_id": "O-7", "amount": 20}),
                                               ("issue_refund", {"order_id": "O-8", "amount": 50}))])

    def toolgold(*args: str) -> str:
        return CliRunner().invoke(cli, ["score", str(gold), *args]).stdout

    baseline = tmp_path / "baseline.json"
    baseline.write_text(toolgold(str(good), "--format", "json"), encoding="utf-8")
    assert json.loads(baseline.read_text())["partial"]["argument_accuracy"] == {"value": 1.0, "results": 1}
    table = toolgold(str(half))
    assert "partial     argument accuracy (mean)" in table and "75.0%" in table
    assert "call F1 (mean)" in toolgold(str(half), "--format", "markdown")
    assert "argument accuracy (mean)" in toolgold(str(half), "--format", "html")
    suite = ET.fromstring(toolgold(str(half), "--format", "junit")).find("testsuite")
    assert suite is not None
    assert {p.get("name"): p.get("value") for p in suite.iter("property")}["partial.argument_accuracy"] == "0.7500"
    compared = json.loads(toolgold(str(half), "--format", "json", "--baseline", str(baseline)))
    deltas = {d["metric"]: d for d in compared["comparison"]["dimensions"]}
    assert deltas["argument_accuracy"]["baseline"] == 1.0 and deltas["argument_accuracy"]["current"] == 0.75
    assert deltas["call_f1"]["delta"] == -0.5


def test_partial_credit_can_be_gated() -> None:
    from scorer.gates import check_gates, parse_threshold

    report = score([refunds()], [run(("issue_refund", {"order_id": "O-7", "amount": 20}),  # type: ignore[list-item]
                                     ("issue_refund", {"order_id": "O-8", "amount": 50}))])
    assert report.partial.argument_accuracy.value == 0.75
    gates = check_gates(report, [parse_threshold("argument_accuracy=70%"), parse_threshold("call_f1=0.9")])
    assert [(g.metric, g.passed) for g in gates] == [("argument_accuracy", True), ("call_f1", False)]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled checks", "general path"])
@pytest.mark.parametrize("parallel", [False, True], ids=["one call", "parallel calls"])
def test_a_wrong_value_of_an_argument_named_by_the_empty_string_costs_its_credit(compiled: bool,
                                                                                  parallel: bool) -> None:
    """JSON allows a key "": its wrong value is an argument missed, not the arguments as a whole (the
    key once read as "no argument", so the wrong value kept its credit)."""
    wanted = [call("tag", **{"": "red", "size": 1})]
    made: list[tuple[str, object]] = [("tag", {"": "blue", "size": 1})]
    if parallel:
        wanted.append(call("tag", **{"": "green", "size": 2}))
        made.append(("tag", {"": "green", "size": 2}))
    gold = case(calls(*wanted), tools=(), messages=(user("Tag it red, size 1; and green, size 2."),))
    result = score_case(gold, run(*made), facts=CaseFacts(gold, compiled=compiled))  # type: ignore[arg-type]
    assert [(e.code, e.arg) for e in result.errors] == [(ErrorCode.WRONG_ARG_VALUE, "")]
    assert result.verdicts.arguments is False
    assert result.partial is not None
    assert result.partial.argument_accuracy == (3 / 4 if parallel else 1 / 2)
