"""The app around synthesis, under AppTest with the real store: the label page starts a candidate from the
label it proposes; the Gold set page offers "propose N adversarial cases" to reviewers and admins when the
ratio is below target, runs it, and shows how many candidates wait for labeling."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape
from labeler.cli import cli
from labeler.labels import gold_case_id
from labeler.store import ImportItem, Store
from scorer.formats import iter_json_lines, parse_record
from scorer.model import GoldCase
from tests.synthesize.kit import DEMO

MISSING = "tooltalk/AccountTools-Alarm-Calendar-AddAlarm-0/turn-4~missing_information"


@pytest.fixture
def demo_store(store: Store) -> Store:
    """The demo, with its ToolTalk call cases tagged happy_path (18) as a team would: the ratio is 0 : 1."""
    items = []
    for path in sorted(DEMO.glob("*.jsonl")):
        for n, value in iter_json_lines(path.read_bytes().splitlines(), str(path)):
            record = parse_record(value, source=str(path), line=n)
            if isinstance(record, GoldCase) and record.provenance.source == "tooltalk" and record.expected.calls:
                record = record.model_copy(update={"tags": ("happy_path", *record.tags)})
            items.append(ImportItem(record, source=str(path), line=n))
    store.import_items(items)
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
    app.session_state["user"] = "ann"  # what the sidebar picker sets; the URL has no say
    app.query_params.update(t=MISSING, turn=str(end))
    app.run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    assert button(app, "decide-clarify").proto.type == "primary"
    button(app, "submit").click().run()
    assert not app.exception, app.exception
    gold = demo_store.get_gold(gold_case_id(MISSING, end))
    assert gold.expected.behavior == "clarify" and gold.provenance.source == "synthetic"
    assert "missing_information" in gold.tags and gold.rationale.startswith("Synthetic (missing_information of ")


def open_gold_set(app: AppTest, user: str) -> AppTest:
    app.session_state["user"] = user  # what the sidebar picker sets; the URL has no say
    app.run()
    app.switch_page("pages_/coverage.py").run()
    assert not app.exception, app.exception
    return app


def texts_in(app: AppTest, key: str) -> list[str]:
    return [t.value for t in app.get_by_key(key).text]


def test_a_reviewer_proposes_n_adversarial_cases_below_target_and_sees_them_wait(demo_store: Store,
                                                                              app: AppTest) -> None:
    open_gold_set(app, "rita")
    assert texts_in(app, "balance") == [
        "Below target: 36 more adversarial cases needed for 18 happy-path cases (at least 2 : 1)."]
    assert texts_in(app, "synthetic-waiting") == ["0 of 0 synthetic candidates wait for labeling."]
    assert app.button(key="synth-propose").label == "Propose 36 adversarial cases"
    app.number_input(key="synth-n").set_value(6).run()
    app.multiselect(key="synth-transforms").set_value(["near_duplicate_tool", "stale_context"]).run()
    assert app.button(key="synth-propose").label == "Propose 6 adversarial cases"
    app.button(key="synth-propose").click().run()
    assert not app.exception, app.exception
    assert [s.value for s in app.success] == [md_escape(
        "6 candidates added to the labeling queue (near_duplicate_tool 3, stale_context 3); "
        "12 approved cases without a conversation left out")]
    assert texts_in(app, "synthetic-waiting") == [
        "6 of 6 synthetic candidates wait for labeling (near_duplicate_tool 3, stale_context 3)."]
    table = app.get_by_key("synthetic-proposals").table[0].value
    assert list(table["Label"]) == ["waiting"] * 6
    assert sorted(set(table["Transformation"])) == ["near_duplicate_tool", "stale_context"]
    assert len(demo_store.list_transcripts(source="synthetic")) == 6


def test_an_annotator_sees_what_waits_but_cannot_propose(demo_store: Store, app: AppTest) -> None:
    CliRunner().invoke(cli, ["synthesize", "--user", "rita", "-n", "3"], catch_exceptions=False)
    open_gold_set(app, "ann")
    assert texts_in(app, "synthetic-waiting")[0].startswith("3 of 3 synthetic candidates wait for labeling (")
    with pytest.raises(KeyError):
        app.get_by_key("synthetic-propose")


def test_on_target_nothing_is_offered(demo_store: Store, app: AppTest) -> None:
    demo_store.set_tag("bfcl", adversarial=True, actor="root")  # 20 adversarial : 18 happy path, below target
    open_gold_set(app, "root")
    assert app.get_by_key("synthetic-propose")
    demo_store.set_tag("tooltalk", adversarial=True, actor="root")  # 43 : 18
    open_gold_set(app, "root")
    assert texts_in(app, "balance")[0].startswith("On target: ")
    with pytest.raises(KeyError):
        app.get_by_key("synthetic-propose")
