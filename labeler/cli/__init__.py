"""The ``toolgold`` command line: a thin client of the store and the scorer.

Library errors are specific exception classes; they are turned into one clear line and an exit code
here, once: 2 for bad input (with ``FILE:LINE``), 1 for a failed gate, 0 otherwise.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from scorer.errors import ToolgoldError

EXIT_BAD_INPUT = 2


# Each command is imported only when it runs: `toolgold import` should not pay for the Anthropic SDK
# or SciPy (a second or more of start-up) that other commands need.
COMMANDS: dict[str, str] = {
    "init": "labeler.cli.data:init_cmd",
    "import": "labeler.cli.data:import_cmd",
    "export": "labeler.cli.data:export_cmd",
    "schema": "labeler.cli.data:schema_cmd",
    "app": "labeler.cli.data:app_cmd",
    "score": "labeler.cli.score:score_cmd",
    "run": "labeler.cli.run:run_cmd",
    "runs": "labeler.cli.runs:runs_cmd",
    "judge": "labeler.cli.judge:judge_cmd",
    "versions": "labeler.cli.gold:versions_cmd",
    "freeze": "labeler.cli.gold:freeze_cmd",
    "diff": "labeler.cli.gold:diff_cmd",
    "drift": "labeler.cli.gold:drift_cmd",
    "lint": "labeler.cli.gold:lint_cmd",
    "synthesize": "labeler.cli.synthesize:synthesize_cmd",
}


class ToolgoldGroup(click.Group):
    """Loads commands lazily; turns toolgold's exceptions into ``error: ...`` on stderr and exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            module, _, attr = COMMANDS[name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ToolgoldError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_BAD_INPUT)
        except Exception as exc:
            if not type(exc).__module__.startswith("sqlalchemy"):
                raise
            # A database failure mid-command (locked past the timeout, read-only, disk full): one line,
            # never the SQL statement and its parameters that SQLAlchemy's message carries.
            from labeler.store import describe_database_error

            line = describe_database_error(exc, _database_named(ctx))
            if line is None:
                raise
            click.echo(f"error: {line}", err=True)
            sys.exit(EXIT_BAD_INPUT)


def _database_named(ctx: click.Context) -> str:
    """The database the command ran on: its --db, else TOOLGOLD_DB, else the default (as the store picks)."""
    from labeler.store import database_url

    args = [*ctx.protected_args, *ctx.args]
    for i, arg in enumerate(args):
        if arg == "--db" and i + 1 < len(args):
            return database_url(args[i + 1])
        if arg.startswith("--db="):
            return database_url(arg.removeprefix("--db="))
    return database_url(None)


@click.group(cls=ToolgoldGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolgold")
def cli() -> None:
    """toolgold: gold labels and scoring for agent tool calls."""


def main() -> None:
    cli(prog_name="toolgold")
