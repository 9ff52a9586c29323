"""What every page shares: the store, the parsed-transcript cache, and the state kept in the URL.

The store (engine) and the parsed transcripts are cached resources. A transcript id never changes content
in a store (re-importing other content under the same id is refused), so the cache needs no invalidation,
and a ``Transcript`` is frozen, so every session can share the one parsed object: ``st.cache_data`` would
unpickle a fresh copy on every run, which for a 100,000-message transcript costs seconds per script run. The selected transcript and turn live in the URL query parameters, so a reload or
a shared link resumes at the same place.
"""

from __future__ import annotations

import functools
import os

import streamlit as st

from labeler.store import Store, database_url
from scorer.model import Transcript

TRANSCRIPT_PARAM = "t"
TURN_PARAM = "turn"


@st.cache_resource(show_spinner=False)
def _store_at(url: str) -> Store:
    return Store(url)


@functools.lru_cache(maxsize=16)
def _url_for(raw: str | None) -> str:
    return database_url(raw) if raw else database_url()


def _database_url() -> str:
    """``database_url()`` for the current ``TOOLGOLD_DB``, worked out once per value: a page run asks for the
    store dozens of times, and each ``database_url()`` touches the filesystem (it creates the folder)."""
    return _url_for(os.environ.get("TOOLGOLD_DB") or None)


def store() -> Store:
    """The store for ``TOOLGOLD_DB`` (one engine per database per process)."""
    return _store_at(_database_url())


@st.cache_resource(max_entries=256, show_spinner=False)
def _transcript_at(url: str, transcript_id: str) -> Transcript:
    return _store_at(url).get_transcript(transcript_id).transcript


def transcript(transcript_id: str) -> Transcript:
    """The parsed transcript (cached; raises ``StoreError`` when there is none with this id)."""
    return _transcript_at(_database_url(), transcript_id)


def selected_transcript() -> str | None:
    return st.query_params.get(TRANSCRIPT_PARAM) or None


def selected_turn() -> int | None:
    raw = st.query_params.get(TURN_PARAM)
    return int(raw) if raw is not None and raw.isdigit() else None


def select(transcript_id: str | None, turn: int | None = None) -> None:
    """Point the URL at a transcript (and one of its decision points), or at none."""
    if transcript_id is None:
        st.query_params.pop(TRANSCRIPT_PARAM, None)
    else:
        st.query_params[TRANSCRIPT_PARAM] = transcript_id
    if turn is None:
        st.query_params.pop(TURN_PARAM, None)
    else:
        st.query_params[TURN_PARAM] = str(turn)
