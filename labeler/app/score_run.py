"""Scoring from the app: upload an agent's run records, score them against a frozen gold version, save the run.

The in-app twin of ``toolgold score GOLD RUNS --save`` for reviewers and admins (the store enforces it: the
regression split is held out from annotators), scored by the same engine (``scorer.engine``) from the same
kind of files: the frozen version's lines as exported and the uploaded bytes as they are. A frozen version's
cases carry its id, so the saved run's gold version is that id and the run lines up with every other run on
the same version.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from labeler.app import context, identity, render
from labeler.app.dashboard import RUN_PAGE, link
from labeler.store import RunHistoryError, score_files_and_save
from labeler.store.history import RunMeta
from scorer.errors import ToolgoldError

SCORERS = ("reviewer", "admin")


def _optional(text: str) -> str | None:
    return text.strip() or None


def score_form() -> None:
    """An expander with the form; a saved run is announced with a link to it."""
    store = context.store()
    user = identity.current()
    with st.expander("Score a run and save it", icon=":material/upload_file:",
                     expanded=bool(st.session_state.get("score-open"))):
        if user is None or user.role not in SCORERS:
            st.text("Reviewers and admins score runs here (pick your name in the sidebar). From a terminal: "
                    "toolgold score GOLD.jsonl RUNS.jsonl --save")
            return
        versions = store.list_versions()
        if not versions:
            st.text("No frozen gold version yet: freeze one (Review), then score runs against it.")
            return
        by_id = {v.id: v for v in versions}
        with st.form("score-run", border=False):
            version = st.selectbox("Gold version", list(by_id), key="score-version",
                                   format_func=lambda v: f"{v} ({by_id[v].n_cases} cases, "
                                                         f"frozen {by_id[v].created_at[:10]})")
            upload = st.file_uploader("Run records (toolgold.run/1 JSONL, as toolgold run writes them)",
                                      type=["jsonl"], key="score-file")
            left, middle, right = st.columns(3)
            label = left.text_input("Label", key="score-label", placeholder="e.g. prompt v7")
            model = middle.text_input("Model", key="score-model", placeholder="from the run records if empty")
            prompt = right.text_input("Prompt or agent version", key="score-prompt")
            submitted = st.form_submit_button("Score and save", type="primary", icon=":material/save:")
        if not submitted:
            return
        st.session_state["score-open"] = True
        if upload is None:
            st.error("Choose a run file first.")
            return
        try:
            meta = RunMeta(label=_optional(label), model=_optional(model), prompt_version=_optional(prompt),
                           source="app")
            with tempfile.TemporaryDirectory(prefix="toolgold-app-score-") as tmp:
                gold, runs = Path(tmp) / "gold.jsonl", Path(tmp) / "runs.jsonl"
                with gold.open("w", encoding="utf-8") as fh:
                    for line in store.iter_version_lines(version, actor=user.name):
                        fh.write(line + "\n")
                runs.write_bytes(upload.getvalue())
                report, info = score_files_and_save(store, gold, runs, meta, names=(version, upload.name))
        except (ToolgoldError, RunHistoryError) as exc:
            with st.container(key="score-error"):
                render.error(str(exc))
            return
        with st.container(key="score-saved"):
            t = report.totals
            render.success(f"Saved run {info.run_id} on {info.gold_version}: {t.passed} pass, {t.failed} fail, "
                       f"{t.needs_review} need review of {t.results} results"
                       + (f"; {report.unscored.cases_without_run} case(s) had no run" if report.unscored.any
                          else ""), icon=":material/check:")
            link(RUN_PAGE, f"Open {info.name}", {"run": info.run_id}, icon=":material/open_in_new:")
