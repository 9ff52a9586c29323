"""What every readable renderer shows, in the same order: the headline rows, tools, patterns, gates."""

from __future__ import annotations

from dataclasses import dataclass

from scorer.codes import NO_CALL
from scorer.judging import JudgeUsage
from scorer.report import Rate, Report

TOP_PATTERNS = 10
TOP_FAILURES = 20


@dataclass(frozen=True, slots=True)
class Row:
    dimension: str
    metric: str
    value: Rate | float | None


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def counts(rate: Rate) -> str:
    return f"{rate.count}/{rate.total}"


def interval(rate: Rate) -> str:
    if rate.ci95 is None:
        return "—"
    low, high = rate.ci95
    return f"{100 * low:.1f}–{100 * high:.1f}%"


def cells(row: Row) -> tuple[str, str, str]:
    """(value, count, 95% interval) of a row, as text."""
    if isinstance(row.value, Rate):
        return percent(row.value.value), counts(row.value), interval(row.value)
    if row.metric.startswith("mean edit distance"):
        return ("—" if row.value is None else f"{row.value:.3f}"), "", ""
    return percent(row.value), "", ""


def headline_rows(report: Report) -> list[Row]:
    s, a, q = report.selection, report.abstention, report.sequencing
    rows = [
        Row("overall", "pass rate", report.totals.pass_rate),
        Row("selection", "accuracy", s.accuracy),
        Row("selection", "macro F1 (tools + NO_CALL)", s.macro.f1),
        Row("selection", "micro F1", s.micro.f1),
        Row("arguments", "accuracy (right tool)", report.arguments.accuracy),
        Row("sequencing", "accuracy", q.accuracy),
        Row("sequencing", "exact sequence", q.exact_sequence),
        Row("sequencing", "mean edit distance (0 = same)", q.mean_edit_distance),
        Row("abstention", "no-call precision", a.no_call_precision),
        Row("abstention", "no-call recall", a.no_call_recall),
        Row("abstention", "over-call rate", a.over_call),
        Row("abstention", "under-call rate", a.under_call),
        Row("abstention", "clarify: asked", a.clarify_asked),
        Row("abstention", "clarify: fabricated", a.clarify_fabricated),
        Row("partial", "argument accuracy (mean)", report.partial.argument_accuracy.value),
        Row("partial", "call precision (mean)", report.partial.call_precision.value),
        Row("partial", "call recall (mean)", report.partial.call_recall.value),
        Row("partial", "call F1 (mean)", report.partial.call_f1.value),
        Row("partial", "sequence alignment (mean, trajectories)", report.partial.sequence_alignment.value),
        Row("redundancy", "repeated identical calls", report.redundancy),
        Row("grounding", "results with ungrounded values", report.ungrounded),
    ]
    rows += [Row("trials", f"pass^{p.k} ({p.cases} cases)", p.value) for p in report.pass_hat_k
             if report.pass_hat_k and report.pass_hat_k[-1].k > 1]
    return rows


def tool_rows(report: Report) -> list[tuple[str, str, str, str, str, str]]:
    """(tool, support, precision, recall, F1, pass rate) per selection class, most supported first."""
    groups = report.breakdowns.get("tool", {})
    rows = []
    ranked = sorted(report.selection.per_tool.items(), key=lambda kv: (-kv[1].support, kv[0]))
    for tool, scores in ranked:
        group = groups.get(tool)
        rows.append((tool, str(scores.support), percent(scores.precision.value), percent(scores.recall.value),
                     percent(scores.f1), f"{percent(group.passed.value)} ({counts(group.passed)})" if group else "—"))
    return rows


SYNTHETIC_HEADER = ("cases", "results", "pass rate", "selection", "arguments")


def synthetic_rows(report: Report) -> list[tuple[str, str, str, str, str]]:
    """Real vs synthetic, then each transformation: (group, results, pass rate, selection, arguments); empty
    when no synthetic case was scored."""
    origin = report.breakdowns.get("origin", {})
    if "synthetic" not in origin:
        return []
    groups = [(name, g) for name, g in origin.items()]
    groups += [(f"synthetic: {name}", g) for name, g in report.breakdowns.get("transformation", {}).items()]
    return [(name, str(g.results), f"{percent(g.passed.value)} ({counts(g.passed)})", percent(g.selection.value),
             percent(g.arguments.value)) for name, g in groups]


def unscored_lines(report: Report) -> list[str]:
    u = report.unscored
    lines = []
    if u.cases_without_run:
        lines.append(f"{u.cases_without_run} gold case(s) have no run (e.g. {', '.join(u.examples_without_run)})")
    if u.runs_for_unknown_cases:
        lines.append(f"{u.runs_for_unknown_cases} run(s) reference unknown case ids "
                     f"(e.g. {', '.join(u.examples_unknown)})")
    return lines


def judge_lines(usage: JudgeUsage | None) -> list[str]:
    """What the LLM judge did, in words (calls, tokens, estimated cost, what waits)."""
    if usage is None:
        return []
    u = usage
    lines = [f"{u.questions} question(s) for {u.model} ({u.semantic_questions} semantic argument, "
             f"{u.mismatch_questions} mismatch): {u.cache_hits} from the cache, {u.api_calls} API call(s), "
             f"{u.answered} answered ({u.needs_review} without a usable verdict), {u.pending} pending"]
    cost = "cost unknown for this model" if u.estimated_cost_usd is None else f"≈ ${u.estimated_cost_usd:.4f} (estimate)"
    lines.append(f"{u.input_tokens:,} input + {u.output_tokens:,} output tokens, {cost}; "
                 f"{u.queued_for_review} queued for review")
    if u.not_queued_unknown_case:
        lines.append(f"{u.not_queued_unknown_case} verdict(s) not queued: their gold cases are not in the store")
    if u.skipped:
        lines.append(f"judge skipped: {u.skipped}")
    return lines


def comparison_lines(report: Report) -> list[str]:
    c = report.comparison
    if c is None:
        return []
    lines = []
    for d in c.dimensions:
        if d.delta is not None:
            lines.append(f"{d.metric}: {percent(d.baseline)} → {percent(d.current)} ({100 * d.delta:+.1f} pts)")
    if c.mcnemar is not None:
        m = c.mcnemar
        lines.append(f"McNemar (exact, {m.pairs} paired results): {m.only_current} fixed, {m.only_baseline} broken, "
                     f"p = {m.p_value:.4g}" + (" — significant at 0.05" if m.p_value < 0.05 else " — could be noise"))
    for r in c.regressions:
        lines.append(f"REGRESSION {r.tool}: {percent(r.baseline.value)} → {percent(r.current.value)} "
                     f"(−{100 * r.drop:.1f} pts, more than {100 * c.max_tool_drop:.1f})")
    return lines


def gate_lines(report: Report) -> list[str]:
    return [f"{'PASS' if g.passed else 'FAIL'} {g.metric} ≥ {g.threshold:g}: {percent(g.value)}" for g in report.gates]


def heatmap_labels(report: Report, limit: int = 25) -> list[str]:
    """The classes the confusion heatmap shows: the most frequent, NO_CALL always, the rest as (other)."""
    weight: dict[str, int] = {}
    for cell in report.confusion:
        weight[cell.gold] = weight.get(cell.gold, 0) + cell.count
        weight[cell.actual] = weight.get(cell.actual, 0) + cell.count
    ranked = sorted(weight, key=lambda t: (-weight[t], t))
    chosen = [t for t in ranked if t != NO_CALL][: limit - 1]
    labels = sorted(chosen) + ([NO_CALL] if NO_CALL in weight else [])
    if len(weight) > len(labels):
        labels.append("(other)")
    return labels


def confusion_grid(report: Report, labels: list[str]) -> list[list[int]]:
    index = {t: i for i, t in enumerate(labels)}
    other = index.get("(other)")
    grid = [[0] * len(labels) for _ in labels]
    for cell in report.confusion:
        g, a = index.get(cell.gold, other), index.get(cell.actual, other)
        if g is not None and a is not None:
            grid[g][a] += cell.count
    return grid
