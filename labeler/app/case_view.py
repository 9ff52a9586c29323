"""One scored result side by side: what the gold expects next to what the agent did, under the context the
agent saw. Every piece of case text goes through ``labeler.app.render``: shown inert, never as Markdown."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from labeler.app import render
from labeler.store import CaseDetail
from scorer.model import Answer, GoldCase, RunCall, ToolCallRef, Transcript

CONTEXT_TAIL = 6
"""Messages shown open above the decision; earlier ones sit in a collapsed expander."""

BEHAVIOR = {"call": "Call", "no_call": "No tool call", "clarify": "Ask the user first"}


def _call_card(name: str, arguments: dict[str, Any] | str, key: str) -> None:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    render.tool_call_card(ToolCallRef(id=key, function={"name": name, "arguments": raw}), key=key)


def _answer(answer: Answer, key: str) -> None:
    st.text(BEHAVIOR.get(answer.behavior, answer.behavior) + (" (tool names only)" if answer.tool_only else ""))
    for n, call in enumerate(answer.calls):
        _call_card(call.name, call.arguments, key=f"{key}-{n}")


def _gold_side(gold: GoldCase | None) -> None:
    st.caption("Gold expects")
    if gold is None:
        st.text("(the gold case was not saved with this run)")
        return
    _answer(gold.expected, "gold-call")
    if gold.alternatives:
        with st.expander(f"Also accepted ({len(gold.alternatives)})"):
            for n, alternative in enumerate(gold.alternatives):
                _answer(alternative, f"alt-{n}-call")
    if gold.rationale:
        st.caption("Why")
        st.text(gold.rationale)


def _actual_side(detail: CaseDetail) -> None:
    st.caption("The agent did")
    run = detail.actual
    if run is None:
        st.text("(what the agent did was not saved with this run)")
        return
    calls: tuple[RunCall, ...] = run.actual_calls()
    st.text(f"{len(calls)} call(s)" if calls else "No tool call")
    for n, call in enumerate(calls):
        _call_card(call.name, call.arguments, key=f"actual-call-{n}")
    if run.text:
        st.caption("Reply text")
        st.text(run.text)


def side_by_side(detail: CaseDetail) -> None:
    s = detail.summary
    with st.container(key="case-view", border=True):
        st.text(f"{s.case_id}" + (f" · trial {s.trial}" if s.trial else "") + f" · {s.status}")
        errors = detail.result.errors if detail.result else ()
        for n, error in enumerate(errors):
            with st.container(key=f"err-{n}"):
                st.text(f"{error.code.value}: {error.note}")
        for review in detail.result.reviews if detail.result else ():
            st.text(f"needs review: {review.tool}.{review.arg} ({review.reason or review.verdict})")
        gold_col, actual_col = st.columns(2, gap="large")
        with gold_col, st.container(key="gold-side"):
            _gold_side(detail.gold)
        with actual_col, st.container(key="actual-side"):
            _actual_side(detail)
        gold = detail.gold
        if gold is not None and gold.messages:
            st.caption("The context the agent saw")
            with st.container(key="case-context"):
                tr = Transcript(id=gold.id, messages=gold.messages, tools=gold.tools)
                render.conversation(tr, fold_before=max(0, len(gold.messages) - CONTEXT_TAIL))
        if gold is not None and gold.tools:
            with st.expander(f"Tools offered ({len(gold.tools)})", icon=":material/build:"):
                render.tool_specs(gold.tools)
