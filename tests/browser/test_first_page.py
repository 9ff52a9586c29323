"""What a person sees on the first page, in real Chromium against ``streamlit run``."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server, goto_as, sign_in

pytestmark = pytest.mark.browser


def open_transcript(page: Page, server: Server, transcript_id: str) -> None:
    goto_as(page, server.url, "ann")
    row = page.locator("div[class*='st-key-tx-row-']", has_text=transcript_id)
    row.get_by_role("button", name="Open").click()
    expect(page.get_by_role("heading", name="Transcript", exact=True)).to_be_visible()


def test_transcript_list_shows_sources_turns_and_label_counts(page: Page, server: Server, artifacts: Path) -> None:
    goto_as(page, server.url, "ann")
    row = page.locator("div[class*='st-key-tx-row-']", has_text="tau-airline-task10-trial1")
    expect(row).to_be_visible()
    cells = row.get_by_test_id("stText").all_inner_texts()
    assert cells[:2] == ["tau-airline-task10-trial1", "tau-bench"]
    assert cells[3:] == ["4", "2", "0", "4"]  # turns, tool calls, labeled, unlabeled
    expect(page.locator("div[class*='st-key-tx-row-']")).to_have_count(3)
    page.screenshot(path=artifacts / "transcripts-list.png", full_page=True)


def test_an_opened_transcript_reads_as_a_conversation(page: Page, server: Server, artifacts: Path) -> None:
    open_transcript(page, server, "tau-airline-task10-trial1")
    assert "t=tau-airline-task10-trial1" in page.url
    user = page.locator(".st-key-msg-1")
    expect(user.get_by_test_id("stChatMessage")).to_contain_text("remove Ethan from it")
    card = page.locator(".st-key-call-4-0")
    expect(card).to_contain_text("get_reservation_details")
    expect(card.get_by_test_id("stCode")).to_contain_text('"reservation_id": "H9ZU1C"')
    result = page.locator(".st-key-result-5")
    expect(result).to_contain_text('↳ get_reservation_details → {"reservation_id": "H9ZU1C"')
    # Collapsed: the full result is in a closed expander until asked for.
    details = result.get_by_test_id("stExpander").locator("details")
    expect(details).not_to_have_attribute("open", "")
    expect(result.get_by_test_id("stCode")).not_to_be_visible()
    result.get_by_text("Full result").click()
    expect(result.get_by_test_id("stCode")).to_contain_text('"flight_number": "HAT192"')
    page.screenshot(path=artifacts / "transcript-view.png", full_page=True)
    # A reload resumes at the same transcript (its id is in the URL).
    page.reload()  # a new session asks the name again (never from the URL); the place is kept
    sign_in(page, "ann")
    expect(page.locator(".st-key-call-4-0")).to_contain_text("get_reservation_details")


def test_hostile_transcript_renders_as_text_and_fetches_nothing_outside(
        page: Page, server: Server, artifacts: Path) -> None:
    open_transcript(page, server, "xss-probe")
    user = page.locator(".st-key-msg-1")
    expect(user).to_contain_text("<script>alert('user')</script>")
    expect(user).to_contain_text('<img src="http://203.0.113.9/pixel.png" onerror="alert(2)">')
    expect(user).to_contain_text("![tracker](http://203.0.113.9/markdown.png)")
    expect(user).to_contain_text("[docs](http://203.0.113.9/link) **bold?**")
    page.locator(".st-key-result-3").get_by_text("Full result").click()
    expect(page.locator(".st-key-result-3").get_by_test_id("stCode")).to_contain_text("<iframe")
    page.get_by_text("Tools offered").click()
    expect(page.locator(".st-key-tool-save_note")).to_contain_text('<img src="http://203.0.113.9/desc.png">')
    # Nothing became markup: no image, script, iframe or link from the transcript exists in the page.
    app = page.get_by_test_id("stMain")
    assert app.locator("img[src*='203.0.113.9'], iframe, a[href*='203.0.113.9']").count() == 0
    assert page.evaluate("() => [...document.scripts].filter(s => s.text.includes('alert')).length") == 0
    page.screenshot(path=artifacts / "xss-transcript.png", full_page=True)
    page.wait_for_timeout(500)  # give a stray fetch time to show up in the log
    assert page.requests.outside() == [], page.requests.outside()  # type: ignore[attr-defined]
    assert any("127.0.0.1" in u for u in page.requests.urls)  # type: ignore[attr-defined]
