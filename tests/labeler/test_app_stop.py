"""``toolgold app`` stops when it is told to: SIGTERM (``kill``, a supervisor's stop) to the process that was
started ends the server, and nothing is left listening on its port.

It used to start Streamlit as a child and wait for it: the signal ended the waiting parent and left the
server running as an orphan, holding the port (tests that stop an app this way leaked one server each)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.browser.conftest import _wait_healthy, free_port
from tests.conftest import REPO


def _serving(port: int) -> list[int]:
    """The processes whose command line serves ``port``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--server.port" in args and str(port).encode() in args:
            found.append(int(cmdline.parent.name))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_sigterm_to_toolgold_app_stops_the_server_and_frees_its_port(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "app.log"
    cmd = [sys.executable, "-m", "labeler.cli", "app", "--port", str(port), "--db", str(tmp_path / "s.db")]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", proc, log)
        assert _serving(port)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 15
        while _serving(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _serving(port) == []
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # nothing listens there any more
    finally:
        for pid in [proc.pid, *_serving(port)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
