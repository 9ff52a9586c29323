"""The Python API: score runs against gold cases, or run an agent over the gold set and score it.

``evaluate(cases, agent_fn)`` is the programmatic twin of ``toolgold score``: both stream the gold cases
and aggregate as they go. Inputs that do not fit together are never skipped silently: a duplicate case id
or a trial scored twice raises ``ScoringInputError``; cases without a run and runs for unknown cases are
counted in ``report.unscored``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from scorer.errors import ScoringInputError
from scorer.facts import CaseFacts
from scorer.judging import Judge
from scorer.model import Call, GoldCase, Message, RunCall, RunRecord, ToolSpec
from scorer.report import Report, ReportBuilder, Unscored
from scorer.results import CaseResult
from scorer.trajectory import score_trajectory
from scorer.turn import score_turn

UNSCORED_EXAMPLES = 5

AgentOutput = Sequence[RunCall | Call | Mapping[str, Any] | Message] | RunRecord | None
AgentFn = Callable[[tuple[Message, ...], tuple[ToolSpec, ...]], AgentOutput]
"""Takes the context messages and the offered tools; returns the calls it makes (empty or None: no call),
or for a trajectory case the messages of the run."""


def score_case(case: GoldCase, run: RunRecord, *, judge: Judge | None = None,
               facts: CaseFacts | None = None) -> CaseResult:
    """Score one run of one case."""
    fields = case.__dict__  # two fields: one attribute lookup, then dict lookups
    if run.case_id != fields["id"]:
        raise ScoringInputError(f"run for case {run.case_id!r} scored against case {case.id!r}")
    if fields["kind"] == "trajectory":
        return score_trajectory(case, run, judge=judge, facts=facts)
    return score_turn(case, run, judge=judge, facts=facts)


def score_trials(case: GoldCase, runs: Sequence[RunRecord], *, judge: Judge | None = None) -> list[CaseResult]:
    """Score every trial of a case, in trial order; two runs for the same trial are an error."""
    facts = CaseFacts(case)
    if len(runs) == 1:
        return [score_case(case, runs[0], judge=judge, facts=facts)]
    ordered = sorted(runs, key=lambda r: r.trial)
    for before, after in itertools.pairwise(ordered):
        if before.trial == after.trial:
            raise ScoringInputError(f"case {case.id!r} has two runs for trial {after.trial}")
    return [score_case(case, run, judge=judge, facts=facts) for run in ordered]


class _Unscored:
    def __init__(self) -> None:
        self.without_run: list[str] = []
        self.without_run_count = 0

    def missing(self, case_id: str) -> None:
        self.without_run_count += 1
        if len(self.without_run) < UNSCORED_EXAMPLES:
            self.without_run.append(case_id)


def iter_scored(cases: Iterable[GoldCase], runs_for: Callable[[str], Sequence[RunRecord]], *,
                judge: Judge | None = None) -> Iterator[tuple[GoldCase, list[CaseResult]]]:
    """Stream ``(case, results of its trials)``; a case with no run yields an empty list. Duplicate case
    ids raise ``ScoringInputError``."""
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ScoringInputError(f"gold case id {case.id!r} appears twice")
        seen.add(case.id)
        runs = runs_for(case.id)
        yield case, (score_trials(case, runs, judge=judge) if runs else [])


def score(cases: Iterable[GoldCase], runs: Iterable[RunRecord], *, judge: Judge | None = None,
          keep_cases: bool = True) -> Report:
    """Score ``runs`` against ``cases``. Runs are grouped by case id in memory; the gold streams."""
    by_case: dict[str, list[RunRecord]] = {}
    for run in runs:
        by_case.setdefault(run.case_id, []).append(run)
    builder = ReportBuilder(keep_cases=keep_cases)
    unscored = _Unscored()
    for case, results in iter_scored(cases, lambda case_id: by_case.pop(case_id, []), judge=judge):
        if results:
            builder.add(results)
        else:
            unscored.missing(case.id)
    unknown = sorted(by_case)
    return builder.finish(Unscored(
        cases_without_run=unscored.without_run_count, examples_without_run=tuple(unscored.without_run),
        runs_for_unknown_cases=sum(len(v) for v in by_case.values()),
        examples_unknown=tuple(unknown[:UNSCORED_EXAMPLES])))


def run_record(case: GoldCase, output: AgentOutput, *, trial: int = 0) -> RunRecord:
    """What an agent function returned, as the run record of ``case``."""
    if isinstance(output, RunRecord):
        return output.model_copy(update={"case_id": case.id, "trial": trial})
    items = list(output or ())
    if items and all(isinstance(i, Message) for i in items):
        return RunRecord(case_id=case.id, trial=trial, messages=tuple(i for i in items if isinstance(i, Message)))
    calls = []
    for item in items:
        if isinstance(item, RunCall):
            calls.append(item)
        elif isinstance(item, Call):
            calls.append(RunCall(name=item.name, arguments=item.arguments))
        elif isinstance(item, Mapping):
            calls.append(RunCall.model_validate(dict(item)))
        else:
            raise ScoringInputError(f"case {case.id!r}: the agent returned {type(item).__name__}, not a call")
    return RunRecord(case_id=case.id, trial=trial, calls=tuple(calls))


def evaluate(cases: Iterable[GoldCase], agent_fn: AgentFn, *, trials: int = 1, judge: Judge | None = None,
             keep_cases: bool = True) -> Report:
    """Run ``agent_fn`` on every case (``trials`` times each) and score what it did."""
    if trials < 1:
        raise ValueError("trials must be at least 1")
    builder = ReportBuilder(keep_cases=keep_cases)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ScoringInputError(f"gold case id {case.id!r} appears twice")
        seen.add(case.id)
        runs = [run_record(case, agent_fn(case.messages, case.tools), trial=t) for t in range(trials)]
        builder.add(score_trials(case, runs, judge=judge))
    return builder.finish()


__all__ = ["AgentFn", "AgentOutput", "evaluate", "iter_scored", "run_record", "score", "score_case",
           "score_trials"]
