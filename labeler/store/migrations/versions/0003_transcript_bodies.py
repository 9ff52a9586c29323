"""Transcript bodies in their own table, so an import writes them before its publish takes the write lock.

Revision ID: 0003_transcript_bodies
Revises: 0002_real_timestamps
Create Date: 2026-12-02

``transcripts.body`` (the canonical JSON of each transcript without its tools, ~30 KB for a tau-bench one) was
most of what an import's publish copied while it held SQLite's one write lock, which every annotator's save
waits for (issue 15: 0.9 of the 2.5 s held for 20,000 transcripts). The bodies now live in
``transcript_bodies`` and ``transcripts.body_id`` refers to each one's: an import writes its bodies in short
transactions as it stages, where nothing can reach them until the publish commits the ``transcripts`` rows that
refer to them. ``pending_bodies`` says which import wrote which of those not yet published, so a dead import's
are deleted by the next import. Existing bodies keep their transcript's id as theirs.

``ix_turns_transcript_id`` goes: the unique index on (transcript_id, message_index) already serves every lookup
by transcript, and each index is one more B-tree every published turn is written into under the lock.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_transcript_bodies"
down_revision = "0002_real_timestamps"
branch_labels = None
depends_on = None


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.create_table("transcript_bodies",
                    sa.Column("id", sa.Integer(), nullable=False),
                    sa.Column("body", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"))
    op.create_table("pending_bodies",
                    sa.Column("first_id", sa.Integer(), autoincrement=False, nullable=False),
                    sa.Column("last_id", sa.Integer(), nullable=False),
                    sa.Column("stage", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("first_id"))
    op.create_index(op.f("ix_pending_bodies_stage"), "pending_bodies", ["stage"], unique=False)
    op.execute("INSERT INTO transcript_bodies (id, body) SELECT id, body FROM transcripts ORDER BY id")
    if postgresql:  # the ids were given: the sequence continues after them
        op.execute("SELECT setval(pg_get_serial_sequence('transcript_bodies', 'id'), "
                   "(SELECT coalesce(max(id), 0) + 1 FROM transcript_bodies), false)")
    if postgresql:
        op.add_column("transcripts", sa.Column("body_id", sa.Integer(), nullable=True))
        op.execute("UPDATE transcripts SET body_id = id")
        op.alter_column("transcripts", "body_id", existing_type=sa.Integer(), nullable=False)
        op.create_unique_constraint("transcripts_body_id_key", "transcripts", ["body_id"])
        op.create_foreign_key("transcripts_body_id_fkey", "transcripts", "transcript_bodies", ["body_id"], ["id"])
        op.drop_column("transcripts", "body")
    else:  # the table is rebuilt (foreign keys are off while migrating: nothing referring to it cascades)
        with op.batch_alter_table("transcripts", recreate="always") as batch:
            batch.add_column(sa.Column("body_id", sa.Integer(), nullable=True))
            batch.drop_column("body")
        op.execute("UPDATE transcripts SET body_id = id")
        with op.batch_alter_table("transcripts", recreate="always") as batch:
            batch.alter_column("body_id", existing_type=sa.Integer(), nullable=False)
            batch.create_unique_constraint("transcripts_body_id_key", ["body_id"])
            batch.create_foreign_key("transcripts_body_id_fkey", "transcript_bodies", ["body_id"], ["id"])
    op.drop_index("ix_turns_transcript_id", table_name="turns")


def downgrade() -> None:
    op.create_index("ix_turns_transcript_id", "turns", ["transcript_id"], unique=False)
    op.add_column("transcripts", sa.Column("body", sa.String(), nullable=True))
    op.execute("UPDATE transcripts SET body = (SELECT b.body FROM transcript_bodies AS b "
               "WHERE b.id = transcripts.body_id)")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("transcripts_body_id_fkey", "transcripts", type_="foreignkey")
        op.drop_constraint("transcripts_body_id_key", "transcripts", type_="unique")
        op.drop_column("transcripts", "body_id")
        op.alter_column("transcripts", "body", existing_type=sa.String(), nullable=False)
    else:
        with op.batch_alter_table("transcripts", recreate="always") as batch:
            batch.drop_constraint("transcripts_body_id_fkey", type_="foreignkey")
            batch.drop_constraint("transcripts_body_id_key", type_="unique")
            batch.drop_column("body_id")
            batch.alter_column("body", existing_type=sa.String(), nullable=False)
    op.drop_index(op.f("ix_pending_bodies_stage"), table_name="pending_bodies")
    op.drop_table("pending_bodies")
    op.drop_table("transcript_bodies")
