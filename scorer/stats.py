"""The statistics next to every number: Wilson intervals, exact McNemar, pass^k."""

from __future__ import annotations

import math
from collections.abc import Mapping

Z95 = 1.959963984540054


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval for a binomial proportion (None when there is nothing to measure)."""
    if total <= 0:
        return None
    p = successes / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(only_baseline: int, only_current: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs: cases only the baseline passed, and
    cases only the current run passed (a binomial test of the split against 1/2)."""
    n = only_baseline + only_current
    if n == 0:
        return 1.0
    # Imported here: scipy.stats takes most of a second to import, and only --baseline needs it.
    from scipy.stats import binomtest

    return float(binomtest(only_current, n, 0.5, alternative="two-sided").pvalue)


def pass_hat_k(trials: Mapping[tuple[int, int], int], k: int) -> tuple[float, int] | None:
    """pass^k (tau-bench): the chance that all of k trials of a case pass, estimated without bias per case
    as C(c, k) / C(n, k) from its n trials with c passes, averaged over cases with at least k trials.

    ``trials`` counts cases by ``(n, c)``. Returns (value, number of cases) or None."""
    total, cases = 0.0, 0
    for (n, c), count in trials.items():
        if n >= k:
            total += count * math.comb(c, k) / math.comb(n, k)
            cases += count
    return (total / cases, cases) if cases else None


__all__ = ["mcnemar_exact", "pass_hat_k", "wilson"]
