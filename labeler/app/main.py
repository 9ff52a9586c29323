"""Entry point of the labeling app (``toolgold app`` runs ``streamlit run labeler/app/main.py``).

A router: it sets the page up, asks who is labeling, and hands over to the page chosen with
``st.navigation``. Page scripts live in ``pages_/`` (not ``pages/``, which Streamlit would auto-discover
and list on its own). Which pages exist depends on the user's role.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from labeler.app import identity

APP = Path(__file__).resolve().parent
PAGES = APP / "pages_"

# A local favicon: a Material icon as page_icon would be fetched from fonts.gstatic.com.
st.set_page_config(page_title="toolgold", page_icon=str(APP / "favicon.png"), layout="wide")

user = identity.sidebar_identity()
st.session_state["current-user"] = user

pages = [
    st.Page(PAGES / "transcripts.py", title="Transcripts", icon=":material/forum:", url_path="transcripts",
            default=True),
    st.Page(PAGES / "label.py", title="Label", icon=":material/label:", url_path="label"),
    st.Page(PAGES / "coverage.py", title="Gold set", icon=":material/donut_small:", url_path="gold"),
    st.Page(PAGES / "runs.py", title="Run history", icon=":material/show_chart:", url_path="runs"),
    st.Page(PAGES / "run.py", title="Run", icon=":material/fact_check:", url_path="run"),
    st.Page(PAGES / "compare.py", title="Compare runs", icon=":material/compare_arrows:", url_path="compare"),
]
pages.append(st.Page(PAGES / "review.py", title="Review", icon=":material/rate_review:", url_path="review"))
if user is not None and user.role in ("reviewer", "admin"):
    pages += [
        st.Page(PAGES / "agreement.py", title="Agreement", icon=":material/groups:", url_path="agreement"),
        st.Page(PAGES / "versions.py", title="Gold versions", icon=":material/inventory_2:", url_path="versions"),
        st.Page(PAGES / "hygiene.py", title="Gold hygiene", icon=":material/cleaning_services:", url_path="hygiene"),
    ]
if user is not None and user.role in ("reviewer", "admin"):  # the judge's pages
    pages += [
        st.Page(PAGES / "adjudication.py", title="Adjudication", icon=":material/gavel:", url_path="adjudication"),
        st.Page(PAGES / "calibration.py", title="Judge calibration", icon=":material/balance:",
                url_path="calibration"),
    ]
if user is not None and user.role == "admin":
    pages.append(st.Page(PAGES / "admin.py", title="Team setup: users, tags, overlap", icon=":material/group:",
                         url_path="admin"))

st.navigation(pages, expanded=True).run()  # every page listed: none hidden under "View N more"
