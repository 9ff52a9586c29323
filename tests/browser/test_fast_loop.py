"""The fast labeling loop in real Chromium (issue 16 "Speed of the loop", issue 12 save failures).

The decision bar draws a decision the moment its key goes down, before the store has it; Submit & next
lands on the next turn with the previous one saved; a save the database is too busy for (the SQLite write
lock held by another connection past ``busy_timeout``) is shown unsaved, retried until it lands, and what the
annotator typed is there after a reload.

Its own server and database: these tests hold the write lock, which must not stall the other browser tests.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from labeler.app.editing import Item
from labeler.store import Store
from tests.app.conftest import seed
from tests.browser.conftest import CHROMIUM, Server, goto_as, serve, sign_in
from tests.browser.test_labeling import OTHER, TAU, decision, expect_decision, press

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def loop_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"browser tests need {CHROMIUM} (apt-get install chromium)")
    home = tmp_path_factory.mktemp("fast-loop")
    db = home / "toolgold.db"
    store = Store(db)
    seed(store)
    store.add_user("root", "admin")
    for name in ("opti", "subby", "lockie", "quick", "reloady", "hasty"):
        store.add_user(name, "annotator", actor="root")
    store.close()
    with serve(db, home) as server:
        yield server


@contextmanager
def write_lock(db: Path) -> Iterator[None]:
    """Another connection holds the SQLite write lock (as a long import does) until the block ends."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def wait_idle(page: Page) -> None:
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " !== 'running'")


def bar_state(page: Page):  # type: ignore[no-untyped-def]
    return page.locator(".tg-bar .tg-state")


def test_a_decision_key_shows_its_effect_before_the_save_is_confirmed(page: Page, loop_server: Server) -> None:
    goto_as(page, f"{loop_server.url}/label?t={TAU}&turn=2", "opti")
    expect_decision(page, None)
    press(page, "3")  # make sure the bar is mounted and idle first
    expect_decision(page, "clarify")
    expect(bar_state(page)).to_have_text("saved · version 1")
    store = loop_server.store()  # opened (and migrated) before the lock: reads go on under it (WAL)
    with write_lock(loop_server.db):  # the store cannot take the next save while this is held
        press(page, "0")
        expect(decision(page, "no_call")).to_have_attribute("aria-pressed", "true", timeout=1_000)
        expect(decision(page, "clarify")).to_have_attribute("aria-pressed", "false", timeout=1_000)
        expect(bar_state(page)).to_have_text("unsaved · saving…", timeout=1_000)
        label = store.get_label(TAU, 2, "opti")
        assert label is not None and (label.body.decision, label.version) == ("clarify", 1)  # not saved yet
    # Released before the busy timeout: the save that was waiting lands, and the bar says so.
    expect(bar_state(page)).to_have_text("saved · version 2")
    expect_decision(page, "no_call")
    label = loop_server.store().get_label(TAU, 2, "opti")
    assert label is not None and (label.body.decision, label.version) == ("no_call", 2)


def test_submit_and_next_right_after_a_key_lands_on_the_next_turn_with_the_previous_saved(
        page: Page, loop_server: Server) -> None:
    goto_as(page, f"{loop_server.url}/label?t={TAU}&turn=2", "subby")
    press(page, "3")
    expect(bar_state(page)).to_have_text("saved · version 1")
    page.locator("body").press("Control+Enter")
    expect(page).to_have_url(re.compile(r"turn=4"), timeout=30_000)
    expect(page.locator(f".tg-bar[data-item='{Item(TAU, 4, 'subby').key}']")).to_be_visible()
    expect_decision(page, None)
    press(page, "1")
    expect(bar_state(page)).to_have_text("saved · version 1")
    store = loop_server.store()
    with write_lock(loop_server.db):  # the submit cannot land yet: the next turn is drawn ahead of it
        page.locator("body").press("Control+Enter")
        bar = page.locator(f".tg-bar[data-ahead='{Item(TAU, 6, 'subby').key}']")
        expect(bar).to_be_visible(timeout=1_000)
        expect(bar.locator(".tg-ahead")).to_contain_text("Decision point 3 of 4", timeout=1_000)
        expect(bar_state(page)).to_have_text("previous turn: submitting…", timeout=1_000)
        label = store.get_label(TAU, 4, "subby")
        assert label is not None and label.status == "draft"
    expect(page).to_have_url(re.compile(r"turn=6"), timeout=30_000)  # the submit lands once the lock is gone
    # The server draws turn 6's own bar; the previous turn's stale elements leave when that run ends.
    expect(page.locator(f".tg-bar[data-item='{Item(TAU, 6, 'subby').key}']")).to_be_visible(timeout=30_000)
    expect(page.locator(".tg-bar")).to_have_count(1, timeout=30_000)
    expect(page.locator(".st-key-progress")).to_have_text("labeled 2/4 turns")
    expect_decision(page, None)
    first, second = store.get_label(TAU, 2, "subby"), store.get_label(TAU, 4, "subby")
    assert first is not None and (first.status, first.body.decision) == ("submitted", "clarify")
    assert second is not None and (second.status, second.body.decision) == ("submitted", "same")
    assert second.body.calls[0].arguments == {"reservation_id": "H9ZU1C"}


@pytest.mark.xfail(strict=False, reason="races under load (about 1 run in 3 on the loaded 2-core machine): a "
                   "decision trigger sent while a run ends can be cleared with it; open, see the fastloop report")
def test_a_key_and_submit_pressed_while_the_server_is_busy_land_in_order(page: Page, loop_server: Server) -> None:
    """The decision waits for the run in progress to end before it is sent; Ctrl+Enter pressed meanwhile
    waits behind it, so the submit carries the decision instead of being refused for lacking one."""
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=2", "quick")
    expect_decision(page, None)
    with write_lock(loop_server.db):
        area = page.get_by_label("Rationale")
        area.click()
        area.type("ask which booking")
        area.press("Tab")  # this save waits on the lock: the script is running
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                               " === 'running'")
        page.keyboard.press("3")
        expect(decision(page, "clarify")).to_have_attribute("aria-pressed", "true", timeout=1_000)
        page.keyboard.press("Control+Enter")
        expect(page.locator(".tg-bar .tg-ahead")).to_contain_text("Decision point 2 of 3", timeout=1_000)
        page.wait_for_timeout(1_500)
    expect(page).to_have_url(re.compile(r"turn=4"), timeout=30_000)
    expect(page.locator(f".tg-bar[data-item='{Item(OTHER, 4, 'quick').key}']")).to_be_visible()
    label = loop_server.store().get_label(OTHER, 2, "quick")
    assert label is not None and (label.status, label.body.decision, label.body.rationale) == (
        "submitted", "clarify", "ask which booking")


def test_a_refused_submit_drops_the_next_turn_drawn_ahead(page: Page, loop_server: Server) -> None:
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=4", "subby")
    press(page, "2")  # different call: the tool is not picked yet, so the submit is refused
    expect(bar_state(page)).to_have_text("saved · version 1")
    page.locator("body").press("Control+Enter")
    expect(page.locator(".st-key-problems")).to_be_visible()
    expect(page.locator(f".tg-bar[data-item='{Item(OTHER, 4, 'subby').key}']")).to_be_visible()
    expect(page.locator(".tg-bar .tg-ahead")).to_be_hidden()
    expect_decision(page, "different")
    assert "turn=4" in page.url


def test_a_save_the_database_is_too_busy_for_is_retried_and_survives_a_reload(
        page: Page, loop_server: Server, artifacts: Path) -> None:
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=2", "lockie")
    expect_decision(page, None)
    typed = "The user has not said which booking: ask first."
    store = loop_server.store()
    wait_idle(page)  # the page's own runs are over: the rationale's run below is the one the lock blocks
    with write_lock(loop_server.db):
        area = page.get_by_label("Rationale")
        area.click()
        area.type(typed)
        area.press("Tab")  # leaving the field saves it: the lock is held past busy_timeout
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                               " === 'running'")
        page.keyboard.press("3")  # while that save still waits on the lock
        expect(decision(page, "clarify")).to_have_attribute("aria-pressed", "true", timeout=1_000)
        # After the busy timeout (10 s) the store gives up: the page says so, keeps the work, no traceback.
        expect(page.locator(".st-key-save-state")).to_contain_text("database busy, retrying", timeout=40_000)
        expect(bar_state(page)).to_have_text("unsaved — database busy, retrying")
        expect(page.get_by_label("Rationale")).to_have_value(typed)
        expect_decision(page, "clarify")
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=artifacts / "label-database-busy.png")
        assert store.get_label(OTHER, 2, "lockie") is None
    # The lock is gone: the retry lands by itself, nothing pressed.
    expect(bar_state(page)).to_contain_text("saved · version", timeout=40_000)
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved")
    label = loop_server.store().get_label(OTHER, 2, "lockie")
    assert label is not None and (label.body.decision, label.body.rationale) == ("clarify", typed)
    page.reload()
    sign_in(page, "lockie")
    expect(page.get_by_label("Rationale")).to_have_value(typed)
    expect_decision(page, "clarify")


def test_a_reload_while_the_database_is_busy_keeps_the_pending_edit_and_saves_it_later(
        page: Page, loop_server: Server, artifacts: Path) -> None:
    """The session held the pending edit; the reload starts a new one. The journal beside the database keeps
    what was typed: restored into the panel, retried, saved once the lock is gone, and then forgotten."""
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=2", "reloady")
    expect_decision(page, None)
    typed = "Two bookings match: ask which one before cancelling."
    store = loop_server.store()
    journal = store.pending_journal()
    wait_idle(page)
    with write_lock(loop_server.db):
        area = page.get_by_label("Rationale")
        area.click()
        area.type(typed)
        area.press("Tab")  # the save waits on the lock past busy_timeout
        page.evaluate("document.activeElement && document.activeElement.blur()")
        expect(page.locator(".st-key-save-state")).to_contain_text("database busy, retrying", timeout=40_000)
        assert store.get_label(OTHER, 2, "reloady") is None
        page.reload()  # a new session, the lock still held
        sign_in(page, "reloady")
        expect(page.locator(".st-key-save-state")).to_contain_text("Unsaved (database was busy) — retrying",
                                                                    timeout=40_000)
        expect(page.get_by_label("Rationale")).to_have_value(typed)
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=artifacts / "label-restored-after-reload.png")
        assert store.get_label(OTHER, 2, "reloady") is None
        assert len(journal.entries()) == 1
    # The lock is gone: the restored edit's retry lands by itself, and only then leaves the journal.
    expect(bar_state(page)).to_contain_text("saved · version", timeout=40_000)
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved")
    label = loop_server.store().get_label(OTHER, 2, "reloady")
    assert label is not None and label.body.rationale == typed
    assert journal.entries() == []
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=2", "reloady")  # a new session reads the store
    expect(page.get_by_label("Rationale")).to_have_value(typed)
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved")


def test_a_reload_while_the_save_still_waits_on_the_lock_keeps_the_edit(page: Page, loop_server: Server) -> None:
    """Reloaded before the store even gave up (the save is still waiting on the lock): the edit was journaled
    before the save was tried, so the new session restores it, and it lands once the lock is gone."""
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&turn=2", "hasty")
    expect_decision(page, None)
    typed = "Reloaded at once: still ask which booking."
    store = loop_server.store()
    wait_idle(page)
    with write_lock(loop_server.db):
        area = page.get_by_label("Rationale")
        area.click()
        area.type(typed)
        area.press("Tab")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                               " === 'running'")  # the save is waiting on the lock
        page.reload()
        sign_in(page, "hasty")
        expect(page.get_by_label("Rationale")).to_have_value(typed, timeout=40_000)
        expect(page.locator(".st-key-save-state")).to_contain_text("Unsaved (database was busy) — retrying")
        assert store.get_label(OTHER, 2, "hasty") is None
    expect(bar_state(page)).to_contain_text("saved · version", timeout=40_000)
    label = loop_server.store().get_label(OTHER, 2, "hasty")
    assert label is not None and label.body.rationale == typed
    assert store.pending_journal().entries() == []
    assert page.get_by_test_id("stException").count() == 0
