"""The pure side of run history: gold fingerprints and per-tool trend lines."""

from __future__ import annotations

import pytest

from labeler.store.history import ToolPoint, ToolTrend, fingerprint, tool_trends
from scorer.model import Provenance, ToolSpec
from tests.history.kit import gold_cases


def test_the_gold_fingerprint_is_its_content_not_its_order() -> None:
    cases = gold_cases()
    same = fingerprint(reversed(cases))
    assert same == fingerprint(cases)
    assert same.cases == 74
    assert same.version == f"sha256:{same.digest[:12]}"
    edited = fingerprint(gold_cases(changed="get_order-03"))
    assert edited.digest != same.digest
    assert edited.schema_hash == same.schema_hash  # an expected value changed, no tool did
    wider = [c.model_copy(update={"tools": (*c.tools, ToolSpec(name="cancel_order"))}) if n == 0 else c
             for n, c in enumerate(cases)]
    assert fingerprint(wider).schema_hash != same.schema_hash
    assert fingerprint(cases[:-1]).digest != same.digest


def test_the_version_is_the_frozen_label_every_case_carries() -> None:
    assert fingerprint(gold_cases(version="regression-v3")).version == "regression-v3"
    mixed = gold_cases(version="regression-v3")
    mixed[-1] = mixed[-1].model_copy(update={"split": "rolling", "provenance": Provenance(gold_version="rolling-v1")})
    assert fingerprint(mixed).version == "regression-v3+rolling-v1"
    partly = gold_cases(version="regression-v3")
    partly[0] = partly[0].model_copy(update={"provenance": Provenance()})
    assert fingerprint(partly).version.startswith("sha256:")


def point(run: str, tool: str, passed: int, results: int = 20) -> ToolPoint:
    return ToolPoint(run_id=run, tool=tool, results=results, passed=passed)


def test_a_drop_beyond_the_threshold_is_flagged_against_the_run_before() -> None:
    points = [point("a", "pay", 20), point("b", "pay", 20), point("c", "pay", 18),  # 100% -> 90%
              point("a", "find", 19), point("b", "find", 20), point("c", "find", 19),  # -5 pts: not beyond 5
              point("a", "ship", 10), point("b", "ship", 20)]  # not in the latest run
    trends = tool_trends(["a", "b", "c"], points, threshold=0.05)
    assert trends == [
        ToolTrend(tool="pay", rates=(1.0, 1.0, 0.9), latest=points[2], previous=points[1],
                  drop=pytest.approx(0.1), flagged=True, failing=2, best=1.0),
        ToolTrend(tool="find", rates=(0.95, 1.0, 0.95), latest=points[5], previous=points[4],
                  drop=pytest.approx(0.05), flagged=False, failing=1, best=1.0),
        ToolTrend(tool="ship", rates=(0.5, 1.0, None), latest=None, previous=points[7], drop=None,
                  flagged=False, failing=0, best=1.0),
    ]


def test_small_tools_are_not_flagged_below_the_minimum_support() -> None:
    points = [point("a", "rare", 3, 3), point("b", "rare", 2, 3)]
    assert tool_trends(["a", "b"], points, min_support=1)[0].flagged
    assert not tool_trends(["a", "b"], points, min_support=10)[0].flagged
    assert not tool_trends(["b"], points)[0].flagged  # one run: nothing to compare with
