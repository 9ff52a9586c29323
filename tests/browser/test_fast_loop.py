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
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from labeler.app.editing import Item
from labeler.labels import LabelBody
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
    for name in ("opti", "subby", "lockie", "quick", "lossy", "comer", "keeper", "plain", "reloady", "hasty", "trajy"):
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


def test_a_key_and_submit_pressed_while_the_server_is_busy_land_in_order(page: Page, loop_server: Server) -> None:
    """The decision waits for the run in progress to end before it is sent (and is sent again until Python
    acknowledges it); Ctrl+Enter pressed before that acknowledgement goes through the bar as one event that
    carries the decision, so the submit lands with it instead of being refused for lacking one."""
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


class Wire:
    """The page's websocket to the Streamlit server, passed through message by message; it can drop the
    browser's next message, or keep a copy of it to send again later (a lost or a repeated event)."""

    def __init__(self, page: Page) -> None:
        self.drop = 0
        self.keep = False
        self.kept: list[str | bytes] = []
        self.servers: list[WebSocketRoute] = []
        page.route_web_socket(re.compile(r".*/_stcore/stream"), self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        self.servers.append(server)

        def up(message: str | bytes) -> None:
            if self.drop:
                self.drop -= 1
                return
            if self.keep:
                self.keep = False
                self.kept.append(message)
            server.send(message)

        ws.on_message(up)
        server.on_message(ws.send)

    def replay(self) -> None:
        self.servers[-1].send(self.kept.pop())


def test_a_lost_decision_is_sent_again_and_a_repeated_one_is_applied_at_most_once(
        page: Page, loop_server: Server) -> None:
    wire = Wire(page)
    goto_as(page, f"{loop_server.url}/label?t={TAU}&turn=2", "lossy")
    expect_decision(page, None)
    wait_idle(page)
    wire.drop = 1  # the message that carries the key's event never reaches the server
    press(page, "3")
    expect(decision(page, "clarify")).to_have_attribute("aria-pressed", "true", timeout=1_000)
    expect(bar_state(page)).to_have_text("saved · version 1", timeout=15_000)  # sent again, applied
    assert wire.drop == 0
    label = loop_server.store().get_label(TAU, 2, "lossy")
    assert label is not None and (label.body.decision, label.version) == ("clarify", 1)
    wait_idle(page)
    wire.keep = True  # this event reaches the server, and a copy of it is kept
    press(page, "0")
    expect(bar_state(page)).to_have_text("saved · version 2")
    wait_idle(page)
    press(page, "3")
    expect(bar_state(page)).to_have_text("saved · version 3")
    wait_idle(page)
    wire.replay()  # the "0" arrives again, after the "3" that replaced it: dropped, not applied over it
    page.wait_for_timeout(1_500)
    wait_idle(page)
    expect_decision(page, "clarify")
    label = loop_server.store().get_label(TAU, 2, "lossy")
    assert label is not None and (label.body.decision, label.version) == ("clarify", 3)


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


def test_a_trajectory_save_the_database_is_too_busy_for_is_retried_by_itself(
        page: Page, loop_server: Server, artifacts: Path) -> None:
    """The trajectory panel has no decision bar: before, a busy save was retried only on the panel's next run
    (the annotator's next change), so "database busy, retrying" stayed on screen after the lock was gone."""
    goto_as(page, f"{loop_server.url}/label?t={OTHER}&view=Trajectory", "trajy")
    expect(page.locator(".st-key-trajectory-panel")).to_be_visible()
    typed = "The agent should look the booking up before cancelling."
    store = loop_server.store()
    wait_idle(page)
    with write_lock(loop_server.db):
        area = page.get_by_label("Rationale")
        area.click()
        area.type(typed)
        area.press("Tab")  # leaving the field saves it: the lock is held past busy_timeout
        expect(page.locator(".st-key-save-state")).to_contain_text("database busy, retrying", timeout=40_000)
        expect(page.get_by_label("Rationale")).to_have_value(typed)
        assert page.get_by_test_id("stException").count() == 0
        page.screenshot(path=artifacts / "trajectory-database-busy.png")
        assert store.get_trajectory_label(OTHER, "trajy") is None
    # The lock is gone: the retry lands by itself, nothing pressed, nothing typed.
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved", timeout=20_000)
    label = loop_server.store().get_trajectory_label(OTHER, "trajy")
    assert label is not None and label.body.rationale == typed
    assert page.get_by_test_id("stException").count() == 0


# Decision-bar behaviours the AppTests claim through the hidden fallback buttons, here through the real
# component (the fallback buttons are hidden by CSS and own no shortcut).


def test_the_bar_shows_what_another_tab_saved_meanwhile_when_coming_back(page: Page, loop_server: Server) -> None:
    goto_as(page, f"{loop_server.url}/label?t={TAU}&turn=4", "comer")
    press(page, "0")
    expect(bar_state(page)).to_have_text("saved · version 1")
    press(page, "ArrowRight")
    expect(page.locator(f".tg-bar[data-item='{Item(TAU, 6, 'comer').key}']")).to_be_visible()
    loop_server.store().save_label(TAU, 4, "comer", LabelBody(decision="clarify"), version=1)  # another tab
    press(page, "ArrowLeft")
    expect(page.locator(f".tg-bar[data-item='{Item(TAU, 4, 'comer').key}']")).to_be_visible()
    expect_decision(page, "clarify")
    expect(bar_state(page)).to_have_text("saved · version 2")
    press(page, "0")  # and saving again is no conflict
    expect(bar_state(page)).to_have_text("saved · version 3")
    assert page.locator(".st-key-conflict").count() == 0
    label = loop_server.store().get_label(TAU, 4, "comer")
    assert label is not None and (label.body.decision, label.version) == ("no_call", 3)


def test_same_as_observed_is_disabled_where_the_agent_made_no_call(page: Page, loop_server: Server) -> None:
    goto_as(page, f"{loop_server.url}/label?t={TAU}&turn=2", "plain")  # the agent asked for the user id
    expect(decision(page, "same")).to_be_disabled()
    expect(decision(page, "same")).to_have_attribute("title", "The agent made no call here")
    press(page, "1")  # nothing to be the same as: the key does nothing
    expect_decision(page, None)
    expect(bar_state(page)).to_have_text("not saved yet")
    wait_idle(page)
    assert loop_server.store().get_label(TAU, 2, "plain") is None
    press(page, "2")  # different call still can
    expect_decision(page, "different")
    expect(bar_state(page)).to_have_text("saved · version 1")


def test_keep_mine_after_a_conflict_saves_the_bars_decision_over_the_newer_version(
        browser: Browser, loop_server: Server) -> None:
    url = f"{loop_server.url}/label?t={OTHER}&turn=4"
    first, second = browser.new_context(viewport={"width": 1400, "height": 1000}), browser.new_context(
        viewport={"width": 1400, "height": 1000})
    try:
        a, b = first.new_page(), second.new_page()
        goto_as(a, url, "keeper")
        goto_as(b, url, "keeper")
        expect(b.locator(".st-key-save-state")).to_contain_text("Not saved yet")
        press(a, "0")
        expect(bar_state(a)).to_have_text("saved · version 1")
        press(b, "3")
        expect(b.locator(".st-key-conflict")).to_contain_text("This label was changed elsewhere")
        b.get_by_role("button", name="Keep mine").click()
        expect(b.locator(".st-key-conflict")).to_have_count(0)
        expect_decision(b, "clarify")
        expect(bar_state(b)).to_have_text("saved · version 2")
        label = loop_server.store().get_label(OTHER, 4, "keeper")
        assert label is not None and (label.body.decision, label.version) == ("clarify", 2)
    finally:
        first.close()
        second.close()


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
