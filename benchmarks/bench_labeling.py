"""Labeling speed with 100,000 decision points in the store (issue 4 "Speed").

- store: save a draft, submit it, and read what the next turn needs (turn states, its label); the SQL
  work behind one "submit & next". Target: well under the 300 ms budget.
- server: the whole Streamlit script run for *Submit & next* (AppTest: the real app, the real store,
  widgets rendered to protobuf; no network, no browser). Target: ≤ 300 ms p50.
- browser: Ctrl+Enter in real Chromium until the next turn's panel drawn by the server is on screen (the
  decision bar of that turn, not the essentials it draws ahead), against `streamlit run`. Target: ≤ 1 s p50.
- anchors, same run: a bare Streamlit app's script run under AppTest (the server's floor) and its rerun round
  trip in Chromium (the browser's floor), measured before and after. The load average is printed with them.

Signed in as a person is (sign-in never reads the URL): AppTest sets the sidebar picker's ``user``, Chromium
picks the name in the sidebar. ``--labels N`` sets the runs per measure here too (``--runs`` wins).

The store is built once (tau-bench airline transcripts copied under new ids) and kept in benchmarks/out/.

``--chromium`` (issue 16 "Speed of the loop"): real Chromium (Playwright, /usr/bin/chromium) against
``streamlit run``, on the bundled demo (``toolgold init --demo-if-empty``) and on one transcript of 300
decision points, signed in through the sidebar as a person is:

- key → effect: a decision key until the decision bar shows it pressed. Target ≤ 100 ms p50.
- key → saved: the same key until the bar says the store confirmed it (information, no target).
- Submit & next: Ctrl+Enter until the next turn's decision bar is on screen. Target ≤ 300 ms p50.
- open transcript: "Open" in the queue until the turn's decision bar is on screen. Target ≤ 1 s p50.
- anchor, same run: a bare Streamlit app's rerun round trip (a button's shortcut until the text it changes
  is on screen), the floor any server round trip pays on this machine at this moment.
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
from typing import Any

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


def _table(rows: list[tuple[str, list[float], float | None]]) -> None:
    print("| measure | runs | p50 | p95 | target |")
    print("|---|---|---|---|---|")
    for name, samples, target in rows:
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.0f} ms | {p95 * 1000:.0f} ms | "
              + ("floor |" if target is None else f"≤ {target * 1000:.0f} ms |"))


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

    from labeler.store import Store

    set_log_level("error")
    # AppTest warns about the bare-mode context on every run; that is expected here.
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").disabled = True
    os.environ["TOOLGOLD_DB"] = str(db)
    samples = []
    for tid in ids:
        app = AppTest.from_file(str(APP), default_timeout=60)
        app.session_state["user"] = "ann"  # what the sidebar's picker sets (sign-in never reads the URL)
        app.query_params["t"] = tid
        app.run()
        app.switch_page("pages_/label.py").run()
        [clarify] = [b for b in app.button if b.key and b.key.startswith("decide-clarify-")]
        clarify.click().run()
        [submit] = [b for b in app.button if b.key and b.key.startswith("submit-")]
        first = app.query_params["turn"]
        samples.append(timed(lambda submit=submit: submit.click().run()))
        assert not app.exception, app.exception
        assert app.query_params["turn"] != first, "Submit & next did not move on"
        submitted = Store(db).get_label(tid, int(first), "ann")
        assert submitted is not None and submitted.status == "submitted", "Submit & next did not submit"
    return samples


def server_anchor(runs: int) -> list[float]:
    """The floor of a script run under AppTest: the bare anchor app's button click and rerun."""
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_string(ANCHOR_APP, default_timeout=60)
    app.run()
    samples = []
    for n in range(1, runs + 1):
        samples.append(timed(lambda: app.button[0].click().run()))
        assert app.text[0].value == f"ticks {n}", app.text[0].value
    return samples


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bench_browser(browser: Any, db: Path, ids: list[str]) -> list[float]:
    from playwright.sync_api import expect

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
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for tid in ids:
            turns = [s.message_index for s in Store(db).turn_states(tid, "ann")]
            page.goto(f"{url}/label?t={tid}&turn={turns[0]}")  # a new session: signed in again
            _sign_in(page, "ann")  # through the sidebar, as a person does (sign-in never reads the URL)
            # The decision bar as Python drew it for this turn (data-item: the turn on the server's panel).
            expect(page.locator(f".tg-bar[data-item='{Item(tid, turns[0], 'ann').key}']")).to_be_visible(
                timeout=30_000)
            page.wait_for_function(IDLE, timeout=30_000)
            page.keyboard.press("3")
            expect(page.locator(".st-key-save-state")).to_contain_text("version 1", timeout=30_000)
            expect(page.locator("[class*='st-key-submit-'] button").first).to_be_visible()
            page.wait_for_function(IDLE, timeout=30_000)
            # The next turn's panel drawn by the server (not the bar's prefetched essentials: data-ahead).
            following = page.locator(f".tg-bar[data-item='{Item(tid, turns[1], 'ann').key}']:not([data-ahead])")
            start = time.perf_counter()
            page.keyboard.press("Control+Enter")
            expect(following).to_be_visible(timeout=30_000)
            samples.append(time.perf_counter() - start)
            submitted = Store(db).get_label(tid, turns[0], "ann")
            assert submitted is not None and submitted.status == "submitted", "Ctrl+Enter did not submit"
        page.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return samples


# -- real Chromium: the fast loop ----------------------------------------------------------------------

ANCHOR_APP = """
import streamlit as st
st.session_state.setdefault("n", 0)
if st.button("tick", shortcut="T"):
    st.session_state.n += 1
st.text(f"ticks {st.session_state.n}")
"""
IDLE = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
DRAWN = "() => window.__toolgoldBar && window.__toolgoldBar.drawn"


def _serve(app: Path, db: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {**os.environ, **({"TOOLGOLD_DB": str(db)} if db else {})}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            return proc, url
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise SystemExit(f"streamlit did not start for {app}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _sign_in(page: Any, name: str) -> None:
    from playwright.sync_api import expect

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(sidebar.get_by_text(f"{name} · ", exact=False)).to_be_visible(timeout=60_000)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_function(IDLE, timeout=60_000)


def _drawn(page: Any) -> dict[str, Any]:
    return page.evaluate(DRAWN) or {}


def _wait_drawn(page: Any, test: str, timeout: int = 60_000) -> None:
    """Until the decision bar's last drawing passes ``test`` (JS over ``d``), checked every frame."""
    page.wait_for_function(f"() => {{ const d = window.__toolgoldBar && window.__toolgoldBar.drawn; "
                           f"return !!d && ({test}); }}", polling="raf", timeout=timeout)


def chromium_anchor(browser: Any, runs: int) -> list[float]:
    OUT.mkdir(parents=True, exist_ok=True)
    app = OUT / "anchor_app.py"
    app.write_text(ANCHOR_APP)
    proc, url = _serve(app, None)
    samples = []
    try:
        page = browser.new_page()
        page.goto(url)
        page.get_by_text("ticks 0").wait_for(timeout=60_000)
        for n in range(1, runs + 1):
            page.wait_for_function(IDLE)
            start = time.perf_counter()
            page.keyboard.press("t")
            page.get_by_text(f"ticks {n}", exact=True).wait_for()
            samples.append(time.perf_counter() - start)
        page.close()
    finally:
        _stop(proc)
    return samples


def chromium_loop(browser: Any, db: Path, labels: int, opens: int) -> dict[str, list[float]]:
    """Label ``labels`` decision points with "3" then Ctrl+Enter wherever Submit & next goes; open a
    transcript from the queue ``opens`` times."""
    proc, url = _serve(APP, db)
    out: dict[str, list[float]] = {"key": [], "saved": [], "next": [], "confirmed": [], "open": []}
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        page.goto(f"{url}/label")
        _sign_in(page, "ann")
        for n in range(opens):
            if n:
                page.locator(".st-key-to-queue button").click()
            page.locator(".st-key-queue-row-0 button").first.wait_for()
            page.wait_for_function(IDLE)
            rows = page.locator("[class*='st-key-queue-row-']").count()
            page.evaluate("window.__toolgoldBar && (window.__toolgoldBar.drawn = null)")
            start = time.perf_counter()
            page.locator(f".st-key-queue-row-{n % rows} button").first.click()
            _wait_drawn(page, "true")
            out["open"].append(time.perf_counter() - start)
        for _ in range(labels):
            page.wait_for_function(IDLE)
            item = _drawn(page)["item"]
            start = time.perf_counter()
            page.keyboard.press("3")
            _wait_drawn(page, f"d.item === {item!r} && d.decision === 'clarify'")
            out["key"].append(time.perf_counter() - start)
            _wait_drawn(page, f"d.item === {item!r} && d.state === 'saved' && d.decision === 'clarify'")
            out["saved"].append(time.perf_counter() - start)
            page.wait_for_function(IDLE)
            start = time.perf_counter()
            page.keyboard.press("Control+Enter")
            _wait_drawn(page, f"d.item !== {item!r}")
            out["next"].append(time.perf_counter() - start)
            _wait_drawn(page, f"d.item !== {item!r} && !d.ahead")
            out["confirmed"].append(time.perf_counter() - start)
        page.close()
    finally:
        _stop(proc)
    return out


def _demo_db() -> Path:
    db = OUT / "loop-demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    subprocess.run([sys.executable, "-m", "labeler.cli", "init", "--demo-if-empty"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    from labeler.store import Store

    store = Store(db)
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    store.close()
    return db


def _long_db(points: int) -> Path:
    from labeler.store import ImportItem, Store
    from scorer.model import Message, Transcript

    db = OUT / f"loop-long-{points}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    messages = [Message(role="system", content="You answer questions about records.")]
    for n in range(points):
        messages += [Message(role="user", content=f"question {n + 1}: what is in record R{n}?"),
                     Message(role="assistant", content=f"answer {n + 1}: record R{n} holds nothing unusual")]
    store = Store(db)
    store.import_items([ImportItem(Transcript(id=f"long-{points}", messages=tuple(messages),
                                              metadata={"source": "synthetic"}), "synthetic")])
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    store.close()
    return db


def _percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"{statistics.median(samples) * 1000:.0f} ms | {p90 * 1000:.0f} ms"


def chromium_main(labels: int, opens: int) -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    targets = {"key": ("key → effect (decision bar shows it)", "≤ 100 ms"),
               "saved": ("key → saved (the store confirmed it)", "—"),
               "next": ("Submit & next → next turn on screen (bar's prefetched essentials)", "≤ 300 ms"),
               "confirmed": ("Submit & next → next turn's server-drawn panel", "—"),
               "open": ("open transcript from the queue", "≤ 1,000 ms")}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        anchor = chromium_anchor(browser, labels)
        results = {"demo": chromium_loop(browser, _demo_db(), labels, opens),
                   "300 decision points": chromium_loop(browser, _long_db(300), labels, opens)}
        anchor_after = chromium_anchor(browser, labels)
        browser.close()
    print("| measure | transcripts | runs | p50 | p90 | target |")
    print("|---|---|---|---|---|---|")
    for which, samples in results.items():
        for name, (label, target) in targets.items():
            print(f"| {label} | {which} | {len(samples[name])} | {_percentiles(samples[name])} | {target} |")
    print(f"| anchor: bare Streamlit rerun round trip (before) | — | {len(anchor)} | {_percentiles(anchor)} | floor |")
    print(f"| anchor: bare Streamlit rerun round trip (after) | — | {len(anchor_after)} | "
          f"{_percentiles(anchor_after)} | floor |")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_labeling")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=None, help="runs per measure (default: --labels, else 20)")
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--chromium", action="store_true",
                        help="only the real-Chromium loop: key → effect, Submit & next, open transcript")
    parser.add_argument("--labels", type=int, default=None,
                        help="labels per transcript set (--chromium, default 30); without it, runs per measure")
    parser.add_argument("--opens", type=int, default=10, help="transcript opens per set (--chromium)")
    args = parser.parse_args(argv)
    if args.chromium:
        chromium_main(args.labels or 30, args.opens)
        return
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
    runs = args.runs or args.labels or 20
    ids = [q.transcript_id for q in Store(db).queue("ann", limit=3 * runs)]
    rows: list[tuple[str, list[float], float | None]] = [
        ("store: save + submit + next turn's reads", bench_store(db, ids[:runs]), 0.3),
        ("server: Submit & next script run (AppTest)", bench_server(db, ids[runs:2 * runs]), 0.3),
        ("anchor: a bare Streamlit app's script run (AppTest), same run", server_anchor(runs), None)]
    if not args.no_browser and Path(CHROMIUM).exists():
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            anchor = chromium_anchor(browser, runs)
            rows.append(("browser: Ctrl+Enter to next turn's server-drawn panel",
                         bench_browser(browser, db, ids[2 * runs:]), 1.0))
            rows.append(("anchor: bare Streamlit rerun round trip in Chromium, same run (before + after)",
                         anchor + chromium_anchor(browser, runs), None))
            browser.close()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    _table(rows)


if __name__ == "__main__":
    main(sys.argv[1:])
