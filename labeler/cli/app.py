"""``toolgold app``: start the labeling app. Imports nothing of toolgold's: Streamlit's server loads the
pages (and with them the store) in its own process, so every import here would only delay the server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from labeler.cli.options import db_option


@click.command("app")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Keep 127.0.0.1 unless a proxy with authentication stands in front.")
@click.option("--port", default=8501, show_default=True, type=int)
@db_option
def app_cmd(host: str, port: int, db: str | None) -> None:
    """Start the labeling app (Streamlit)."""
    env = dict(os.environ)
    if db:
        env["TOOLGOLD_DB"] = db
    entry = Path(__file__).resolve().parent.parent / "app" / "main.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(entry), "--server.address", host,
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    raise SystemExit(subprocess.call(cmd, env=env))


COMMANDS = [app_cmd]
