"""The Gold hygiene page in real Chromium against ``streamlit run``: a view of gold that has not changed shows the
kept lint; once the gold moves on, a lint slower than the page's limit (here 0 s: every lint) is shown as kept,
under a notice, until the reviewer clicks Check again; a restarted server shows the lint the one before it kept in
the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.store import Store
from tests.browser.conftest import goto_as, serve
from tests.review.kit import gold, people, put

pytestmark = pytest.mark.browser


def conflicting_pair(db: Path) -> Store:
    """A store at ``db`` with the reviewers and two gold cases of one context expecting different answers."""
    store = Store(db)
    people(store)
    put(store, gold("a#t2"), gold("b#t2", expected=gold("x").expected.model_copy(update={"behavior": "clarify",
                                                                                          "calls": ()})))
    return store


def kept_then_checked_again(page: Page, shot: Path) -> None:
    """The page shows the lint of the two cases under the notice of one write since; Check again lints the three."""
    notice = page.locator(".st-key-hygiene-stale")
    summary = page.locator(".st-key-hygiene-summary")
    expect(notice).to_contain_text("The gold has changed since this check (1 write since ")
    expect(summary).to_have_text("1 problems in 2 gold cases (1 cases affected)")
    page.screenshot(path=shot, full_page=True)
    notice.get_by_role("button", name="Check again").click()
    expect(summary).to_have_text("1 problems in 3 gold cases (1 cases affected)")
    expect(notice).to_have_count(0)


def test_the_kept_lint_waits_for_check_again_once_the_gold_moves_on(browser: Browser, tmp_path: Path,
                                                                      artifacts: Path) -> None:
    db = tmp_path / "toolgold.db"
    store = conflicting_pair(db)
    with serve(db, tmp_path, env={"TOOLGOLD_HYGIENE_RECHECK_SECONDS": "0"}) as server:
        page = browser.new_page()
        goto_as(page, f"{server.url}/hygiene", "rita")
        summary = page.locator(".st-key-hygiene-summary")
        expect(summary).to_have_text("1 problems in 2 gold cases (1 cases affected)")
        expect(page.locator(".st-key-hygiene-stale")).to_have_count(0)

        put(store, gold("c#t2", customer="C-9"))  # another writer: an import
        goto_as(page, f"{server.url}/hygiene", "rita")
        kept_then_checked_again(page, artifacts / "hygiene-kept.png")
        page.close()
    store.close()


def test_a_restarted_server_shows_the_lint_the_last_one_kept(browser: Browser, tmp_path: Path,
                                                             artifacts: Path) -> None:
    # With the limit at 0 a server that has no lint of its own lints on the first view and shows no notice; one
    # that shows the notice read the lint the server before it kept in the database.
    db = tmp_path / "toolgold.db"
    store = conflicting_pair(db)
    env = {"TOOLGOLD_HYGIENE_RECHECK_SECONDS": "0"}
    with serve(db, tmp_path, env=env) as server:
        page = browser.new_page()
        goto_as(page, f"{server.url}/hygiene", "rita")
        expect(page.locator(".st-key-hygiene-summary")).to_have_text("1 problems in 2 gold cases (1 cases affected)")
        page.close()
    with serve(db, tmp_path, env=env) as server:  # restarted, the gold unchanged: the kept lint, fresh
        page = browser.new_page()
        goto_as(page, f"{server.url}/hygiene", "rita")
        expect(page.locator(".st-key-hygiene-summary")).to_have_text("1 problems in 2 gold cases (1 cases affected)")
        expect(page.locator(".st-key-hygiene-stale")).to_have_count(0)
        page.close()
    put(store, gold("c#t2", customer="C-9"))  # a write while no server runs
    with serve(db, tmp_path, env=env) as server:
        page = browser.new_page()
        goto_as(page, f"{server.url}/hygiene", "rita")
        kept_then_checked_again(page, artifacts / "hygiene-kept-after-restart.png")
        page.close()
    store.close()
