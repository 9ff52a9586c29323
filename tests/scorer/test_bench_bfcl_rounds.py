"""``bench_bfcl``'s timed ratio: the median of the rounds' ratios, each round's two sides timed seconds apart,
so one slow round (a burst of load, or one side's slow process) does not decide it; each side's rate is still
its best pass of the run."""

from __future__ import annotations

import statistics

from benchmarks.bench_bfcl import best_of_rounds, round_ratios


def _side(correct: float, perturbed: float) -> dict[str, dict[str, float]]:
    return {"correct": {"seconds": correct, "valid": 1}, "perturbed": {"seconds": perturbed, "valid": 0}}


# (BFCL's round, toolgold's round), seconds per pass over all items: toolgold is 1.5× slower on perturbed
# outputs, except in round 3, where BFCL's process ran 40% slow.
ROUNDS = [(_side(0.040, 0.030), _side(0.020, 0.045)),
          (_side(0.041, 0.031), _side(0.021, 0.046)),
          (_side(0.056, 0.042), _side(0.020, 0.044)),
          (_side(0.040, 0.030), _side(0.020, 0.045)),
          (_side(0.042, 0.031), _side(0.022, 0.047))]


def test_each_round_is_bfcls_seconds_over_toolgolds() -> None:
    assert round_ratios(ROUNDS, "perturbed") == [0.030 / 0.045, 0.031 / 0.046, 0.042 / 0.044, 0.030 / 0.045,
                                                  0.031 / 0.047]


def test_one_slow_round_of_one_side_does_not_decide_the_ratio() -> None:
    ratios = round_ratios(ROUNDS, "perturbed")
    assert round(statistics.median(ratios), 2) == 0.67
    assert round(max(ratios), 2) == 0.95  # what that round alone would have printed


def test_the_rates_are_each_sides_best_pass_of_the_run() -> None:
    theirs, ours = best_of_rounds(ROUNDS, "perturbed")
    assert theirs["seconds"] == 0.030 and ours["seconds"] == 0.044
    theirs, ours = best_of_rounds(ROUNDS, "correct")
    assert theirs["seconds"] == 0.040 and ours["seconds"] == 0.020


def test_a_category_row_shows_each_sides_us_per_item_and_bfcls_time_over_toolgolds() -> None:
    from benchmarks.bench_bfcl import category_row

    # 400 items: toolgold 2.4 ms / 4.16 ms a pass, BFCL 4.2 ms / 2.704 ms
    row = category_row("simple_python", 400, {"correct": 0.0024, "perturbed": 0.00416},
                       {"correct": 0.0042, "perturbed": 0.002704})
    assert row == "| simple_python (400) | 6.0 / 10.5 (1.75×) | 10.4 / 6.8 (0.65×) |"
