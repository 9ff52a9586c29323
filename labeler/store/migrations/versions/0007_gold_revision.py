"""The gold set's revision: one row naming the state of the live gold, changed with every write to it.

Revision ID: 0007_gold_revision
Revises: 0006_gold_source_index
Create Date: 2026-12-07

The Gold hygiene page linted the whole gold set on every view and on every click of its filters (7.7 s at
100,000 cases, ~73 s at 1,000,000). The store now keeps each selection's last lint with the revision it was read
at, and lints again only once the revision moved: every writer of ``gold_cases`` (``common.put_gold``,
``common.withdraw_gold``, an import's publish) bumps it in its own transaction, with a token drawn anew: a
store restored from a backup counts up again through revisions it has held with other gold, so a kept lint is
matched by the token. A store migrated here draws its own; a new SQLite file made from ``sqlite_head.json``
holds the snapshot's, which stands only for what such a file holds: no gold.
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0007_gold_revision"
down_revision = "0006_gold_source_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "gold_revision",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(table, [{"id": 1, "revision": 0, "token": secrets.token_hex(16)}])


def downgrade() -> None:
    op.drop_table("gold_revision")
