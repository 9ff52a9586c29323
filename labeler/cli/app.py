"""``toolgold app``: start the labeling app. Imports nothing of toolgold's: Streamlit's server loads the
pages (and with them the store) in its own process, so every import here would only delay the server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from labeler.cli.options import db_option


def _sign_in_configured() -> bool:
    """An ``[auth]`` section in a secrets file Streamlit reads (the working directory's or the home one)."""
    import tomllib

    for path in (Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"):
        try:
            if "auth" in tomllib.loads(path.read_text(encoding="utf-8")):
                return True
        except (OSError, ValueError):
            continue
    return False


@click.command("app")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind. Keep 127.0.0.1 unless a proxy with authentication stands in front.")
@click.option("--port", default=8501, show_default=True, type=int)
@db_option
def app_cmd(host: str, port: int, db: str | None) -> None:
    """Start the labeling app (Streamlit). Without sign-in configured (an [auth] section in
    .streamlit/secrets.toml) it serves the name picker on loopback only."""
    from labeler.binding import is_loopback, local_mode_refusal

    if not is_loopback(host) and not _sign_in_configured():
        click.echo(f"error: {local_mode_refusal(host)}", err=True)
        raise SystemExit(2)
    env = dict(os.environ)
    if db:
        env["TOOLGOLD_DB"] = db
    entry = Path(__file__).resolve().parent.parent / "app" / "main.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(entry), "--server.address", host,
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--client.showErrorDetails", "none",
           # No forced full gc.collect() after each script run (as .streamlit/config.toml): ~200 ms a run.
           "--runner.postScriptGC", "false"]
    if os.name == "posix":
        # This process becomes the server: a signal sent to it (kill, a supervisor's stop, Ctrl-C) reaches the
        # server itself. Run as a child instead, SIGTERM ended only this waiting parent and left the server
        # running on its port (tests/labeler/test_app_stop.py).
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, cmd, env)
    raise SystemExit(subprocess.call(cmd, env=env))  # Windows: no exec that keeps the process


COMMANDS = [app_cmd]
