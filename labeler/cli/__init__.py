"""The ``toolgold`` command line: a thin client of the store and the scorer.

Library errors are specific exception classes; they are turned into one clear line and an exit code
here, once: 2 for bad input (with ``FILE:LINE``), 1 for a failed gate, 0 otherwise.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
from typing import Any

import click

EXIT_BAD_INPUT = 2


# Each command is imported only when it runs: `toolgold import` should not pay for the Anthropic SDK
# or SciPy (a second or more of start-up) that other commands need.
COMMANDS: dict[str, str] = {
    "init": "labeler.cli.data:init_cmd",
    "import": "labeler.cli.data:import_cmd",
    "export": "labeler.cli.export:export_cmd",
    "schema": "labeler.cli.data:schema_cmd",
    "app": "labeler.cli.app:app_cmd",
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
    "serve": "labeler.cli.serve:serve_cmd",
    "sample": "labeler.cli.sample:sample_cmd",
    "users": "labeler.cli.users:users_cmd",
}

# What `toolgold --help` lists, so listing the commands imports none of them (that was a second of
# start-up). The first sentence of each command's docstring; tests/labeler/test_cli_startup.py checks
# they match. A command missing here is imported to list it.
SHORT_HELP: dict[str, str] = {
    "users": "Who may label, review and administer (the users table is the authority on roles).",
    "init": "Create or migrate the database (and seed the demo); re-derive the review queue from the labels.",
    "import": "Import transcripts and gold cases from FILES (OpenAI, Anthropic, tau-bench, tau2-bench, BFCL, "
              "ToolTalk, the seed format, or toolgold JSONL).",
    "export": "Export gold cases as toolgold.gold/1 JSON Lines, ordered by id (the same store gives the same "
              "bytes).",
    "schema": "Print (or write) the JSON Schemas of toolgold's formats (and of the score report).",
    "app": "Start the labeling app (Streamlit).",
    "score": "Score agent RUNS (toolgold.run/1) against GOLD cases (toolgold.gold/1).",
    "run": "Replay each turn case of GOLD through an agent and write toolgold.run/1 records to --out.",
    "runs": "The run history: runs saved with `toolgold score --save`.",
    "judge": "Ask the judge's pending questions (from `toolgold score --judge` runs without a key, or that kept "
             "failing), store the verdicts and queue what needs a reviewer.",
    "versions": "List the frozen gold versions, newest first.",
    "freeze": "Freeze the approved gold cases of SPLIT as a new immutable version.",
    "diff": "Cases added, removed and changed from version A to version B.",
    "drift": "Flag gold cases whose tool schemas changed into the re-labeling queue.",
    "lint": "Find suspect gold in GOLD (toolgold.gold/1): conflicting duplicates, calls that fail their own "
            "schema, required arguments without a value, expected values that appear nowhere in the context.",
    "synthesize": "Propose adversarial cases made from approved gold: near-duplicate tools, missing information, "
                  "toolkit growth, negative branches of ordered tasks, stale context.",
    "serve": "Receive OpenTelemetry traces at POST /v1/traces (OTLP JSON or protobuf) into the labeling queue.",
    "sample": "Stratified (by source and first tool), seeded, streaming sample of the conversations in FILES.",
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed = {name: self.commands.get(name) or (click.Command(name, help=SHORT_HELP[name])
                                                    if name in SHORT_HELP else self.get_command(ctx, name))
                  for name in self.list_commands(ctx)}
        shown = [(name, cmd) for name, cmd in listed.items() if cmd is not None and not cmd.hidden]
        if shown:
            limit = formatter.width - 6 - max(len(name) for name, _ in shown)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in shown])

    def invoke(self, ctx: click.Context) -> Any:
        # Imported here, not at the top: the scorer package is pydantic, which `--help` does not need.
        from scorer.errors import ToolgoldError

        # The command's own arguments (after its name), kept before Click's Group.invoke empties ctx.args:
        # where its --db is, for the one line on a database failure.
        given = list(ctx.args)
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

            line = describe_database_error(exc, _database_named(given))
            if line is None:
                raise
            click.echo(f"error: {line}", err=True)
            sys.exit(EXIT_BAD_INPUT)


def _database_named(args: list[str]) -> str:
    """The database the command ran on: its --db, else TOOLGOLD_DB, else the default (as the store picks).

    ``args`` are the command's arguments as ``Context.args`` held them before the command ran (Click 8.2+
    keeps every remaining token there; ``Context.protected_args`` is deprecated, and both are emptied
    before the command runs, so reading them on failure always found the default database)."""
    from labeler.store import database_url

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
    try:
        cli(prog_name="toolgold")
    finally:
        _leave()


def _leave() -> None:
    """What the command leaves behind, put away before the interpreter's own shutdown: every database's
    connections closed (each SQLite file's WAL copied in and removed, as at any clean close), then every object
    still alive set aside (``gc.freeze``), so the interpreter's final collection does not walk the SQLAlchemy,
    pydantic and table objects a command loaded only to free the memory the process is about to give back: that
    walk took ~0.1 s of every store command's exit (`toolgold import` of 2,000 gold cases, `toolgold export`;
    bench_startup). Objects are still freed as the modules are torn down, and finalizers registered with
    ``weakref.finalize`` or ``atexit`` still run; what the collector alone would have found (garbage in
    cycles) is left to the end of the process, and the engines were the ones that mattered."""
    engine = sys.modules.get("labeler.store.engine")
    if engine is not None:
        with contextlib.suppress(Exception):  # a database gone bad mid-command: its error is already shown
            engine.close_every_database()
    gc.freeze()
