"""Abstention aggregates agree with the per-case verdicts; a write in between makes a repeated read a
confirmation, not a redundant call (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scorer.api import score, score_case
from scorer.codes import ErrorCode
from scorer.importers import Converted, convert
from scorer.model import (
    Answer,
    ForbiddenCall,
    FunctionCall,
    GoldCase,
    Message,
    RunRecord,
    ToolCallRef,
    ToolSpec,
)
from tests.conftest import SHARED_DATA
from tests.scorer.kit import call, calls, case, user

READ = {"readOnlyHint": True}
WRITE = {"readOnlyHint": False, "destructiveHint": True}
ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}}
SHOP = (ToolSpec(name="get_order", parameters=ORDER, annotations=READ),
        ToolSpec(name="cancel_order", parameters=ORDER, annotations=WRITE),
        ToolSpec(name="list_orders", annotations=READ),
        ToolSpec(name="note_order", parameters=ORDER))  # not annotated: unknown whether it writes
ASK = user("Please cancel O-7 and tell me it worked.")


def agent(*made: tuple[str, dict[str, Any]]) -> RunRecord:
    messages: list[Message] = [ASK]
    for i, (name, args) in enumerate(made):
        messages.append(Message(role="assistant", tool_calls=(
            ToolCallRef(id=f"c{i}", function=FunctionCall(name=name, arguments=json.dumps(args))),)))
        messages.append(Message(role="tool", tool_call_id=f"c{i}", content='{"status": "ok"}'))
    return RunRecord(case_id="c1", messages=tuple(messages))


def cancel_flow() -> GoldCase:
    return case(calls(call("cancel_order", order_id="O-7")), kind="trajectory", order="superset", tools=SHOP,
                messages=(ASK,))


def redundant(*made: tuple[str, dict[str, Any]]) -> list[str]:
    return [e.note for e in score_case(cancel_flow(), agent(*made)).errors if e.code == ErrorCode.REDUNDANT_CALL]


O7, O8 = {"order_id": "O-7"}, {"order_id": "O-8"}


def test_reading_again_after_a_write_to_it_is_a_confirmation() -> None:
    assert redundant(("get_order", O7), ("cancel_order", O7), ("get_order", O7)) == []
    result = score_case(cancel_flow(), agent(("get_order", O7), ("cancel_order", O7), ("get_order", O7)))
    assert result.status == "pass" and result.redundant_calls == 0


def test_a_repeat_with_no_write_to_it_in_between_is_still_redundant() -> None:
    repeated = "called get_order again with the same arguments (call 2 repeats call 0)"
    assert redundant(("get_order", O7), ("list_orders", {}), ("get_order", O7), ("cancel_order", O7)) == [
        repeated]
    # a write to another order touched nothing this read returns
    assert redundant(("get_order", O7), ("cancel_order", O8), ("get_order", O7), ("cancel_order", O7)) == [repeated]
    # a tool whose annotations do not say it writes resets nothing
    assert redundant(("get_order", O7), ("note_order", O7), ("get_order", O7), ("cancel_order", O7)) == [repeated]
    # reading twice after the write: the second read repeats the first confirmation
    assert redundant(("get_order", O7), ("cancel_order", O7), ("get_order", O7), ("get_order", O7)) == [
        "called get_order again with the same arguments (call 3 repeats call 2)"]


def nothing_to_change() -> GoldCase:
    return case(Answer(behavior="no_call"), kind="trajectory", order="superset", tools=SHOP, messages=(ASK,),
                forbidden=(ForbiddenCall(name="cancel_order", reason="changes the database"),))


def test_a_task_that_changes_nothing_abstains_when_it_only_reads_and_the_report_agrees() -> None:
    reads = agent(("get_order", O7), ("list_orders", {}))
    result = score_case(nothing_to_change(), reads)
    assert result.status == "pass" and result.verdicts.abstention is True
    abstention = score([nothing_to_change()], [reads]).abstention
    assert (abstention.over_call.count, abstention.over_call.total) == (0, 1)
    assert (abstention.no_call_recall.count, abstention.no_call_recall.total) == (1, 1)
    assert (abstention.no_call_precision.count, abstention.no_call_precision.total) == (1, 1)


def test_a_task_that_changes_nothing_over_calls_when_it_writes() -> None:
    writes = agent(("get_order", O7), ("cancel_order", O7))
    result = score_case(nothing_to_change(), writes)
    assert result.status == "fail" and result.verdicts.abstention is False
    abstention = score([nothing_to_change()], [writes]).abstention
    assert (abstention.over_call.count, abstention.over_call.total) == (1, 1)
    assert abstention.no_call_recall.count == 0


TAU2 = SHARED_DATA / "tau2-bench" / "results"


@pytest.mark.skipif(not TAU2.is_dir(), reason=f"the tau2-bench results are not at {TAU2}")
def test_on_the_real_tau2_no_action_tasks_the_aggregates_match_the_verdicts() -> None:
    cases: dict[str, GoldCase] = {}
    runs: list[RunRecord] = []
    for path in sorted(Path(TAU2).glob("*.json")):
        records = [item.record for item in convert(path) if isinstance(item, Converted)]
        found = {c.id: c for c in records if isinstance(c, GoldCase) and "no_action" in c.tags}
        cases.update(found)
        for transcript in records:
            if isinstance(transcript, GoldCase):
                continue
            parts = transcript.id.split("/")  # tau2-bench/<domain>/<model>/task-<id>/trial-<k>
            case_id = "/".join((*parts[:2], parts[3]))
            if case_id in found:
                trial = sum(r.case_id == case_id for r in runs)
                runs.append(RunRecord(case_id=case_id, trial=trial, messages=transcript.messages))
    assert len(runs) >= 7
    results = [score_case(cases[r.case_id], r) for r in runs]
    assert all(r.actual_behavior == "call" for r in results)  # they all look things up
    abstention = score(list(cases.values()), runs).abstention
    assert abstention.over_call.total == len(results)
    assert abstention.over_call.count == sum(r.verdicts.abstention is False for r in results)
    assert all(r.verdicts.abstention for r in results if r.status == "pass")
    assert abstention.over_call.count < len(results)
