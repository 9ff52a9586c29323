"""Optimal assignment of expected calls to actual calls (the Hungarian method, via scipy)."""

from __future__ import annotations

from collections.abc import Sequence


def optimal_pairs(cost: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """``(row, column)`` pairs of a minimum-cost assignment of a (possibly rectangular) cost matrix, sorted."""
    if not cost or not cost[0]:
        return []
    # Imported on first use: scipy.optimize takes almost half a second to import, and most cases (one
    # expected call, one actual call) never need it.
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return sorted(zip(rows.tolist(), cols.tolist(), strict=True))


__all__ = ["optimal_pairs"]
