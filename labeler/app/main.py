"""Entry point of the labeling app (``toolgold app`` runs ``streamlit run labeler/app/main.py``).

A router: it sets the page up, asks who is signed in, and hands over to the page chosen with
``st.navigation`` only if that user's role may see it (``access.py`` holds the role × page matrix). Page
scripts live in ``pages_/`` (not ``pages/``, which Streamlit would auto-discover and list on its own).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from labeler.app import access, identity

APP = Path(__file__).resolve().parent

# A crash shows one line and an error id (access.run_page); no traceback reaches a browser.
st.set_option("client.showErrorDetails", "none")
# A local favicon: a Material icon as page_icon would be fetched from fonts.gstatic.com.
st.set_page_config(page_title="toolgold", page_icon=str(APP / "favicon.png"), layout="wide")

user = identity.sidebar_identity()
st.session_state["current-user"] = user
page = st.navigation(access.navigation_pages(user), expanded=True)  # every page listed: none hidden
access.run_page(page, user, identity.sign_in_screen)
