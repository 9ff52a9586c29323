"""MCP tool annotations in the trajectory panel: each tool marked read-only or destructive, and the
destructive tools no step uses proposed as forbidden calls (real github-mcp-server tool snapshots)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.cli.data import convert_files, load_tools
from labeler.store import Store
from labeler.tool_hints import FORBID_REASON, hint, proposed_forbidden
from scorer.formats import dumps_record
from scorer.importers import ImportOptions
from scorer.model import ForbiddenCall, FunctionCall, Message, ToolCallRef, Transcript
from tests.conftest import TEST_DATA

GITHUB = TEST_DATA / "real" / "traces" / "mcp" / "github-mcp-server"
SNAPS = ("get_file_contents.snap", "delete_file.snap", "add_issue_reaction.snap")


def github_tools(tmp_path: Path):  # type: ignore[no-untyped-def]
    listing = tmp_path / "tools.json"
    listing.write_text(json.dumps({"tools": [json.loads((GITHUB / n).read_text()) for n in SNAPS]}))
    return load_tools(listing)


def test_the_hints_follow_the_annotations_and_the_mcp_defaults(tmp_path: Path) -> None:
    reading, deleting, reacting = github_tools(tmp_path)
    assert [hint(t) for t in (reading, deleting, reacting)] == ["read-only", "destructive", ""]  # destructiveHint false
    assert proposed_forbidden((reading, deleting, reacting), used=["get_file_contents"]) == (
        ForbiddenCall(name="delete_file", reason=FORBID_REASON),)
    assert proposed_forbidden((reading, deleting), used=["delete_file"]) == ()


@pytest.fixture
def annotated(store: Store, tmp_path: Path) -> Store:
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    transcript = Transcript(id="gh-1", tools=github_tools(tmp_path), metadata={"source": "mcp"}, messages=(
        Message(role="user", content="Show me README.md of octo/hello"),
        Message(role="assistant", tool_calls=(ToolCallRef(id="c1", function=FunctionCall(
            name="get_file_contents", arguments='{"owner":"octo","repo":"hello","path":"README.md"}')),)),
        Message(role="tool", tool_call_id="c1", content="# hello"),
        Message(role="assistant", content="Here it is.")))
    src = tmp_path / "gh.jsonl"
    src.write_text(dumps_record(transcript) + "\n")
    items, rejects = convert_files([src], None, ImportOptions())
    assert not rejects
    store.import_items(items)
    return store


def test_the_trajectory_panel_marks_tools_and_proposes_the_forbidden_ones(annotated: Store, app: AppTest) -> None:
    app.session_state["user"] = "ann"  # what the sidebar picker sets; the URL has no say
    app.query_params["t"] = "gh-1"
    app.query_params["turn"] = "1"
    app.run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    [view] = [g for g in app.button_group if g.label == "View"]
    view.set_value("Trajectory").run()
    assert not app.exception, app.exception
    shown = [t.value for t in app.text]
    assert "Read-only (MCP readOnlyHint): get_file_contents" in shown
    assert "May destroy data (MCP destructiveHint): delete_file" in shown
    [forbid] = [b for b in app.button if b.key and b.key.startswith("forbid-destructive-")]
    forbid.click().run()
    assert not app.exception, app.exception
    [forbidden] = [m for m in app.multiselect if m.label == "Forbidden calls (must not happen)"]
    assert forbidden.value == ["delete_file"]
    [submit] = [b for b in app.button if b.key and b.key.startswith("submit-trajectory-")]
    submit.click().run()
    gold = annotated.get_gold("gh-1#trajectory")
    assert [(f.name, f.reason) for f in gold.forbidden] == [("delete_file", FORBID_REASON)]


def test_the_turn_panel_marks_each_tool_with_its_hint(annotated: Store, app: AppTest) -> None:
    app.session_state["user"] = "ann"  # what the sidebar picker sets; the URL has no say
    app.query_params["t"] = "gh-1"
    app.query_params["turn"] = "1"
    app.run()
    app.switch_page("pages_/label.py").run()
    assert not app.exception, app.exception
    [same] = [b for b in app.button if b.key and b.key.startswith("decide-same-w")]
    same.click().run()
    [tool] = [s for s in app.selectbox if s.label == "Tool (call 1)"]
    assert tool.value == "get_file_contents"
    assert tool.options == ["get_file_contents (read-only)", "delete_file (destructive)", "add_issue_reaction"]
