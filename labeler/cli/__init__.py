"""The ``toolgold`` command line: a thin client of the store and the scorer.

Library errors are specific exception classes; they are turned into one clear line and an exit code
here, once: 2 for bad input (with ``FILE:LINE``), 1 for a failed gate, 0 otherwise.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from labeler.cli import data as _data
from labeler.cli import run as _run
from labeler.cli import score as _score
from scorer.errors import ToolgoldError

EXIT_BAD_INPUT = 2


class ToolgoldGroup(click.Group):
    """Turns toolgold's exceptions into ``error: ...`` on stderr and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ToolgoldError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)


@click.group(cls=ToolgoldGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolgold")
def cli() -> None:
    """toolgold: gold labels and scoring for agent tool calls."""


for command in [*_data.COMMANDS, *_run.COMMANDS]:
    cli.add_command(command)

for command in _score.COMMANDS:
    cli.add_command(command)


def main() -> None:
    cli(prog_name="toolgold")
