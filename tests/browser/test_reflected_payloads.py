"""Reflected and stored Markdown payloads in real Chromium: no request leaves 127.0.0.1, no link appears.

Streamlit renders ``st.error`` / ``st.warning`` / ``st.success`` / captions / table cells as Markdown, so an
id from the URL or the database that reaches one of them unescaped loads a remote image without a click and
shows a phishing link inside the trusted app. Each payload below did that through one way in.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from labeler.store import Store, score_and_save
from labeler.store.history import RunMeta
from tests.app.conftest import seed
from tests.browser.conftest import Server, goto_as, serve
from tests.history.kit import FAULTS, agent_runs, gold_cases

pytestmark = pytest.mark.browser

HOST = "203.0.113.9"
PAYLOAD = f"x ![](http://{HOST}/beacon.png) [Sign in again](http://{HOST}/login) www.{HOST}.example"
STORED_RUN = f"run ![](http://{HOST}/stored.png) [docs](http://{HOST}/docs)"
STORED_GOLD = f"gold-![](http://{HOST}/gold.png)"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("hostile-server")
    db = home / "toolgold.db"
    store = Store(db)
    seed(store)
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    cases = [c.model_copy(update={"provenance": c.provenance.model_copy(update={"gold_version": STORED_GOLD})})
             for c in gold_cases()]
    for run_id in ("plain-run", STORED_RUN):
        runs = agent_runs(cases, FAULTS["v1"], run_id=run_id, model=f"model [m](http://{HOST}/m)")
        score_and_save(store, cases, runs, RunMeta(label=f"label ![](http://{HOST}/label.png)"))
    store.close()
    with serve(db, home) as server:
        yield server


def no_link_and_nothing_outside(page: Page) -> None:
    page.wait_for_timeout(500)  # an image would be fetched as soon as it renders
    found = page.evaluate("() => [...document.querySelectorAll('a[href], img[src]')].map(e => "
                          "[new URL(e.href || e.src, location.href).hostname, e.parentElement.outerHTML.slice(0, 300)])")
    assert [html for host, html in found if host != "127.0.0.1"] == []  # the app's own page links only
    assert page.requests.outside() == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("path", "shown"), [
    (f"/?t={quote(PAYLOAD)}", "no transcript"),
    (f"/run?run={quote(PAYLOAD)}", "no saved run"),
    (f"/run?run=plain-run&case={quote(PAYLOAD)}", "has no result for case"),
], ids=["t", "run", "case"])
def test_reflected_url_values_render_inert(page: Page, hostile: Server, artifacts: Path, path: str,
                                           shown: str) -> None:
    goto_as(page, hostile.url + path, "rita")
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_contain_text(shown)
    expect(error).to_contain_text(f"[Sign in again](http://{HOST}/login)")  # shown as typed, not as a link
    no_link_and_nothing_outside(page)


def test_stored_run_ids_gold_versions_and_labels_render_inert(page: Page, hostile: Server, artifacts: Path) -> None:
    goto_as(page, f"{hostile.url}/runs", "rita")
    expect(page.locator(".st-key-runs-table")).to_contain_text(STORED_RUN)
    no_link_and_nothing_outside(page)
    goto_as(page, f"{hostile.url}/run?run={quote(STORED_RUN)}", "rita")
    expect(page.get_by_text(f"gold {STORED_GOLD}", exact=False)).to_be_visible()
    no_link_and_nothing_outside(page)
    goto_as(page, f"{hostile.url}/compare?a=plain-run&b={quote(STORED_RUN)}", "rita")
    expect(page.get_by_text(f"Gold version {STORED_GOLD}", exact=False)).to_be_visible()
    page.screenshot(path=artifacts / "hostile-compare.png", full_page=True)
    no_link_and_nothing_outside(page)
