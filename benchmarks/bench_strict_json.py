"""What the strict JSON reader costs: parse real tau-bench transcript lines (JSON Lines as `toolgold import`
reads them) with scorer.strict_json.loads and, as the anchor measured in the same run, with plain json.loads
(which accepts NaN, Infinity, lone surrogates and unbounded nesting)."""

from __future__ import annotations

import argparse
import json
import time

from benchmarks.bench_labeling import FIXTURE


def _rates(parsers: list, lines: list[str], repeat: int) -> list[float]:  # type: ignore[type-arg]
    """MB/s of each parser, best of ``repeat`` passes, the passes interleaved so load on the machine hits
    the strict reader and its anchor alike."""
    best = [float("inf")] * len(parsers)
    for _ in range(repeat):
        for i, parse in enumerate(parsers):
            started = time.perf_counter()
            for line in lines:
                parse(line)
            best[i] = min(best[i], time.perf_counter() - started)
    size = sum(len(line) for line in lines) / 1e6
    return [size / b for b in best]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_strict_json")
    parser.add_argument("--copies", type=int, default=20, help="How many times the fixture's lines are parsed.")
    parser.add_argument("--repeat", type=int, default=5, help="Best of this many passes.")
    args = parser.parse_args(argv)
    from scorer import strict_json

    lines = [line for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()] * args.copies
    plain, strict = _rates([json.loads, strict_json.loads], lines, args.repeat)
    print(f"{len(lines)} lines, {sum(len(x) for x in lines) / 1e6:.1f} MB, best of {args.repeat}\n")
    print("| reader | MB/s | vs json.loads |")
    print("|---|---|---|")
    print(f"| json.loads (anchor, not strict) | {plain:.1f} | 1.00 |")
    print(f"| strict_json.loads | {strict:.1f} | {strict / plain:.2f} |")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
