"""Options several commands share, in a module light enough for any command to import."""

from __future__ import annotations

import click

db_option = click.option(
    "--db", "db", envvar="TOOLGOLD_DB", default=None, show_envvar=True,
    help="Database file or SQLAlchemy URL [default: data/toolgold.db].",
)
