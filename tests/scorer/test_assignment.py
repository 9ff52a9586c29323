"""``optimal_pairs`` solves small matrices itself (no scipy import, no OpenBLAS threads) and must return exactly
the pairs scipy's ``linear_sum_assignment`` returns, ties included: which of several optimal pairings is
chosen decides which errors a case reports."""

from __future__ import annotations

import itertools
import random

import pytest
from scipy.optimize import linear_sum_assignment

from scorer.assignment import optimal_pairs, small_pairs


def _scipy(cost: list[list[int]]) -> list[tuple[int, int]]:
    rows, cols = linear_sum_assignment(cost)
    return sorted(zip(rows.tolist(), cols.tolist(), strict=True))


def _matrices() -> list[list[list[int]]]:
    rng = random.Random(15)
    found = []
    for rows, cols in itertools.product(range(1, 6), repeat=2):
        for _ in range(60):
            # few distinct values: ties everywhere, as error counts and WRONG_TOOL_COST make them
            values = rng.choice(((0, 1), (0, 1, 2), (0, 1, 1000), (0, 2, 3, 1000), tuple(range(9))))
            found.append([[rng.choice(values) for _ in range(cols)] for _ in range(rows)])
        found.append([[0] * cols for _ in range(rows)])
        found.append([[1000] * cols for _ in range(rows)])
    for n in (7, 9, 12):
        for _ in range(20):
            found.append([[rng.choice((0, 1, 2, 1000)) for _ in range(n)] for _ in range(n + rng.choice((-2, 0, 3)))])
    return found


@pytest.mark.parametrize("cost", _matrices())
def test_small_pairs_are_scipys(cost: list[list[int]]) -> None:
    assert small_pairs(cost) == _scipy(cost)
    assert optimal_pairs(cost) == _scipy(cost)


def test_empty_matrix_has_no_pairs() -> None:
    assert optimal_pairs([]) == []
    assert optimal_pairs([[]]) == []
