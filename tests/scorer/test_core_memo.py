"""Argument checks reused across a case's alternatives give the results that checking each answer afresh
gives: the same status, the answer compared with, every error and note."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from scorer import turn
from scorer.api import score_case
from scorer.arguments import PairCheck, check_pair
from scorer.facts import CaseFacts
from scorer.model import Answer, Call, GoldCase, Message, RunCall, RunRecord, ToolSpec
from tests.conftest import pure_core_only

TOOL = ToolSpec(name="get_case_status", parameters={
    "type": "object", "required": ["case_number", "court"],
    "properties": {"case_number": {"type": "string"}, "court": {"type": "string"},
                   "details": {"type": "string", "enum": ["status", "trial_date"]}}})
COURTS = {"XY1234": ["Los Angeles County Court", "Los Angeles", "LA", "Los Angeles, CA"],
          "GH5678": ["Orange County Court", "Orange County", "Orange", "Orange County, CA"]}
DETAILS = ["status", "trial_date"]


def expanded_case() -> GoldCase:
    """Four parallel calls, each with accepted variants, expanded into every combination (as BFCL's parallel
    answers were imported): 4^4 = 256 answers that share a handful of distinct calls."""
    slots = [[Call(name=TOOL.name, arguments={"case_number": number, "court": court, "details": detail})
              for court in COURTS[number]] for number, detail in itertools.product(COURTS, DETAILS)]
    answers = [Answer(behavior="call", calls=combo) for combo in itertools.product(*slots)]
    return GoldCase(id="courts", tools=(TOOL,), expected=answers[0], alternatives=tuple(answers[1:]),
                    messages=(Message(role="user", content="Status and trial dates of XY1234 (Los Angeles County "
                                                            "Court) and GH5678 (Orange County Court)?"),))


def runs(case: GoldCase, n: int) -> list[RunRecord]:
    rng = random.Random(15)
    made = []
    for k in range(n):
        calls = [dict(c.arguments) for c in rng.choice((case.expected, *case.alternatives)).calls]
        for args in rng.sample(calls, rng.randrange(1, 3)):
            kind = rng.randrange(4)
            if kind == 0:
                args["court"] = "Kern County Court"
            elif kind == 1:
                args.pop("case_number")
            elif kind == 2:
                args["zz_unknown"] = 1
            else:
                args["details"] = "verdict"
        if k % 5 == 0:
            calls.pop()
        made.append(RunRecord(case_id=case.id, calls=tuple(
            RunCall(name=TOOL.name, arguments=json.dumps(a)) for a in calls)))
    return made


def fresh_check(self: turn.PairMemo, facts: CaseFacts, want: Call, got: RunCall, j: int, *, tool_only: bool,
                step: int | None) -> PairCheck:
    return check_pair(facts, want, got, tool_only=tool_only, step=step, context=lambda: facts.context)


@pure_core_only
def test_reused_checks_give_the_results_of_fresh_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    case = expanded_case()
    assert len(case.alternatives) == 255
    sample = runs(case, 40)
    reused = [score_case(case, run) for run in sample]
    monkeypatch.setattr(turn.PairMemo, "check", fresh_check)
    monkeypatch.setattr(turn.PairMemo, "optimal", lambda self, cost: turn.optimal_pairs(cost))
    fresh = [score_case(case, run) for run in sample]
    assert [r.model_dump() for r in reused] == [r.model_dump() for r in fresh]
    assert {r.status for r in reused} == {"fail"}
    assert len({r.compared_with for r in reused}) > 5  # the runs are closest to many different answers


def test_a_memo_never_carries_checks_from_one_trial_to_the_next() -> None:
    case = expanded_case()
    good, bad = case.expected.calls, runs(case, 1)[0]
    right = RunRecord(case_id=case.id, trial=0, calls=tuple(RunCall(name=c.name, arguments=c.arguments)
                                                            for c in good))
    wrong = bad.model_copy(update={"trial": 1})
    from scorer.api import score_trials

    first, second = score_trials(case, [right, wrong])
    assert (first.status, second.status) == ("pass", "fail")
    assert second == score_case(case, wrong.model_copy(update={"trial": 1}))
