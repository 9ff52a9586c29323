"""The last lint of each selection of the live gold, kept in the database with the gold state it read.

Revision ID: 0008_kept_lints
Revises: 0007_gold_revision
Create Date: 2026-12-07

Revision 0007 let the app keep a lint of the gold until the gold moved, but only in the process that ran it: a
restarted server, or a second one, linted the whole gold set again on its first view of the Gold hygiene page
(7.8 s at 100,000 cases, ~73 s at 1,000,000). Kept here, with the ``(revision, token)`` it read, any process
shows it without linting, and says how far the gold has moved since once it has. Derived data: a new table,
nothing to carry over.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_kept_lints"
down_revision = "0007_gold_revision"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "kept_lints",
        sa.Column("split", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("cases", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("split", "status"),
    )


def downgrade() -> None:
    op.drop_table("kept_lints")
