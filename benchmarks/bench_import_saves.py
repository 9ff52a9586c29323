"""Annotators' saves while a large import runs (issue 12): save latency beside the import's own timeline.

A store holds the real tau-bench airline transcripts (tests/data/app) and an annotator. `toolgold import` of
N tau-bench-sized transcripts (default 20,000) starts in another process; meanwhile this process saves a
label draft again and again (a real ``save_label`` through the store: BEGIN IMMEDIATE, the audit row) and
records each save's latency until the import ends. The anchor is the same save with no import running.
Target: no save waits more than a couple of seconds (p99 and max).

Run: ``.venv/bin/python -m benchmarks.bench_import_saves [--transcripts N | --quick | --gold N] [--runs N]
[--trace]``. ``--gold N``: the import is of N gold cases (``bench_store``'s, 9.3 KB each) instead.

``--trace`` also prints where the slowest saves' time went, on one clock (``time.monotonic()``) with the
import's own timeline: the importing process runs under a probe that times its publish (the write lock taken,
each statement, the commit, and the WAL checkpoint SQLite runs right after that commit), and each save is split
into its wait for the write lock (``BEGIN IMMEDIATE``), its statements, its commit and any checkpoint run inside
that commit (``benchmarks/sqlite_trace.py``).

SQLite holds one write lock for the whole database, and an import is all or nothing: it stages its rows beside
the database without the lock, writes the bodies (most of its bytes; transcripts' and gold cases') into the store in one short
transaction per chunk where nothing can reach them yet, then publishes the rest in one transaction of a few
``INSERT ... SELECT``. A save waits for at most that publish (or one chunk's bodies); ``--trace`` also prints the
lock holds of the body writes before the publish.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_store import write_gold, write_transcripts
from benchmarks.bytecode import cache_bytecode

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "app" / "tau_airline.jsonl"

PROBE = r"""
import json, sys, time
from contextlib import contextmanager
OUT = sys.argv[1]
events = []
def log(kind, **fields):
    events.append({"kind": kind, **fields})
from benchmarks.sqlite_trace import trace_engine
from labeler.store import engine as eng, transcripts as tr
create = eng.Database._create_engine
def traced_create(self):
    engine = create(self)
    trace_engine(engine, log)
    return engine
eng.Database._create_engine = traced_create
publish = tr._publish
def traced_publish(*a, **k):
    log("publish_start", at=time.monotonic(), cpu=time.process_time())
    try:
        return publish(*a, **k)
    finally:
        log("publish_end", at=time.monotonic(), cpu=time.process_time())
tr._publish = traced_publish
attached = eng.Database.write_attached
@contextmanager
def traced_attached(self, alias, path):
    with attached(self, alias, path) as conn:
        log("lock_held", at=time.monotonic())
        yield conn
    log("committed", at=time.monotonic())
eng.Database.write_attached = traced_attached
flushing = getattr(eng.Database, "flushing", None)
if flushing is not None:
    @contextmanager
    def traced_flushing(self, *a, **k):
        with flushing(self, *a, **k):
            yield
            log("settle_start", at=time.monotonic())
        log("settle_end", at=time.monotonic())
    eng.Database.flushing = traced_flushing
import atexit
def dump():
    with open(OUT, "w") as fh:
        json.dump(events, fh)
atexit.register(dump)
sys.argv = ["toolgold", *sys.argv[2:]]
from labeler.cli import main
main()
"""


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


class _SaveTrace:
    """Each save's start and end, and what happened inside it (statements, commit, WAL hook), by save."""

    def __init__(self) -> None:
        self.saves: list[dict[str, Any]] = []
        self.current: list[dict[str, Any]] | None = None

    def log(self, kind: str, **fields: Any) -> None:
        if self.current is not None:
            self.current.append({"kind": kind, **fields})

    def begin(self) -> None:
        self.current = []

    def end(self, started: float, ended: float) -> None:
        self.saves.append({"start": started, "end": ended, "events": self.current or []})
        self.current = None


def _saves(db: Path, tid: str, index: int, until: float | None, count: int | None,
           proc: subprocess.Popen[bytes] | None = None, trace: _SaveTrace | None = None) -> tuple[list[float], int]:
    """Latencies of back-to-back draft saves, and how many failed."""
    from labeler.labels import LabelBody
    from labeler.store import Store

    store = Store(db)
    if trace is not None:
        from benchmarks.sqlite_trace import trace_engine

        store.engine.dispose()  # connections from here on are traced
        trace_engine(store.engine, trace.log)
    version = store.get_label(tid, index, "ann")
    version_n = version.version if version is not None else 0
    samples, failed = [], 0
    while (count is None or len(samples) < count) and (proc is None or proc.poll() is None):
        if trace is not None:
            trace.begin()
        started = time.monotonic()
        try:
            record = store.save_label(tid, index, "ann", LabelBody(decision="clarify" if len(samples) % 2 else "no_call"),
                                      version=version_n)
            version_n = record.version
        except Exception:  # a save that gives up (database locked) is what this measures
            failed += 1
        ended = time.monotonic()
        samples.append(ended - started)
        if trace is not None:
            trace.end(started, ended)
        time.sleep(0.05)  # an annotator saves every few seconds; many of them, every 50 ms
    store.close()
    return samples, failed


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _split(save: dict[str, Any]) -> dict[str, float]:
    """A save's time: waiting for the write lock, its statements, its commit, the checkpoint inside that commit."""
    events = save["events"]
    begin = sum(e["s"] for e in events if e["kind"] == "sql" and e["sql"].startswith("BEGIN"))
    statements = sum(e["s"] for e in events if e["kind"] == "sql" and not e["sql"].startswith("BEGIN"))
    commit_at = next((e["at"] for e in events if e["kind"] == "commit_start"), save["end"])
    checkpoint = sum(e.get("checkpoint_s", 0.0) for e in events if e["kind"] == "wal_hook")
    begin_end = next((e["at"] + e["s"] for e in events if e["kind"] == "sql" and e["sql"].startswith("BEGIN")),
                     save["start"])
    return {"total": save["end"] - save["start"], "begin": begin, "statements": statements,
            "commit": save["end"] - commit_at - checkpoint, "checkpoint": checkpoint, "begin_end": begin_end,
            "frames": max((e.get("frames", 0) for e in events if e["kind"] == "wal_hook"), default=0)}


def _report_writes_ahead(events: list[dict[str, Any]]) -> None:
    """The importing process's write transactions before its publish (the bodies written ahead):
    how long each held the write lock (from its BEGIN IMMEDIATE returning to its COMMIT's WAL hook), and the
    auto-checkpoints run after them."""
    holds, checkpoints, taken = [], [], None
    for e in events:
        if e["kind"] == "sql" and e["sql"].startswith("BEGIN IMMEDIATE"):
            taken = e["at"] + e["s"]
        elif e["kind"] == "wal_hook" and taken is not None:
            holds.append(e["at"] - taken)
            checkpoints.append(e.get("checkpoint_s", 0.0))
            taken = None
    if not holds:
        print("no write transaction before the publish")
        return
    holds.sort()
    print(f"before the publish: {len(holds)} write transactions (bodies written ahead), write lock held "
          f"p50 {holds[len(holds) // 2] * 1000:.0f} ms, p90 {holds[int(len(holds) * 0.9)] * 1000:.0f} ms, "
          f"max {holds[-1] * 1000:.0f} ms, {sum(holds):.2f} s in all; their auto-checkpoints (after the lock) "
          f"{sum(checkpoints):.2f} s in all, max {max(checkpoints) * 1000:.0f} ms")


def _report_trace(t0: float, imported: list[dict[str, Any]], trace: _SaveTrace) -> None:
    """The import's publish and the slowest saves on one timeline (seconds from the import's start)."""
    def at(value: float) -> str:
        return f"{value - t0:7.3f}"

    print("\n#### the import's publish (importing process; seconds since the import started)")
    start = next((e for e in imported if e["kind"] == "publish_start"), None)
    end = next((e for e in imported if e["kind"] == "publish_end"), None)
    if start is None or end is None:
        print("no publish seen")
        return
    _report_writes_ahead([e for e in imported if e["at"] < start["at"]])
    window = [e for e in imported if start["at"] <= e["at"] <= end["at"]]
    lock = next((e["at"] for e in window if e["kind"] == "lock_held"), start["at"])
    print(f"{at(start['at'])}  publish starts (CPU {start['cpu']:.2f} s so far)")
    for e in window:
        if e["kind"] == "sql" and e["sql"].startswith("BEGIN"):
            print(f"{at(e['at'] + e['s'])}  write lock taken (BEGIN IMMEDIATE waited {e['s'] * 1000:.0f} ms)")
        elif e["kind"] == "sql" and e["s"] >= 0.02:
            print(f"{at(e['at'] + e['s'])}  {e['s']:6.3f} s  {e['sql']}")
        elif e["kind"] == "commit_start":
            print(f"{at(e['at'])}  COMMIT starts")
        elif e["kind"] == "wal_hook":
            print(f"{at(e['at'])}  COMMIT done, write lock released; WAL {e['frames']:,} frames "
                  f"({e['frames'] * 4096 / 1e6:,.0f} MB)")
            if e.get("checkpoint_s"):
                print(f"{at(e['at'] + e['checkpoint_s'])}  {e['checkpoint_s']:6.3f} s  its auto-checkpoint, in the "
                      f"import's COMMIT call after the lock (rc {e.get('rc')}, {e.get('copied', 0):,} of "
                      f"{e.get('wal_frames', 0):,} frames copied)")
        elif e["kind"] == "committed":
            print(f"{at(e['at'])}  the publish's transaction is over")
    released = next((e["at"] for e in window if e["kind"] == "wal_hook"), end["at"])
    settle = [e["at"] for e in imported if e["kind"].startswith("settle_")]
    if len(settle) == 2:
        print(f"{at(settle[1])}  {settle[1] - settle[0]:6.3f} s  the import's last flush (checkpoint of what saves "
              "added meanwhile, the database file synced)")
    print(f"{at(end['at'])}  publish returns: write lock held {released - lock:.3f} s, publish "
          f"{end['at'] - start['at']:.3f} s wall, {end['cpu'] - start['cpu']:.3f} CPU s")
    print("\n#### the slowest saves (this process; same clock)")
    print("| save starts | ends | total ms | waiting for the lock (BEGIN) | lock got, after the publish released it"
          " | statements | commit | checkpoint in its commit (WAL frames) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for save in sorted(trace.saves, key=lambda s: s["start"] - s["end"])[:8]:
        part = _split(save)
        after = part["begin_end"] - released
        print(f"| {at(save['start'])} | {at(save['end'])} | {part['total'] * 1000:,.0f} | {part['begin'] * 1000:,.0f} | "
              f"{after * 1000:+,.0f} ms | {part['statements'] * 1000:,.0f} | {part['commit'] * 1000:,.0f} | "
              f"{part['checkpoint'] * 1000:,.0f} ({part['frames']:,}) |")


def _run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="toolgold-bench-") as tmp:
        directory = Path(tmp)
        db = directory / "toolgold.db"
        tid, index = _store(db)
        quiet, _ = _saves(db, tid, index, None, 100)
        source = directory / "big.jsonl"
        if args.gold:
            write_gold(source, args.gold)
        else:
            write_transcripts(source, args.transcripts)
        trace = _SaveTrace() if args.trace else None
        probe_out = directory / "import-trace.json"
        command = ["-c", PROBE, str(probe_out)] if args.trace else ["-m", "labeler.cli"]
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, *command, "import", str(source), "--db", str(db)], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "TOOLGOLD_DB": str(db)})
        during, failed = _saves(db, tid, index, None, None, proc, trace)
        _, err = proc.communicate()
        import_s = time.monotonic() - started
        if proc.returncode != 0:
            sys.stderr.write(err.decode())
        if trace is not None and probe_out.exists():
            _report_trace(started, json.loads(probe_out.read_text()), trace)
    return {"quiet": quiet, "during": during, "failed": failed, "import_s": import_s}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_import_saves", description=__doc__.split("\n")[0])
    parser.add_argument("--transcripts", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="5,000 transcripts")
    parser.add_argument("--gold", type=int, default=0, help="import this many gold cases instead of transcripts")
    parser.add_argument("--runs", type=int, default=1, help="imports one after the other, one row each")
    parser.add_argument("--trace", action="store_true",
                        help="also print where the slowest saves' time went, beside the import's publish")
    args = parser.parse_args(argv)
    cache_bytecode()  # the timed processes read the project's bytecode, as a user's second run does
    if args.quick:
        args.transcripts = 5_000
    what = f"{args.gold:,} gold cases" if args.gold else f"{args.transcripts:,} transcripts"
    rows = []
    for _ in range(args.runs):
        run = _run(args)
        during = run["during"]
        print(f"import of {what}: {run['import_s']:.1f} s; {len(during)} saves meanwhile, "
              f"{run['failed']} failed; load average {os.getloadavg()[0]:.1f}", flush=True)
        rows.append(run)
    print("\n| measurement | p50 | p99 | max | next slowest two | anchor: no import running (p50 / p99) | target | met |")
    print("|---|---|---|---|---|---|---|---|")
    for run in rows:
        during, quiet, failed = run["during"], run["quiet"], run["failed"]
        p99, worst = _pct(during, 0.99), max(during)
        print(f"| label save while `toolgold import` of {what} runs ({run['import_s']:.0f} s; "
              f"{len(during)} saves, {failed} failed) | {statistics.median(during) * 1000:.0f} ms | {p99 * 1000:.0f} ms | "
              f"{worst * 1000:,.0f} ms | {' / '.join(f'{v * 1000:,.0f}' for v in sorted(during)[-3:-1][::-1])} ms | "
              f"{statistics.median(quiet) * 1000:.0f} / {_pct(quiet, 0.99) * 1000:.0f} ms | "
              f"≤ 2 s | {'yes' if worst <= 2 and not failed else 'NO'} |")


if __name__ == "__main__":
    main(sys.argv[1:])
