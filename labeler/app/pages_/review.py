"""Review: what needs a reviewer's decision, the versions side by side, and the decision.

Reviewers and admins see the queue (annotator disagreements, unsure flags, judge mismatches), the
re-labeling queue (schema drift) and the uncontested cases to approve. Annotators see what was sent back to
them, with the reviewer's comment. The store checks the role again on every decision: a page opened before
a role changed cannot approve anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st
from pydantic import ValidationError

from labeler.app import call_editor, context, editing, identity, render, review_view, trajectory_panel
from labeler.app.editing import Item, Work
from labeler.labels import (
    LabelBody,
    LabelIncomplete,
    body_from_case,
    case_from_body,
    trajectory_body_from_case,
    trajectory_case_from_body,
)
from labeler.store import REVIEWER_ROLES, ReviewDetail, StoreError, User
from scorer.drift import migrate_case
from scorer.model import GoldCase

ITEM_PARAM = "item"
KINDS = {"disagreement": "Annotators disagree", "unsure": "Flagged unsure",
         "changed_after_approval": "Changed after approval", "disputes_import": "Disputes imported gold",
         "judge_mismatch": "Judge mismatch"}
FIELD_NAMES = {"decision": "decision kind", "tool": "tool", "label": "whole label"}
EDITABLE = ("expected", "alternatives", "arg_rules", "tags", "rationale")  # not provenance: who labeled is a fact
TRAJECTORY_EDITABLE = (*EDITABLE, "required_args", "order", "after", "forbidden")


def act(done: str, run: Callable[[], object], *, close: bool = False) -> None:
    """Run a store action from a callback; keep its outcome for the next run of the page (``close``: and
    leave the item once it succeeded)."""
    try:
        run()
    except StoreError as exc:
        st.session_state["review-error"] = str(exc)
    else:
        if close:
            select_item(None)
        st.session_state["review-done"] = done


def select_item(item_id: int | None) -> None:
    if item_id is None:
        st.query_params.pop(ITEM_PARAM, None)
    else:
        st.query_params[ITEM_PARAM] = str(item_id)


def selected_item() -> int | None:
    raw = st.query_params.get(ITEM_PARAM)
    return int(raw) if raw and raw.isdigit() else None


# -- decisions (callbacks) ---------------------------------------------------------------------------------


def accept(user: User, item_id: int) -> None:
    choice = st.session_state[f"choice-{item_id}"]
    comment = st.session_state.get(f"comment-{item_id}", "")
    act(f"Approved {choice} for item {item_id}",
        lambda: context.store().accept_review(item_id, choice, actor=user.name, comment=comment), close=True)


def edit_and_accept(user: User, item_id: int, base: GoldCase, item: Item, work: Work) -> None:
    """Approve the reviewer's edit: the editor's body on top of the chosen version, checked against the tool
    schemas here (what to fix, next to the editor) and again by the store, which records the decision."""
    comment = st.session_state.get(f"comment-{item_id}", "")
    try:
        case = (case_from_body(work.body, base) if isinstance(work.body, LabelBody)
                else trajectory_case_from_body(work.body, base))
    except LabelIncomplete as exc:
        work.tried_submit = True  # every schema error of the editor shows now
        st.session_state["review-error"] = "The edit cannot be approved: " + "; ".join(exc.problems)
        return

    def approve() -> None:
        context.store().edit_and_accept(item_id, case, actor=user.name, comment=comment)
        editing.forget(item)

    act(f"Approved your edit for item {item_id}", approve, close=True)


def edit_json_and_accept(user: User, item_id: int, base: GoldCase) -> None:
    """The advanced path for a trajectory: what the step editor cannot express, as JSON."""
    raw = st.session_state[f"edit-json-{item_id}"]
    comment = st.session_state.get(f"comment-{item_id}", "")
    try:
        changes = editing.typed_json(raw)
        if not isinstance(changes, dict):
            raise ValueError("expected a JSON object")
        if fixed := sorted(set(changes) - set(TRAJECTORY_EDITABLE)):  # who labeled (provenance) is a fact
            raise ValueError(f"only {', '.join(TRAJECTORY_EDITABLE)} can be edited here, not {', '.join(fixed)}")
        case = GoldCase.model_validate({**base.model_dump(mode="json"), **changes})
    except (ValueError, ValidationError) as exc:
        st.session_state["review-error"] = f"The edit is not a valid gold case: {exc}"
        return
    act(f"Approved your edit for item {item_id}",
        lambda: context.store().edit_and_accept(item_id, case, actor=user.name, comment=comment), close=True)


def review_work(user: User, item_id: int, chosen: str, base: GoldCase) -> tuple[Item, Work]:
    """The reviewer's working copy of the chosen version, in the labeling editor's shape (one per version)."""
    item = Item(base.conversation_id or base.id, base.turn, f"review:{item_id}:{chosen}:{user.name}", scratch=True)
    key = f"work:{item.key}"
    if key not in st.session_state:
        body = body_from_case(base) if base.kind == "turn" else trajectory_body_from_case(base)
        st.session_state[key] = Work(body, 0, None)
    work: Work = st.session_state[key]
    return item, work


def _on_decision(item: Item, work: Work, key: str) -> None:
    behavior = st.session_state[key]
    editing.change(item, work, decision="different" if behavior == "call" else behavior)


def _on_rationale(item: Item, work: Work, key: str) -> None:
    editing.change(item, work, rationale=st.session_state[key] or "")


def _on_tags(item: Item, work: Work, key: str) -> None:
    editing.change(item, work, tags=tuple(st.session_state[key] or ()))


def edit_section(user: User, item_id: int, chosen: str, base: GoldCase) -> None:
    """Edit and accept with the labeling editor: the decision, each expected call as a form generated from
    the tool's JSON Schema (errors next to the argument), match rules, tags and rationale."""
    item, work = review_work(user, item_id, chosen, base)
    body = work.body
    assert isinstance(body, LabelBody)
    tools = {t.name: t for t in base.tools}
    behaviors = list(review_view.BEHAVIOR)
    key = editing.widget_key(item, work, "decision")
    st.radio("Decision", behaviors, index=behaviors.index(body.behavior or "call"), key=key, horizontal=True,
             format_func=review_view.BEHAVIOR.get, on_change=_on_decision, args=(item, work, key))
    if body.expects_calls:
        for n in range(len(body.calls)):
            call_editor.call_editor(item, work, n, tools, [])
        call_editor.tool_picker(item, work, tools, [])
    _tags_why_accept(user, item_id, base, item, work)


def trajectory_edit_section(user: User, item_id: int, chosen: str, base: GoldCase) -> None:
    """Edit and accept a trajectory case with the labeling panel's step editor: the steps in order (each a
    form from its tool's JSON Schema, required keys, match rules), the order mode, dependencies, forbidden
    calls, tags and rationale. What it cannot express (alternative trajectories, a forbidden call limited
    to some arguments, its reason) is kept as it was, and can be changed as JSON under Advanced."""
    item, work = review_work(user, item_id, chosen, base)
    trajectory_panel.steps_editor(item, work, {t.name: t for t in base.tools})
    _tags_why_accept(user, item_id, base, item, work)
    if st.toggle("Advanced: edit as JSON (alternative trajectories, forbidden-call arguments and reasons)",
                 key=f"edit-json-open-{item_id}"):
        editable = {k: v for k, v in base.model_dump(mode="json").items() if k in TRAJECTORY_EDITABLE}
        st.text_area("The chosen version's answer as JSON: change it, then accept", key=f"edit-json-{item_id}",
                     value=json.dumps(editable, indent=2, ensure_ascii=False), height=260)
        st.button("Accept the JSON edit", key=f"edit-json-accept-{item_id}", on_click=edit_json_and_accept,
                  args=(user, item_id, base))


def _tags_why_accept(user: User, item_id: int, base: GoldCase, item: Item, work: Work) -> None:
    body = work.body
    known = sorted({t.tag for t in context.store().tags()} | set(body.tags))
    tags_key = editing.widget_key(item, work, "tags")
    st.multiselect("Tags", known, default=list(body.tags), key=tags_key, format_func=render.md_label,
                   on_change=_on_tags, args=(item, work, tags_key))
    why_key = editing.widget_key(item, work, "rationale")
    st.text_area("Rationale", value=body.rationale, key=why_key, height=80, on_change=_on_rationale,
                 args=(item, work, why_key))
    if work.error:
        render.error(work.error)
    st.button("Edit and accept", key=f"edit-accept-{item_id}", type="primary", icon=":material/edit:",
              on_click=edit_and_accept, args=(user, item_id, base, item, work))


def reject(user: User, item_id: int) -> None:
    comment = st.session_state.get(f"comment-{item_id}", "")
    act(f"Sent item {item_id} back to its annotators",
        lambda: context.store().reject_review(item_id, actor=user.name, comment=comment), close=True)


def escalate(user: User, item_id: int) -> None:
    comment = st.session_state.get(f"comment-{item_id}", "")
    act(f"Escalated item {item_id} to the admins",
        lambda: context.store().escalate_review(item_id, actor=user.name, comment=comment))


def approve_uncontested(user: User, case_ids: list[str]) -> None:
    act(f"Approved {len(case_ids)} uncontested cases",
        lambda: context.store().approve_cases(case_ids, actor=user.name))


def migrate(user: User, item_id: int) -> None:
    act(f"Migrated re-labeling item {item_id}", lambda: context.store().resolve_relabel(item_id, actor=user.name))


def dismiss(user: User, item_id: int) -> None:
    note = st.session_state.get(f"dismiss-note-{item_id}", "")
    act(f"Dismissed re-labeling item {item_id}",
        lambda: context.store().dismiss_relabel(item_id, actor=user.name, note=note))


# -- views ---------------------------------------------------------------------------------------------------


def annotator_view(user: User) -> None:
    """What a reviewer sent back to this annotator, with why."""
    st.subheader("Returned to you")
    returned = context.store().returned_to(user.name)
    if not returned:
        st.text("Nothing was sent back to you. Reviewing is for reviewers and admins.")
        return
    for n, item in enumerate(returned):
        transcript_id, _, turn = item.ref.rpartition("#t")
        with st.container(border=True, key=f"returned-{n}"):
            st.text(f"{item.ref} · {item.decided_by} · {item.decided_at}")
            st.text(f"Why: {item.comment}")
            st.page_link("pages_/label.py", label="Label it again", icon=":material/label:",
                         query_params={context.TRANSCRIPT_PARAM: transcript_id, context.TURN_PARAM: turn})


def queue_list(user: User) -> None:
    store = context.store()
    kinds = st.pills("Show", list(KINDS), format_func=KINDS.__getitem__, selection_mode="multi", default=list(KINDS),
                     key="review-kinds")
    items = store.review_queue(actor=user.name, kinds=kinds or list(KINDS))
    if not items:
        with st.container(key="queue-empty"):
            st.text("Nothing needs a decision.")
        return
    for cell, name in zip(st.columns([3, 2, 4, 1]), ["Case", "Why it is here", "What differs / who", ""],
                          strict=True):
        cell.caption(name)
    for n, item in enumerate(items):
        with st.container(key=f"review-row-{n}"):
            cells = st.columns([3, 2, 4, 1], vertical_alignment="center")
            cells[0].text(item.ref)
            cells[1].text(KINDS[item.kind] + (" · escalated" if item.status == "escalated" else ""))
            fields = item.payload.get("fields") or []
            who = item.payload.get("annotators") or []
            cells[2].text(", ".join(FIELD_NAMES.get(f, f.removeprefix("arg:")) for f in fields)
                          or ", ".join(str(a) for a in who) or str(item.payload.get("verdict", "")))
            cells[3].button("Open", key=f"review-open-{item.id}", type="tertiary", on_click=select_item,
                            args=(item.id,))


class Shown(str):
    """A difference already worded for people (not a JSON value)."""


def _shown_value(value: object) -> str:
    if isinstance(value, Shown):
        return str(value)
    return "missing" if value is MISSING else json.dumps(value, ensure_ascii=False, default=str)


MISSING = object()


def _step_name(n: int) -> str:
    return f"step {n}"


def _call_name(n: int) -> str:
    return f"call {n + 1}"


def differences(detail: ReviewDetail) -> list[str]:
    """One line per field the candidates disagree on, each candidate's value beside its name: 2024-05-20 next
    to 2024-05-21 is what a reviewer must see first."""
    cases = [(c.title, c.case) for c in detail.candidates if c.case is not None]
    if len(cases) < 2:
        return []
    fields: dict[str, dict[str, object]] = {}
    steps = max(len(case.expected.calls) for _, case in cases)
    for title, case in cases:
        trajectory = case.kind == "trajectory"
        call = _step_name if trajectory else _call_name  # numbered as each editor numbers them
        fields.setdefault("decision", {})[title] = case.expected.behavior
        for n, made in enumerate(case.expected.calls):
            fields.setdefault(f"{call(n)} tool", {})[title] = made.name
        keys = {(n, k) for _, other in cases for n, c in enumerate(other.expected.calls) for k in c.arguments}
        for n, k in sorted(keys):
            calls = case.expected.calls
            value = calls[n].arguments.get(k, MISSING) if n < len(calls) else MISSING
            fields.setdefault(f"{call(n)} {k}", {})[title] = value
        if trajectory:
            fields.setdefault("order", {})[title] = case.order_mode
            for n in range(1, steps):
                fields.setdefault(f"step {n} only after", {})[title] = Shown(review_view.dependency_text(case, n))
            fields.setdefault("forbidden", {})[title] = Shown(
                "; ".join(review_view.forbidden_text(f) for f in case.forbidden) or "none")
    lines = []
    for name, values in fields.items():
        shown = {title: _shown_value(values.get(title, MISSING)) for title, _ in cases}
        if len(set(shown.values())) > 1:
            lines.append(f"{name}: " + " · ".join(f"{title} {value}" for title, value in shown.items()))
    return lines


def next_item(user: User, item_id: int) -> None:
    """Open the queue's next item after this one (or the first)."""
    ids = [i.id for i in context.store().review_queue(actor=user.name)]
    later = [i for i in ids if i > item_id] or [i for i in ids if i != item_id]
    select_item(later[0] if later else None)


def detail_view(user: User, detail: ReviewDetail) -> None:
    item = detail.item
    st.button("Back to the queue", icon=":material/arrow_back:", type="tertiary", on_click=select_item,
              args=(None,), key="review-back")
    with st.container(key="review-head"):
        st.text(f"{item.ref} · {KINDS[item.kind]} · {item.status}")
        if detail.disagreeing:
            st.text("Disagree on: " + ", ".join(FIELD_NAMES.get(f, f.removeprefix("arg:"))
                                                for f in detail.disagreeing))
        escalation = item.payload.get("escalation")
        if isinstance(escalation, dict):
            st.text(f"Escalated by {escalation.get('by')}: {escalation.get('comment')}")
        if item.kind == "judge_mismatch":
            st.text(f"Judge: {item.payload.get('verdict', '?')} · {item.payload.get('rationale', '')}")
    if detail.transcript_id is not None and detail.message_index is not None:
        with st.expander("Conversation up to the decision point", icon=":material/forum:"):
            render.conversation(context.transcript(detail.transcript_id), detail.message_index)
    elif detail.transcript_id is not None:  # a trajectory case is about all of it
        with st.expander("The whole conversation", icon=":material/forum:"):
            render.conversation(context.transcript(detail.transcript_id))
    keys = [c.key for c in detail.candidates]
    titles = {c.key: c.title for c in detail.candidates}
    choice_key = f"choice-{item.id}"
    chosen = st.radio("Version to approve", keys, format_func=lambda k: render.md_label(titles[k]),
                      index=keys.index(detail.preselected) if detail.preselected in keys else 0, horizontal=True,
                      key=choice_key)
    differing = differences(detail)
    if differing:
        with st.container(border=True, key="review-differences"):
            st.caption("What differs between the versions")
            for line in differing:
                st.text("≠ " + line)
    columns = st.columns(max(len(detail.candidates), 1), gap="small")
    for column, candidate in zip(columns, detail.candidates, strict=False):
        with column:
            review_view.candidate_card(candidate, chosen=candidate.key == chosen)
    if item.kind == "judge_mismatch":  # one workflow for judge items: the Adjudication page decides them
        st.page_link("pages_/adjudication.py", label="Decide it on the Adjudication page", icon=":material/gavel:")
        return
    # The store decides who may (an escalated item is an admin's); the page says so before anyone tries.
    admins_only = item.status == "escalated" and user.role != "admin"
    if admins_only:
        with st.container(key="review-admin-only"):
            st.text(f"Escalated: only an admin can decide it (you are a {user.role}). Next item (N) moves on.")
    st.text_area("Comment (why; required to reject or escalate)", key=f"comment-{item.id}", height=80)
    with st.container(horizontal=True, key="review-actions"):  # single keys do nothing while typing a comment
        st.button("Accept version", type="primary", icon=":material/check:", key=f"accept-{item.id}",
                  on_click=accept, args=(user, item.id), shortcut="A", disabled=admins_only)
        st.button("Reject and requeue", icon=":material/undo:", key=f"reject-{item.id}", on_click=reject,
                  args=(user, item.id), shortcut="D", disabled=admins_only)  # R and C are Streamlit's own
        st.button("Escalate", icon=":material/priority_high:", key=f"escalate-{item.id}", on_click=escalate,
                  args=(user, item.id), disabled=item.status == "escalated", shortcut="X")
        st.button("Next item", icon=":material/skip_next:", key=f"next-item-{item.id}", type="tertiary",
                  on_click=next_item, args=(user, item.id), shortcut="N")
    base = next((c.case for c in detail.candidates if c.key == chosen and c.case is not None), None)
    if base is not None and not admins_only:
        with st.expander("Edit and accept", icon=":material/edit:", key=f"edit-open-{item.id}", on_change="rerun"):
            if base.kind == "turn":
                edit_section(user, item.id, chosen, base)
            else:
                trajectory_edit_section(user, item.id, chosen, base)


def uncontested(user: User) -> None:
    store = context.store()
    split = st.selectbox("Split", ["regression", "rolling"], key="approve-split")
    ready = store.approvable_cases(split)
    with st.container(key="uncontested"):
        st.text(f"{len(ready)} submitted {split} cases need no decision (no disagreement, no flag, enough labels).")
    if ready:  # what the button approves, listed before it does
        with st.container(key="uncontested-cases"):
            st.table({"Case": [render.md_label(case_id) for case_id in ready]}, hide_index=True)
    st.button(f"Approve {len(ready)} uncontested cases", disabled=not ready, key="approve-uncontested",
              on_click=approve_uncontested, args=(user, ready))


def relabeling(user: User) -> None:
    store = context.store()
    items = store.relabel_queue(actor=user.name)
    if not items:
        with st.container(key="relabel-empty"):
            st.text("No gold case waits for re-labeling: the tool schemas still fit.")
        return
    for item in items:
        with st.container(border=True, key=f"relabel-{item.id}"):
            st.text(item.case_id + ("" if item.blocking else " (a note: nothing breaks)"))
            for reason in item.reasons:
                st.text("• " + reason.message)
            try:
                live = store.get_gold(item.case_id)
            except StoreError:
                live = None
            migratable = live is not None and migrate_case(live, item.tools) is not None
            with st.container(horizontal=True):
                st.button("Migrate to the new schema", key=f"migrate-{item.id}", disabled=not migratable,
                          on_click=migrate, args=(user, item.id),
                          help=None if migratable else "A person must decide: edit the case or dismiss the flag.")
                st.text_input("Why it still holds", key=f"dismiss-note-{item.id}", label_visibility="collapsed",
                              placeholder="Why the case still holds")
                st.button("Dismiss", key=f"dismiss-{item.id}", on_click=dismiss, args=(user, item.id))


def reviewer_view(user: User) -> None:
    store = context.store()
    counts = store.review_counts()  # label writes keep the queue in step: no sweep needed here
    cols = st.columns(4)
    cols[0].metric("Disagreements", counts.get("disagreement", 0))
    cols[1].metric("Unsure", counts.get("unsure", 0))
    cols[2].metric("Judge mismatches", counts.get("judge_mismatch", 0))
    cols[3].metric("Escalated", counts.get("escalated", 0))
    chosen = selected_item()
    if chosen is not None:
        try:
            detail = store.review_detail(chosen, actor=user.name)
        except StoreError as exc:
            st.text(str(exc))
            select_item(None)
        else:
            if detail.item.status == "resolved":
                select_item(None)
            else:
                detail_view(user, detail)
                return
    queue, relabel, approve = st.tabs(["Queue", "Re-labeling (schema drift)", "Approve uncontested"])
    with queue:
        queue_list(user)
    with relabel:
        relabeling(user)
    with approve:
        uncontested(user)


render.inject_style()
current = identity.require()
st.title("Review")
review_view.flash("review")
if current.role in REVIEWER_ROLES:
    reviewer_view(current)
else:
    annotator_view(current)
