"""Untrusted values where Streamlit reads Markdown, invisible direction controls, crashes, and what an edit may
change: through the real app script with AppTest (the Chromium side is tests/browser/test_reflected_payloads.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.app.render import md_escape, md_label, visible
from labeler.labels import LabelBody
from labeler.store import ImportItem, Store
from scorer.formats import dumps_record
from scorer.model import Call, Message, ToolCallRef, ToolSpec, Transcript
from tests.app.conftest import APP_MAIN
from tests.history.kit import FAULTS, agent_runs, gold_cases

BEACON = "![](http://203.0.113.9/beacon.png) [Sign in again](http://203.0.113.9/login)"
SPOOFED = "C-\u202e4321"


def opened(name: str, page: str, **params: str) -> AppTest:
    app = AppTest.from_file(str(APP_MAIN), default_timeout=30)
    app.session_state["user"] = name
    app.run()
    for key, value in params.items():
        app.query_params[key] = value
    app.switch_page(page).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def unescaped_punctuation(md: str) -> list[str]:
    """ASCII punctuation Markdown would read as syntax: not backslash-escaped and not inside a code span."""
    found, i = [], 0
    while i < len(md):
        if md[i] == "`":
            fence = re.match("`+", md[i:]).group()  # type: ignore[union-attr]
            i = md.index(fence, i + len(fence)) + len(fence)
        elif md[i] == "\\":
            i += 2
        else:
            if md[i].isascii() and not md[i].isalnum() and not md[i].isspace():
                found.append(md[i])
            i += 1
    return found


@pytest.mark.parametrize("text", [BEACON, "www.203.0.113.9.example", "mail ann@203.0.113.9.example",
                                  "`code` **bold** <b>x</b> :material/home: :red[alarm] $x$", SPOOFED])
def test_escaped_markdown_has_no_link_image_or_markup_left(text: str) -> None:
    escaped = md_escape(text)
    assert unescaped_punctuation(escaped) == []
    assert "\u202e" not in escaped
    assert md_label(text) == escaped


def test_direction_overrides_are_shown_not_obeyed() -> None:
    assert visible(SPOOFED) == "C-⟨U+202E⟩4321"
    assert visible("plain C-1234") == "plain C-1234"


@pytest.fixture
def team(store: Store) -> Store:
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    store.add_user("ann", "annotator", actor="root")
    return store


def test_a_spoofed_value_shows_its_control_character_in_the_conversation_and_the_editor(team: Store) -> None:
    tr = Transcript(id="spoof", tools=(ToolSpec(name="search_orders", parameters={
        "type": "object", "properties": {"customer_id": {"type": "string"}}}),), messages=(
        Message(role="user", content=f"My customer id is {SPOOFED}."),
        Message(role="assistant", tool_calls=(ToolCallRef.model_validate(
            {"id": "c1", "type": "function",
             "function": {"name": "search_orders", "arguments": json.dumps({"customer_id": SPOOFED})}}),)),
    ))
    team.import_items([ImportItem(tr, "spoof.jsonl", 1)])
    app = opened("ann", "pages_/label.py", t="spoof", turn="1")
    shown = [t.value for t in app.main.text] + [c.value for c in app.main.code]
    assert any("My customer id is C-⟨U+202E⟩4321." in s for s in shown), shown
    assert not any("\u202e" in s for s in shown)
    app.button(key=next(b.key for b in app.button if b.key and b.key.startswith("decide-same-"))).click().run()
    notes = [t.value for t in app.main.text if t.value.startswith("Holds invisible control characters")]
    assert notes == ['Holds invisible control characters: C-⟨U+202E⟩4321'], [t.value for t in app.main.text]


def test_an_uploaded_run_id_is_escaped_in_the_confirmation(team: Store) -> None:
    team.import_items([ImportItem(case, "gold.jsonl", n) for n, case in enumerate(gold_cases(), start=1)])
    version = team.freeze("regression", actor="root").id
    run_id = f"run {BEACON}"
    runs = agent_runs(gold_cases(), FAULTS["v3"], run_id=run_id, model="m")
    app = opened("rita", "pages_/runs.py")
    app.selectbox(key="score-version").select(version)
    app.get("file_uploader")[0].upload("v3.jsonl", "".join(dumps_record(r) + "\n" for r in runs).encode())
    app.get("form_submit_button")[0].click().run()
    [saved] = app.get_by_key("score-saved").success
    assert saved.value == md_escape(f"Saved run {run_id} on {version}: 70 pass, 4 fail, 0 need review of 74 results")
    assert unescaped_punctuation(saved.value) == []


def test_a_crash_shows_one_line_with_an_error_id_and_no_traceback(team: Store, isolated_db: Path,
                                                                   caplog: pytest.LogCaptureFixture,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    team.import_items([ImportItem(Transcript(id="broken", messages=(Message(role="user", content="hi"),)),
                                  "t.jsonl", 1)])

    def bug(*_: object, **__: object) -> None:  # a bug no page expects (a stored record that fails to load
        raise RuntimeError("an unexpected bug")  # is handled before it gets here: one line, no crash)

    monkeypatch.setattr(Store, "get_transcript", bug)
    app = opened("ann", "pages_/transcripts.py", t="broken")
    [line] = [t.value for t in app.get_by_key("app-error").text]
    assert line.startswith("Something went wrong on this page (error id ") and "Traceback" not in line
    error_id = line.split("error id ")[1].split(")")[0]
    assert not app.exception
    [record] = [r for r in caplog.records if r.name == "toolgold.app"]  # the server log has the details
    assert record.getMessage() == f"error {error_id} on page transcripts (user ann)" and record.exc_info


def test_edit_and_accept_cannot_rewrite_who_labeled(team: Store) -> None:
    from tests.review.kit import put, transcript

    put(team, transcript("t1"))
    lookup = {"customer": "C-1"}
    for name, value in (("ann", "C-1"), ("rita", "C-2")):
        team.submit_label("t1", 2, name, LabelBody(decision="different", calls=(
            Call(name="search_orders", arguments={**lookup, "customer": value}),)), version=0)
    team.sync_review_queue()
    [item] = team.review_queue(actor="root")
    app = opened("root", "pages_/review.py", item=str(item.id))
    # The edit is made in the labeling editor: the answer, rules, tags and rationale have fields; who labeled
    # has none (no JSON of the whole case to rewrite it in; the store refuses a forged one, tests/review).
    assert not [a for a in app.text_area if a.key == f"edit-{item.id}"]
    [customer] = [t for t in app.text_input if t.label.startswith("customer")]
    customer.input("C-3").run()
    app.button(key=f"edit-accept-{item.id}").click().run()
    assert not app.exception, app.exception
    case = team.get_gold("t1#t2")
    assert (case.provenance.annotators, case.provenance.reviewer, case.expected.calls[0].arguments) == (
        ("ann",), "root", {"customer": "C-3"})
