"""kill -9 at a seeded random moment of import, label saves, review (with adjudication) and the judge, on SQLite
and on the real PostgreSQL: a child process drives the real store or CLI, the parent SIGKILLs it after a
seeded delay, reopens the database and checks the invariants (tests/reliability/invariants.py), then shows
that the work completes from where it was left: the import re-run adds each transcript once, labeling goes on,
the judge asks only what is still pending (an answer already paid for is never asked again)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.labels import LabelBody, TrajectoryBody
from labeler.store import Store
from tests.judge.kit import KEY, by_kind, export_version, shoes_case, shoes_run, verdict_reply, write_jsonl
from tests.reliability.invariants import assert_invariants, judge_state
from tests.review.kit import people, put, transcript

REPO = Path(__file__).resolve().parents[2]
SEEDS = (11, 23, 37)
N_IMPORT = 500
N_JUDGE = 40
READY_TIMEOUT_S = 60.0


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, isolated_db: Path) -> str:
    return str(isolated_db) if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


def kill_at(argv: list[str], delay: float, tmp_path: Path, env: dict[str, str] | None = None,
            started: Callable[[], bool] | None = None) -> bool:
    """Start the child, wait until it says ready (and ``started()`` holds: it is at work), SIGKILL it ``delay``
    seconds later; True when it was still working at that moment. A child that ended by itself must have
    ended cleanly."""
    err = tmp_path / f"child-{time.monotonic_ns()}.err"
    with err.open("wb") as err_fh:
        proc = subprocess.Popen([sys.executable, "-m", "tests.reliability.fault_child", *argv], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=err_fh, env={**os.environ, **(env or {})})
        try:
            assert proc.stdout is not None
            ready: list[bytes] = []
            reader = threading.Thread(target=lambda: ready.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
            reader.start()
            reader.join(READY_TIMEOUT_S)
            assert ready == [b"ready\n"], (ready, err.read_text())
            deadline = time.monotonic() + READY_TIMEOUT_S
            while started is not None and not started() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(delay)
            alive = proc.poll() is None
            proc.kill()
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
    if not alive:
        assert proc.returncode in (0, 1), err.read_text()
    assert "Traceback" not in err.read_text(), err.read_text()
    return alive


def delay_for(seed: int, op: str, low: float, high: float) -> float:
    return random.Random(f"{op}:{seed}").uniform(low, high)


def invoke(db: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"TOOLGOLD_DB": db, **(env or {})}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


# -- import -----------------------------------------------------------------------------------------------


@contextmanager
def writing(db: str) -> Iterator[Callable[[], bool]]:
    """A probe: whether another process has a write under way (SQLite: pages in the WAL; PostgreSQL: a session
    other than the probe's own inside a transaction that has written). One connection for every poll, so
    polling is fast enough to see a short transaction."""
    if "://" not in db:
        wal = Path(db + "-wal")
        yield lambda: wal.exists() and wal.stat().st_size > 0
        return
    from sqlalchemy import create_engine, text

    engine = create_engine(db, isolation_level="AUTOCOMMIT")
    conn = engine.connect()
    query = text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                 "AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL")
    try:
        yield lambda: bool(conn.execute(query).scalar())
    finally:
        conn.close()
        engine.dispose()


@pytest.mark.parametrize("seed", SEEDS)
def test_import_killed_at_a_random_moment_is_all_or_nothing(db: str, seed: int, tmp_path: Path) -> None:
    from tests.reliability.test_crash_safety import write_source

    src = tmp_path / "big.jsonl"
    write_source(src, N_IMPORT)
    Store(db).close()
    with writing(db) as started:
        assert kill_at(["cli", db, str(seed), "import", str(src)], delay_for(seed, "import", 0.0, 0.04), tmp_path,
                       env={"TOOLGOLD_DB": db}, started=started), "the import finished before the kill: raise N_IMPORT"
    assert_invariants(db)
    store = Store(db)
    try:
        assert store.stats()["transcripts"] in (0, N_IMPORT)
        code, _, err = invoke(db, "import", str(src))
        assert code == 0, err
        assert (store.stats()["transcripts"], store.stats()["turns"]) == (N_IMPORT, 2 * N_IMPORT)
    finally:
        store.close()
    assert_invariants(db)


# -- label saves, review and adjudication -------------------------------------------------------------------


def labeling_db(db: str, *, n: int = 8) -> None:
    store = Store(db)
    try:
        people(store)
        put(store, *(transcript(f"k{i}", f"Where is my order? I'm C-1042 ({i}).") for i in range(n)))
    finally:
        store.close()


def judge_items(db: str) -> None:
    """Approved, frozen gold and answered judge questions queued for a reviewer (adjudication work)."""
    from labeler.judge.step import JudgeStep
    from tests.judge.kit import orders_case
    from tests.judge.test_store_judge import MODEL, answered, mismatch, new

    store = Store(db)
    try:
        put(store, orders_case())
        store.freeze("regression", actor="rita")
        q = mismatch(store)
        store.remember_judge_questions([new(q)])
        store.record_judge_outcome(q.key(MODEL), answered("equivalent"))
        JudgeStep(store, MODEL, None, audit_rate=0).queue_reviews()
        assert store.adjudication_queue(actor="rita")
    finally:
        store.close()


def still_works(db: str) -> None:
    """After the kill the database takes writes at once (no lock left behind by the dead process)."""
    store = Store(db)
    try:
        started = time.monotonic()
        label = store.get_label("k0", 2, "ann")
        store.save_label("k0", 2, "ann", LabelBody(decision="no_call", rationale="after the kill"),
                         version=label.version if label else 0)
        assert time.monotonic() - started < 5
    finally:
        store.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_label_saves_killed_at_a_random_moment_keep_the_invariants(db: str, seed: int, tmp_path: Path) -> None:
    labeling_db(db)
    assert kill_at(["save", db, str(seed)], delay_for(seed, "save", 0.05, 1.2), tmp_path)
    assert_invariants(db)
    still_works(db)
    assert_invariants(db)


@pytest.mark.parametrize("seed", SEEDS)
def test_trajectory_label_saves_killed_at_a_random_moment_keep_the_invariants(db: str, seed: int,
                                                                              tmp_path: Path) -> None:
    labeling_db(db)
    assert kill_at(["trajectory", db, str(seed)], delay_for(seed, "trajectory", 0.05, 1.2), tmp_path)
    assert_invariants(db)
    store = Store(db)
    try:
        saved = [r for tid in (f"k{i}" for i in range(8)) for who in ("ann", "bob", "cat")
                 if (r := store.get_trajectory_label(tid, who)) is not None]
        # Labeling goes on at once after the kill (no lock left behind): one more submit on top of a saved
        # label (or a first one, when the kill came before the child's first save).
        if saved:
            mine = saved[0]
            store.save_trajectory_label(mine.transcript_id, mine.annotator,
                                        mine.body.model_copy(update={"rationale": "after the kill"}),
                                        version=mine.version, submit=True)
        else:
            store.save_trajectory_label("k0", "ann", TrajectoryBody(no_action=True), version=0, submit=True)
    finally:
        store.close()
    assert_invariants(db)


@pytest.mark.parametrize("seed", SEEDS)
def test_review_and_adjudication_killed_at_a_random_moment_keep_the_invariants(db: str, seed: int,
                                                                               tmp_path: Path) -> None:
    labeling_db(db)
    judge_items(db)
    assert kill_at(["review", db, str(seed)], delay_for(seed, "review", 0.05, 1.5), tmp_path)
    assert_invariants(db)
    still_works(db)
    assert_invariants(db)


# -- the judge --------------------------------------------------------------------------------------------


class FakeAnthropic:
    """A real HTTP server on 127.0.0.1 speaking the Messages API: every request gets a verdict after ``delay``."""

    def __init__(self, delay: float) -> None:
        self.served = 0
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body: dict[str, Any] = json.loads(self.rfile.read(int(self.headers["content-length"])))
                time.sleep(delay)
                reply = json.dumps(verdict_reply("equivalent", f"fine ({by_kind(body)})")).encode()
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(reply)))
                    self.end_headers()
                    self.wfile.write(reply)
                except OSError:  # the client was killed while waiting: this answer never reached it
                    return
                with owner.lock:
                    owner.served += 1

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    api = FakeAnthropic(delay=0.03)
    try:
        yield api
    finally:
        api.close()


def pending_judge_questions(db: str, tmp_path: Path) -> None:
    """N_JUDGE semantic questions left pending by `toolgold score --judge` without a key."""
    store = Store(db)
    try:
        store.add_user("root", "admin")
        store.add_user("rita", "reviewer", actor="root")
        cases = [shoes_case(f"I need waterproof running shoes, size 10 (ask {i}).", tid=f"shoes{i}")
                 for i in range(N_JUDGE)]
        put(store, *cases)
        store.freeze("regression", actor="rita")
        gold = export_version(store, "regression-v1", tmp_path / "gold.jsonl")
    finally:
        store.close()
    runs = write_jsonl(tmp_path / "runs.jsonl", [shoes_run(case_id=c.id) for c in cases])
    env = {"ANTHROPIC_API_KEY": "", "TOOLGOLD_JUDGE_MODEL": ""}
    _code, _, err = invoke(db, "score", str(gold), str(runs), "--judge", env=env)
    assert "skipped" in err, err
    assert len(judge_state(db).pending) == N_JUDGE


@pytest.mark.parametrize("seed", SEEDS)
def test_the_judge_killed_at_a_random_moment_keeps_what_it_paid_for(db: str, seed: int, tmp_path: Path,
                                                                   fake_anthropic: FakeAnthropic) -> None:
    pending_judge_questions(db, tmp_path)
    before = judge_state(db)
    env = {"TOOLGOLD_DB": db, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.url}
    assert kill_at(["cli", db, str(seed), "judge", "--concurrency", "2"], delay_for(seed, "judge", 0.0, 0.5),
                   tmp_path, env=env, started=lambda: fake_anthropic.served > 0), \
        "the judge finished before the kill: raise N_JUDGE"
    assert_invariants(db, judge_before=before)
    after_kill = judge_state(db)
    assert after_kill.status.keys() == before.status.keys()
    served_before_rerun = fake_anthropic.served
    assert len(after_kill.answered) <= served_before_rerun  # nothing answered that was not asked
    code, _out, err = invoke(db, "judge", env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.url})
    assert code == 0, err
    # The re-run asks exactly what was still pending: an answer stored before the kill is not bought again.
    assert fake_anthropic.served - served_before_rerun == len(after_kill.pending)
    assert judge_state(db).answered == set(before.status)
    assert_invariants(db, judge_before=after_kill)
