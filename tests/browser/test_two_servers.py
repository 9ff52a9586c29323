"""Two `toolgold app` processes on one PostgreSQL database, people signed in on each, in real Chromium: how a
team runs the app past one process. Leases, saves, conflicts and review decisions must agree across them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.store import Store
from tests.browser.conftest import Server, _wait_healthy, free_port, goto_as
from tests.browser.test_labeling import expect_saved, press
from tests.browser.test_review_flow import idle, lookup
from tests.review.kit import people, put, transcript
from tests.store_reads import audit_events

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


@contextmanager
def toolgold_app(db_url: str, home: Path) -> Iterator[Server]:
    """``toolgold app`` (the documented command) in its own process."""
    port = free_port()
    log = home / f"app-{port}.log"
    cmd = [sys.executable, "-m", "labeler.cli", "app", "--host", "127.0.0.1", "--port", str(port), "--db", db_url]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=os.environ.copy(), stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, log)
        yield Server(url=url, db=Path(db_url))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_two_app_processes_on_one_postgres_agree_on_leases_saves_conflicts_and_reviews(
        browser: Browser, postgres_url: str, tmp_path: Path, artifacts: Path) -> None:
    store = Store(postgres_url)
    people(store)
    put(store, transcript("t1"), transcript("t2"))
    store.submit_label("t2", 2, "ann", lookup("C-1042"), version=0)  # a disagreement to review
    store.submit_label("t2", 2, "bob", lookup("C-1024"), version=0)
    store.sync_review_queue()
    [item] = store.review_queue(actor="rita")

    with ExitStack() as stack:
        one = stack.enter_context(toolgold_app(postgres_url, tmp_path))
        two = stack.enter_context(toolgold_app(postgres_url, tmp_path))

        def tab(server: Server, user: str, path: str) -> Page:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            stack.callback(context.close)
            context.set_default_timeout(20_000)
            page = context.new_page()
            goto_as(page, server.url + path, user)
            return page

        label = "/label?t=t1&turn=2"
        ann_one, ann_two = tab(one, "ann", label), tab(two, "ann", label)
        expect(ann_one.locator(".st-key-save-state")).to_contain_text("Not saved yet")
        expect(ann_two.locator(".st-key-save-state")).to_contain_text("Not saved yet")

        # The lease ann took through server one is seen through server two.
        bob_two = tab(two, "bob", label)
        expect(bob_two.locator(".st-key-lease-warning")).to_contain_text("Held by ann")

        # Saves through either server land in the one database; each annotator keeps their own label.
        press(ann_one, "0")
        expect_saved(ann_one, 1)
        press(bob_two, "3")
        expect_saved(bob_two, 1)
        # ann's second window, on the other server, started from before her save: refused, nothing lost.
        press(ann_two, "3")
        expect(ann_two.locator(".st-key-conflict")).to_contain_text("This label was changed elsewhere")
        ann_two.screenshot(path=artifacts / "two-servers-conflict.png")
        assert store.get_label("t1", 2, "ann").body.decision == "no_call"  # type: ignore[union-attr]
        assert store.get_label("t1", 2, "bob").body.decision == "clarify"  # type: ignore[union-attr]

        # Two reviewers on two servers open the same disagreement; the first decision wins, the second is
        # refused with who decided, and the gold case is the first reviewer's choice.
        review = f"/review?item={item.id}"
        rita_one, root_two = tab(one, "rita", review), tab(two, "root", review)
        for page in (rita_one, root_two):
            expect(page.locator(".st-key-review-head")).to_contain_text("t2#t2 · Annotators disagree")
        rita_one.locator(f".st-key-choice-{item.id}").get_by_text("bob", exact=True).click()
        idle(rita_one)
        rita_one.locator(f".st-key-accept-{item.id} button").click()
        expect(rita_one.locator(".st-key-review-done")).to_contain_text(f"Approved label:bob for item {item.id}")
        root_two.locator(f".st-key-accept-{item.id} button").click()
        expect(root_two.locator(".st-key-err-review")).to_contain_text(
            f"review item {item.id} was already decided by rita")
        case = store.get_gold("t2#t2")
        assert (case.provenance.reviewer, case.provenance.annotators, case.expected.calls[0].arguments) == (
            "rita", ("bob",), {"customer": "C-1024"})
        accepts = [e["actor"] for e in audit_events(store, "t2#t2") if e["action"] == "review.accept"]
        assert accepts == ["rita"]
    store.close()
