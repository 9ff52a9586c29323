"""What converting one record of an import costs: CPU µs per record on one core, beside a floor.

Run: ``python -m benchmarks.bench_import_convert`` (``--transcripts N --gold M --repeat R``, ``--profile``).

The records are the ones ``bench_store`` imports (its ``write_transcripts`` / ``write_gold``: tau-bench
transcripts of ~28.8 KB and turn gold cases of ~9.3 KB), read as the bytes of each line, and converted in
chunks by exactly what ``toolgold import``'s worker processes run on a chunk (``ImportPool._convert``:
parse, validate, the rows with their canonical JSON bodies and hashes, a gold case's schema warnings), here
in this process on one core. CPU time (``time.process_time``), the best of ``--repeat`` passes, each pass
of every side taken in turn so load on the machine hits them alike. The floor, measured in the same run on
the same lines: ``json.loads`` of each line, and ``json.loads`` + ``json.dumps(sort_keys=True)`` of it (the
least a reader that writes a canonical form can do). Target (issue #15): ≤ 200 µs per transcript and
≤ 80 µs per gold case, which would put the import near 1.5× the plain sqlite3 copy of its rows.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks.bench_store import write_gold, write_transcripts

CHUNK = 500
"""Lines per chunk, as the import hands them to a worker (``import_pool.CHUNK_LINES``)."""


def _lines(write: Callable[[Path, int], Any], n: int) -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.jsonl"
        write(path, n)
        with path.open("rb") as fh:
            return list(fh)


def _converter() -> Callable[[list[bytes]], Any]:
    """The worker's conversion of one chunk (``ImportPool._convert``), without forking a worker."""
    from labeler.cli.import_pool import ImportPool
    from scorer.importers import ImportOptions

    worker = SimpleNamespace(options=ImportOptions())

    def convert(lines: list[bytes]) -> Any:
        out = []
        for first in range(0, len(lines), CHUNK):
            # a chunk as a worker gets it (here its lines come from memory, not the file) and no stage file:
            # the conversion alone, not the stage write
            chunk = SimpleNamespace(source="bench.jsonl", first=first + 1,
                                    lines=lambda first=first: lines[first:first + CHUNK])
            out += ImportPool._convert(worker, chunk, None, 0)  # type: ignore[arg-type]
        bad = [entry for entry in out if isinstance(entry, tuple)]
        if bad:
            raise SystemExit(f"the benchmark's records were refused: {bad[0]}")
        return out

    return convert


def _loads(lines: list[bytes]) -> None:
    for line in lines:
        json.loads(line)


def _loads_dumps(lines: list[bytes]) -> None:
    for line in lines:
        json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _best_cpu(sides: list[Callable[[list[bytes]], Any]], lines: list[bytes], repeat: int) -> list[float]:
    """Best CPU seconds of each side over ``lines``, the sides taken in turn ``repeat`` times."""
    best = [float("inf")] * len(sides)
    for _ in range(repeat):
        for i, side in enumerate(sides):
            gc.collect()
            started = time.process_time()
            side(lines)
            best[i] = min(best[i], time.process_time() - started)
    return best


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_import_convert")
    parser.add_argument("--transcripts", type=int, default=1_000)
    parser.add_argument("--gold", type=int, default=3_000)
    parser.add_argument("--repeat", type=int, default=5, help="best of this many passes [default: 5]")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one conversion pass")
    args = parser.parse_args(argv)
    convert = _converter()
    rows = []
    for what, write, n in (("transcript", write_transcripts, args.transcripts), ("gold case", write_gold, args.gold)):
        lines = _lines(write, n)
        convert(lines[:50])  # warm: imports, the tool-schema memo a real import also fills on its first lines
        ours, loads, loads_dumps = _best_cpu([convert, _loads, _loads_dumps], lines, args.repeat)
        size = sum(map(len, lines)) / n / 1000
        rows.append((what, n, size, *(1e6 * s / n for s in (ours, loads, loads_dumps))))
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(convert, lines)
            print(f"\n### cProfile, {n:,} {what}s\n")
            pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    load = os.getloadavg()
    print(f"best of {args.repeat} passes, CPU time, one core; load average {load[0]:.1f} / {load[1]:.1f} / "
          f"{load[2]:.1f} (1 / 5 / 15 min), {os.cpu_count()} CPUs\n")
    print("| record | n | KB | convert (µs CPU) | floor: json.loads (µs) | × | floor: loads + dumps(sort_keys) (µs) "
          "| × | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for what, n, size, ours, loads, loads_dumps in rows:
        target = 200 if what == "transcript" else 80
        print(f"| {what} | {n:,} | {size:.1f} | **{ours:.0f}** | {loads:.0f} | {ours / loads:.1f}× | {loads_dumps:.0f} "
              f"| {ours / loads_dumps:.1f}× | ≤ {target} µs ({'met' if ours <= target else 'not met'}) |")


if __name__ == "__main__":
    main(sys.argv[1:])
