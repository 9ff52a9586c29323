"""Rendering for the review pages: a gold case version as a compact, inert card, and flash messages.

Everything that came from a transcript, a label or a tool schema goes through ``st.text`` / ``st.code`` (or
``render.md_label`` where Streamlit reads Markdown), as on the other pages.
"""

from __future__ import annotations

import re

import streamlit as st

from labeler.app import render
from labeler.labels import ORDER_MODES
from labeler.store import ReviewCandidate
from scorer.matchers import describe
from scorer.model import Answer, ForbiddenCall, GoldCase

BEHAVIOR = {"call": "Call", "no_call": "No tool call", "clarify": "Ask the user"}


def safe_key(text: str) -> str:
    """A widget or container key (a CSS class in the page) from any text."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


def flash(prefix: str) -> None:
    """Show (once) the error or confirmation a callback left in the session state under ``prefix``."""
    if f"{prefix}-error" in st.session_state:
        with st.container(key=f"err-{prefix}"):
            render.error(st.session_state.pop(f"{prefix}-error"), icon=":material/block:")
    if f"{prefix}-done" in st.session_state:
        with st.container(key=f"{prefix}-done"):
            render.success(st.session_state.pop(f"{prefix}-done"), icon=":material/check:")


def answer_lines(answer: Answer) -> None:
    if answer.behavior != "call":
        st.text(BEHAVIOR[answer.behavior])
        return
    for call in answer.calls:
        st.code(f"{call.name}({render.pretty_json(call.arguments)})", language="json", wrap_lines=True)
    if answer.tool_only:
        st.caption("tool only: any arguments")


def steps(answer: Answer) -> None:
    """What a trajectory expects: its steps by number, or no action at all (a trajectory has no turn decision:
    call / no call / ask the user)."""
    if answer.behavior != "call" or not answer.calls:
        st.text("Expected: no action (no call at all)")
        return
    n = len(answer.calls)
    st.text(f"Expected: {n} step{'s' if n != 1 else ''}")
    for step, call in enumerate(answer.calls):
        st.code(f"step {step}: {call.name}({render.pretty_json(call.arguments)})", language="json", wrap_lines=True)
    if answer.tool_only:
        st.caption("tool only: any arguments")


def dependency_text(case: GoldCase, step: int) -> str:
    """Which earlier steps step ``step`` must come after, by number and tool ("none" when free)."""
    requires = next((d.requires for d in case.after if d.step == step), ())
    calls = case.expected.calls
    return ", ".join(f"step {r}" + (f" ({calls[r].name})" if r < len(calls) else "") for r in requires) or "none"


def forbidden_text(forbidden: ForbiddenCall) -> str:
    limited = f" with {render.pretty_json(forbidden.arguments)}" if forbidden.arguments else ""
    return forbidden.name + limited + (f" ({forbidden.reason})" if forbidden.reason else "")


def trajectory_lines(case: GoldCase) -> None:
    """What a trajectory case holds beyond its calls: how strictly the order counts, which step waits for
    which, and the calls that must not happen."""
    st.text(f"Order: {ORDER_MODES[case.order_mode]}")
    for dep in case.after:
        step = case.expected.calls[dep.step].name if dep.step < len(case.expected.calls) else "?"
        st.text(f"step {dep.step} ({step}) only after {dependency_text(case, dep.step)}")
    if case.forbidden:
        st.text("Forbidden: " + "; ".join(forbidden_text(f) for f in case.forbidden))


def case_card(case: GoldCase, *, own_tags: bool = True) -> None:
    """The expected answer, how each argument is compared, alternatives, tags and rationale. ``own_tags``
    False: the tags are not this version's own (the agent's answer carries the gold's tags if accepted)."""
    if case.kind == "trajectory":
        steps(case.expected)
    else:
        st.text(f"Decision: {BEHAVIOR[case.expected.behavior]}")
        answer_lines(case.expected)
    for tool, rules in sorted(case.arg_rules.items()):
        for arg, rule in sorted(rules.items()):
            gold = next((c.arguments.get(arg) for c in case.expected.calls if c.name == tool), None)
            st.text(f"{tool}.{arg}: {describe(rule, gold, case.reference_time)}"
                    + (" · may be omitted" if rule.optional else ""))
    if case.kind == "trajectory":
        trajectory_lines(case)
    for n, alternative in enumerate(case.alternatives, start=1):
        st.caption(f"Alternative {n}")
        (steps if case.kind == "trajectory" else answer_lines)(alternative)
    if case.tags and own_tags:
        st.text("Tags: " + ", ".join(case.tags))
    elif case.tags:
        st.caption("No tags of its own (the agent's answer); accepting it keeps the gold's tags: "
                   + ", ".join(render.md_label(t) for t in case.tags))
    if case.rationale:
        st.text("Why: " + case.rationale)


def candidate_card(candidate: ReviewCandidate, *, chosen: bool) -> None:
    with st.container(border=True, key=f"cand-{safe_key(candidate.key)}"):
        st.text(("▶ " if chosen else "") + candidate.title)
        if len(candidate.annotators) > 1:
            st.caption("Same as: " + ", ".join(render.md_label(a) for a in candidate.annotators[1:]))
        if candidate.case is None:
            st.text("Cannot be approved as it is:")
            for problem in candidate.problems:
                st.text("• " + problem)
            return
        case_card(candidate.case, own_tags=candidate.key not in ("observed", "agent"))
