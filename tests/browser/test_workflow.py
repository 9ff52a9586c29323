"""The labeling workflow a team adopts (issue 16) in real Chromium: the panel's layout and editors."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from labeler.app.editing import Item
from tests.app import long_transcripts
from tests.browser.conftest import REPO, Server, goto_as
from tests.browser.test_labeling import TAU, press

pytestmark = pytest.mark.browser


def idle(page: Page) -> None:
    page.wait_for_timeout(100)  # a rerun starts a moment after the click that causes it
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'")


def pick_option(page: Page, box: Locator, typed: str, option: str) -> None:
    """Open ``box``, type to search and click ``option``, as a person does — and again if the list closed
    under the pointer: since stop 20 the list sometimes closes as it opens here (no rerun is sent; cause not
    found, noted in the closing note), and a person would simply open it again. Three tries at most."""
    for _ in range(3):
        box.click()
        page.keyboard.press("ControlOrMeta+A")
        page.keyboard.type(typed)
        try:
            page.get_by_role("option", name=option).click(timeout=3_000)
            return
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    raise AssertionError(f"the list never stayed open long enough to pick {option!r}")


def on_turn(page: Page, transcript: str, turn: int, user: str) -> None:
    """Wait until this turn's panel is on screen (whatever other tests labeled before)."""
    page.wait_for_url(f"**turn={turn}**")
    expect(page.locator(f".tg-bar[data-item='{Item(transcript, turn, user).key}'] "
                        "button[data-decision='no_call']")).to_be_visible()


def tau_copy(server: Server, copy_id: str) -> str:
    """The tau-bench transcript under another id: this file's tests hold no lease or gold on the shared one."""
    from labeler.store import ImportItem
    from scorer.model import Transcript

    store = server.store()
    if not store.list_transcripts(search=copy_id):
        line = (REPO / "tests" / "data" / "app" / "tau_airline.jsonl").read_text().splitlines()[0]
        tr = Transcript.model_validate_json(line)
        assert tr.id == TAU
        store.import_items([ImportItem(tr.model_copy(update={"id": copy_id}), "copy")])
    store.close()
    return copy_id


def user(server: Server, name: str) -> str:
    store = server.store()
    if store.get_user(name) is None:
        store.add_user(name, "annotator", actor="root")
    store.close()
    return name


def test_the_match_rule_editor_stays_open_and_shows_every_argument_name_whole(page: Page, server: Server) -> None:
    name, tid = user(server, "dora"), tau_copy(server, "tau-copy-rules")
    goto_as(page, f"{server.url}/label?t={tid}&turn=4", name)
    on_turn(page, tid, 4, name)
    press(page, "1")  # same as observed: get_reservation_details(reservation_id="H9ZU1C")
    expect(page.locator(".tg-bar button[data-decision='same']")).to_have_attribute("aria-pressed", "true")
    editor = page.locator(".st-key-call-editor-0")
    editor.get_by_text("Match rules").click()
    row = page.locator(".st-key-rule-row-0-reservation_id")
    expect(row).to_have_text('reservation_id = "H9ZU1C"')
    rules = editor.get_by_test_id("stExpander").locator("details")
    expect(rules).to_have_attribute("open", "")
    idle(page)  # opening the expander reruns (its state is kept on the server)
    pick_option(page, editor.get_by_test_id("stExpander").get_by_role("combobox").first, "case", "case-insensitive")
    expect(page.locator(".st-key-save-state")).to_contain_text("· version 2")
    page.wait_for_timeout(300)  # a rerun that closed it would have drawn by now
    expect(rules).to_have_attribute("open", "")
    box = row.bounding_box()
    assert box is not None and box["height"] < 40  # on one line, not broken inside the name


def test_the_turn_header_decision_bar_and_submit_stay_in_view_while_the_panel_scrolls(
        page: Page, server: Server) -> None:
    name, tid = user(server, "eve"), tau_copy(server, "tau-copy-sticky")
    goto_as(page, f"{server.url}/label?t={tid}&turn=2", name)
    on_turn(page, tid, 2, name)
    press(page, "2")  # different call: the tool picker, then a long editor
    idle(page)
    page.get_by_role("combobox", name="Which tool should the agent call?").click()
    page.keyboard.type("book_res")
    page.get_by_role("option", name="book_reservation").click()
    expect(page.get_by_role("combobox", name="Tool (call 1)")).to_have_value("book_reservation")
    expect(page.locator("[class*='st-key-err-']")).to_have_count(0)  # nothing touched yet: no errors
    panel = page.locator(".st-key-label-panel")
    panel.evaluate("el => el.scrollTo(0, el.scrollHeight)")  # the panel to its end
    page.mouse.move(500, 500)  # over the conversation: the page to its end
    page.mouse.wheel(0, 5000)
    time.sleep(0.3)
    height = page.viewport_size["height"]  # type: ignore[index]
    for part in (".st-key-panel-head", ".tg-bar button[data-decision='no_call']", "[class*='st-key-submit-'] button"):
        box = page.locator(part).first.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= height, (part, box)
    expect(page.locator(".st-key-panel-head")).to_contain_text("Decision point 1 of 4")
    assert panel.evaluate("el => el.scrollTop") > 0  # the panel itself scrolled


def test_a_2_mb_message_without_whitespace_opens_at_once(page: Page, server: Server) -> None:
    store = server.store()
    if store.get_user("fay") is None:
        store.add_user("fay", "annotator", actor="root")
        long_transcripts.add(store, long_transcripts.many_turns("huge-browser", 2, long_message="y" * 2_000_000))
    store.close()
    goto_as(page, f"{server.url}/label?t=huge-browser&turn=2", "fay")
    on_turn(page, "huge-browser", 2, "fay")
    expect(page.get_by_text("Show all 2,000,000 characters")).to_be_visible()
    press(page, "3")
    expect(page.locator(".st-key-save-state")).to_contain_text("· version 1")


def test_team_setup_is_listed_in_the_sidebar_without_view_more(page: Page, server: Server) -> None:
    goto_as(page, f"{server.url}/", "root")  # the default page lives at /
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_text("Team setup: users, tags, overlap")).to_be_visible()
    expect(nav.get_by_text(re.compile(r"^View (\d+ more|less)$"))).to_have_count(0)  # no "View N more" fold


def test_a_submitted_turn_ignores_decision_keys_until_e_and_escape_discards_the_edit(
        page: Page, server: Server) -> None:
    name = user(server, "gus")
    store = server.store()
    tid = "edit-browser"  # its own transcript: the shared ones keep no gold from this test
    if not store.list_transcripts(search=tid):
        long_transcripts.add(store, long_transcripts.many_turns(tid, 3))
    store.close()
    goto_as(page, f"{server.url}/label?t={tid}&turn=2", name)
    on_turn(page, tid, 2, name)
    press(page, "3")
    expect(page.locator(".st-key-save-state")).to_contain_text("· version 1")
    press(page, "Control+Enter")
    on_turn(page, tid, 4, name)
    goto_as(page, f"{server.url}/label?t={tid}&turn=2", name)
    expect(page.locator(".st-key-submitted-label")).to_be_visible()
    press(page, "0", owners=("[class*='st-key-edit-'] button",))  # a stray key: nothing happens
    page.wait_for_timeout(500)
    store = server.store()
    label = store.get_label(tid, 2, name)
    assert label is not None and (label.status, label.body.decision, label.version) == ("submitted", "clarify", 2)
    press(page, "e", owners=("[class*='st-key-edit-'] button",))
    expect(page.locator(".st-key-editing-submitted")).to_be_visible()
    press(page, "0", owners=("[class*='st-key-discard-'] button",))
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved")
    press(page, "Escape", owners=("[class*='st-key-discard-'] button",))
    expect(page.locator(".st-key-submitted-label")).to_be_visible()
    label = store.get_label(tid, 2, name)
    assert label is not None and (label.status, label.body.decision) == ("submitted", "clarify")
    store.close()
