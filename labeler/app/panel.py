"""The label panel for one decision point: decision first, then the calls, then the rest.

It is a fragment: a click in the panel reruns only the panel, not the transcript beside it. Every change
is saved as a draft at once (``editing``); *Submit & next* only changes the status and moves on.
"""

from __future__ import annotations

import json
from typing import Any, Literal, cast

import streamlit as st
from dateutil import parser as dateparser
from pydantic import ValidationError

from labeler.app import call_editor, context, decision_bar, editing, render
from labeler.app.editing import Item, Work
from labeler.labels import DECISIONS, Decision, call_diff, observed_as_calls, problems, same_as_observed
from labeler.store import QueueFilter, TurnState, TurnWindow
from scorer.model import Answer, Call, ToolSpec, Transcript

NAVIGATE_KEY = "navigate-after-submit"


# -- callbacks -----------------------------------------------------------------------------------------


def _decide(item: Item, work: Work, decision: Decision, observed: list[dict[str, Any]],
            tools: dict[str, ToolSpec]) -> None:
    if work.locked:
        return  # a submitted label changes only after Edit
    calls = work.body.calls
    if decision == "same" and observed:
        wanted = observed_as_calls(observed)
        if calls and not same_as_observed(observed, calls):
            work.stash = calls  # the annotator's own calls, back with "Different call"
        editing.change(item, work, regenerate=True, decision="same", calls=wanted,
                       arg_rules=call_editor.with_suggestions(work.body.arg_rules, wanted, tools))
        return
    if decision == "different":
        if work.stash and (not calls or same_as_observed(observed, calls)):
            calls, work.stash = work.stash, None
        elif not calls:
            calls = observed_as_calls(observed)  # else the annotator picks the tool (call_editor.tool_picker)
        editing.change(item, work, regenerate=True, decision="different", calls=calls,
                       arg_rules=call_editor.with_suggestions(work.body.arg_rules, calls, tools))
        return
    editing.change(item, work, decision=decision)


def _on_field(item: Item, work: Work, field: str, key: str) -> None:
    value = st.session_state[key]
    if field == "tags":
        value = tuple(value or ())
    editing.change(item, work, **{field: value})


def _on_reference_time(item: Item, work: Work, key: str) -> None:
    raw = (st.session_state[key] or "").strip()
    work.input_errors.pop("reference_time", None)
    if not raw:
        editing.change(item, work, reference_time=None)
        return
    try:
        value = dateparser.isoparse(raw)
    except ValueError:
        work.input_errors["reference_time"] = "not an ISO date-time (e.g. 2024-05-15T15:00:00-05:00)"
        return
    if value.tzinfo is None:
        work.input_errors["reference_time"] = "add a timezone (e.g. Z or -05:00)"
        return
    editing.change(item, work, reference_time=value)


def _toggle_unsure(item: Item, work: Work) -> None:
    editing.change(item, work, unsure=not work.body.unsure)


def _add_alternative(item: Item, work: Work, prefix: str) -> None:
    behavior = st.session_state[f"{prefix}:behavior"]
    work.input_errors.pop("alternative", None)
    try:
        if behavior == "call":
            raw = st.session_state.get(f"{prefix}:args") or "{}"
            only = bool(st.session_state.get(f"{prefix}:only"))
            arguments = {} if only else editing.typed_json(raw)
            answer = Answer(behavior="call", tool_only=only,
                            calls=(Call(name=st.session_state[f"{prefix}:tool"], arguments=arguments),))
        else:
            answer = Answer(behavior=behavior)
    except (ValueError, ValidationError) as exc:
        work.input_errors["alternative"] = f"not added: {exc}"
        return
    editing.change(item, work, regenerate=True, alternatives=(*work.label.alternatives, answer))


def _remove_alternative(item: Item, work: Work, n: int) -> None:
    alts = work.label.alternatives
    editing.change(item, work, regenerate=True, alternatives=alts[:n] + alts[n + 1:])


def _submit(item: Item, work: Work) -> None:
    work.submits += 1
    if editing.submit(item, work):
        st.session_state[NAVIGATE_KEY] = item


def _next(item: Item, work: Work | None = None) -> None:
    if work is not None:
        work.submits += 1
    st.session_state[NAVIGATE_KEY] = item


# -- rendering -----------------------------------------------------------------------------------------


def problem(text: str, key: str) -> None:
    with st.container(key=f"err-{key}"):
        st.text(text)


def refused_box(item: Item, work: Work) -> None:
    """An unsaved edit the store refused (not busy, not a conflict): what was typed, to copy, the reason, and
    the explicit choice to discard it (set aside beside the journal, never deleted)."""
    if work.refused is None:
        return
    with st.container(border=True, key="refused-edit"):
        st.text("This unsaved edit cannot be saved, and trying again will not help: "
                + render.one_line(work.refused, 300))
        st.caption("What you typed (copy it if you need it):")
        st.code(_summary(work.body), language="json", wrap_lines=True)
        st.button("Discard this unsaved edit", key=f"discard-refused-{item.key}", icon=":material/delete:",
                  on_click=editing.discard_refused, args=(item, work),
                  help="Starts again from the stored label; the edit is kept on the server as .discarded")


def _field_diff(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """One line per field the two versions disagree on."""
    lines = []
    for name in sorted(set(mine) | set(theirs)):
        if mine.get(name) != theirs.get(name):
            lines += [f"{name}:", f"  yours: {json.dumps(mine.get(name), ensure_ascii=False, default=str)}",
                      f"  saved: {json.dumps(theirs.get(name), ensure_ascii=False, default=str)}"]
    return "\n".join(lines) or "(the same content)"


def conflict_box(item: Item, work: Work) -> None:
    conflict = work.conflict
    assert conflict is not None
    mine, theirs = conflict.mine.to_json(), conflict.theirs.body.to_json()
    with st.container(border=True, key="conflict"):
        st.error("This label was changed elsewhere (another tab or window). Nothing was overwritten: "
                 "choose which version to keep.", icon=":material/sync_problem:")
        st.text(str(conflict))
        st.code(_field_diff(mine, theirs), language=None, wrap_lines=True)
        with st.expander("Both versions in full"):
            st.caption("Yours (not saved)")
            st.code(json.dumps(mine, indent=2, ensure_ascii=False, default=str), language="json", wrap_lines=True)
            st.caption(f"Saved: version {conflict.theirs.version}, {conflict.theirs.status}")
            st.code(json.dumps(theirs, indent=2, ensure_ascii=False, default=str), language="json", wrap_lines=True)
        with st.container(horizontal=True):
            st.button("Keep the saved version", key=f"conflict-theirs-{item.key}", type="primary",
                      on_click=editing.keep_theirs, args=(item, work))
            st.button("Keep mine", key=f"conflict-mine-{item.key}", on_click=editing.keep_mine, args=(item, work),
                      help="Save your version over the newer one")


# Buttons carry the item in their key: a click or shortcut that reaches the server after the annotator moved
# to another turn then matches no widget and is dropped, instead of landing on the wrong turn.


DID = {"call": "the agent called a tool", "text": "the agent answered in text", "open": "the agent has not answered yet"}
CONTEXT_CHARS = 300


def _following(item: Item, window: TurnWindow) -> TurnState | Literal[False] | None:
    """The turn Submit & next will open (``_move_on``'s choice: ``next_to_label``, LIMIT 1 queries): its state
    when the window has it, None when the transcript is done, False when it cannot be drawn ahead (outside the
    window, or this very turn)."""
    onward = context.store().next_to_label(item.transcript_id, item.annotator, item.message_index)
    if onward is None:
        return None
    if onward == item.message_index:
        return False
    found = next((s for s in window.states if s.message_index == onward), None)
    return False if found is None else found


def _ahead(item: Item, tr: Transcript, window: TurnWindow, tools: dict[str, ToolSpec]) -> dict[str, Any] | None:
    """The next turn's essentials, prefetched: drawn by the bar the moment Submit & next is pressed (None: the
    bar draws nothing ahead and the server's next panel is the first thing shown)."""
    s = _following(item, window)
    if s is False:
        return None
    if s is None:
        return decision_bar.ahead(item_key=None, head="Every decision point here is done: moving on to the next "
                                  "transcript from the queue…")
    asked = next((m.content for m in reversed(tr.messages[:s.message_index]) if m.role == "user"), "") or ""
    if len(asked) > CONTEXT_CHARS:
        asked = asked[:CONTEXT_CHARS] + "…"
    return decision_bar.ahead(
        item_key=Item(item.transcript_id, s.message_index, item.annotator).key,
        head=f"Decision point {s.ordinal + 1} of {window.total} · {DID.get(s.observed_behavior, s.observed_behavior)}",
        context=f"User: {asked}" if asked else "", disabled={"same": not s.observed, "different": not tools})


def _decision_bar(item: Item, work: Work, observed: list[dict[str, Any]], tools: dict[str, ToolSpec],
                  next_turn: dict[str, Any] | None) -> None:
    """The decisions as the custom component (``decision_bar``): a key shows its effect at once, the save
    state follows from what the store said."""

    def applies(seq: int) -> bool:  # each event at most once: a resent one Python already applied is dropped
        if seq <= work.ack:
            return False
        work.ack = seq
        return True

    def decide(decision: str, seq: int) -> None:
        if applies(seq):
            _decide(item, work, cast(Decision, decision), observed, tools)  # the bar sends only DECISIONS

    def submit(decision: str, seq: int) -> None:  # Ctrl+Enter before the decision was acknowledged
        if applies(seq):
            if work.label.decision != decision:
                _decide(item, work, cast(Decision, decision), observed, tools)
            _submit(item, work)  # a busy database keeps it pending (busy_submit) and moves on once it lands

    with st.container(key="decisions"):
        decision_bar.decision_bar(
            item_key=item.key, decision=work.label.decision,
            disabled={"same": not observed, "different": not tools},
            helps={"same": "The agent made no call here" if not observed else None},
            locked=work.locked, status=work.status, version=work.version, busy=work.busy, error=work.error,
            ack=work.ack, submits=work.submits, next_turn=next_turn, on_decide=decide, on_submit=submit,
            on_retry=lambda: None)
    # The same decisions as plain buttons without shortcuts, hidden in the browser by CSS: the script-level
    # path AppTest drives (it cannot run a component's JavaScript), calling the same ``_decide``.
    with st.container(key="decision-fallback"):
        for decision, label in DECISIONS.items():
            disabled = work.locked or (decision == "same" and not observed) or (decision == "different" and not tools)
            st.button(label, key=f"decide-{decision}-{item.key}", disabled=disabled,
                      type="primary" if work.label.decision == decision else "secondary",
                      on_click=_decide, args=(item, work, decision, observed, tools))


def _calls_section(item: Item, work: Work, observed: list[dict[str, Any]], tools: dict[str, ToolSpec]) -> None:
    if work.label.decision == "same":
        st.caption("Prefilled from the agent's own call: a suggestion, check every value.")
    for n in range(len(work.body.calls)):
        call_editor.call_editor(item, work, n, tools, observed)
    call_editor.tool_picker(item, work, tools, observed)
    if observed:
        diff = call_diff(observed, work.body.calls)
        if diff:
            st.caption("Differences from what the agent did")
            st.code("\n".join(diff), language=None, wrap_lines=True)


def _alternatives(item: Item, work: Work, tools: dict[str, ToolSpec]) -> None:
    alts = work.label.alternatives
    with st.expander(f"Acceptable alternatives ({len(alts)})"):
        for n, alt in enumerate(alts):
            row = st.columns([6, 1], vertical_alignment="center")
            text = alt.behavior if not alt.calls else "; ".join(
                c.name + ("(any arguments)" if alt.tool_only else f"({json.dumps(c.arguments, ensure_ascii=False)})")
                for c in alt.calls)
            row[0].text(text)
            row[1].button("Remove", key=f"alt-rm-{n}-{item.key}", type="tertiary", on_click=_remove_alternative,
                          args=(item, work, n))
        prefix = editing.widget_key(item, work, "alt")
        behavior = st.selectbox("Alternative", ["call", "no_call", "clarify"], key=f"{prefix}:behavior")
        if behavior == "call" and tools:
            st.selectbox("Tool", list(tools), key=f"{prefix}:tool")
            only = st.checkbox("Tool only (any arguments)", key=f"{prefix}:only")
            if not only:
                st.text_input("Arguments (JSON)", value="{}", key=f"{prefix}:args")
        st.button("Add alternative", key=f"alt-add-{item.key}", on_click=_add_alternative, args=(item, work, prefix))
        if "alternative" in work.input_errors:
            problem(work.input_errors["alternative"], "alternative")


def details(item: Item, work: Work) -> None:
    body = work.body
    vocabulary = [t.tag for t in context.store().tags()]
    options = vocabulary + [t for t in body.tags if t not in vocabulary]
    key = editing.widget_key(item, work, "tags")
    st.pills("Tags", options, selection_mode="multi", default=list(body.tags), key=key,
             format_func=render.md_label, on_change=_on_field, args=(item, work, "tags", key))
    key = editing.widget_key(item, work, "rationale")
    st.text_area("Rationale", value=body.rationale, key=key, height=80, on_change=_on_field,
                 args=(item, work, "rationale", key), placeholder="Why this is the right behaviour here")
    left, right = st.columns([3, 2])
    key = editing.widget_key(item, work, "reftime")
    left.text_input("Reference time (the 'now' for relative dates)",
                    value=body.reference_time.isoformat() if body.reference_time else "", key=key,
                    on_change=_on_reference_time, args=(item, work, key), placeholder="2024-05-15T15:00:00-05:00")
    key = editing.widget_key(item, work, "split")
    right.selectbox("Split", ["regression", "rolling"], index=["regression", "rolling"].index(body.split), key=key,
                    on_change=_on_field, args=(item, work, "split", key))
    if "reference_time" in work.input_errors:
        problem(work.input_errors["reference_time"], "reference-time")


def _summary(body: Any) -> str:
    """The label as the annotator would read it: the fields that carry something, as indented JSON."""
    shown = {k: v for k, v in body.to_json().items() if v not in (None, "", [], {}, False)}
    return json.dumps(shown, indent=2, ensure_ascii=False, default=str)


def locked_view(item: Item, work: Work) -> None:
    """A submitted label, read-only: keys and clicks cannot change it until the annotator chooses Edit."""
    with st.container(border=True, key="submitted-label"):
        st.caption("Submitted: read-only. Edit (E) to change it; the gold case stays until you change something.")
        st.code(_summary(work.body), language="json", wrap_lines=True)
        st.button("Edit", key=f"edit-{item.key}", shortcut="E", icon=":material/edit:",
                  on_click=editing.start_edit, args=(item, work))


def editing_bar(item: Item, work: Work) -> None:
    with st.container(border=True, key="editing-submitted"):
        st.caption("Editing a submitted label: your first change makes it a draft and withdraws its gold until "
                   "you submit again. Discard goes back to the submitted version.")
        st.button("Discard edit", key=f"discard-{item.key}", shortcut="Escape", icon=":material/undo:",
                  type="tertiary", on_click=editing.discard_edit, args=(item, work))


def status_line(work: Work) -> None:
    with st.container(key="save-state"):
        if work.busy is not None and work.restored:
            st.text("Unsaved (database was busy) — retrying. Restored after a reload: it stays here and on the "
                    f"server until it is saved ({work.busy}).")
        elif work.busy is not None:
            st.text("Unsaved: database busy, retrying. Your work stays here until it is saved "
                    f"({work.busy}).")
        elif work.status is None:
            st.text("Not saved yet: your first change creates the draft.")
        elif work.status == "submitted":
            st.text(f"Submitted · saved {work.saved_at} · version {work.version}")
        else:
            st.text(f"Draft saved {work.saved_at} · version {work.version}")
    if work.error:
        problem(work.error, "save")


MOVED_ON_KEY = "moved-on"


def _move_on(item: Item) -> None:
    """After a submit: the next turn of this transcript that lacks the annotator's label (a turn with imported
    or someone else's gold included: the annotator opened this transcript to label it), then any unfinished
    turn before it; only when none is left, the next transcript from the queue, said so on screen."""
    store = context.store()
    onward = store.next_to_label(item.transcript_id, item.annotator, item.message_index)  # LIMIT 1 queries
    editing.forget(item)
    if onward is not None:
        context.select(item.transcript_id, onward)
        return
    following = store.claim_next(item.annotator, QueueFilter(status="unlabeled"), skip=item.transcript_id)
    st.session_state[MOVED_ON_KEY] = (item.transcript_id, following)
    if following is None:
        st.session_state["queue-finished"] = True
        context.select(None)
        return
    context.select(following, store.turn_window(following, item.annotator).selected.message_index)


@st.fragment
def label_panel(item: Item, tr: Transcript, state: TurnState, status_at_render: str | None,
                window: TurnWindow) -> None:
    work = editing.load(item, tr)
    submitting = work.busy is not None and work.busy_submit
    if item in editing.retry_pending() and submitting and work.status == "submitted":
        st.session_state[NAVIGATE_KEY] = item  # the Submit & next the database was too busy for, done now
    if st.session_state.pop(NAVIGATE_KEY, None) == item:
        _move_on(item)
        st.rerun()
    if work.status != status_at_render:
        st.rerun()  # the minimap and progress show the new status
    tools = {t.name: t for t in tr.tools}
    observed = state.observed
    with st.container(key="label-panel"):
        if work.conflict is not None:
            conflict_box(item, work)
        refused_box(item, work)
        with st.container(key="panel-head"):  # sticky: the turn and the decision stay in view
            st.subheader("What should the agent do here?")
            st.caption(f"Decision point {state.ordinal + 1} of {window.total} · {state.observed_behavior}")
            _decision_bar(item, work, observed, tools, _ahead(item, tr, window, tools))
        if work.locked:
            locked_view(item, work)
            status_line(work)
            st.button("Next", key=f"next-turn-{item.key}", type="primary", shortcut="Ctrl+Enter",
                      icon=":material/arrow_forward:", on_click=_next, args=(item, work))
            return
        if work.editing:
            editing_bar(item, work)
        if work.label.expects_calls:
            _calls_section(item, work, observed, tools)
        elif work.label.decision in ("no_call", "clarify") and work.label.calls:
            st.caption(f"{len(work.body.calls)} call(s) kept aside: pick Different call to bring them back.")
        _alternatives(item, work, tools)
        details(item, work)
        status_line(work)
        # Only after a submit attempt: a fresh "Different call" is not a list of errors yet.
        blocking = work.problems or (problems(work.label, tr.tools) if work.tried_submit else [])
        if blocking:
            with st.container(key="problems"):
                st.caption("Before submitting")
                for n, text in enumerate(blocking):
                    problem(text, f"problem-{n}")
        with st.container(horizontal=True, key="submit-bar"):  # sticky at the panel's bottom
            st.button("Submit & next", key=f"submit-{item.key}", type="primary", shortcut="Ctrl+Enter", icon=":material/check:",
                      on_click=_submit, args=(item, work))
            st.button("Unsure: send to review" if not work.body.unsure else "Marked unsure (undo)", key=f"unsure-{item.key}",
                      shortcut="Alt+F", icon=":material/flag:", on_click=_toggle_unsure, args=(item, work),
                      type="secondary" if not work.body.unsure else "primary")
