"""Issue 16 on the Review page: what differs stands out, keyboard shortcuts, the cases listed before approval,
and the observed agent's card without the gold's tags."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from labeler.store import Store
from tests.review.test_review_pages import app, open_page, team, texts  # noqa: F401 (fixtures)


def test_the_values_the_versions_disagree_on_stand_out(team: Store, app: AppTest) -> None:  # noqa: F811
    open_page(app, "rita", "pages_/review.py")
    [item] = team.review_queue(actor="rita")
    app.button(key=f"review-open-{item.id}").click().run()
    differing = [t for t in texts(app) if t.startswith("≠ ")]
    assert differing == ['≠ call 1 customer: ann "C-1042" · bob "C-1024" · Observed agent call "C-1042"']
    assert not [t for t in differing if t.startswith("≠ decision")]  # all three call search_orders


def test_accept_reject_escalate_and_next_have_shortcuts(team: Store, app: AppTest) -> None:  # noqa: F811
    open_page(app, "rita", "pages_/review.py")
    [item] = team.review_queue(actor="rita")
    app.button(key=f"review-open-{item.id}").click().run()
    keys = {b.label: b.proto.shortcut.upper() for b in app.button if b.key and b.key.endswith(f"-{item.id}")}
    assert {k: keys.get(k) for k in ("Accept version", "Reject and requeue", "Escalate", "Next item")} == {
        "Accept version": "A", "Reject and requeue": "D", "Escalate": "X", "Next item": "N"}


def test_the_uncontested_cases_are_listed_before_approving_them(team: Store, app: AppTest) -> None:  # noqa: F811
    open_page(app, "rita", "pages_/review.py")
    [table] = app.get_by_key("uncontested-cases").table
    assert table.value["Case"].tolist() == ["t2\\#t2"]


def test_the_observed_agent_card_does_not_show_the_golds_tags_as_its_own(team: Store, app: AppTest) -> None:  # noqa: F811
    open_page(app, "rita", "pages_/review.py")
    [item] = team.review_queue(actor="rita")
    app.button(key=f"review-open-{item.id}").click().run()
    observed = app.get_by_key("cand-observed")
    assert "Tags: happy_path" not in [t.value for t in observed.text]
    assert any(c.value.startswith("No tags of its own") for c in observed.caption)
