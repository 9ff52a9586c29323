"""What the run-history pages share: where they are, the URL parameters that link them, number formats.

A link to failing cases is a page link with query parameters (``run``, ``tool``, ``code``, ``pattern``,
``case``), so a click, a reload or a pasted URL all land on the same cases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import streamlit as st

from labeler.app import render

HISTORY_PAGE = "pages_/runs.py"
RUN_PAGE = "pages_/run.py"
COMPARE_PAGE = "pages_/compare.py"

FILTERS = ("tool", "code", "pattern")
NO_RUNS = ("No saved runs yet. Score a run and save it: `toolgold score GOLD.jsonl RUNS.jsonl --save "
           "--label 'prompt v1'` (docs/ci.md shows how CI does it on every change).")


def percent(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def points(value: float | None) -> str:
    return "—" if value is None else f"{100 * value + 0.0:+.1f} pts"  # + 0.0: no "-0.0"


def param(name: str) -> str | None:
    return st.query_params.get(name) or None


def link(page: str, label: str, params: Mapping[str, str | int], *, key: str | None = None,
         icon: str | None = None) -> None:
    """A page link whose label may hold untrusted names (escaped: link labels read Markdown)."""
    target = {k: str(v) for k, v in params.items()}
    if key is None:
        st.page_link(page, label=render.md_label(label), query_params=target, icon=icon)
    else:
        with st.container(key=key):
            st.page_link(page, label=render.md_label(label), query_params=target, icon=icon)


def url_select(label: str, options: Sequence[str], name: str, *, default: str,
               format_func: Callable[[str], str] = str, on_pick: Callable[[], None] | None = None) -> str:
    """A select box whose value lives in the URL parameter ``name`` as the option itself (ids, not their
    display labels), so links can set it and a reload keeps it. A value the options lack falls back to
    ``default``."""
    key = f"pick-{name}"
    wanted = param(name)
    current = wanted if wanted is not None and wanted in options else default
    st.query_params[name] = current
    if st.session_state.get(key) != current:  # the URL wins: a link may have changed it
        st.session_state[key] = current

    def picked() -> None:
        st.query_params[name] = st.session_state[key]
        if on_pick is not None:
            on_pick()

    st.selectbox(label, list(options), key=key, on_change=picked, format_func=format_func)
    return current
