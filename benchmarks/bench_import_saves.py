"""Annotators' saves while a large import runs (issue 12): save latency beside the import's own timeline.

A store holds the real tau-bench airline transcripts (tests/data/app) and an annotator. `toolgold import` of
N tau-bench-sized transcripts (default 20,000) starts in another process; meanwhile this process saves a
label draft again and again (a real ``save_label`` through the store: BEGIN IMMEDIATE, the audit row) and
records each save's latency until the import ends. The anchor is the same save with no import running.
Target: no save waits more than a couple of seconds (p99 and max).

Run: ``.venv/bin/python -m benchmarks.bench_import_saves [--transcripts N | --quick]``.

SQLite holds one write lock for the whole database, and an import is one transaction (all or nothing): it
stages its rows beside the database without the lock, then publishes them in one transaction of a few
``INSERT ... SELECT``. A save waits for at most that publish, which grows with the bytes imported.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_store import write_transcripts

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "app" / "tau_airline.jsonl"


def _store(db: Path) -> tuple[str, int]:
    from labeler.cli.data import convert_files
    from labeler.store import Store
    from scorer.importers import ImportOptions

    store = Store(db)
    items, _ = convert_files([FIXTURE], None, ImportOptions())
    store.import_items(items)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    tid = items[0].record.id
    first = store.turn_states(tid, "ann")[0].message_index
    store.close()
    return tid, first


def _saves(db: Path, tid: str, index: int, until: float | None, count: int | None,
           proc: subprocess.Popen[bytes] | None = None) -> tuple[list[float], int]:
    """Latencies of back-to-back draft saves, and how many failed."""
    from labeler.labels import LabelBody
    from labeler.store import Store

    store = Store(db)
    version = store.get_label(tid, index, "ann")
    version_n = version.version if version is not None else 0
    samples, failed = [], 0
    while (count is None or len(samples) < count) and (proc is None or proc.poll() is None):
        started = time.perf_counter()
        try:
            record = store.save_label(tid, index, "ann", LabelBody(decision="clarify" if len(samples) % 2 else "no_call"),
                                      version=version_n)
            version_n = record.version
        except Exception:  # a save that gives up (database locked) is what this measures
            failed += 1
        samples.append(time.perf_counter() - started)
        time.sleep(0.05)  # an annotator saves every few seconds; many of them, every 50 ms
    store.close()
    return samples, failed


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_import_saves", description=__doc__.split("\n")[0])
    parser.add_argument("--transcripts", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="5,000 transcripts")
    args = parser.parse_args(argv)
    if args.quick:
        args.transcripts = 5_000
    with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
        directory = Path(tmp)
        db = directory / "toolgold.db"
        tid, index = _store(db)
        quiet, _ = _saves(db, tid, index, None, 100)
        source = directory / "big.jsonl"
        write_transcripts(source, args.transcripts)
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "labeler.cli", "import", str(source), "--db", str(db)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "TOOLGOLD_DB": str(db)})
        during, failed = _saves(db, tid, index, None, None, proc)
        _, err = proc.communicate()
        import_s = time.perf_counter() - started
        if proc.returncode != 0:
            sys.stderr.write(err.decode())
    print(f"import of {args.transcripts:,} transcripts: {import_s:.1f} s; {len(during)} saves meanwhile, "
          f"{failed} failed", flush=True)
    print("\n| measurement | p50 | p99 | max | anchor: no import running (p50 / p99) | target | met |")
    print("|---|---|---|---|---|---|---|")
    p99, worst = _pct(during, 0.99), max(during)
    print(f"| label save while `toolgold import` of {args.transcripts:,} transcripts runs ({import_s:.0f} s; "
          f"{len(during)} saves, {failed} failed) | {statistics.median(during) * 1000:.0f} ms | {p99 * 1000:.0f} ms | "
          f"{worst * 1000:,.0f} ms | {statistics.median(quiet) * 1000:.0f} / {_pct(quiet, 0.99) * 1000:.0f} ms | "
          f"≤ 2 s | {'yes' if worst <= 2 and not failed else 'NO'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
