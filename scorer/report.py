"""The aggregate report, ``toolgold.report/1``: the four dimensions kept apart, built incrementally.

``ReportBuilder`` takes case results one case at a time (all trials of a case together, for pass^k) and
keeps only counters, a bounded list of example failures and, if asked, the results themselves; builders
of shards merge. Every rate carries its count, total and Wilson 95% interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal, NamedTuple

from pydantic import ConfigDict

from scorer.arguments import ARGUMENT_CODES
from scorer.codes import DIMENSION_OF, NO_CALL, ErrorCode
from scorer.judging import JudgeUsage
from scorer.model import Frozen
from scorer.results import CaseError, CaseResult
from scorer.stats import pass_hat_k, wilson
from scorer.transforms import ALL_TRANSFORMS, SYNTHETIC

REPORT_FORMAT: Final = "toolgold.report/1"


class Part(Frozen):
    """A part of the report. Its numbers are finite: a NaN or ±Infinity is refused when the part is built
    (a ValidationError, a bug to fix), never written out as ``null`` the way pydantic would. A metric that is
    undefined because nothing of its kind was scored is ``None`` by construction, and the count beside it
    says so (docs/scoring.md, "Undefined metrics"): a ``Rate`` with ``total`` 0, a ``Mean`` with ``results``
    0, ``Sequencing.mean_edit_distance`` when ``exact_sequence.total`` is 0, a tool's ``f1`` when its
    precision or recall is undefined."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
MAX_FAILURE_EXAMPLES = 100


class Rate(Part):
    count: int
    total: int
    value: float | None
    ci95: tuple[float, float] | None


def rate(count: int, total: int) -> Rate:
    return Rate(count=count, total=total, value=count / total if total else None, ci95=wilson(count, total))


class ClassScores(Part):
    """Precision, recall and F1 of one selection class (a tool, or ``NO_CALL``)."""

    support: int
    predicted: int
    precision: Rate
    recall: Rate
    f1: float | None


class Averages(Part):
    precision: float | None
    recall: float | None
    f1: float | None


class Selection(Part):
    accuracy: Rate
    per_tool: dict[str, ClassScores]
    macro: Averages
    micro: Averages


class Arguments(Part):
    accuracy: Rate
    errors_by_tool: dict[str, dict[str, int]]
    errors_by_argument: dict[str, dict[str, int]]
    """Keyed ``tool.arg``."""


class Sequencing(Part):
    accuracy: Rate
    exact_sequence: Rate
    mean_edit_distance: float | None
    errors: dict[str, int]


class Mean(Part):
    """A mean over the results where the measure is defined."""

    value: float | None = None
    results: int = 0


_PARTS: Final = 10**9
PARTIAL_METRICS: Final = ("argument_accuracy", "call_precision", "call_recall", "call_f1", "sequence_alignment")


class PartialSummary(Part):
    """Partial credit, averaged over the results where each is defined (beside, never inside, pass/fail)."""

    argument_accuracy: Mean = Mean()
    call_precision: Mean = Mean()
    call_recall: Mean = Mean()
    call_f1: Mean = Mean()
    sequence_alignment: Mean = Mean()


class Abstention(Part):
    no_call_precision: Rate
    no_call_recall: Rate
    over_call: Rate
    """Gold says no call (or ask) and the agent called."""
    under_call: Rate
    """Gold says call and the agent made none."""
    clarify_asked: Rate
    """Gold says ask: the agent made no call."""
    clarify_fabricated: Rate
    """Gold says ask: the agent called with invented values."""


class Group(Part):
    """One row of a breakdown."""

    results: int
    passed: Rate
    selection: Rate
    arguments: Rate
    sequencing: Rate


class ConfusionCell(Part):
    gold: str
    actual: str
    count: int


class Pattern(Part):
    """A recurring failure: how many failing results share it, and a sentence that says it."""

    code: ErrorCode
    text: str
    count: int
    of: int
    sentence: str
    examples: tuple[str, ...]


class Unscored(Part):
    """What could not be scored: never silently dropped."""

    cases_without_run: int = 0
    runs_for_unknown_cases: int = 0
    examples_without_run: tuple[str, ...] = ()
    examples_unknown: tuple[str, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.cases_without_run or self.runs_for_unknown_cases)


class Totals(Part):
    cases: int
    results: int
    """Scored runs (a case with several trials has several results)."""
    passed: int
    failed: int
    needs_review: int
    pass_rate: Rate
    turn_results: int
    trajectory_results: int


class PassHatK(Part):
    k: int
    value: float
    cases: int


class Delta(Part):
    metric: str
    baseline: float | None
    current: float | None
    delta: float | None


class McNemar(Part):
    """Paired per-result outcomes against the baseline and the exact two-sided test on the discordant ones."""

    pairs: int
    both_pass: int
    only_baseline: int
    only_current: int
    both_fail: int
    p_value: float


class ToolRegression(Part):
    tool: str
    baseline: Rate
    current: Rate
    drop: float


class Comparison(Part):
    dimensions: tuple[Delta, ...]
    tools: tuple[Delta, ...]
    mcnemar: McNemar | None
    regressions: tuple[ToolRegression, ...]
    max_tool_drop: float
    min_tool_support: int


class GateResult(Part):
    metric: str
    threshold: float
    value: float | None
    passed: bool


class Report(Part):
    format: Literal["toolgold.report/1"] = REPORT_FORMAT
    totals: Totals
    unscored: Unscored
    selection: Selection
    arguments: Arguments
    sequencing: Sequencing
    abstention: Abstention
    redundancy: Rate
    """Repeated identical calls over all calls."""
    ungrounded: Rate
    """Results with an ungrounded value over results with calls."""
    partial: PartialSummary = PartialSummary()
    """Partial credit (absent from reports written before it existed)."""
    pass_hat_k: tuple[PassHatK, ...]
    confusion: tuple[ConfusionCell, ...]
    error_counts: dict[str, int]
    breakdowns: dict[str, dict[str, Group]]
    failure_patterns: tuple[Pattern, ...]
    failures: tuple[CaseResult, ...]
    """The first failing (or needs-review) results, as examples for readable outputs."""
    comparison: Comparison | None = None
    gates: tuple[GateResult, ...] = ()
    judge: JudgeUsage | None = None
    """What the LLM judge did (``toolgold score --judge``); None when no judge took part."""
    cases: tuple[CaseResult, ...] = ()
    """Every result, when kept (the Python API); the CLI streams them into the JSON report instead."""


def toolkit_bucket(size: int) -> str:
    if size <= 1:
        return str(size)
    for upper, label in ((5, "2-5"), (10, "6-10"), (20, "11-20")):
        if size <= upper:
            return label
    return "21+"


def _tool(e: CaseError) -> str:
    return e.tool or "?"


def _arg(e: CaseError) -> str:
    return f"{e.tool or '?'}.{e.arg or '?'}"


_PATTERN_TEXT: Final[dict[ErrorCode, Callable[[CaseError], str]]] = {
    ErrorCode.WRONG_TOOL: lambda e: f"{e.actual} called where {e.expected} expected",
    ErrorCode.MISSING_CALL: lambda e: f"no call where {_tool(e)} expected",
    ErrorCode.UNEXPECTED_CALL: lambda e: f"{_tool(e)} called where no call was needed",
    ErrorCode.CALLED_INSTEAD_OF_ASKING: lambda e: f"{_tool(e)} called instead of asking the user",
    ErrorCode.WRONG_CALL_COUNT: lambda e: "wrong number of parallel calls",
    ErrorCode.MISSING_REQUIRED_ARG: lambda e: f"{_tool(e)} called without required {e.arg}",
    ErrorCode.HALLUCINATED_PARAM: lambda e: f"{_tool(e)} called with unknown parameter {e.arg}",
    ErrorCode.SCHEMA_TYPE_ERROR: lambda e: f"{_arg(e)} has the wrong type",
    ErrorCode.WRONG_ARG_VALUE: lambda e: f"{_arg(e)} has the wrong value",
    ErrorCode.MALFORMED_ARGUMENTS: lambda e: f"{_tool(e)} called with unparseable arguments",
    ErrorCode.STALE_VALUE: lambda e: f"{_arg(e)} uses a value the user replaced",
    ErrorCode.SWAPPED_ARGS: lambda e: f"{_tool(e)} called with {' and '.join(sorted(e.actual or ()))} swapped",
    ErrorCode.UNGROUNDED_VALUE: lambda e: f"{_arg(e)} not found in the conversation",
    ErrorCode.FABRICATED_VALUE: lambda e: f"{_arg(e)} invented instead of asking the user",
    ErrorCode.MISSING_STEP: lambda e: f"{_tool(e)} step never called",
    ErrorCode.EXTRA_STEP: lambda e: f"{_tool(e)} called as an unexpected extra step",
    ErrorCode.OUT_OF_ORDER: lambda e: f"{_tool(e)} called out of order",
    ErrorCode.DEPENDENCY_VIOLATION: lambda e: (f"{_tool(e)} called without {e.expected} succeeding first"
                                               if e.expected else f"{_arg(e)} not taken from the result it needs"),
    ErrorCode.FORBIDDEN_CALL: lambda e: f"forbidden {_tool(e)} called",
    ErrorCode.REDUNDANT_CALL: lambda e: f"{_tool(e)} repeated with the same arguments",
}


def pattern_of(error: CaseError) -> tuple[ErrorCode, str]:
    """The key failures are grouped by: the code and the words of the sentence."""
    return error.code, _PATTERN_TEXT[error.code](error)


class _Signature(NamedTuple):
    """Everything the aggregates need from a result, except its errors: results with equal signatures
    count together, so adding a result is one tuple and one counter increment."""

    status: str
    kind: str
    selection: bool | None
    arguments: bool | None
    sequencing: bool | None
    abstention: bool | None
    expected_behavior: str
    actual_behavior: str
    split: str
    toolkit_size: int
    tags: tuple[str, ...]
    expected_tools: tuple[str, ...]
    confusion: tuple[tuple[str, str], ...]
    called: bool
    ungrounded: bool
    fabricated: bool


_BREAKDOWN_ROW: Final = 8
"""results, passed, then (scored, passed) for selection, arguments and sequencing."""


class _Verdicts(NamedTuple):
    """What the totals, rates and abstention figures need of a signature (a few hundred values at most)."""

    status: str
    kind: str
    selection: bool | None
    arguments: bool | None
    sequencing: bool | None
    abstention: bool | None
    expected_behavior: str
    actual_behavior: str
    called: bool
    ungrounded: bool
    fabricated: bool


def _breakdown_keys(sig: _Signature) -> list[tuple[str, str]]:
    keys = [("split", sig.split), ("toolkit_size", toolkit_bucket(sig.toolkit_size))]
    keys += [("tag", t) for t in sig.tags]
    keys.append(("origin", SYNTHETIC if SYNTHETIC in sig.tags else "real"))
    keys += [("transformation", t) for t in sig.tags if t in ALL_TRANSFORMS]
    keys += [("tool", t) for t in (set(sig.expected_tools) or {NO_CALL})]
    return keys


class ReportBuilder:
    """Aggregates results incrementally; memory holds counters, not results (unless ``keep_cases``).

    Memory is bounded by the vocabulary (tools, tags, error patterns), not by the number of results:
    results are counted by signature (adding one is a tuple and an increment), and once more than
    ``max_signatures`` distinct signatures are held they are folded into what the report needs of them
    (counts by verdicts, confusion pairs, breakdown rows) and the counter starts again. Signatures join
    tags, toolkit sizes and expected tools, so their number keeps growing with the input (11,651 at 100,000
    generated cases); the folded counts do not. The limit is low on purpose: held signatures are the
    builder's only memory that grows with the input (about 600 bytes each with their strings and tuples,
    so 20,000 of them were 12 MB per process), and folding 4,096 of them costs about 1% of scoring (measured
    on 100,000 generated cases: 6 folds, 0.11 CPU s)."""

    def __init__(self, *, keep_cases: bool = False, max_failures: int = MAX_FAILURE_EXAMPLES,
                 max_signatures: int = 4_096) -> None:
        self.keep_cases = keep_cases
        self.max_failures = max_failures
        self.max_signatures = max_signatures
        self.cases = 0
        self.signatures: Counter[_Signature] = Counter()
        self.folded: Counter[_Verdicts] = Counter()
        self.folded_confusion: Counter[tuple[str, str]] = Counter()
        self.folded_rows: dict[tuple[str, str], list[int]] = {}
        self.exact_sequence = 0
        self.sequences = 0
        self.edit_distance = 0.0
        self.calls = 0
        self.redundant = 0
        # sums in billionths, as integers: shards merged in any order give the very same means
        self.partial_sums = dict.fromkeys(PARTIAL_METRICS, 0)
        self.partial_counts = dict.fromkeys(PARTIAL_METRICS, 0)
        self.errors: Counter[str] = Counter()
        self.arg_errors_by_tool: Counter[tuple[str, str]] = Counter()
        self.arg_errors_by_arg: Counter[tuple[str, str]] = Counter()
        self.patterns: Counter[tuple[ErrorCode, str]] = Counter()
        self.pattern_examples: dict[tuple[ErrorCode, str], list[str]] = {}
        self.trials: Counter[tuple[int, int]] = Counter()
        self.failures: list[CaseResult] = []
        self.kept: list[CaseResult] = []

    def add(self, results: Sequence[CaseResult]) -> None:
        """Add every trial of one case."""
        if not results:
            return
        self.cases += 1
        self.trials[len(results), sum(r.status == "pass" for r in results)] += 1
        for result in results:
            self._add_result(result)

    def _add_result(self, r: CaseResult) -> None:
        v = r.verdicts
        ungrounded = fabricated = False
        if r.errors:
            ungrounded, fabricated = self._add_errors(r)
        self.signatures[_Signature(
            r.status, r.kind, v.selection, v.arguments, v.sequencing, v.abstention, r.expected_behavior,
            r.actual_behavior,
            r.split, r.toolkit_size, r.tags, r.expected_tools, r.confusion, r.calls > 0, ungrounded,
            fabricated)] += 1
        if len(self.signatures) > self.max_signatures:
            self._fold()
        if r.sequence is not None:
            self.sequences += 1
            self.exact_sequence += r.sequence.exact
            self.edit_distance += r.sequence.edit_distance
        self.calls += r.calls
        self.redundant += r.redundant_calls
        if r.partial is not None:
            for metric in PARTIAL_METRICS:
                value = getattr(r.partial, metric)
                if value is not None:
                    self.partial_sums[metric] += round(value * _PARTS)
                    self.partial_counts[metric] += 1
        if r.status != "pass" and len(self.failures) < self.max_failures:
            self.failures.append(r)
        if self.keep_cases:
            self.kept.append(r)

    def _add_errors(self, r: CaseResult) -> tuple[bool, bool]:
        seen_patterns = set()
        ungrounded = fabricated = False
        for e in r.errors:
            code = e.code
            self.errors[code] += 1
            if code in ARGUMENT_CODES:
                tool = e.tool or "?"
                self.arg_errors_by_tool[tool, code] += 1
                self.arg_errors_by_arg[f"{tool}.{e.arg or '?'}", code] += 1
            elif code == ErrorCode.UNGROUNDED_VALUE:
                ungrounded = True
            elif code == ErrorCode.FABRICATED_VALUE:
                fabricated = True
            seen_patterns.add(pattern_of(e))
        for pattern in seen_patterns:
            self.patterns[pattern] += 1
            examples = self.pattern_examples.setdefault(pattern, [])
            if len(examples) < 3:
                examples.append(r.case_id)
        return ungrounded, fabricated

    def compact(self) -> None:
        """Fold the held signatures now (a shard's builder before it is sent to be merged: only the folded
        counts, bounded by the vocabulary, travel)."""
        self._fold()

    def _fold(self) -> None:
        """Move the signature counts into the folded counts (exact: the report reads only these)."""
        for sig, n in self.signatures.items():
            self.folded[_Verdicts(sig.status, sig.kind, sig.selection, sig.arguments, sig.sequencing,
                                  sig.abstention, sig.expected_behavior, sig.actual_behavior, sig.called,
                                  sig.ungrounded, sig.fabricated)] += n
            for pair in sig.confusion:
                self.folded_confusion[pair] += n
            for key in _breakdown_keys(sig):
                row = self.folded_rows.get(key)
                if row is None:
                    row = self.folded_rows[key] = [0] * _BREAKDOWN_ROW
                row[0] += n
                row[1] += n if sig.status == "pass" else 0
                for offset, verdict in ((2, sig.selection), (4, sig.arguments), (6, sig.sequencing)):
                    if verdict is not None:
                        row[offset] += n
                        row[offset + 1] += n if verdict else 0
        self.signatures.clear()

    def merge(self, other: ReportBuilder) -> None:
        """Fold in the counts of a builder that saw other cases (a shard of the same gold set)."""
        self.cases += other.cases
        self.folded.update(other.folded)
        self.folded_confusion.update(other.folded_confusion)
        for key, row in other.folded_rows.items():
            mine = self.folded_rows.setdefault(key, [0] * _BREAKDOWN_ROW)
            for k, value in enumerate(row):
                mine[k] += value
        self.sequences += other.sequences
        self.exact_sequence += other.exact_sequence
        self.edit_distance += other.edit_distance
        self.calls += other.calls
        self.redundant += other.redundant
        for metric in PARTIAL_METRICS:
            self.partial_sums[metric] += other.partial_sums[metric]
            self.partial_counts[metric] += other.partial_counts[metric]
        for counter_name in ("signatures", "errors", "arg_errors_by_tool", "arg_errors_by_arg", "patterns", "trials"):
            getattr(self, counter_name).update(getattr(other, counter_name))
        if len(self.signatures) > self.max_signatures:
            self._fold()
        for key, examples in other.pattern_examples.items():
            kept = self.pattern_examples.setdefault(key, [])
            kept.extend(examples[: 3 - len(kept)])
        self.failures.extend(other.failures[: self.max_failures - len(self.failures)])
        self.kept.extend(other.kept)

    def _count(self, **wanted: object) -> int:
        return sum(n for sig, n in self.folded.items()
                   if all(getattr(sig, k) == v for k, v in wanted.items()))

    def _pair(self, field: str) -> Rate:
        """Rate of True among results whose verdict ``field`` is not None."""
        total = ok = 0
        for sig, n in self.folded.items():
            value = getattr(sig, field)
            if value is not None:
                total += n
                ok += n if value else 0
        return rate(ok, total)

    def finish(self, unscored: Unscored | None = None) -> Report:
        self._fold()
        results = sum(self.folded.values())
        passed, failed = self._count(status="pass"), self._count(status="fail")
        return Report(
            totals=Totals(cases=self.cases, results=results, passed=passed, failed=failed,
                          needs_review=self._count(status="needs_review"), pass_rate=rate(passed, results),
                          turn_results=self._count(kind="turn"), trajectory_results=self._count(kind="trajectory")),
            unscored=unscored or Unscored(),
            selection=self._selection(),
            arguments=Arguments(
                accuracy=self._pair("arguments"),
                errors_by_tool=_nest(self.arg_errors_by_tool),
                errors_by_argument=_nest(self.arg_errors_by_arg)),
            sequencing=Sequencing(
                accuracy=self._pair("sequencing"),
                exact_sequence=rate(self.exact_sequence, self.sequences),
                mean_edit_distance=self.edit_distance / self.sequences if self.sequences else None,
                errors={code.value: self.errors[code] for code in ErrorCode
                        if DIMENSION_OF[code] == "sequencing" and self.errors[code]}),
            abstention=self._abstention(),
            redundancy=rate(self.redundant, self.calls),
            ungrounded=rate(self._count(called=True, ungrounded=True), self._count(called=True)),
            partial=PartialSummary(**{
                m: Mean(value=self.partial_sums[m] / _PARTS / n if (n := self.partial_counts[m]) else None, results=n)
                for m in PARTIAL_METRICS}),
            pass_hat_k=self._pass_hat_k(),
            confusion=tuple(ConfusionCell(gold=g, actual=a, count=n)
                            for (g, a), n in sorted(self._confusion().items())),
            error_counts={code.value: self.errors[code] for code in ErrorCode if self.errors[code]},
            breakdowns=self._breakdowns(),
            failure_patterns=self._patterns(failed),
            failures=tuple(self.failures),
            cases=tuple(self.kept))

    def _confusion(self) -> Counter[tuple[str, str]]:
        return self.folded_confusion

    def _selection(self) -> Selection:
        support: Counter[str] = Counter()
        predicted: Counter[str] = Counter()
        hits: Counter[str] = Counter()
        for (gold, actual), n in self._confusion().items():
            support[gold] += n
            predicted[actual] += n
            if gold == actual:
                hits[gold] += n
        per_tool = {}
        for tool in sorted(set(support) | set(predicted)):
            tp, sup, pred = hits[tool], support[tool], predicted[tool]
            per_tool[tool] = ClassScores(support=sup, predicted=pred, precision=rate(tp, pred),
                                         recall=rate(tp, sup), f1=2 * tp / (sup + pred) if sup + pred else None)
        precisions = [s.precision.value for s in per_tool.values() if s.precision.value is not None]
        recalls = [s.recall.value for s in per_tool.values() if s.recall.value is not None]
        f1s = [s.f1 for s in per_tool.values() if s.f1 is not None]
        total_tp, total = sum(hits.values()), sum(support.values())
        micro = total_tp / total if total else None
        return Selection(
            accuracy=self._pair("selection"), per_tool=per_tool,
            macro=Averages(precision=_mean(precisions), recall=_mean(recalls), f1=_mean(f1s)),
            micro=Averages(precision=micro, recall=micro, f1=micro))

    def _abstention(self) -> Abstention:
        # From the per-result abstention verdicts, so the aggregates agree with them: a tau task whose gold
        # changes nothing abstains when it makes no write, though it may read (it made calls).
        abstained = sum(self._count(expected_behavior=b, abstention=True) for b in ("no_call", "clarify"))
        gold_no_call = self._count(expected_behavior="no_call") + self._count(expected_behavior="clarify")
        under = self._count(expected_behavior="call", actual_behavior="no_call")
        clarify = self._count(expected_behavior="clarify")
        gold_call = self._count(expected_behavior="call")
        return Abstention(
            no_call_precision=rate(abstained, abstained + under),
            no_call_recall=rate(abstained, gold_no_call),
            over_call=rate(gold_no_call - abstained, gold_no_call),
            under_call=rate(under, gold_call),
            clarify_asked=rate(self._count(expected_behavior="clarify", abstention=True), clarify),
            clarify_fabricated=rate(self._count(expected_behavior="clarify", fabricated=True), clarify))

    def _pass_hat_k(self) -> tuple[PassHatK, ...]:
        most = max((n for n, _ in self.trials), default=0)
        out = []
        for k in range(1, most + 1):
            found = pass_hat_k(self.trials, k)
            if found is not None:
                out.append(PassHatK(k=k, value=found[0], cases=found[1]))
        return tuple(out)

    def _breakdowns(self) -> dict[str, dict[str, Group]]:
        rows = self.folded_rows
        out: dict[str, dict[str, Group]] = {"tag": {}, "split": {}, "tool": {}, "toolkit_size": {}, "origin": {},
                                            "transformation": {}}
        for (kind, name), row in sorted(rows.items()):
            out[kind][name] = Group(results=row[0], passed=rate(row[1], row[0]), selection=rate(row[3], row[2]),
                                    arguments=rate(row[5], row[4]), sequencing=rate(row[7], row[6]))
        return out

    def _patterns(self, failing: int) -> tuple[Pattern, ...]:
        ranked = sorted(self.patterns.items(), key=lambda item: (-item[1], item[0][0].value, item[0][1]))
        return tuple(
            Pattern(code=code, text=text, count=n, of=failing,
                    sentence=f"{n} of {failing} failures: {text}",
                    examples=tuple(self.pattern_examples.get((code, text), ())))
            for (code, text), n in ranked)


def _nest(counter: Counter[tuple[str, str]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (outer, inner), n in sorted(counter.items()):
        out.setdefault(outer, {})[inner] = n
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def report_of(results: Iterable[Sequence[CaseResult]], *, keep_cases: bool = True,
              unscored: Unscored | None = None) -> Report:
    """A report from per-case groups of results."""
    builder = ReportBuilder(keep_cases=keep_cases)
    for group in results:
        builder.add(group)
    return builder.finish(unscored)


def as_json(report: Report) -> dict[str, Any]:
    return report.model_dump(mode="json")


__all__ = ["MAX_FAILURE_EXAMPLES", "REPORT_FORMAT", "Abstention", "Arguments", "Averages", "ClassScores",
           "Comparison", "ConfusionCell", "Delta", "GateResult", "Group", "McNemar", "PassHatK", "Pattern",
           "Rate", "Report", "ReportBuilder", "Selection", "Sequencing", "ToolRegression", "Totals",
           "Unscored", "as_json", "pattern_of", "rate", "report_of", "toolkit_bucket"]
