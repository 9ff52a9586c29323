"""Optimal assignment of expected calls to actual calls (the Hungarian method).

Small matrices (every turn case's: a few parallel calls) are solved here by the algorithm scipy's
``linear_sum_assignment`` runs (Crouse's shortest augmenting path, scipy's ``rectangular_lsap.cpp``), step for
step and with its tie-breaking, in the same floating-point operations, so the pairs are the ones scipy returns
(tests/scorer/test_assignment.py compares them, ties included). Importing scipy took half a second and its
call, with the OpenBLAS threads it starts, cost more than scoring the case; larger matrices still go to scipy.
"""

from __future__ import annotations

from collections.abc import Sequence

SMALL = 64
"""Matrices of at most this many cells are solved here."""
_INF = float("inf")


def optimal_pairs(cost: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """``(row, column)`` pairs of a minimum-cost assignment of a (possibly rectangular) cost matrix, sorted."""
    if not cost or not cost[0]:
        return []
    if len(cost) * len(cost[0]) <= SMALL:
        return small_pairs(cost)
    # Imported on first use: scipy.optimize takes almost half a second to import.
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(cost)
    return sorted(zip(rows.tolist(), cols.tolist(), strict=True))


def small_pairs(cost: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """``optimal_pairs`` of a finite cost matrix, solved as scipy solves it (``rectangular_lsap.cpp``)."""
    nr, nc = len(cost), len(cost[0])
    transpose = nc < nr
    if transpose:  # a tall matrix is solved transposed
        flat = [float(cost[i][j]) for j in range(nc) for i in range(nr)]
        nr, nc = nc, nr
    else:
        flat = [float(cost[i][j]) for i in range(nr) for j in range(nc)]
    u = [0.0] * nr
    v = [0.0] * nc
    shortest = [_INF] * nc
    path = [-1] * nc
    col4row = [-1] * nr
    row4col = [-1] * nc
    sr = [False] * nr
    sc = [False] * nc
    remaining = [0] * nc
    for cur in range(nr):
        # the shortest augmenting path from row ``cur``
        min_val = 0.0
        left = nc
        for it in range(nc):
            remaining[it] = nc - it - 1  # in reverse: a constant matrix gives the identity (scipy #11602)
        for k in range(nr):
            sr[k] = False
        for k in range(nc):
            sc[k] = False
            shortest[k] = _INF
        i = cur
        sink = -1
        while sink == -1:
            index = -1
            lowest = _INF
            sr[i] = True
            base = i * nc
            for it in range(left):
                j = remaining[it]
                r = min_val + flat[base + j] - u[i] - v[j]
                if r < shortest[j]:
                    path[j] = i
                    shortest[j] = r
                s = shortest[j]
                # among equally short, one that reaches a free column (a new sink)
                if s < lowest or (s == lowest and row4col[j] == -1):
                    lowest = s
                    index = it
            min_val = lowest
            if index < 0 or min_val == _INF:
                raise ValueError("cost matrix is infeasible")
            j = remaining[index]
            if row4col[j] == -1:
                sink = j
            else:
                i = row4col[j]
            sc[j] = True
            left -= 1
            remaining[index] = remaining[left]
        # update the dual variables
        u[cur] += min_val
        for k in range(nr):
            if sr[k] and k != cur:
                u[k] += min_val - shortest[col4row[k]]
        for k in range(nc):
            if sc[k]:
                v[k] -= min_val - shortest[k]
        # augment the previous solution
        j = sink
        while True:
            i = path[j]
            row4col[j] = i
            j, col4row[i] = col4row[i], j
            if i == cur:
                break
    if transpose:
        return sorted((col4row[k], k) for k in range(nr))
    return [(k, col4row[k]) for k in range(nr)]


__all__ = ["SMALL", "optimal_pairs", "small_pairs"]
