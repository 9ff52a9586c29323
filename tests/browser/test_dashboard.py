"""The run-history dashboards in real Chromium against ``streamlit run``, with three runs saved in its database
(scored through the Python API from agents with chosen faults: tests/history/kit.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server, goto_as, sign_in
from tests.history.kit import seed_three_runs

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def three_runs(server: Server) -> Server:
    store = server.store()
    try:
        if not store.list_runs():
            seed_three_runs(store)
    finally:
        store.close()
    return server


def test_a_click_on_the_tool_that_dropped_lands_on_its_failing_cases(
        page: Page, three_runs: Server, artifacts: Path) -> None:
    goto_as(page, f"{three_runs.url}/runs", "root")
    expect(page.locator(".st-key-tool-summary")).to_contain_text(
        "1 tool(s) dropped by more than 5 points since the run before: search_orders 91.7% → 66.7%")
    flagged = page.locator(".st-key-tool-flagged-0")
    # Waits until the row has rendered (all_inner_texts() reads once, and read an empty row under load).
    expect(flagged.get_by_test_id("stText")).to_have_text(
        ["search_orders", "100.0%", "91.7%", "66.7%", "12 results"])
    expect(flagged).to_contain_text("-25.0 pts")
    expect(page.locator("div[class*='st-key-tool-row-']")).to_have_count(5)
    page.screenshot(path=artifacts / "dashboard-history.png", full_page=True)

    flagged.get_by_role("link", name="4 failing").click()
    page.wait_for_url("**/run?**")
    assert "run=run-v3" in page.url and "tool=search_orders" in page.url
    expect(page.locator(".st-key-case-filter")).to_contain_text("4 failing: expecting search_orders")
    rows = page.locator("div[class*='st-key-case-row-']")
    expect(rows).to_have_count(4)
    for n, case_id in enumerate(["search_orders-00", "search_orders-01", "search_orders-02", "search_orders-03"]):
        expect(rows.nth(n).get_by_test_id("stText").first).to_have_text(case_id)
    expect(rows.nth(3)).to_contain_text("search_orders → get_order")

    # Open one: the gold call and the agent's call side by side, the context under them.
    page.locator(".st-key-case-row-3").get_by_role("link", name="Open").click()
    page.wait_for_url("**case=search_orders-03**")
    expect(page.locator(".st-key-err-0")).to_contain_text("wrong_tool: called get_order where search_orders was expected")
    gold, actual = page.locator(".st-key-gold-side"), page.locator(".st-key-actual-side")
    expect(gold).to_contain_text("search_orders")
    expect(gold.get_by_test_id("stCode")).to_contain_text('"customer_id": "C-1003"')
    expect(actual).to_contain_text("get_order")
    expect(actual.get_by_test_id("stCode")).to_contain_text('"customer_id": "C-1003"')
    expect(page.locator(".st-key-case-context")).to_contain_text("Show me the orders of customer C-1003.")
    page.screenshot(path=artifacts / "dashboard-failing-cases.png", full_page=True)

    # The URL holds the place: a reload shows the same case.
    page.reload()
    sign_in(page, "root")
    expect(page.locator(".st-key-actual-side")).to_contain_text("get_order")
    expect(page.locator("div[class*='st-key-case-row-']")).to_have_count(4)
    assert page.requests.outside() == []  # type: ignore[attr-defined]


def test_compare_from_the_history_page(page: Page, three_runs: Server, artifacts: Path) -> None:
    goto_as(page, f"{three_runs.url}/runs", "root")
    page.get_by_role("link", name="Compare the last two runs").click()
    page.wait_for_url("**/compare?**")
    expect(page.locator(".st-key-mcnemar")).to_contain_text(
        "74 paired results; 3 fixed vs 3 broken — not significant at 0.05: could be noise.")
    expect(page.locator("div[class*='st-key-broken-']")).to_have_count(3)
    page.locator(".st-key-broken-2").get_by_role("link", name="Open").click()
    page.wait_for_url("**case=search_orders-03**")
    expect(page.locator(".st-key-actual-side")).to_contain_text("get_order")
    page.screenshot(path=artifacts / "dashboard-compare-open.png", full_page=True)
