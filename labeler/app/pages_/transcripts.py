"""Transcripts: what is in the store, with filters; one transcript opened as a conversation."""

from __future__ import annotations

import streamlit as st

from labeler.app import context, render
from labeler.store import StoreError, TranscriptSummary

PAGE_SIZE = 50
COLUMNS = [("Transcript", 3), ("Source", 2), ("First user message", 6), ("Turns", 1), ("Tool calls", 1),
           ("Labeled", 1), ("Unlabeled", 1), ("", 1)]


def transcript_row(n: int, row: TranscriptSummary) -> None:
    with st.container(key=f"tx-row-{n}"):
        cells = st.columns([w for _, w in COLUMNS], vertical_alignment="center")
        values = [row.id, row.source, row.title, row.n_turns, row.n_tool_calls,
                  row.n_turns - row.n_unlabeled, row.n_unlabeled]
        for cell, value in zip(cells, values, strict=False):
            cell.text(str(value))
        if cells[-1].button("Open", key=f"open-{n}", type="tertiary", icon=":material/open_in_new:"):
            context.select(row.id)
            st.rerun()


def transcript_list() -> None:
    store = context.store()
    st.title("Transcripts")
    left, right = st.columns([1, 2])
    source = left.selectbox("Source", ["All sources", *store.sources()], key="source", bind="query-params")
    search = right.text_input("Search ids and first messages", key="q", bind="query-params",
                              placeholder="e.g. reservation, task10")
    total = store.count_transcripts()
    rows = store.list_transcripts(source=None if source == "All sources" else source,
                                  search=search or None, limit=PAGE_SIZE + 1,
                                  offset=(st.session_state.get("page", 1) - 1) * PAGE_SIZE)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    if total == 0:
        st.info("No transcripts yet. Import some: `toolgold import FILE.jsonl` (or `make run` for the demo).")
        return
    st.caption(f"{total:,} transcripts in the store; {len(rows)} shown")
    header = st.columns([w for _, w in COLUMNS])
    for cell, (name, _) in zip(header, COLUMNS, strict=True):
        cell.caption(name)
    for n, row in enumerate(rows):
        transcript_row(n, row)
    if more or st.session_state.get("page", 1) > 1:
        st.number_input("Page", min_value=1, value=1, step=1, key="page")


def transcript_view(transcript_id: str) -> None:
    store = context.store()
    if st.button("All transcripts", icon=":material/arrow_back:", type="tertiary"):
        context.select(None)
        st.rerun()
    try:
        tr = context.transcript(transcript_id)
        detail = store.get_transcript(transcript_id)
    except StoreError as exc:
        render.error(str(exc))
        return
    st.title("Transcript")
    st.page_link("pages_/label.py", label="Label this transcript", icon=":material/label:",
                 query_params={context.TRANSCRIPT_PARAM: tr.id})
    st.text(f"{tr.id} · {detail.source} · {len(tr.messages)} messages · {len(detail.turns)} decision points · "
            f"{sum(len(m.tool_calls) for m in tr.messages)} tool calls")
    with st.expander(f"Tools offered ({len(tr.tools)})", icon=":material/build:"):
        render.tool_specs(tr.tools)
    render.conversation(tr)


render.inject_style()
selected = context.selected_transcript()
if selected:
    transcript_view(selected)
else:
    transcript_list()
