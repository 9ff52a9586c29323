"""Judge calibration against hand-computed agreement: accuracy, Cohen's kappa, drops over time and versions."""

from __future__ import annotations

import pytest

from labeler.judge.calibration import AgreementRow, calibration, calibration_lines, period_of
from labeler.store import Adjudication

E, N = "equivalent", "not_equivalent"


def decided(judge: str, reviewer: str, *, at: str = "2026-11-10T09:00:00Z", version: str = "mismatch/1",
            kind: str = "mismatch", n: int = 0) -> Adjudication:
    return Adjudication(n, f"k{n}", kind, "claude-sonnet-4-6", version, judge, reviewer, "confirm_defect", "rita",
                        "", None, at)


def test_accuracy_and_kappa_per_question_and_prompt_version() -> None:
    # Agree on 8 of 10; each side says equivalent half the time: p_o = 0.8, p_e = 0.5, kappa = 0.6.
    pairs = [(E, E)] * 4 + [(E, N)] + [(N, N)] * 4 + [(N, E)]
    items = [decided(j, r, n=i) for i, (j, r) in enumerate(pairs)]
    items.append(decided("needs_review", N, n=99))  # no verdict: counted apart, not as a disagreement
    items.append(decided(E, E, kind="semantic_argument", version="semantic_argument/1", n=100))
    cal = calibration(items)
    assert cal.overall == (
        AgreementRow("mismatch", "mismatch/1", None, 10, 8, 0.8, pytest.approx(0.6), None, 1),
        AgreementRow("semantic_argument", "semantic_argument/1", None, 1, 1, 1.0, None,
                     "every rating is 'equivalent': chance agreement is 1, so the coefficient is undefined "
                     "(the raters agree on every item)", 0),
    )
    assert cal.drops == ()


def test_a_prompt_version_whose_agreement_falls_is_flagged() -> None:
    october = [decided(E, E, at="2026-10-05T10:00:00Z", n=i) for i in range(5)]
    november = [decided(E, E if i < 3 else N, at="2026-11-05T10:00:00Z", n=10 + i) for i in range(5)]
    newer = [decided(E, E if i < 2 else N, version="mismatch/2", n=20 + i) for i in range(5)]
    few = [decided(E, N, version="mismatch/3", n=30)]  # one item: too few to call a drop
    cal = calibration([*october, *november, *newer, *few])
    assert [(r.prompt_version, r.period, r.accuracy, r.dropped, r.drop_note) for r in cal.over_time] == [
        ("mismatch/1", "2026-10", 1.0, False, ""),
        ("mismatch/1", "2026-11", 0.6, True, "down 40% from 2026-10"),
        ("mismatch/2", "2026-11", 0.4, False, ""),
        ("mismatch/3", "2026-11", 0.0, False, ""),
    ]
    assert [(r.prompt_version, r.accuracy, r.dropped, r.drop_note) for r in cal.overall] == [
        ("mismatch/1", 0.8, False, ""),
        ("mismatch/2", 0.4, True, "40% below mismatch/1"),
        ("mismatch/3", 0.0, False, ""),
    ]
    lines = calibration_lines(cal)
    assert lines[2].endswith("DROP: 40% below mismatch/1")
    assert any(line.startswith("  2026-11  mismatch") and line.endswith("DROP: down 40% from 2026-10")
               for line in lines)


def test_periods_are_months_or_iso_weeks() -> None:
    assert period_of("2026-11-30T20:00:00.000Z", "month") == "2026-11"
    assert period_of("2026-11-30T20:00:00.000Z", "week") == "2026-W49"
    assert period_of("2027-01-01T00:00:00Z", "week") == "2026-W53"


def test_nothing_decided_yet_says_where_decisions_are_made() -> None:
    assert calibration_lines(calibration([])) == [
        "no adjudicated verdicts yet: reviewers decide judge items on the Adjudication page"]
