"""Browser fixtures: a real ``streamlit run`` of the app on a temp database, driven by real Chromium.

The server is started once per session on a free port with a database seeded from tests/data/app and the
users root (admin), ann, bob and cat (annotators); tests that write labels each use their own annotator,
so they do not depend on each other's order.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Page, expect

from labeler.store import Store
from tests.app.conftest import seed

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
STARTUP_SECONDS = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Server:
    url: str
    db: Path

    def store(self) -> Store:
        return Store(self.db)


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"streamlit did not become healthy in {STARTUP_SECONDS}s:\n{log.read_text()}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"browser tests need {CHROMIUM} (apt-get install chromium)")
    home = tmp_path_factory.mktemp("app-server")
    db = home / "toolgold.db"
    store = Store(db)
    seed(store)
    store.add_user("root", "admin")
    for name in ("ann", "bob", "cat"):
        store.add_user(name, "annotator", actor="root")
    store.close()
    port = free_port()
    log = home / "streamlit.log"
    env = {**os.environ, "TOOLGOLD_DB": str(db)}
    cmd = [sys.executable, "-m", "streamlit", "run", str(REPO / "labeler" / "app" / "main.py"),
           "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
           "--browser.gatherUsageStats", "false"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield Server(url=url, db=db)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class RequestLog:
    urls: list[str]

    def outside(self, allowed_host: str = "127.0.0.1") -> list[str]:
        return [u for u in self.urls if urlparse(u).scheme in ("http", "https", "ws", "wss")
                and urlparse(u).hostname != allowed_host]


@pytest.fixture
def page(browser, server: Server):  # type: ignore[no-untyped-def]
    """A fresh browser context and page; every request it makes is logged in ``page.requests``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(15_000)
    expect.set_options(timeout=15_000)  # two cores run pytest, streamlit and chromium at once
    pg = context.new_page()
    log = RequestLog([])
    pg.on("request", lambda request: log.urls.append(request.url))
    pg.requests = log  # type: ignore[attr-defined]
    yield pg
    context.close()


def sign_in(page: Page, name: str) -> None:
    """Pick ``name`` in the sidebar, as a person does (the URL never says who is signed in)."""
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(sidebar.get_by_text(f"{name} · ", exact=False)).to_be_visible()
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page, not the box
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'")


def goto_as(page: Page, url: str, name: str) -> None:
    """Open ``url`` in a new session and sign in as ``name``; the page and its parameters stay as asked."""
    page.goto(url)
    sign_in(page, name)


@contextmanager
def serve(db: str | Path, home: Path, *, cwd: Path = REPO, env: dict[str, str] | None = None,
          address: str = "127.0.0.1", port: int | None = None) -> Iterator[Server]:
    """``streamlit run`` of the app on ``db`` (a file or a URL) in its own process; stopped on exit."""
    port = port or free_port()
    log = home / f"streamlit-{port}.log"
    cmd = [sys.executable, "-m", "streamlit", "run", str(REPO / "labeler" / "app" / "main.py"),
           "--server.headless", "true", "--server.address", address, "--server.port", str(port),
           "--browser.gatherUsageStats", "false"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, "TOOLGOLD_DB": str(db), **(env or {})},
                                stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield Server(url=url, db=Path(str(db)))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
