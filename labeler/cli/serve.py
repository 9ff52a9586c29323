"""``toolgold serve``: the OTLP/HTTP trace receiver (see ``labeler.receiver``)."""

from __future__ import annotations

import contextlib
import ipaddress
import signal
import threading

import click

from labeler.cli.options import db_option
from labeler.receiver import Receiver
from labeler.store import Store
from scorer.errors import ToolgoldError


class ServeError(ToolgoldError):
    """The receiver cannot start as asked."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=4318, show_default=True, type=int, help="Port (4318 is OTLP/HTTP's own).")
@click.option("--token", envvar="TOOLGOLD_SERVE_TOKEN", show_envvar=True, default=None,
              help="Bearer token exporters must send; required when listening beyond this machine.")
@click.option("--settle", default=2.0, show_default=True, type=float,
              help="Seconds a trace must be quiet before it is written (its spans may come in several batches).")
@db_option
def serve_cmd(host: str, port: int, token: str | None, settle: float, db: str | None) -> None:
    """Receive OpenTelemetry traces at POST /v1/traces (OTLP JSON or protobuf) into the labeling queue.

    Point an exporter at it: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces.
    """
    if not _is_loopback(host) and not token:
        raise ServeError(f"listening on {host} lets other machines write to the store: set --token (or "
                         "TOOLGOLD_SERVE_TOKEN) and send it as 'Authorization: Bearer <token>'")
    try:
        receiver = Receiver(Store(db), host, port, token=token, settle=settle)
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    receiver.start()
    bound_host, bound_port = receiver.address
    click.echo(f"receiving traces at http://{bound_host}:{bound_port}/v1/traces (Ctrl+C to stop)", err=True)
    with contextlib.suppress(KeyboardInterrupt):
        stopped.wait()
    receiver.stop()
    click.echo(f"{receiver.written} transcripts written", err=True)
