"""Labeling speed with 100,000 decision points in the store (issue 4 "Speed").

- store: save a draft, submit it, and read what the next turn needs (turn states, its label); the SQL
  work behind one "submit & next". Target: well under the 300 ms budget.
- server: the whole Streamlit script run for *Submit & next* (AppTest: the real app, the real store,
  widgets rendered to protobuf; no network, no browser). Target: ≤ 300 ms p50.
- browser: Ctrl+Enter in real Chromium until the next turn's panel is on screen, against `streamlit run`.
  Target: ≤ 1 s p50.

The store is built once (tau-bench airline transcripts copied under new ids) and kept in benchmarks/out/.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
FIXTURE = REPO / "tests" / "data" / "app" / "tau_airline.jsonl"
APP = REPO / "labeler" / "app" / "main.py"
CHROMIUM = "/usr/bin/chromium"


def build(turns: int) -> Path:
    """A store with at least ``turns`` decision points (built once per size)."""
    db = OUT / f"labeling-{turns}.db"
    if db.exists():
        return db
    from labeler.cli.data import convert_files
    from labeler.store import ImportItem, Store
    from scorer.importers import ImportOptions

    OUT.mkdir(parents=True, exist_ok=True)
    items, _ = convert_files([FIXTURE], None, ImportOptions())
    base = [i.record for i in items]
    per_round = sum(len(t.decision_points()) for t in base)  # type: ignore[union-attr]
    rounds = -(-turns // per_round)
    tmp = db.with_suffix(".part")
    tmp.unlink(missing_ok=True)
    store = Store(tmp)
    batch = []
    for n in range(rounds):
        for tr in base:
            msgs = list(tr.messages)  # type: ignore[union-attr]
            msgs[1] = msgs[1].model_copy(update={"content": f"{msgs[1].content} (bench {n})"})
            batch.append(ImportItem(tr.model_copy(update={"id": f"bench/{n}/{tr.id}", "messages": tuple(msgs)}),
                                    "bench"))
        if len(batch) >= 2000:
            store.import_items(batch)
            batch = []
    if batch:
        store.import_items(batch)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    store.close()
    tmp.replace(db)
    return db


def _table(rows: list[tuple[str, list[float], float]]) -> None:
    print("| measure | runs | p50 | p95 | target |")
    print("|---|---|---|---|---|")
    for name, samples, target in rows:
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.0f} ms | {p95 * 1000:.0f} ms | "
              f"≤ {target * 1000:.0f} ms |")


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_store(db: Path, ids: list[str]) -> list[float]:
    from labeler.labels import LabelBody
    from labeler.store import Store

    store = Store(db)
    samples = []
    for tid in ids:
        states = store.turn_states(tid, "ann")
        first, second = states[0].message_index, states[1].message_index

        def step(tid: str = tid, first: int = first, second: int = second) -> None:
            store.save_label(tid, first, "ann", LabelBody(decision="clarify"), version=0)
            store.submit_label(tid, first, "ann", LabelBody(decision="clarify"), version=1)
            store.turn_states(tid, "ann")
            store.get_label(tid, second, "ann")

        samples.append(timed(step))
    store.close()
    return samples


def bench_server(db: Path, ids: list[str]) -> list[float]:
    from streamlit.logger import set_log_level
    from streamlit.testing.v1 import AppTest


    set_log_level("error")
    # AppTest warns about the bare-mode context on every run; that is expected here.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").disabled = True
    os.environ["TOOLGOLD_DB"] = str(db)
    samples = []
    for tid in ids:
        app = AppTest.from_file(str(APP), default_timeout=60)
        app.query_params.update({"user": "ann", "t": tid})
        app.run()
        app.switch_page("pages_/label.py").run()
        [clarify] = [b for b in app.button if b.key and b.key.startswith("decide-clarify-")]
        clarify.click().run()
        [submit] = [b for b in app.button if b.key and b.key.startswith("submit-")]
        first = app.query_params["turn"]
        samples.append(timed(lambda submit=submit: submit.click().run()))
        assert not app.exception, app.exception
        assert app.query_params["turn"] != first, "Submit & next did not move on"
    return samples


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bench_browser(db: Path, ids: list[str]) -> list[float]:
    from playwright.sync_api import expect, sync_playwright

    from labeler.app.editing import Item
    from labeler.store import Store

    port = _free_port()
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    samples: list[float] = []
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.25)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for tid in ids:
                turns = [s.message_index for s in Store(db).turn_states(tid, "ann")]
                page.goto(f"{url}/label?user=ann&t={tid}&turn={turns[0]}")
                panel = page.locator(f".st-key-decide-clarify-{Item(tid, turns[0], 'ann').key} button").first
                expect(panel).to_be_visible(timeout=30_000)
                page.locator("body").press("3")
                expect(page.locator(".st-key-save-state")).to_contain_text("version 1", timeout=30_000)
                expect(page.locator("[class*='st-key-submit-'] button").first).to_be_visible()
                following = page.locator(f".st-key-decide-clarify-{Item(tid, turns[1], 'ann').key} button").first
                start = time.perf_counter()
                page.locator("body").press("Control+Enter")
                expect(following).to_be_visible(timeout=30_000)
                samples.append(time.perf_counter() - start)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return samples


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_labeling")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    db = build(args.turns)
    from labeler.store import Store

    # Every run labels a fresh copy, so runs do not depend on each other.
    work = OUT / "labeling-run.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work}{suffix}").unlink(missing_ok=True)
    shutil.copyfile(db, work)
    db = work
    stats = Store(db).stats()
    print(f"store: {stats['transcripts']:,} transcripts, {stats['turns']:,} decision points "
          f"(ready in {time.perf_counter() - started:.0f} s)\n")
    ids = [q.transcript_id for q in Store(db).queue("ann", limit=3 * args.runs)]
    runs = args.runs
    rows = [("store: save + submit + next turn's reads", bench_store(db, ids[:runs]), 0.3),
            ("server: Submit & next script run (AppTest)", bench_server(db, ids[runs:2 * runs]), 0.3)]
    if not args.no_browser and Path(CHROMIUM).exists():
        rows.append(("browser: Ctrl+Enter to next turn on screen", bench_browser(db, ids[2 * runs:]), 1.0))
    _table(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
