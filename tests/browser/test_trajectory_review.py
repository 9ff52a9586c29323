"""Review of a trajectory case in real Chromium against ``streamlit run``: a reviewer opens the disagreement,
edits the chosen version in the schema-driven step editor (an argument through its schema field, the step
order with the arrow), accepts with a comment, and the store holds exactly that gold, audited; the decision
keys work on a trajectory item as on a turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.labels import TrajectoryBody
from labeler.store import Store
from scorer.model import Call, Dependency, ForbiddenCall
from tests.browser import test_review_flow as flow
from tests.browser.conftest import Server, goto_as, serve
from tests.browser.test_review_flow import comment, idle, open_item
from tests.review.kit import people, put, transcript
from tests.store_reads import audit_events

pytestmark = pytest.mark.browser
tab = flow.tab  # the review flow's page fixture

LOOKUP = Call(name="search_orders", arguments={"customer": "C-1042"})
REFUND = Call(name="refund_order", arguments={"order_id": "O-7"})


@pytest.fixture(scope="module")
def trajectory_server(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Server]:
    """ann and bob disagree on the trajectories of t-a and t-b: ann looks up then refunds O-7, bob only
    looks up (C-1024) and forbids the refund."""
    home = tmp_path_factory.mktemp("trajectory-review")
    db = home / "toolgold.db"
    store = Store(db)
    people(store)
    for tid in ("t-a", "t-b"):
        put(store, transcript(tid))
        store.save_trajectory_label(tid, "ann", TrajectoryBody(
            calls=(LOOKUP, REFUND), after=(Dependency(step=1, requires=(0,)),)), version=0, submit=True)
        store.save_trajectory_label(tid, "bob", TrajectoryBody(
            calls=(Call(name="search_orders", arguments={"customer": "C-1024"}),),
            forbidden=(ForbiddenCall(name="refund_order"),)), version=0, submit=True)
    store.close()
    with serve(db, home) as server:
        yield server


def test_a_reviewer_edits_a_trajectory_in_the_step_editor_and_accepts(tab: Page, trajectory_server: Server,
                                                                     artifacts: Path) -> None:
    page, server = tab, trajectory_server
    item_id = open_item(page, server, "rita", "t-a#trajectory")
    expect(page.locator(".st-key-review-differences")).to_contain_text('"C-1042"')  # ann's customer vs bob's
    expect(page.locator(".st-key-review-differences")).to_contain_text('"C-1024"')
    page.get_by_text("Edit and accept", exact=True).first.click()  # the expander
    editor = page.locator(".st-key-step-1")
    expect(editor).to_contain_text("step 1")
    # No JSON of the whole case: the refund's order_id is a field of its own, from refund_order's schema.
    expect(page.locator(f".st-key-edit-json-{item_id} textarea")).to_have_count(0)
    order_id = editor.get_by_label("order_id *")
    expect(order_id).to_have_value("O-7")
    order_id.fill("")
    order_id.press("Enter")
    idle(page)
    expect(editor.get_by_text("required, but missing")).to_be_visible()  # touched: its error shows
    expect(page.locator(".st-key-step-0").get_by_text("required, but missing")).to_have_count(0)
    order_id = page.locator(".st-key-step-1").get_by_label("order_id *")
    order_id.fill("O-8")
    order_id.press("Enter")
    idle(page)
    expect(page.locator(".st-key-step-1").get_by_text("required, but missing")).to_have_count(0)  # the rerun is done
    page.locator(".st-key-step-1").get_by_role("button", name="arrow_upward").click()  # move the refund up
    idle(page)
    expect(page.get_by_role("combobox", name="Tool (step 0)")).to_have_value("refund_order")
    expect(page.get_by_role("combobox", name="Tool (step 1)")).to_have_value("search_orders")
    comment(page, item_id, "refund first; the order is O-8")
    page.screenshot(path=artifacts / "review-trajectory-edit.png", full_page=True)
    page.locator(f".st-key-edit-accept-{item_id} button").click()
    expect(page.locator(".st-key-review-done")).to_contain_text(f"Approved your edit for item {item_id}")
    store = server.store()
    gold = store.get_gold("t-a#trajectory")
    assert gold.expected.calls == (Call(name="refund_order", arguments={"order_id": "O-8"}), LOOKUP)
    assert (gold.after, gold.forbidden, gold.provenance.status, gold.provenance.reviewer,
            gold.provenance.annotators) == ((), (), "approved", "rita", ("ann",))
    decided = [e for e in audit_events(store, "t-a#trajectory") if e["action"] == "review.edit"]
    assert [(e["actor"], e["note"]) for e in decided] == [("rita", "refund first; the order is O-8")]


def test_decision_keys_work_on_a_trajectory_item(tab: Page, trajectory_server: Server) -> None:
    page, server = tab, trajectory_server
    item_id = open_item(page, server, "rita", "t-b#trajectory")
    comment(page, item_id, "needs the team lead")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("x")  # Escalate
    expect(page.locator(".st-key-review-done")).to_contain_text(f"Escalated item {item_id} to the admins")
    assert server.store().review_item_for("t-b#trajectory").status == "escalated"  # type: ignore[union-attr]
    expect(page.locator(".st-key-review-admin-only")).to_contain_text("only an admin can decide it")
    expect(page.locator(f".st-key-accept-{item_id} button")).to_be_disabled()
    # An escalated item is the admins' to decide: root, in a tab of their own, accepts it with the key.
    admin = page.context.new_page()
    goto_as(admin, f"{server.url}/review?item={item_id}", "root")
    expect(admin.locator(".st-key-review-head")).to_contain_text("t-b#trajectory · Annotators disagree · escalated")
    expect(admin.locator(f".st-key-accept-{item_id} button")).to_be_enabled()  # its shortcut mounts with it
    idle(admin)
    admin.keyboard.press("a")  # Accept the preselected version
    expect(admin.locator(".st-key-review-done")).to_contain_text(f"Approved label:ann for item {item_id}")
    assert server.store().get_gold("t-b#trajectory").provenance.status == "approved"


def test_an_annotator_gets_no_trajectory_editor(tab: Page, trajectory_server: Server) -> None:
    page, server = tab, trajectory_server
    goto_as(page, f"{server.url}/review", "ann")
    expect(page.get_by_text("Nothing was sent back to you. Reviewing is for reviewers and admins.")).to_be_visible()
    expect(page.locator("[class*='st-key-edit-accept-']")).to_have_count(0)
    expect(page.locator("[class*='st-key-step-']")).to_have_count(0)
