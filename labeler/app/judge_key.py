"""Why judge questions wait when the app has no Anthropic API key, and what to run (as the CLI says)."""

from __future__ import annotations

import streamlit as st

from labeler.llm.anthropic_gateway import KEY_ENV, api_key_from_environment

NO_KEY = (f"No Anthropic API key: the judge's questions wait (pending) instead of being asked. Set {KEY_ENV} "
          "in the environment (or anthropic_api_key in .streamlit/secrets.toml) and restart the app, or ask "
          "them from a shell that has the key: toolgold judge")


def no_key_notice() -> None:
    """Say why nothing is being judged, when there is no key."""
    if api_key_from_environment():
        return
    with st.container(key="judge-no-key"):
        st.warning(NO_KEY.replace("_", "\\_"), icon=":material/key_off:")
