"""Database growth per 10,000 labeled turns: submit a label on N decision points of tau-bench-sized
transcripts and measure what the SQLite file (with its WAL checkpointed) grew by. Each submitted label
also materializes its gold case, which carries the context the agent saw."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_labeling import FIXTURE


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_label_size")
    parser.add_argument("--labels", type=int, default=10_000)
    args = parser.parse_args(argv)
    from labeler.cli.data import convert_files
    from labeler.labels import LabelBody
    from labeler.store import ImportItem, Store
    from scorer.importers import ImportOptions
    from scorer.model import Transcript

    items, _ = convert_files([FIXTURE], None, ImportOptions())
    base = [i.record for i in items if isinstance(i.record, Transcript)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "size.db"
        store = Store(db)
        store.add_user("bench", "admin")
        copies, turns, n = [], [], 0
        while len(turns) < args.labels:
            for tr in base:
                msgs = list(tr.messages)
                msgs[1] = msgs[1].model_copy(update={"content": f"{msgs[1].content} (size {n})"})
                copy = tr.model_copy(update={"id": f"size/{n}/{tr.id}", "messages": tuple(msgs)})
                copies.append(ImportItem(copy, "bench"))
                turns += [(copy.id, i, copy) for i in copy.decision_points()]
            n += 1
        store.import_items(copies)

        def size() -> int:
            con = sqlite3.connect(db)
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            con.close()
            return sum(p.stat().st_size for p in db.parent.glob("size.db*"))

        before = size()
        started = time.perf_counter()
        for tid, index, tr in turns[:args.labels]:
            calls = tr.messages[index].tool_calls if index < len(tr.messages) else ()
            if calls:
                from scorer.model import Call

                body = LabelBody(decision="same", calls=tuple(
                    Call(name=c.function.name, arguments=c.parsed_arguments() or {}) for c in calls
                    if isinstance(c.parsed_arguments(), dict)), tags=("happy_path",))
            else:
                body = LabelBody(decision="no_call", tags=("happy_path",))
            store.submit_label(tid, index, "bench", body, version=0)
        secs = time.perf_counter() - started
        grew = size() - before
    print("| labeled turns | DB growth | per 10,000 labeled turns | submit rate |")
    print("|---:|---:|---:|---:|")
    print(f"| {args.labels:,} | {grew / 1e6:.0f} MB | {grew / args.labels * 10_000 / 1e6:.0f} MB | "
          f"{args.labels / secs:,.0f}/s |")


if __name__ == "__main__":
    main(sys.argv[1:])
