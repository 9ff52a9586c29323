"""Toolkit growth: the same case offered with 5, 15 or 30 extra tools drawn from other sources.

The extra tools come from a pool the caller gives (the tools of gold cases from *other* sources, so none
is a near-duplicate the gold would have to account for); names the case already has are skipped. They are
drawn and placed among the case's own tools by the seeded random source, so the expected tool is not
always first or last. The expected behaviour is unchanged; the report's toolkit-size breakdown shows
where the agent starts to slip.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from scorer.model import GoldCase, ToolSpec
from scorer.synthesize.common import derive, rng_for
from scorer.synthesize.model import Candidate, NotApplicable

GROWTH_SIZES: Final[tuple[int, ...]] = (5, 15, 30)


class ToolPool:
    """Tools by the source they came from; each name once (the first schema seen for it)."""

    def __init__(self, tools: Iterable[tuple[str, ToolSpec]] = ()) -> None:
        self._by_name: dict[str, tuple[str, ToolSpec]] = {}
        for source, spec in tools:
            self._by_name.setdefault(spec.name, (source, spec))

    @classmethod
    def of_cases(cls, cases: Iterable[GoldCase]) -> ToolPool:
        return cls((c.provenance.source or "", t) for c in cases for t in c.tools)

    def __len__(self) -> int:
        return len(self._by_name)

    def others(self, case: GoldCase) -> list[ToolSpec]:
        """Tools from other sources than ``case``'s, whose names ``case`` does not use, in name order."""
        own = {t.name for t in case.tools} | {c.name for a in (case.expected, *case.alternatives) for c in a.calls}
        source = case.provenance.source or ""
        return [spec for name, (src, spec) in sorted(self._by_name.items()) if src != source and name not in own]


def toolkit_growth(case: GoldCase, pool: ToolPool, *, size: int, seed: int) -> Candidate:
    """The case with ``size`` extra tools from ``pool``; raises ``NotApplicable`` when the pool is short."""
    if not case.tools:
        raise NotApplicable(f"{case.id}: the case lists no tools to grow (it offers any tool)")
    available = pool.others(case)
    if len(available) < size:
        raise NotApplicable(f"{case.id}: only {len(available)} tools from other sources to add (+{size} needs "
                            f"{size}); import gold from more sources")
    variant = f"+{size}"
    rng = rng_for(seed, "toolkit_growth", case.id, variant)
    extra = rng.sample(available, size)
    tools = list(case.tools)
    for spec in extra:
        tools.insert(rng.randrange(len(tools) + 1), spec)
    return derive(case, "toolkit_growth", seed=seed, variant=variant, tools=tuple(tools),
                  change=f"offered {size} more tools from other sources ({len(case.tools)} -> {len(tools)}); "
                         "the expected behaviour is unchanged")


__all__ = ["GROWTH_SIZES", "ToolPool", "toolkit_growth"]
