"""Gold case bodies in their own table, so an import writes them before its publish takes the write lock.

Revision ID: 0005_gold_bodies
Revises: 0004_tool_sets
Create Date: 2026-12-02

``gold_cases.body`` (the canonical JSON of each gold case, exactly as exported: ~9 KB for a tau-bench turn
case, 83% of it its tools) was most of what an import's publish copied while it held SQLite's one write lock
(issue 15: 0.97 s for 20,000 gold cases). As revision 0003 did for transcripts, the bodies now live in
``gold_bodies`` and ``gold_cases.body_id`` refers to each one's: an import writes its gold bodies in short
transactions as each chunk is accepted, where nothing reaches them until the publish commits the ``gold_cases``
rows that refer to them. ``pending_gold_bodies`` says which import wrote which of those not yet published, so a
dead import's are deleted by the next import. Existing bodies are numbered in the order of their case ids (so an
export, which reads in id order, reads them in the order they lie).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_gold_bodies"
down_revision = "0004_tool_sets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    op.create_table("gold_bodies",
                    sa.Column("id", sa.Integer(), nullable=False),
                    sa.Column("body", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"))
    op.create_table("pending_gold_bodies",
                    sa.Column("first_id", sa.Integer(), autoincrement=False, nullable=False),
                    sa.Column("last_id", sa.Integer(), nullable=False),
                    sa.Column("stage", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("first_id"))
    op.create_index(op.f("ix_pending_gold_bodies_stage"), "pending_gold_bodies", ["stage"], unique=False)
    op.add_column("gold_cases", sa.Column("body_id", sa.Integer(), nullable=True))
    op.execute("UPDATE gold_cases SET body_id = n.number FROM (SELECT id, row_number() OVER (ORDER BY id) AS number "
               "FROM gold_cases) AS n WHERE n.id = gold_cases.id")
    op.execute("INSERT INTO gold_bodies (id, body) SELECT body_id, body FROM gold_cases ORDER BY body_id")
    if postgresql:  # the ids were given: the sequence continues after them
        op.execute("SELECT setval(pg_get_serial_sequence('gold_bodies', 'id'), "
                   "(SELECT coalesce(max(id), 0) + 1 FROM gold_bodies), false)")
        op.alter_column("gold_cases", "body_id", existing_type=sa.Integer(), nullable=False)
        op.create_unique_constraint("gold_cases_body_id_key", "gold_cases", ["body_id"])
        op.create_foreign_key("gold_cases_body_id_fkey", "gold_cases", "gold_bodies", ["body_id"], ["id"])
        op.drop_column("gold_cases", "body")
    else:  # the table is rebuilt (foreign keys are off while migrating: nothing referring to it cascades)
        with op.batch_alter_table("gold_cases", recreate="always") as batch:
            batch.drop_column("body")
            batch.alter_column("body_id", existing_type=sa.Integer(), nullable=False)
            batch.create_unique_constraint("gold_cases_body_id_key", ["body_id"])
            batch.create_foreign_key("gold_cases_body_id_fkey", "gold_bodies", ["body_id"], ["id"])


def downgrade() -> None:
    op.add_column("gold_cases", sa.Column("body", sa.String(), nullable=True))
    op.execute("UPDATE gold_cases SET body = (SELECT b.body FROM gold_bodies AS b WHERE b.id = gold_cases.body_id)")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("gold_cases_body_id_fkey", "gold_cases", type_="foreignkey")
        op.drop_constraint("gold_cases_body_id_key", "gold_cases", type_="unique")
        op.drop_column("gold_cases", "body_id")
        op.alter_column("gold_cases", "body", existing_type=sa.String(), nullable=False)
    else:
        with op.batch_alter_table("gold_cases", recreate="always") as batch:
            batch.drop_constraint("gold_cases_body_id_fkey", type_="foreignkey")
            batch.drop_constraint("gold_cases_body_id_key", type_="unique")
            batch.drop_column("body_id")
            batch.alter_column("body", existing_type=sa.String(), nullable=False)
    op.drop_index(op.f("ix_pending_gold_bodies_stage"), table_name="pending_gold_bodies")
    op.drop_table("pending_gold_bodies")
    op.drop_table("gold_bodies")
