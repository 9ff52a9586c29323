"""Quality gates: ``--fail-under selection=0.9`` and friends, checked against a report.

Gates apply to metrics where higher is better: the dimension headlines, ``pass^k`` (e.g. ``pass^2``),
``tool:NAME`` and ``tag:NAME`` (pass rate of the results expecting that tool / carrying that tag). A gate on
a metric the report has no results for fails: a gate that measured nothing has not passed.
"""

from __future__ import annotations

from collections.abc import Iterable

from scorer.compare import dimension_values
from scorer.errors import InvalidThreshold
from scorer.report import GateResult, Report

HIGHER_IS_BETTER = ("pass_rate", "selection", "macro_f1", "micro_f1", "arguments", "sequencing",
                    "exact_sequence", "no_call_precision", "no_call_recall", "clarify_asked", "argument_accuracy",
                    "call_precision", "call_recall", "call_f1", "sequence_alignment")
LOWER_IS_BETTER = ("over_call", "under_call", "redundancy", "ungrounded")


def parse_threshold(text: str) -> tuple[str, float]:
    """``"selection=0.9"`` -> ``("selection", 0.9)``; percentages (``90%``) are accepted."""
    metric, sep, raw = text.partition("=")
    metric, raw = metric.strip(), raw.strip()
    if not sep or not metric or not raw:
        raise InvalidThreshold(f"--fail-under {text!r}: write METRIC=VALUE, e.g. selection=0.9")
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise InvalidThreshold(f"--fail-under {text!r}: {raw!r} is not a number") from None
    if not 0 <= value <= 1:
        raise InvalidThreshold(f"--fail-under {text!r}: the threshold must be between 0 and 1 (or 0% and 100%)")
    if metric in LOWER_IS_BETTER:
        raise InvalidThreshold(f"--fail-under {metric}: lower is better for {metric}; "
                               f"gate one of: {', '.join(HIGHER_IS_BETTER)}")
    if not (metric in HIGHER_IS_BETTER or metric.startswith(("tool:", "tag:"))
            or (metric.startswith("pass^") and metric[5:].isdigit() and int(metric[5:]) >= 1)):
        raise InvalidThreshold(f"--fail-under {metric}: unknown metric; choose one of: "
                               f"{', '.join(HIGHER_IS_BETTER)}, pass^K, tool:NAME, tag:NAME")
    return metric, value


def metric_value(report: Report, metric: str) -> float | None:
    if metric.startswith("pass^"):
        k = int(metric[5:])
        return next((p.value for p in report.pass_hat_k if p.k == k), None)
    for prefix, breakdown in (("tool:", "tool"), ("tag:", "tag")):
        if metric.startswith(prefix):
            group = report.breakdowns.get(breakdown, {}).get(metric[len(prefix):])
            return group.passed.value if group else None
    return dimension_values(report)[metric]


def check_gates(report: Report, thresholds: Iterable[tuple[str, float]]) -> tuple[GateResult, ...]:
    out = []
    for metric, threshold in thresholds:
        value = metric_value(report, metric)
        out.append(GateResult(metric=metric, threshold=threshold, value=value,
                              passed=value is not None and value >= threshold))
    return tuple(out)


__all__ = ["HIGHER_IS_BETTER", "LOWER_IS_BETTER", "check_gates", "metric_value", "parse_threshold"]
