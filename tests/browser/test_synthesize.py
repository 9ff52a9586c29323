"""A reviewer proposes adversarial cases on the Gold set page and an annotator labels one, in real Chromium
against ``streamlit run`` on its own database (the demo, its ToolTalk call cases tagged happy_path)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.labels import gold_case_id
from labeler.store import ImportItem, Store
from scorer.formats import iter_json_lines, parse_record
from scorer.model import GoldCase
from tests.browser.conftest import CHROMIUM, REPO, Server, _wait_healthy, free_port, goto_as
from tests.browser.test_labeling import expect_decision, press

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"browser tests need {CHROMIUM} (apt-get install chromium)")
    home = tmp_path_factory.mktemp("synth-server")
    db = home / "toolgold.db"
    store = Store(db)
    items = []
    for path in sorted((REPO / "data" / "demo").glob("*.jsonl")):
        for n, value in iter_json_lines(path.read_bytes().splitlines(), str(path)):
            record = parse_record(value, source=str(path), line=n)
            if isinstance(record, GoldCase) and record.provenance.source == "tooltalk" and record.expected.calls:
                record = record.model_copy(update={"tags": ("happy_path", *record.tags)})
            items.append(ImportItem(record, source=str(path), line=n))
    store.import_items(items)
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    store.add_user("ann", "annotator", actor="root")
    store.close()
    port = free_port()
    log = home / "streamlit.log"
    cmd = [sys.executable, "-m", "streamlit", "run", str(REPO / "labeler" / "app" / "main.py"), "--server.headless",
           "true", "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
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
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(15_000)
    expect.set_options(timeout=15_000)
    yield context.new_page()
    context.close()


def test_a_reviewer_proposes_and_an_annotator_labels_a_candidate(tab: Page, demo_server: Server,
                                                                  artifacts: Path) -> None:
    goto_as(tab, f"{demo_server.url}/gold", "rita")
    expect(tab.locator(".st-key-synthetic-waiting")).to_have_text("0 of 0 synthetic candidates wait for labeling.")
    field = tab.get_by_label("How many")
    field.fill("4")
    field.press("Enter")
    button = tab.locator(".st-key-synth-propose button")
    expect(button).to_have_text("Propose 4 adversarial cases")
    button.click()
    expect(tab.locator(".st-key-synthetic-waiting")).to_contain_text("4 of 4 synthetic candidates wait for labeling (")
    expect(tab.get_by_text("4 candidates added to the labeling queue")).to_be_visible()
    tab.screenshot(path=artifacts / "synthesize-proposed.png")

    store = Store(demo_server.db)
    stale = next(p for p in store.synthetic_candidates().proposed if p.transform != "negative_branch")
    transcript = store.get_transcript(stale.id).transcript
    end = len(transcript.messages)
    goto_as(tab, f"{demo_server.url}/label?t={quote(stale.id, safe='')}&turn={end}", "ann")
    expected = {"call": "different", "clarify": "clarify", "no_call": "no_call"}
    proposal = transcript.metadata["proposed_label"]["decision"]
    expect_decision(tab, proposal)
    assert proposal in expected.values()
    expect(tab.locator(".st-key-progress")).to_have_text("labeled 0/1 turns")  # one turn: the candidate's
    press(tab, "Control+Enter")
    tab.wait_for_url(lambda url: quote(stale.id, safe="") not in url)  # submitted: the queue moves on
    gold = store.get_gold(gold_case_id(stale.id, end))
    assert gold.provenance.source == "synthetic" and stale.transform in gold.tags
    goto_as(tab, f"{demo_server.url}/gold", "ann")
    expect(tab.locator(".st-key-synthetic-waiting")).to_contain_text("3 of 4 synthetic candidates wait for labeling")
    expect(tab.locator(".st-key-synth-propose")).to_have_count(0)  # annotators do not propose
