"""The app around synthesis, under AppTest with the real store: the label page starts a candidate from the
label it proposes; the Gold set page offers "propose N adversarial cases" to reviewers and admins when the
ratio is below target, runs it, and shows how many candidates wait for labeling."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from labeler.cli import cli
from labeler.labels import gold_case_id
from labeler.store import Store
from tests.synthesize.kit import DEMO

MISSING = "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4~missing_information"


@pytest.fixture
def demo_store(store: Store) -> Store:
    result = CliRunner().invoke(cli, ["import", *map(str, sorted(DEMO.glob("*.jsonl")))], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    store.add_user("ann", "annotator", actor="root")
    return store


def button(app: AppTest, name: str):  # type: ignore[no-untyped-def]
    [found] = [b for b in app.button if b.key and b.key.startswith(f"{name}-w")]
    return found


def test_the_label_page_starts_a_candidate_from_its_proposed_label(demo_store: Store, app: AppTest) -> None:
    result = CliRunner().invoke(cli, ["synthesize", "--user", "rita", "--transform", "missing_information"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    end = len(demo_store.get_transcript(MISSING).transcript.messages)
    app.query_params.update(user="ann", t=MISSING, turn=str(end))
    app.run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert button(app, "decide-clarify").proto.type == "primary"
    button(app, "submit").click().run()
    assert not app.exception, app.exception
    gold = demo_store.get_gold(gold_case_id(MISSING, end))
    assert gold.expected.behavior == "clarify" and gold.provenance.source == "synthetic"
    assert "missing_information" in gold.tags and gold.rationale.startswith("Synthetic (missing_information of ")
