"""An estimate of what judge calls cost, from token usage and a small list-price table per model family.

An estimate, not a bill: prices change, and cache, batch and regional pricing are not modelled. Unknown
model families give no estimate (None) rather than a wrong number.
"""

from __future__ import annotations

from typing import Final

PRICES_PER_MILLION: Final[tuple[tuple[str, float, float], ...]] = (
    # (model id prefix, USD per million input tokens, per million output tokens); first match wins.
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus-4-6", 5.0, 25.0),
    ("claude-opus-4", 15.0, 75.0),
    ("claude-3-opus", 15.0, 75.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-haiku-4", 1.0, 5.0),
    ("claude-3-5-haiku", 0.8, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
)


def price_of(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model``'s family, or None when it is not listed."""
    for prefix, per_input, per_output in PRICES_PER_MILLION:
        if model.startswith(prefix):
            return per_input, per_output
    return None


def estimate_cost(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Estimated USD for a call (or a sum of calls) to ``model``; None for an unlisted family."""
    price = price_of(model)
    if price is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000


__all__ = ["PRICES_PER_MILLION", "estimate_cost", "price_of"]
