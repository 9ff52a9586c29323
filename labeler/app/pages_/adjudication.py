"""Adjudication: the judge's verdicts that need a person, one at a time, with the four decisions.

Each item shows the conversation up to the decision point, the gold answer and its rationale, what the
agent did, and the judge's verdict with its rationale. Everything from a transcript, a label, the agent or
the judge is untrusted text: it goes through ``st.text`` / ``st.code`` only. The store checks the reviewer's
role again on every decision; *accept as alternative* and *fix the gold* write a new gold version and
leave the frozen one as it was.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st
from pydantic import ValidationError

from labeler.app import context, editing, identity, judge_key, render
from labeler.judge.prompts import data_block
from labeler.store import AdjudicationItem, StoreError, User, agent_answer
from scorer.model import Answer, GoldCase, Transcript

ITEM_PARAM = "item"
QUESTIONS = {"semantic_argument": "Semantic argument", "mismatch": "Mismatch"}
VERDICTS = {"equivalent": "equivalent (acceptable)", "not_equivalent": "not equivalent (a defect)",
            "gold_wrong": "the gold is wrong", "ambiguous": "ambiguous", "needs_review": "no usable verdict"}
BEHAVIOR = {"call": "Call", "no_call": "No tool call", "clarify": "Ask the user"}


def flash() -> None:
    if "adj-error" in st.session_state:
        with st.container(key="err-adj"):
            render.error(st.session_state.pop("adj-error"), icon=":material/block:")
    if "adj-done" in st.session_state:
        with st.container(key="adj-done"):
            render.success(st.session_state.pop("adj-done"), icon=":material/check:")


def select_item(item_id: int | None) -> None:
    if item_id is None:
        st.query_params.pop(ITEM_PARAM, None)
    else:
        st.query_params[ITEM_PARAM] = str(item_id)


def selected_item() -> int | None:
    raw = st.query_params.get(ITEM_PARAM)
    return int(raw) if raw and raw.isdigit() else None


# -- decisions (callbacks) ---------------------------------------------------------------------------------


def decide(user: User, item_id: int, decision: str, **extra: Any) -> None:
    note = st.session_state.get(f"adj-note-{item_id}", "")
    try:
        made = context.store().adjudicate(item_id, decision, actor=user.name, note=note, **extra)
    except StoreError as exc:
        st.session_state["adj-error"] = str(exc)
        return
    st.session_state["adj-done"] = (f"Item {item_id}: {decision.replace('_', ' ')}"
                                    + (f"; new gold version {made.new_version}" if made.new_version else ""))
    select_item(None)


def judge_wrong(user: User, item_id: int) -> None:
    decide(user, item_id, "judge_wrong", reviewer_verdict=st.session_state.get(f"adj-right-{item_id}"))


def fix_gold(user: User, item_id: int) -> None:
    raw = st.session_state.get(f"adj-fix-{item_id}", "")
    try:
        fixed = Answer.model_validate(editing.typed_json(raw))
    except (ValueError, ValidationError) as exc:
        st.session_state["adj-error"] = f"The corrected answer is not a valid gold answer: {exc}"
        return
    decide(user, item_id, "fix_gold", fixed=fixed)


# -- views -------------------------------------------------------------------------------------------------


def answer_view(answer: Answer) -> None:
    st.text(BEHAVIOR[answer.behavior])
    for call in answer.calls:
        st.code(f"{call.name}({render.pretty_json(call.arguments)})", language="json", wrap_lines=True)


def agent_view(payload: Any) -> None:
    calls = payload.get("actual") or []
    if not calls:
        st.text("No tool call" + (f": {payload['text']}" if payload.get("text") else ""))
    for call in calls:
        st.code(f"{call.get('name')}({render.pretty_json(call.get('arguments'))})", language="json",
                wrap_lines=True)


def gold_view(case: GoldCase | None, version: str | None) -> None:
    if case is None:
        st.text("The gold case is no longer in the store.")
        return
    render.caption(f"Gold ({version or 'live, not frozen'})")
    answer_view(case.expected)
    for n, alternative in enumerate(case.alternatives, start=1):
        st.caption(f"Alternative {n}")
        answer_view(alternative)
    if case.rationale:
        st.text("Why: " + case.rationale)


def conversation_view(case: GoldCase | None) -> None:
    if case is None or not case.messages:
        st.text("(no conversation is stored with this case)")
        return
    render.conversation(Transcript(id=case.conversation_id or case.id, messages=case.messages, tools=case.tools))


def judge_view(item: AdjudicationItem) -> None:
    v = item.verdict
    if v is None:
        st.text("The judge's record of this item is missing.")
        return
    with st.container(key="adj-verdict"):
        confidence = "" if v.confidence is None else f" · confidence {v.confidence:.2f}"
        st.text(f"Judge: {VERDICTS.get(v.verdict or '', v.verdict or '?')}{confidence}")
        st.text("Rationale: " + (v.rationale or v.problem or "(none)"))
        render.caption(f"{v.model} · prompt {v.prompt_version} · {v.input_tokens} + {v.output_tokens} tokens")
    if v.kind == "semantic_argument":
        st.text(f"{v.inputs.get('tool')}.{v.inputs.get('argument')} must capture: {v.inputs.get('intent')}")
        st.text(f"The agent sent: {json.dumps(v.inputs.get('actual'), ensure_ascii=False)}")
    for note in v.inputs.get("differences") or ():
        st.text("• " + str(note))
    with st.expander("The question as the judge saw it", icon=":material/help:"):
        content = v.request.get("messages", [{}])[0].get("content", "")
        st.code(data_block(content) if "<data>" in content else content, language="json", wrap_lines=True)


def actions(user: User, item: AdjudicationItem) -> None:
    iid = item.item_id
    st.text_area("Note (why; required for 'judge wrong')", key=f"adj-note-{iid}", height=80)
    with st.container(horizontal=True, key="adj-actions"):
        st.button("Confirm defect", key=f"adj-defect-{iid}", icon=":material/bug_report:", on_click=decide,
                  args=(user, iid, "confirm_defect"))
        st.button("Accept as alternative", key=f"adj-accept-{iid}", type="primary", icon=":material/add_task:",
                  on_click=decide, args=(user, iid, "accept_alternative"),
                  help="Adds the agent's answer as an acceptable alternative in a new gold version.")
    with st.expander("Gold is wrong — fix it", icon=":material/edit:"):
        try:
            start = agent_answer(item.payload).model_dump(mode="json")
        except StoreError:
            start = item.case.expected.model_dump(mode="json") if item.case else {"behavior": "no_call"}
        st.text_area("The corrected gold answer (JSON)", key=f"adj-fix-{iid}", height=180,
                     value=json.dumps(start, indent=2, ensure_ascii=False))
        st.button("Save the fix as a new version", key=f"adj-fix-save-{iid}", on_click=fix_gold, args=(user, iid))
    with st.expander("Judge wrong", icon=":material/gavel:"):
        judged = item.verdict.verdict if item.verdict else None
        choices = [v for v in VERDICTS if v not in ("needs_review", judged)]
        st.selectbox("The right verdict", choices, format_func=VERDICTS.__getitem__, key=f"adj-right-{iid}")
        st.button("Record: the judge was wrong", key=f"adj-wrong-{iid}", on_click=judge_wrong, args=(user, iid))


def detail(user: User, item: AdjudicationItem) -> None:
    st.button("Back to the queue", icon=":material/arrow_back:", type="tertiary", on_click=select_item,
              args=(None,), key="adj-back")
    with st.container(key="adj-head"):
        question = QUESTIONS.get(str(item.payload.get("question")), "Judge item")
        run = item.payload.get("run") or "unnamed run"
        st.text(f"{item.case_id} · {question} · run {run}, trial {item.payload.get('trial', 0)}")
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.subheader("Conversation up to the turn")
        conversation_view(item.case)
    with right:
        st.subheader("Gold")
        with st.container(key="adj-gold"):
            gold_view(item.case, item.version)
        st.subheader("The agent")
        with st.container(key="adj-agent"):
            agent_view(item.payload)
        st.subheader("The judge")
        judge_view(item)
        actions(user, item)


def queue(items: list[AdjudicationItem]) -> None:
    for n, item in enumerate(items):
        with st.container(key=f"adj-row-{n}"):
            cells = st.columns([3, 2, 3, 1], vertical_alignment="center")
            cells[0].text(item.case_id)
            cells[1].text(QUESTIONS.get(str(item.payload.get("question")), "?")
                          + (" · sample" if item.payload.get("calibration_sample") else ""))
            verdict = item.verdict.verdict if item.verdict else item.payload.get("verdict")
            cells[2].text(f"judge: {VERDICTS.get(str(verdict), str(verdict))}")
            cells[3].button("Open", key=f"adj-open-{item.item_id}", type="tertiary", on_click=select_item,
                            args=(item.item_id,))


render.inject_style()
user = identity.require("reviewer", "admin")
store = context.store()
st.title("Adjudication")
st.caption("Judge verdicts that need a person: confirm the defect, accept the agent's answer as an alternative "
           "(a new gold version), fix the gold, or say the judge was wrong. Your decisions calibrate the judge.")
flash()
judge_key.no_key_notice()
items = store.adjudication_queue(actor=user.name)
chosen = selected_item()
if chosen is not None:
    current: AdjudicationItem | None
    try:
        current = store.adjudication_item(chosen, actor=user.name)
    except StoreError as exc:
        st.text(str(exc))
        current = None
    if current is not None and current.status != "resolved":
        detail(user, current)
        st.stop()
    select_item(None)
if not items:
    with st.container(key="adj-empty"):
        st.text("No judge verdict waits for a reviewer.")
else:
    st.text(f"{len(items)} item(s) wait for a decision.")
    queue(items)
