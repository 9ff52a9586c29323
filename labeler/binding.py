"""Where the app may listen: without sign-in configured (local mode) only on a loopback address.

Shared by ``toolgold app`` (which refuses before starting Streamlit) and the app itself (which refuses a
``streamlit run`` bound elsewhere), so both say the same one line.
"""

from __future__ import annotations

import ipaddress

AUTH_SETTING = "an [auth] section in .streamlit/secrets.toml (docs/deployment.md)"


def is_loopback(host: str | None) -> bool:
    """``host`` binds to this machine only (an empty address means every interface)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def local_mode_refusal(host: str | None) -> str:
    return (f"toolgold will not serve the name picker on {host or 'every interface'}: anyone who can reach it "
            f"could pick any name. Bind 127.0.0.1, or configure sign-in with {AUTH_SETTING}.")
