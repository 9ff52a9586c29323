"""Entry point of the labeling app (``toolgold app`` runs ``streamlit run labeler/app/main.py``).

A router: it sets the page up and hands over to the page chosen with ``st.navigation``. Page scripts live
in ``pages_/`` (not ``pages/``, which Streamlit would auto-discover and list on its own).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

APP = Path(__file__).resolve().parent
PAGES = APP / "pages_"

# A local favicon: a Material icon as page_icon would be fetched from fonts.gstatic.com.
st.set_page_config(page_title="toolgold", page_icon=str(APP / "favicon.png"), layout="wide")

page = st.navigation([
    st.Page(PAGES / "transcripts.py", title="Transcripts", icon=":material/forum:", url_path="transcripts",
            default=True),
])
page.run()
