"""An undefined metric (no results of its kind) is written as ``null`` beside the count that says why, never
as a number and never as a NaN turned into ``null`` on the way out: pinned by a golden report.

The inputs (``report/gold.jsonl``, ``report/runs.jsonl``) are three turn cases that each expect one call, so
sequencing, most of abstention and sequence alignment have nothing to measure. ``report/undefined.json`` is
the summary ``toolgold score --format json`` writes for them (everything but ``cases``). The rule, checked on
every null in it (docs/scoring.md, "Undefined metrics"): a rate's ``value`` and ``ci95`` are null only when
its ``total`` is 0; a mean's ``value`` only when its ``results`` are 0; ``mean_edit_distance`` only when no
result has a sequence (``exact_sequence.total`` 0); a tool's ``f1`` only when its precision or recall is;
``comparison`` and ``judge`` only when no baseline was given and no judge took part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from labeler.cli import cli
from scorer.report import Mean, Rate

GOLDEN = Path(__file__).resolve().parent / "report"


def toolgold(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def summary_text(report: Path) -> str:
    """The report's summary as written: the text before its cases (closed), so the bytes are compared."""
    text = report.read_text(encoding="utf-8")
    head, _, _ = text.partition(',\n  "cases": [')
    return head + "\n}\n"


def nulls(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in nulls(item, f"{path}.{key}" if path else key)]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in nulls(item, f"{path}[{i}]")]
    return [path] if value is None else []


def at(doc: Any, path: str) -> Any:
    for key in path.replace("[", ".[").split(".") if path else ():
        doc = doc[int(key[1:-1])] if key.startswith("[") else doc[key]
    return doc


def why_null(doc: dict[str, Any], path: str) -> bool:
    """Whether the null at ``path`` carries the zero count the documented rule names."""
    parent_path, _, field = path.rpartition(".")
    if not parent_path:  # a section not asked for: no --baseline, no --judge
        return field in ("comparison", "judge")
    parent = at(doc, parent_path)
    if set(parent) == {"count", "total", "value", "ci95"}:
        return field in ("value", "ci95") and parent["total"] == 0
    if set(parent) == {"value", "results"}:
        return field == "value" and parent["results"] == 0
    if field == "mean_edit_distance":
        return bool(parent["exact_sequence"]["total"] == 0)
    if field == "f1" and "support" in parent:
        return parent["precision"]["value"] is None or parent["recall"]["value"] is None
    return False


def test_undefined_metrics_are_null_beside_a_zero_count_as_the_golden_report_pins(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    code, _, err = toolgold("score", str(GOLDEN / "gold.jsonl"), str(GOLDEN / "runs.jsonl"), "--format", "json",
                            "-o", str(out))
    assert code == 0, err
    written = summary_text(out)
    assert written == (GOLDEN / "undefined.json").read_text(encoding="utf-8")
    doc = json.loads(written)
    # The metrics; the example failures are case results, whose nulls mean "does not apply to this case"
    # (docs/scoring.md, the per-case record).
    undefined = [path for path in nulls(doc) if not path.startswith("failures[")]
    assert "sequencing.accuracy.value" in undefined and "partial.sequence_alignment.value" in undefined
    assert [path for path in undefined if not why_null(doc, path)] == []


def test_a_saved_runs_json_keeps_the_same_nulls_and_counts(tmp_path: Path) -> None:
    code, _, err = toolgold("score", str(GOLDEN / "gold.jsonl"), str(GOLDEN / "runs.jsonl"), "--save",
                            "--run-id", "r1", "-o", str(tmp_path / "report.txt"))
    assert code == 0, err
    code, shown, err = toolgold("runs", "show", "r1", "--format", "json")
    assert code == 0, err
    assert json.loads(shown) == json.loads((GOLDEN / "undefined.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_report_number_that_is_not_finite_is_refused_when_built_not_written_as_null(bad: float) -> None:
    with pytest.raises(ValidationError, match="finite"):
        Rate(count=0, total=0, value=bad, ci95=None)
    with pytest.raises(ValidationError, match="finite"):
        Mean(value=bad, results=1)
