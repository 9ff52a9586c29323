"""Choosing which conversations to label: a seeded, streaming, stratified, weighted sample.

Strata are (source, the first tool the conversation calls -- ``no_call`` when it calls none); every
stratum keeps a weighted reservoir (Efraimidis-Spirakis: key ``u ** (1 / weight)``, the largest keys
win) of at most ``n`` entries -- a key and the conversation's ordinal, never the conversation -- so memory
stays small (``n`` x strata entries of a few dozen bytes) whatever the input size; the caller reads the
chosen ordinals in a second pass. At
the end the ``n`` places are dealt round-robin over the sources and, within each source, over its first
tools, each stratum giving its best keys first: small strata are not drowned by large ones. The same
input in the same order with the same seed gives the same sample.

Weights favour what is most worth labeling; they are computed by the caller (``weight``), e.g. more for
conversations that failed a scored run or that use a tool or argument shape the gold set lacks.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scorer.model import Transcript

Stratum = tuple[str, str]


def stratum_of(transcript: Transcript) -> Stratum:
    source = str(transcript.metadata.get("source") or "")
    first = next((c.function.name for m in transcript.messages for c in m.tool_calls), "no_call")
    return source, first


def argument_shapes(transcript: Transcript) -> set[tuple[str, tuple[str, ...]]]:
    """``(tool, sorted argument names)`` of every call the conversation makes."""
    shapes = set()
    for message in transcript.messages:
        for call in message.tool_calls:
            parsed = call.parsed_arguments()
            keys = tuple(sorted(parsed)) if isinstance(parsed, dict) else ()
            shapes.add((call.function.name, keys))
    return shapes


@dataclass
class StratifiedSampler:
    n: int
    seed: int = 0
    weight: Callable[[Transcript], float] = lambda _: 1.0
    _random: random.Random = field(init=False)
    _reservoirs: dict[Stratum, list[tuple[float, int]]] = field(init=False, default_factory=dict)
    seen: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("the sample size must be at least 1")
        self._random = random.Random(self.seed)

    def offer(self, transcript: Transcript) -> None:
        """Consider the next conversation (its ordinal is how many were offered so far, from 1)."""
        self.seen += 1
        w = self.weight(transcript)
        u = self._random.random()
        if w <= 0:
            return
        key = u ** (1.0 / w)
        heap = self._reservoirs.setdefault(stratum_of(transcript), [])
        entry = (key, -self.seen)  # equal keys: the earlier conversation wins
        if len(heap) < self.n:
            heapq.heappush(heap, entry)
        elif key > heap[0][0]:
            heapq.heapreplace(heap, entry)

    def offer_all(self, transcripts: Iterable[Transcript]) -> None:
        for transcript in transcripts:
            self.offer(transcript)

    @property
    def strata(self) -> dict[Stratum, int]:
        return {s: len(h) for s, h in sorted(self._reservoirs.items())}

    def sample(self) -> list[tuple[Stratum, int]]:
        """Up to ``n`` (stratum, ordinal) pairs, dealt round-robin over the sources and, within a source,
        over its first tools; each stratum gives its best keys first."""
        by_source: dict[str, list[list[tuple[Stratum, int]]]] = {}
        for stratum, heap in sorted(self._reservoirs.items()):
            by_source.setdefault(stratum[0], []).append([(stratum, -e[1]) for e in sorted(heap, reverse=True)])
        dealt = {source: _round_robin(queues) for source, queues in by_source.items()}
        return _round_robin(list(dealt.values()))[:self.n]


def _round_robin(queues: list[list[tuple[Stratum, int]]]) -> list[tuple[Stratum, int]]:
    out: list[tuple[Stratum, int]] = []
    depth = 0
    while any(len(q) > depth for q in queues):
        out += [q[depth] for q in queues if len(q) > depth]
        depth += 1
    return out
