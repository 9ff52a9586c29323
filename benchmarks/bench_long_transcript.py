"""The cost of one turn against the transcript's length (issue 16): opening a decision point in the middle of a
transcript of 10, 300 and 50,000 decision points, and a decision key there, as whole Streamlit script runs
(AppTest: the real app and store, widgets rendered to protobuf; no browser).

The 10-point transcript is the anchor measured in the same run: the windowed turn map and conversation, the
store's turn window (the open turn and a span around it, totals by SQL aggregates) and the shared parsed
transcript should keep the longer ones near it. What still grows is printed as it is. The first open of each
size parses the transcript (cold cache) and shows in "open max".
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
APP = REPO / "labeler" / "app" / "main.py"
SIZES = (10, 300, 50_000)


def build(db: Path, sizes: tuple[int, ...]) -> None:
    sys.path.insert(0, str(REPO))
    from labeler.store import Store
    from tests.app.long_transcripts import add, many_turns

    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    store = Store(db)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    for n in sizes:
        add(store, many_turns(f"long-{n}", n))
    store.close()


def measure(db: Path, n: int, runs: int) -> tuple[list[float], list[float]]:
    from streamlit.testing.v1 import AppTest

    os.environ["TOOLGOLD_DB"] = str(db)
    turn = str(2 * (n // 2) + 2)  # the middle decision point
    opens, keys = [], []
    for _ in range(runs):
        app = AppTest.from_file(str(APP), default_timeout=600)
        app.session_state["user"] = "ann"  # what the sidebar picker sets; the URL's ?user= has no say
        app.query_params.update({"t": f"long-{n}", "turn": turn})
        app.run()
        start = time.perf_counter()
        app.switch_page("pages_/label.py").run()
        opens.append(time.perf_counter() - start)
        assert not app.exception, app.exception
        [clarify] = [b for b in app.button if b.key and b.key.startswith("decide-clarify-")]
        start = time.perf_counter()
        clarify.click().run()
        keys.append(time.perf_counter() - start)
        [clarify] = [b for b in app.button if b.key and b.key.startswith("decide-no_call-")]
        clarify.click().run()  # back to a changed state, so the next run's key saves again
    return opens, keys


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_long_transcript")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    from streamlit.logger import set_log_level

    set_log_level("error")
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").disabled = True
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / "long-transcripts.db"
    started = time.perf_counter()
    build(db, SIZES)
    print(f"store with transcripts of {', '.join(f'{n:,}' for n in SIZES)} decision points "
          f"(ready in {time.perf_counter() - started:.0f} s)\n")
    print("| decision points | runs | open p50 | open max | decision key p50 | key max | vs 10 (anchor) |")
    print("|---|---|---|---|---|---|---|")
    anchor = None
    for n in SIZES:
        opens, keys = measure(db, n, args.runs)
        p50 = statistics.median(opens)
        anchor = anchor or p50
        print(f"| {n:,} | {args.runs} | {p50 * 1000:.0f} ms | {max(opens) * 1000:.0f} ms | "
              f"{statistics.median(keys) * 1000:.0f} ms | {max(keys) * 1000:.0f} ms | × {p50 / anchor:.1f} |",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
