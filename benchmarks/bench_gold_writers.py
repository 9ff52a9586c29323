"""Concurrent writers of gold on PostgreSQL: what counting the gold set's revision costs them (issue 15, stop 40).

Since revision 0007 every transaction that writes the live gold updates one row, ``gold_revision``, as it commits
(``common.gold_changed`` through ``engine.before_commit``), so the hygiene lint can be kept until the gold moves.
On PostgreSQL concurrent writers of gold queue for that row's lock during their commits. Stop 39 measured label
saves on SQLite only (which serializes writers anyway); this measures the queue where it can form.

Each annotator is a thread of one process (the app's sessions are threads of its server), with a ``Store`` of its
own (a server per annotator: each its own connection pool). Each saves a draft and submits it (the label becomes
gold: ``put_gold`` and the revision) on a decision point no other thread touches, one after the other. Measured:
submits per second over all threads, and each submit's p50 / p95, with the revision counted (the product) and with
``gold_changed`` made a no-op (the anchor, same run, same database, the two taking turns ``--rounds`` times).

Run: ``.venv/bin/python -m benchmarks.bench_gold_writers [--url POSTGRESQL_URL] [--threads 1,4,8] [--labels N]
[--rounds R]``. The URL (default ``TOOLGOLD_TEST_POSTGRES_URL``) names a server where the benchmark may create and
drop a database of its own; without one it says so and skips. ``.ci/postgres.sh`` starts a throwaway server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "data" / "app" / "tau_airline.jsonl"
URL_ENV = "TOOLGOLD_TEST_POSTGRES_URL"


@contextmanager
def fresh_database(base: str) -> Iterator[str]:
    """A new, empty database next to ``base``'s, dropped on exit."""
    from sqlalchemy import create_engine, text

    name = f"toolgold_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def fill(url: str, transcripts: int, annotators: int) -> list[tuple[str, int]]:
    """``transcripts`` copies of the fixture's tau-bench transcripts and the annotators; the first decision point
    of each transcript (one label each: no two threads write the same turn or gold case)."""
    from labeler.cli.data import convert_files
    from labeler.store import ImportItem, Store
    from scorer.importers import ImportOptions

    items, _ = convert_files([FIXTURE], None, ImportOptions())
    base = [i.record for i in items]
    store = Store(url)
    batch = []
    for n in range(-(-transcripts // len(base))):
        for tr in base:
            msgs = list(tr.messages)
            msgs[1] = msgs[1].model_copy(update={"content": f"{msgs[1].content} (bench {n})"})
            batch.append(ImportItem(tr.model_copy(update={"id": f"bench/{n}/{tr.id}", "messages": tuple(msgs)}),
                                    "bench"))
    store.import_items(batch[:transcripts])
    store.add_user("root", "admin")
    for k in range(annotators):
        store.add_user(f"ann{k}", "annotator", actor="root")
    points = [(item.record.id, item.record.decision_points()[0]) for item in batch[:transcripts]]  # type: ignore[union-attr]
    store.close()
    return points


def writers(url: str, work: list[list[tuple[str, int]]]) -> tuple[float, list[float]]:
    """Each list of ``work`` saved and submitted by a thread of its own (annotator ``ann{k}``); wall seconds from the
    first start to the last end, and every submit's seconds."""
    from labeler.labels import LabelBody
    from labeler.store import Store

    stores = [Store(url) for _ in work]
    for store in stores:  # connected before the clock starts
        store.turn_states(work[0][0][0], "ann0")
    samples: list[list[float]] = [[] for _ in work]
    start = threading.Barrier(len(work) + 1)

    def run(k: int) -> None:
        store, mine, who = stores[k], samples[k], f"ann{k}"
        body = LabelBody(decision="clarify")
        start.wait()
        for tid, point in work[k]:
            store.save_label(tid, point, who, body, version=0)
            began = time.perf_counter()
            store.submit_label(tid, point, who, body, version=1)
            mine.append(time.perf_counter() - began)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(work))]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    for store in stores:
        store.close()
    return wall, [s for mine in samples for s in mine]


def revision(url: str) -> int:
    from labeler.store import Store

    store = Store(url)
    try:
        return store.gold_revision() or 0
    finally:
        store.close()


@contextmanager
def revision_counted(counted: bool) -> Iterator[None]:
    import labeler.store.common as common

    real = common.gold_changed
    if not counted:
        common.gold_changed = lambda conn: None
    try:
        yield
    finally:
        common.gold_changed = real


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_gold_writers", description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=os.environ.get(URL_ENV), help=f"a PostgreSQL server's URL [{URL_ENV}]")
    parser.add_argument("--threads", default="1,4,8", help="writer counts to measure [1,4,8]")
    parser.add_argument("--labels", type=int, default=40, help="submits per thread per measure [40]")
    parser.add_argument("--rounds", type=int, default=3, help="times the two take turns [3]")
    args = parser.parse_args(argv)
    if not args.url or not args.url.startswith("postgresql"):
        print(f"skipped: no PostgreSQL server (set {URL_ENV} or --url; .ci/postgres.sh starts one)")
        return
    counts = [int(n) for n in args.threads.split(",")]
    with fresh_database(args.url) as url:
        points = fill(url, sum(counts) * args.labels * 2 * args.rounds, max(counts))
        found: dict[tuple[int, bool], list[tuple[float, list[float]]]] = {}
        at = 0
        for _ in range(args.rounds):
            for n in counts:
                for counted in (True, False):
                    work = [points[at + k * args.labels: at + (k + 1) * args.labels] for k in range(n)]
                    at += n * args.labels
                    before = revision(url)
                    with revision_counted(counted):
                        found.setdefault((n, counted), []).append(writers(url, work))
                    moved = revision(url) - before  # every submit made gold (one revision each), or none counted
                    if moved != (n * args.labels if counted else 0):
                        raise SystemExit(f"the gold revision moved {moved} times for {n * args.labels} submits "
                                         f"({'counted' if counted else 'not counted'}): not what is measured")
    print("| writers (threads) | submits/s, revision counted | submits/s, not counted (anchor) | ratio | "
          "submit p50 / p95 ms, counted | not counted |\n|---|---|---|---|---|---|")
    for n in counts:
        rates = {}
        latency = {}
        for counted in (True, False):
            runs = found[(n, counted)]
            rates[counted] = statistics.median(n * args.labels / wall for wall, _ in runs)
            every = [s for _, samples in runs for s in samples]
            latency[counted] = f"{_p(every, 0.5):.1f} / {_p(every, 0.95):.1f}"
        print(f"| {n} | {rates[True]:,.0f} | {rates[False]:,.0f} | {rates[True] / rates[False]:.2f}× | "
              f"{latency[True]} | {latency[False]} |")
    print(f"\n(median of {args.rounds} rounds taking turns; {args.labels} submits per thread per measure; "
          f"load average at the end: {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
