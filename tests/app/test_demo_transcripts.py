"""Every bundled demo transcript (real BFCL, tau-bench and ToolTalk data) opens in the label page, takes
"Same as observed" (or "Different call") into the schema-generated editor, and opens as a trajectory."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.cli.data import convert_files
from labeler.store import Store
from scorer.importers import ImportOptions
from tests.app.conftest import APP_MAIN, REPO

DEMO = sorted((REPO / "data" / "demo").glob("*.jsonl"))


@pytest.fixture
def demo(store: Store) -> Store:
    if not DEMO:
        pytest.skip("no demo data in data/demo")
    items, rejects = convert_files(DEMO, None, ImportOptions())
    assert not rejects
    store.import_items(items)
    store.add_user("root", "admin")
    return store


def decide(app: AppTest, name: str) -> bool:
    [button] = [b for b in app.button if b.key and b.key.startswith(f"decide-{name}-w")]
    if button.disabled:
        return False
    button.click().run()
    return True


def test_every_demo_transcript_opens_and_its_calls_load_into_the_editor(demo: Store, tmp_path: Path) -> None:
    ids = [s.id for s in demo.list_transcripts()]
    assert len(ids) >= 10
    for tid in ids:
        for state in demo.turn_states(tid, "root"):
            app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
            app.session_state["user"] = "root"
            app.query_params.update({"t": tid, "turn": str(state.message_index)})
            app.run()
            app.switch_page("pages_/label.py").run()
            assert not app.exception, (tid, state.message_index, app.exception)
            if not decide(app, "same"):
                decide(app, "different")
            assert not app.exception, (tid, state.message_index, app.exception)
            label = demo.get_label(tid, state.message_index, "root")
            assert label is not None and label.body.decision in ("same", "different"), (tid, state.message_index)
            if state.observed_behavior == "call":
                assert [c.name for c in label.body.calls] == [c["name"] for c in state.observed]
            [view] = [g for g in app.button_group if g.label == "View"]
            view.set_value("Trajectory").run()
            assert not app.exception, (tid, app.exception)
            break  # the first decision point of each transcript is enough to cover every schema
