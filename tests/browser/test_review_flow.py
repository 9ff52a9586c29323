"""Review in real Chromium against ``streamlit run`` on its own database: a reviewer resolves a disagreement
between two annotators, approves the rest, freezes a version and downloads it; an annotator cannot approve,
and a reviewer demoted while the page is open is refused by the store."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.labels import LabelBody
from labeler.store import Store
from scorer.model import Call
from tests.browser.conftest import REPO, Server, _wait_healthy, free_port, goto_as
from tests.review.kit import people, put, transcript
from tests.store_reads import audit_events

pytestmark = pytest.mark.browser


def lookup(customer: str) -> LabelBody:
    return LabelBody(decision="same" if customer == "C-1042" else "different",
                     calls=(Call(name="search_orders", arguments={"customer": customer}),), tags=("happy_path",))


@pytest.fixture(scope="module")
def review_server(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Server]:
    """The app on a database where ann and bob disagree on t1 and on t3, and ann alone labeled t2."""
    home = tmp_path_factory.mktemp("review-server")
    db = home / "toolgold.db"
    store = Store(db)
    people(store)
    store.add_user("rex", "reviewer", actor="root")
    put(store, transcript("t1"), transcript("t2", "Orders for C-77 please", observed={"customer": "C-77"}),
        transcript("t3"))
    for tid in ("t1", "t3"):
        store.submit_label(tid, 2, "ann", lookup("C-1042"), version=0)
        store.submit_label(tid, 2, "bob", lookup("C-1024"), version=0)
    store.submit_label("t2", 2, "ann", lookup("C-77"), version=0)
    store.close()
    port = free_port()
    log = home / "streamlit.log"
    cmd = [sys.executable, "-m", "streamlit", "run", str(REPO / "labeler" / "app" / "main.py"),
           "--server.headless", "true", "--server.address", "127.0.0.1", "--server.port", str(port),
           "--browser.gatherUsageStats", "false"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "TOOLGOLD_DB": str(db)}, stdout=out,
                                stderr=subprocess.STDOUT)
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


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1500, "height": 1100}, accept_downloads=True)
    context.set_default_timeout(20_000)
    expect.set_options(timeout=20_000)
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.requests = requests  # type: ignore[attr-defined]
    yield page
    context.close()


def idle(page: Page) -> None:
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'")


def open_item(page: Page, server: Server, user: str, ref: str) -> int:
    store = server.store()
    item = store.review_item_for(ref)
    assert item is not None
    goto_as(page, f"{server.url}/review?item={item.id}", user)
    expect(page.locator(".st-key-review-head")).to_contain_text(f"{ref} · Annotators disagree")
    return item.id


def comment(page: Page, item_id: int, text: str) -> None:
    area = page.locator(f".st-key-comment-{item_id} textarea")
    area.fill(text)
    area.press("Control+Enter")  # commit the text before clicking a button
    idle(page)


def test_a_reviewer_resolves_a_disagreement_freezes_and_exports(tab: Page, review_server: Server,
                                                               artifacts: Path) -> None:
    page, server = tab, review_server
    goto_as(page, f"{server.url}/review", "rita")
    expect(page.locator("[data-testid=stMetric]").first).to_contain_text("2")  # two disagreements
    item_id = open_item(page, server, "rita", "t1#t2")
    # Both annotators' versions and the agent's call side by side; ann's (first submitted) preselected.
    for key in ("label-ann", "label-bob", "observed"):
        expect(page.locator(f".st-key-cand-{key}")).to_be_visible()
    expect(page.locator(".st-key-cand-label-ann")).to_contain_text("▶ ann")
    expect(page.locator(".st-key-cand-label-bob")).to_contain_text('"customer": "C-1024"')
    page.locator(f".st-key-choice-{item_id}").get_by_text("bob", exact=True).click()
    expect(page.locator(".st-key-cand-label-bob")).to_contain_text("▶ bob")
    comment(page, item_id, "the customer corrected the id to C-1024")
    page.screenshot(path=artifacts / "review-side-by-side.png")
    page.locator(f".st-key-accept-{item_id} button").click()
    expect(page.locator(".st-key-review-done")).to_contain_text(f"Approved label:bob for item {item_id}")
    case = server.store().get_gold("t1#t2")
    assert (case.provenance.status, case.provenance.reviewer, case.expected.calls[0].arguments) == (
        "approved", "rita", {"customer": "C-1024"})
    decision = [e for e in audit_events(server.store(), "t1#t2") if e["action"] == "review.accept"]
    assert [(e["actor"], e["note"]) for e in decision] == [("rita", "the customer corrected the id to C-1024")]

    # The uncontested case (t2, one confident label) is approved in one go.
    page.get_by_role("tab", name="Approve uncontested").click()
    page.locator(".st-key-approve-uncontested button").click()
    expect(page.locator(".st-key-review-done")).to_contain_text("Approved 1 uncontested cases")

    # Freeze the regression split and download it.
    goto_as(page, f"{server.url}/versions", "rita")
    page.get_by_label("Note (why this version)").fill("first reviewed set")
    page.get_by_role("button", name="Freeze").click()
    expect(page.locator(".st-key-versions-done")).to_contain_text("Froze regression-v1: 2 cases")
    page.locator(".st-key-prepare-export button").click()
    with page.expect_download() as download_info:
        page.locator(".st-key-download-version button").click()
    download = download_info.value
    data = Path(download.path()).read_bytes()
    version = server.store().get_version("regression-v1")
    assert download.suggested_filename == "regression-v1.jsonl"
    assert hashlib.sha256(data).hexdigest() == version.content_hash
    # The download's callback records who exported (it runs in the rerun the click starts).
    exports: list[str] = []
    for _ in range(100):
        exports = [e["actor"] for e in audit_events(server.store(), "regression-v1") if e["action"] == "version.export"]
        if exports:
            break
        page.wait_for_timeout(100)
    assert exports == ["rita"]
    page.screenshot(path=artifacts / "review-versions.png")
    page.wait_for_timeout(300)
    outside = [u for u in page.requests if u.startswith("http") and "127.0.0.1" not in u]  # type: ignore[attr-defined]
    assert outside == []


def test_an_annotator_cannot_approve(tab: Page, review_server: Server, artifacts: Path) -> None:
    page, server = tab, review_server
    # An annotator's Review page holds no decisions at all.
    goto_as(page, f"{server.url}/review", "ann")
    expect(page.get_by_text("Nothing was sent back to you. Reviewing is for reviewers and admins.")).to_be_visible()
    expect(page.locator("[class*='st-key-accept-']")).to_have_count(0)
    # A reviewer demoted to annotator while the item is open: the click reaches the store, which refuses.
    item_id = open_item(page, server, "rex", "t3#t2")
    store = server.store()
    store.set_user("rex", role="annotator", actor="root")
    page.locator(f".st-key-accept-{item_id} button").click()
    expect(page.locator(".st-key-err-review")).to_contain_text(
        "only a reviewer or admin can approve or reject gold cases ('rex' is annotator)")
    page.screenshot(path=artifacts / "review-refused.png")
    assert store.get_gold("t3#t2").provenance.status == "submitted"
    assert store.review_item_for("t3#t2") is not None
