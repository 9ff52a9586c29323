"""What converting one record of an import costs: CPU µs per record on one core, beside a floor.

Run: ``python -m benchmarks.bench_import_convert`` (``--transcripts N --gold M --repeat R``, ``--profile``).

The records are the ones ``bench_store`` imports (its ``write_transcripts`` / ``write_gold``: tau-bench
transcripts of ~28.8 KB and turn gold cases of ~9.3 KB), and a third row of real BFCL gold cases (the 2,311 of
``bench_bfcl``, ~3.5 KB, as ``toolgold export`` writes them, when ``TOOLGOLD_BFCL_DATA`` or ../shared/data/bfcl
holds them): bench_store's 43 gold cases come round again with their 21 tool lists, which the import's memos then
know, where each BFCL case brings tools of its own, most of its bytes. Each read as the bytes of each line, and
converted in
chunks by exactly what ``toolgold import``'s worker processes run on a chunk (``ImportPool._convert``:
parse, validate, the rows with their canonical JSON bodies and hashes, a gold case's schema warnings), here
in this process on one core; beside it, the same with the rows written into a stage file as a worker writes
them, and their bodies into a store's file (``StageWriter``: the worker's whole job). CPU time (``time.process_time``), the best of ``--repeat`` passes, each pass
of every side taken in turn so load on the machine hits them alike, each pass a first read (``first_read``: what
the worker learns of the records, emptied). The floor, measured in the same run on
the same lines: ``json.loads`` of each line, and ``json.loads`` + ``json.dumps(sort_keys=True)`` of it (the
least a reader that writes a canonical form can do). Target (issue #15): ≤ 200 µs per transcript and
≤ 80 µs per gold case, which would put the import near 1.5× the plain sqlite3 copy of its rows.
"""

from __future__ import annotations

import argparse
import contextlib
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
from types import MethodType, SimpleNamespace
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


def write_bfcl_gold(path: Path, n: int) -> int:
    """BFCL's gold cases (``bench_bfcl``'s items), each line as ``toolgold export`` writes it, ``n`` at most (0
    when the data is not here): each case offers tools of its own."""
    from benchmarks.bench_bfcl import BFCL, CATEGORIES
    from scorer import importers
    from scorer.formats import dumps_record
    from scorer.importers import Converted
    from scorer.model import GoldCase

    written = 0
    with path.open("w", encoding="utf-8") as fh:
        for category in CATEGORIES if BFCL.is_dir() else ():
            for converted in importers.convert(BFCL / f"BFCL_v4_{category}.json", "bfcl"):
                if written < n and isinstance(converted, Converted) and isinstance(converted.record, GoldCase):
                    fh.write(dumps_record(converted.record) + "\n")
                    written += 1
    return written


def first_read() -> None:
    """Empty what a worker learns of the records it reads (tool lists, their bytes and texts, schema verdicts
    and compiled schemas): each pass starts as a fresh import's worker does. Without it the passes after the
    first found a BFCL file's tool schemas, each seen once in a real import, in the memos the pass before had
    filled (until stop 36: the BFCL row read 15-20% fast, e.g. stop 35's code 128-132 us a case against 163-167
    read first)."""
    from labeler.store import staging
    from scorer import formats, model, schemas

    # by name, and only those there: the benchmark also runs against older trees, taking turns
    for module, name in ((formats, "_SHARED_TOOLS"), (formats, "_TOOL_SPANS"), (formats, "_SPANS_TRIED"),
                         (formats, "_TOOLS_JSON"), (model, "_SCHEMA_PROBLEMS"), (staging, "_TOOL_MEMO"),
                         (staging, "_TOOL_LISTS")):
        memo = getattr(module, name, None)
        if memo is not None:
            memo.clear()
    if hasattr(formats, "_READ_MESSAGES"):
        formats._READ_MESSAGES[0] = (None, None)
    model._schema_problem.cache_clear()
    schemas.forget_compiled()


def _converter(stage: tuple[Path, Path] | None = None) -> Callable[[list[bytes]], Any]:
    """The worker's conversion of one chunk (``ImportPool._convert``), without forking a worker; with ``stage``
    (a stage file made as the import makes it, and a store's file) the worker's whole job: the rows written into
    the stage and the bodies into the store too."""
    import threading

    from labeler.cli import import_pool
    from labeler.cli.import_pool import ImportPool
    from scorer.importers import ImportOptions

    if hasattr(import_pool, "worker_gc"):  # the collector as a worker sets it (trees before it had none)
        import_pool.worker_gc()
    worker = SimpleNamespace(options=ImportOptions(), writers={}, stage_lock=threading.Lock(),
                             store_lock=threading.Lock(), converters={}, repeated={})
    for phase in ("_converted", "_written", "_items"):  # what _convert calls (since stop 35; _items: stop 42)
        if hasattr(ImportPool, phase):
            setattr(worker, phase, MethodType(getattr(ImportPool, phase), worker))
    where = None if stage is None else (str(stage[0]), str(stage[1]))
    numbers = iter(range(1 << 22))  # a chunk number is used once in a stage (its records' keys)

    def convert(lines: list[bytes]) -> Any:
        first_read()
        out = []
        for first in range(0, len(lines), CHUNK):
            # a chunk as a worker gets it (here its lines come from memory, not the file)
            chunk = SimpleNamespace(source="bench.jsonl", first=first + 1, form="lines",
                                    lines=lambda first=first: lines[first:first + CHUNK])
            out += ImportPool._convert(worker, chunk, where, next(numbers))  # type: ignore[arg-type]
        bad = [entry for entry in out if isinstance(entry, tuple)]
        if bad:
            raise SystemExit(f"the benchmark's records were refused: {bad[0]}")
        return out

    return convert


def _stage_file(folder: Path) -> tuple[Path, Path]:
    """An empty stage file, made as ``toolgold import`` makes its own (page size, pragmas, tables), and a new
    store's file beside it (a worker writes the bodies into the store: ``StageWriter``)."""
    import sqlite3

    from labeler.store import Store, staging

    path = folder / "bench.stage"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.executescript(staging.STAGE_PAGE_SIZE + staging.STAGE_PRAGMAS + staging.STAGE_SCHEMA)
    store = folder / "bench.db"
    Store(store).engine.dispose()
    return path, store


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
    parser.add_argument("--bfcl", type=int, default=2_311, help="BFCL gold cases, at most 2,311 [default: all]")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many passes [default: 5]")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of one conversion pass")
    args = parser.parse_args(argv)
    convert = _converter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        staging = _converter(_stage_file(Path(tmp)))
        for what, write, n in (("transcript", write_transcripts, args.transcripts),
                               ("gold case", write_gold, args.gold),
                               ("BFCL gold case, tools of its own", write_bfcl_gold, args.bfcl)):
            lines = _lines(write, n)
            n = len(lines)
            if not n:
                continue
            convert(lines[:50])  # warm: imports, the tool-schema memo a real import also fills on its first lines
            staging(lines[:50])
            ours, staged, loads, loads_dumps = _best_cpu([convert, staging, _loads, _loads_dumps], lines,
                                                         args.repeat)
            size = sum(map(len, lines)) / n / 1000
            rows.append((what, n, size, *(1e6 * s / n for s in (ours, staged, loads, loads_dumps))))
            if args.profile:
                profile = cProfile.Profile()
                profile.runcall(staging, lines)
                print(f"\n### cProfile, {n:,} {what}s, converted and staged\n")
                pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(25)
    load = os.getloadavg()
    print(f"best of {args.repeat} passes, CPU time, one core; load average {load[0]:.1f} / {load[1]:.1f} / "
          f"{load[2]:.1f} (1 / 5 / 15 min), {os.cpu_count()} CPUs\n")
    print("| record | n | KB | convert (µs CPU) | + stage write: a worker's job (µs) | floor: json.loads (µs) | × "
          "| floor: loads + dumps(sort_keys) (µs) | × | target (convert) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for what, n, size, ours, staged, loads, loads_dumps in rows:
        target = 200 if what == "transcript" else 80  # issue 15's figures, set on bench_store's records
        print(f"| {what} | {n:,} | {size:.1f} | **{ours:.0f}** | {staged:.0f} | {loads:.0f} | {ours / loads:.1f}× "
              f"| {loads_dumps:.0f} | {ours / loads_dumps:.1f}× | ≤ {target} µs ({'met' if ours <= target else 'not met'}) |")


if __name__ == "__main__":
    main(sys.argv[1:])
