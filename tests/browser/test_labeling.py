"""An annotator labels in real Chromium against ``streamlit run``: keyboard, reload, conflict, export."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.app.editing import Item
from tests.browser.conftest import Server, goto_as, sign_in

pytestmark = pytest.mark.browser

TAU = "tau-airline-task10-trial1"  # decision points at messages 2 (asks for the id), 4 (lookup), 6, 8 (transfer)
OTHER = "tau-airline-task35-trial3"


def decision(page: Page, name: str):  # type: ignore[no-untyped-def]
    """The decision bar's button for ``name`` (the bar is a custom component: its buttons are its own)."""
    return page.locator(f".tg-bar button[data-decision='{name}']")


def expect_decision(page: Page, chosen: str | None) -> None:
    """Exactly one decision bar is on screen (a rerun briefly shows the old one too) and ``chosen`` is
    pressed, the others not."""
    for name in ("no_call", "same", "different", "clarify"):
        expect(decision(page, name)).to_have_count(1)
        expect(decision(page, name)).to_have_attribute("aria-pressed", "true" if name == chosen else "false")


def at_turn(page: Page, turn: int, done: int, *, transcript: str = TAU, user: str = "ann", of: int = 4) -> None:
    """Wait until the panel of ``turn`` is on screen (the URL changes before the page does, and a key pressed
    on the previous turn's buttons is dropped by design)."""
    page.wait_for_url(f"**turn={turn}**")
    expect(page.locator(".st-key-progress")).to_have_text(f"labeled {done}/{of} turns")
    expect(page.locator(f".tg-bar[data-item='{Item(transcript, turn, user).key}'] "
                        "button[data-decision='same']")).to_be_visible()


def expect_saved(page: Page, version: int) -> None:
    expect(page.locator(".st-key-save-state")).to_contain_text(f"· version {version}")


PANEL_BUTTONS = (".tg-bar button[data-decision='no_call']", "[class*='st-key-submit-'] button")


def press(page: Page, key: str, owners: tuple[str, ...] = PANEL_BUTTONS) -> None:
    """Press ``key`` with the focus on the page (not in a field) once the app is idle and the buttons that own
    the shortcuts are on screen (they mount a moment after the text around them)."""
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'")
    for owner in owners:
        expect(page.locator(owner).first).to_be_visible()
    page.locator("body").press(key)


def test_an_annotator_labels_a_transcript_with_the_keyboard(page: Page, server: Server, artifacts: Path) -> None:
    goto_as(page, f"{server.url}/label", "ann")
    press(page, "n", owners=(".st-key-start button",))  # start: lease the first transcript with unlabeled turns
    page.wait_for_url(f"**t={TAU}**")
    at_turn(page, 2, 0)

    # Turn 1: the agent asked for the user id: "should ask the user".
    press(page, "3")
    expect_decision(page, "clarify")
    expect_saved(page, 1)
    press(page, "Control+Enter")
    at_turn(page, 4, 1)

    # Turn 2: a call with arguments, the same as the agent's.
    press(page, "1")
    expect_decision(page, "same")
    expect(page.get_by_label("reservation_id *")).to_have_value("H9ZU1C")
    expect_saved(page, 1)
    page.screenshot(path=artifacts / "label-call.png")
    press(page, "Control+Enter")
    at_turn(page, 6, 2)

    # Turn 3: no call. Reload mid-way: the draft and the place are still there.
    press(page, "0")
    expect_saved(page, 1)
    page.reload()  # a new session: the name is asked again (never taken from the URL), the place is kept
    sign_in(page, "ann")
    expect_decision(page, "no_call")
    expect(page.locator(".st-key-save-state")).to_contain_text("Draft saved")
    assert f"t={TAU}" in page.url and "turn=6" in page.url and "user=" not in page.url
    press(page, "Control+Enter")
    at_turn(page, 8, 3)

    # Turn 4: the transfer, as the agent did it; then the queue moves on to the next transcript.
    press(page, "1")
    expect_decision(page, "same")
    expect_saved(page, 1)
    press(page, "Control+Enter")
    page.wait_for_url(f"**t={OTHER}**")
    at_turn(page, 2, 0, transcript=OTHER, of=3)
    page.screenshot(path=artifacts / "label-next-transcript.png")

    store = server.store()
    cases = {case_id: store.get_gold(case_id) for case_id in (f"{TAU}#t2", f"{TAU}#t4", f"{TAU}#t6", f"{TAU}#t8")}
    assert {k: v.expected.behavior for k, v in cases.items()} == {
        f"{TAU}#t2": "clarify", f"{TAU}#t4": "call", f"{TAU}#t6": "no_call", f"{TAU}#t8": "call"}
    assert cases[f"{TAU}#t4"].expected.calls[0].arguments == {"reservation_id": "H9ZU1C"}
    assert all(c.provenance.annotators == ("ann",) for c in cases.values())

    # And the labels leave through the CLI export.
    env = {**os.environ, "TOOLGOLD_DB": str(server.db)}
    out = subprocess.run([sys.executable, "-m", "labeler.cli", "export", "--status", "submitted"], env=env,
                         capture_output=True, text=True, check=True).stdout
    exported = [json.loads(line) for line in out.splitlines()]
    assert {c["id"] for c in exported} >= set(cases)


def test_shortcuts_do_not_fire_while_typing(page: Page, server: Server) -> None:
    goto_as(page, f"{server.url}/label?t={OTHER}&turn=2", "cat")
    area = page.get_by_label("Rationale")
    area.click()
    area.type("option 0 or 3? then 1, 2")
    area.press("Tab")  # leave the field: the text is saved
    expect_saved(page, 1)
    expect(area).to_have_value("option 0 or 3? then 1, 2")
    expect_decision(page, None)
    assert "turn=2" in page.url


def test_a_second_window_editing_the_same_turn_gets_the_conflict(browser: Browser, server: Server,
                                                                  artifacts: Path) -> None:
    url = f"{server.url}/label?t={OTHER}&turn=4"
    first, second = browser.new_context(viewport={"width": 1400, "height": 1000}), browser.new_context(
        viewport={"width": 1400, "height": 1000})
    try:
        a, b = first.new_page(), second.new_page()
        goto_as(a, url, "bob")
        goto_as(b, url, "bob")
        expect(a.locator(".st-key-save-state")).to_contain_text("Not saved yet")
        expect(b.locator(".st-key-save-state")).to_contain_text("Not saved yet")
        press(a, "0")
        expect_saved(a, 1)
        press(b, "3")
        conflict = b.locator(".st-key-conflict")
        expect(conflict).to_contain_text("This label was changed elsewhere")
        expect(conflict).to_contain_text("nothing was overwritten")
        expect(conflict.get_by_test_id("stCode").first).to_have_text(
            'decision:\n  yours: "clarify"\n  saved: "no_call"')
        b.screenshot(path=artifacts / "label-conflict.png")
        assert server.store().get_label(OTHER, 4, "bob").body.decision == "no_call"  # type: ignore[union-attr]
        b.get_by_role("button", name="Keep the saved version").click()
        expect(conflict).to_have_count(0)
        expect_decision(b, "no_call")
    finally:
        first.close()
        second.close()


def test_labeling_a_hostile_transcript_keeps_everything_inert(page: Page, server: Server, artifacts: Path) -> None:
    goto_as(page, f"{server.url}/label?t=xss-probe&turn=2", "cat")
    press(page, "1")  # same as observed: the agent's hostile arguments land in the editor
    expect_decision(page, "same")
    text = page.get_by_label("text *")
    expect(text).to_have_value("<script>alert('arg')</script>![tracker](http://203.0.113.9/markdown.png)")
    expect(page.get_by_label("url")).to_have_value("http://203.0.113.9/arg.png")
    page.get_by_text("Match rules").click()
    page.get_by_text("Tools offered at this point").click()
    expect(page.locator(".st-key-tool-save_note")).to_contain_text("![tracker](http://203.0.113.9/markdown.png)")
    expect(page.locator(".st-key-decision-point")).to_contain_text("Looking up <b>your</b> note")
    main = page.get_by_test_id("stMain")
    assert main.locator("img[src*='203.0.113.9'], iframe, a[href*='203.0.113.9'], b").count() == 0
    page.screenshot(path=artifacts / "label-xss.png")
    page.wait_for_timeout(500)  # give a stray fetch time to show up in the log
    assert page.requests.outside() == [], page.requests.outside()  # type: ignore[attr-defined]


def test_arrows_and_j_k_move_between_decision_points(page: Page, server: Server) -> None:
    goto_as(page, f"{server.url}/label?t=xss-probe&turn=2", "cat")
    press(page, "ArrowRight")
    at_turn(page, 4, 0, transcript="xss-probe", user="cat", of=2)
    press(page, "k")
    at_turn(page, 2, 0, transcript="xss-probe", user="cat", of=2)
    press(page, "j")
    at_turn(page, 4, 0, transcript="xss-probe", user="cat", of=2)
    press(page, "ArrowLeft")
    at_turn(page, 2, 0, transcript="xss-probe", user="cat", of=2)
