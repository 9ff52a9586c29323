"""Label: the annotator's queue, and one transcript at a time with the label panel beside it."""

from __future__ import annotations

import time

import streamlit as st

from labeler.app import context, editing, identity, panel, render, trajectory_panel
from labeler.app.editing import Item
from labeler.store import DatabaseBusy, QueueFilter, StoreError, TurnWindow, User
from scorer.model import Transcript

ANY = "Any"
DID = {"call": "the agent called a tool", "text": "the agent answered in text", "open": "the agent has not answered yet"}
VIEWS = ("Turns", "Trajectory")  # the URL carries the label: ?view=Trajectory
STATUSES = {"unlabeled": "Has unlabeled turns", "draft": "My drafts", "submitted": "My submitted labels", ANY: ANY}
KEYS = [
    ("0 · 1 · 2 · 3", "No tool call · Same as observed · Different call · Should ask the user"),
    ("Ctrl/⌘ + Enter", "Submit & next"),
    ("← / → or K / J", "Previous / next decision point"),
    ("N", "Next transcript from the queue"),
    ("Alt + F", "Flag unsure: send to review"),
    ("E", "Edit a submitted label (Escape discards the edit)"),
    ("H", "This cheatsheet"),
]


@st.dialog("Keyboard shortcuts")
def cheatsheet() -> None:
    st.table({"Keys": [k for k, _ in KEYS], "Action": [a for _, a in KEYS]}, hide_index=True)
    st.caption("Single keys do nothing while you type in a field; Ctrl/⌘ and Alt combinations always work.")


def goto(transcript_id: str | None, message_index: int | None = None) -> None:
    context.select(transcript_id, message_index)


def start_next(user: User, queue_filter: QueueFilter, skip: str | None = None) -> None:
    store = context.store()
    following = store.claim_next(user.name, queue_filter, skip=skip)
    if following is None:
        st.session_state["queue-finished"] = True
        goto(None)
        return
    goto(following, store.turn_window(following, user.name).selected.message_index)


def queue_filter_widgets() -> QueueFilter:
    store = context.store()
    cols = st.columns([2, 2, 2, 2, 3])
    source = cols[0].selectbox("Source", [ANY, *store.sources()], key="qsource", bind="query-params")
    tag = cols[1].selectbox("Tag", [ANY, *[t.tag for t in store.tags()]], key="qtag", bind="query-params")
    tool = cols[2].selectbox("Tool offered", [ANY, *store.tool_names()], key="qtool", bind="query-params")
    status = cols[3].selectbox("Status", list(STATUSES), format_func=STATUSES.__getitem__, key="qstatus",
                               bind="query-params")
    search = cols[4].text_input("Search", key="qsearch", bind="query-params", placeholder="id or first message")
    return QueueFilter(source=None if source == ANY else source, tag=None if tag == ANY else tag,
                       tool=None if tool == ANY else tool, status=None if status == ANY else status,
                       search=search or None)


def moved_on_notice() -> None:
    """Say so when Submit & next left a finished transcript for another one (or for the queue)."""
    moved = st.session_state.pop(panel.MOVED_ON_KEY, None)
    slot = st.container(key="notice-slot")  # always there: the page's shape does not change under a notice
    if moved is None:
        return
    finished, following = moved
    with slot, st.container(key="moved-on"):
        st.success(f"Done with {render.md_escape(finished)}: every decision point has your label or gold. "
                   + (f"Moved on to the next transcript from the queue, {render.md_escape(following)}."
                      if following else "Back to the queue."), icon=":material/skip_next:")


def queue_view(user: User) -> None:
    store = context.store()
    st.title("Label")
    moved_on_notice()
    if st.session_state.pop("queue-finished", False):
        st.success("Nothing left to label with these filters.", icon=":material/task_alt:")
    chosen = queue_filter_widgets()
    st.button("Start labeling", type="primary", icon=":material/play_arrow:", shortcut="N", key="start",
              on_click=start_next, args=(user, chosen))
    items = store.queue(user.name, chosen)
    if not items:
        st.info("No transcripts match these filters.")
    widths = [3, 2, 5, 2, 1, 2, 1]
    header = st.columns(widths)
    for cell, name in zip(header, ["Transcript", "Source", "First user message", "Progress", "Drafts", "Held by",
                                   ""], strict=True):
        cell.caption(name)
    for n, item in enumerate(items):
        with st.container(key=f"queue-row-{n}"):
            cells = st.columns(widths, vertical_alignment="center")
            for cell, value in zip(cells, [item.transcript_id, item.source, item.title, None, str(item.n_drafts),
                                           item.leased_by or ""], strict=False):
                if value is not None:
                    cell.text(value)
            imported = max(0, item.n_done - item.n_labeled)  # gold no person has labeled yet: a candidate
            cells[3].progress(item.n_labeled / item.n_turns if item.n_turns else 0.0,
                              text=f"labeled {item.n_labeled}/{item.n_turns} turns"
                              + (f" · {imported} with imported gold" if imported else ""))
            cells[-1].button("Open", key=f"queue-open-{n}", type="tertiary", on_click=goto,
                             args=(item.transcript_id, None))
    totals = store.annotator_totals()
    if totals:
        with st.expander("Per-annotator totals"):
            st.table({"Annotator": [render.md_label(x.annotator) for x in totals], "Submitted": [x.submitted for x in totals],
                      "Drafts": [x.drafts for x in totals], "Unsure": [x.unsure for x in totals]},
                     hide_index=True)


MAP_SPAN = 5  # decision points shown each side of the selected one in the turn map


def minimap(transcript_id: str, window: TurnWindow) -> None:
    """The turn map: the decision points around the selected one ("◀ 1 … 195 … 200 … 205 … 300 ▶"), so
    its size does not grow with the transcript; ◀ / ▶ jump a whole window. ``window`` (the store's
    ``turn_window``) holds the states within 2 × MAP_SPAN + 1 of the selected one, the first and the last."""
    position, total, selected = window.position, window.total, window.selected.message_index
    low, high = max(0, position - MAP_SPAN), min(total, position + MAP_SPAN + 1)
    shown = list(range(low, high))
    if low > 0:
        shown = [0, *shown]
    if high < total:
        shown = [*shown, total - 1]
    with st.container(horizontal=True, key="minimap", gap="small", vertical_alignment="center"):
        if low > 0:
            back = window.at(max(0, position - 2 * MAP_SPAN - 1)) or window.states[0]
            st.button("◀", key="mm-back", type="tertiary", help=f"Decision point {back.ordinal + 1}",
                      on_click=goto, args=(transcript_id, back.message_index))
        previous = None
        for n in shown:
            if previous is not None and n > previous + 1:
                st.text("…")
            previous = n
            s = window.at(n)
            if s is None:
                continue
            status = ("done" if s.done else "draft" if s.label_status == "draft"
                      else "overlap" if s.awaits_overlap else "open")
            st.button(str(s.ordinal + 1), key=f"mm-{status}-{s.message_index}",
                      type="primary" if s.message_index == selected else "secondary",
                      help=f"Decision point {s.ordinal + 1}: {DID.get(s.observed_behavior, s.observed_behavior)}; {status}",
                      on_click=goto, args=(transcript_id, s.message_index))
        if high < total:
            ahead = window.at(min(total - 1, position + 2 * MAP_SPAN + 1)) or window.states[-1]
            st.button("▶", key="mm-ahead", type="tertiary", help=f"Decision point {ahead.ordinal + 1}",
                      on_click=goto, args=(transcript_id, ahead.message_index))


LEASE_BUSY_BACKOFF_SECONDS = 30.0


def hold_lease(user: User, transcript_id: str) -> None:
    """Lease the transcript when this session opens it; say so when someone else holds it."""
    if st.session_state.get("leased") != transcript_id and time.monotonic() >= st.session_state.get("lease-busy", 0):
        try:
            lease = context.store().take_lease(transcript_id, user.name)
        except DatabaseBusy:
            # The lease is advisory: a database too busy to record it must not keep the page (and a pending
            # edit restored on it) from showing. Tried again a little later.
            st.session_state["lease-busy"] = time.monotonic() + LEASE_BUSY_BACKOFF_SECONDS
            return
        st.session_state["leased"] = transcript_id
        st.session_state["lease-holder"] = lease.holder
    holder = st.session_state.get("lease-holder")
    if holder and holder != user.name:
        with st.container(key="lease-warning"):
            st.warning("Another annotator holds this transcript; your labels stay your own.",
                       icon=":material/group:")
            st.text(f"Held by {holder}")


def trajectory_view(user: User, tr: Transcript) -> None:
    st.text(f"{tr.id} · the whole conversation · {sum(len(m.tool_calls) for m in tr.messages)} calls by the agent")
    left, right = st.columns([3, 2], gap="large")
    with left:
        with st.expander(f"Tools offered ({len(tr.tools)})", icon=":material/build:"):
            render.tool_specs(tr.tools)
        render.conversation(tr)
    with right:
        item = Item(tr.id, None, user.name)
        editing.keep_only(item)
        trajectory_panel.trajectory_panel(item, tr, editing.load(item, tr).status)


def labeling_view(user: User, transcript_id: str) -> None:
    store = context.store()
    try:
        tr = context.transcript(transcript_id)
        window = store.turn_window(transcript_id, user.name, context.selected_turn(), span=2 * MAP_SPAN + 1)
    except StoreError as exc:
        st.button("Back to the queue", icon=":material/arrow_back:", type="tertiary", on_click=goto, args=(None,))
        st.text(str(exc))
        return
    state, position, total = window.selected, window.position, window.total
    selected = state.message_index
    if context.selected_turn() != selected:
        context.select(transcript_id, selected)
    previous_turn = window.previous if window.previous is not None else selected
    next_turn = window.following if window.following is not None else selected
    hold_lease(user, transcript_id)
    moved_on_notice()

    top = st.columns([6, 2, 1], vertical_alignment="center")
    with top[0]:
        st.button("Queue", icon=":material/arrow_back:", type="tertiary", on_click=goto, args=(None,), key="to-queue")
        view = st.segmented_control("View", VIEWS, default="Turns", key="view", bind="query-params",
                                    label_visibility="collapsed") or "Turns"
    done = window.done
    with top[1]:
        with st.container(key="progress"):
            st.text(f"labeled {done}/{total} turns")
        st.progress(done / total if total else 0.0)
    if top[2].button("Keys", shortcut="H", icon=":material/keyboard:", type="tertiary", key="keys"):
        cheatsheet()
    if view == "Trajectory":
        trajectory_view(user, tr)
        return
    st.text(f"{transcript_id} · decision point {position + 1} of {total} · {DID.get(state.observed_behavior, state.observed_behavior)}")
    overlap = [o + 1 for o in window.awaiting_overlap]  # the first 20, and how many in all (SQL counts)
    if overlap:
        with st.container(key="overlap-waiting"):
            st.text(f"{window.n_awaiting_overlap} decision point(s) await your overlap label (another annotator "
                    f"labeled them; the team compares both): {', '.join(map(str, overlap))}"
                    + (" …" if window.n_awaiting_overlap > len(overlap) else ""))

    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Previous", key="prev", shortcut="Left", icon=":material/chevron_left:", disabled=position == 0,
                  on_click=goto, args=(transcript_id, previous_turn))
        minimap(transcript_id, window)
        st.button("Next", key="next", shortcut="Right", icon=":material/chevron_right:", icon_position="right",
                  disabled=position == total - 1, on_click=goto, args=(transcript_id, next_turn))
        st.button("Next transcript", key="next-transcript", shortcut="N", type="tertiary",
                  on_click=start_next, args=(user, QueueFilter(status="unlabeled"), transcript_id))
    with st.container(key="hidden-keys"):  # j / k as well as the arrows; the buttons are hidden by CSS
        st.button("next turn", key="next-j", shortcut="J", on_click=goto, args=(transcript_id, next_turn))
        st.button("previous turn", key="prev-k", shortcut="K", on_click=goto, args=(transcript_id, previous_turn))

    left, right = st.columns([3, 2], gap="large")
    with left:
        # Drawn only while open (a rerun opens it): closed, the schemas cost every turn's run nothing.
        with st.expander(f"Tools offered at this point ({len(tr.tools)})", icon=":material/build:",
                         key=f"tools-open:{tr.id}", on_change="rerun") as tools:
            if tools.open:
                render.tool_specs(tr.tools)
        render.conversation(tr, selected, fold_before=window.previous or 0)
    with right:
        item = Item(transcript_id, selected, user.name)
        editing.keep_only(item)
        work = editing.load(item, tr)
        panel.label_panel(item, tr, state, work.status, window)


render.inject_style()
current_user = identity.require()
chosen = context.selected_transcript()
if chosen:
    labeling_view(current_user, chosen)
else:
    queue_view(current_user)
