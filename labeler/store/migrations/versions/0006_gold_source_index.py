"""An index on ``gold_cases.source``: the drift check after an import reads the cases of the sources it moved.

Revision ID: 0006_gold_source_index
Revises: 0005_gold_bodies
Create Date: 2026-12-07

An import that brings new tool schemas checks the gold it could have changed: the cases it added, those labeled on
the transcripts it added or retooled, and those of those transcripts' sources whose conversations are not stored
(checked against their source's newest tools). Without an index on the source, the last of these made SQLite
scan every gold case: 2.1 s after importing 6 trajectories into a store of 1,000,000 cases, against 0.7 s for the
same import into an empty store.
"""

from __future__ import annotations

from alembic import op

revision = "0006_gold_source_index"
down_revision = "0005_gold_bodies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(op.f("ix_gold_cases_source"), "gold_cases", ["source"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_gold_cases_source"), table_name="gold_cases")
