"""Tool sets: a transcript names the ordered list of tool schemas it offers instead of a row per tool.

Revision ID: 0004_tool_sets
Revises: 0003_transcript_bodies
Create Date: 2026-12-02

``transcript_tools`` held a row per tool per transcript (~15 for a tau-bench one, in three B-trees), and
publishing an import wrote them all while it held SQLite's write lock (issue 15: 0.45–0.8 s of the hold for
20,000 transcripts). The transcripts of a source nearly always offer the same tools, so the distinct lists
become ``tool_sets`` (content-addressed: the sha256 of the schema hashes in order, joined by spaces) with their
members in ``tool_set_tools``, and ``transcripts.tool_set_id`` names each transcript's (null: it offers none).
An import then writes a row per distinct list, not per tool. Existing links are grouped into sets here.
"""

from __future__ import annotations

import hashlib
from itertools import groupby

import sqlalchemy as sa
from alembic import op

revision = "0004_tool_sets"
down_revision = "0003_transcript_bodies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    postgresql = conn.dialect.name == "postgresql"
    op.create_table("tool_sets",
                    sa.Column("id", sa.Integer(), nullable=False),
                    sa.Column("hash", sa.String(), nullable=False),
                    sa.PrimaryKeyConstraint("id"),
                    sa.UniqueConstraint("hash"))
    op.create_table("tool_set_tools",
                    sa.Column("tool_set_id", sa.Integer(), nullable=False),
                    sa.Column("position", sa.Integer(), nullable=False),
                    sa.Column("schema_hash", sa.String(), nullable=False),
                    sa.ForeignKeyConstraint(["schema_hash"], ["tool_schemas.hash"]),
                    sa.ForeignKeyConstraint(["tool_set_id"], ["tool_sets.id"]),
                    sa.PrimaryKeyConstraint("tool_set_id", "position"))
    op.create_index(op.f("ix_tool_set_tools_schema_hash"), "tool_set_tools", ["schema_hash"], unique=False)
    if postgresql:
        op.add_column("transcripts", sa.Column("tool_set_id", sa.Integer(), nullable=True))
        op.create_foreign_key("transcripts_tool_set_id_fkey", "transcripts", "tool_sets", ["tool_set_id"], ["id"])
    else:  # rebuilt (foreign keys are off while migrating: nothing referring to it cascades)
        with op.batch_alter_table("transcripts", recreate="always") as batch:
            batch.add_column(sa.Column("tool_set_id", sa.Integer(), nullable=True))
            batch.create_foreign_key("transcripts_tool_set_id_fkey", "tool_sets", ["tool_set_id"], ["id"])
    links = conn.execute(sa.text("SELECT transcript_id, schema_hash FROM transcript_tools "
                                 "ORDER BY transcript_id, position"))
    set_of: dict[str, int] = {}
    members, named = [], []
    for transcript_id, rows in groupby(links, key=lambda row: row[0]):
        hashes = [row[1] for row in rows]
        digest = hashlib.sha256(" ".join(hashes).encode("ascii")).hexdigest()
        if digest not in set_of:
            set_of[digest] = len(set_of) + 1
            members += [{"s": set_of[digest], "p": n, "h": h} for n, h in enumerate(hashes)]
        named.append({"s": set_of[digest], "t": transcript_id})
    if set_of:
        conn.execute(sa.text("INSERT INTO tool_sets (id, hash) VALUES (:s, :h)"),
                     [{"s": pk, "h": digest} for digest, pk in set_of.items()])
        conn.execute(sa.text("INSERT INTO tool_set_tools (tool_set_id, position, schema_hash) VALUES (:s, :p, :h)"),
                     members)
        conn.execute(sa.text("UPDATE transcripts SET tool_set_id = :s WHERE id = :t"), named)
    if postgresql:  # the ids were given: the sequence continues after them
        op.execute("SELECT setval(pg_get_serial_sequence('tool_sets', 'id'), "
                   "(SELECT coalesce(max(id), 0) + 1 FROM tool_sets), false)")
    op.drop_index("ix_transcript_tools_schema_hash", table_name="transcript_tools")
    op.drop_table("transcript_tools")


def downgrade() -> None:
    op.create_table("transcript_tools",
                    sa.Column("transcript_id", sa.Integer(), nullable=False),
                    sa.Column("position", sa.Integer(), nullable=False),
                    sa.Column("schema_hash", sa.String(), nullable=False),
                    sa.ForeignKeyConstraint(["schema_hash"], ["tool_schemas.hash"]),
                    sa.ForeignKeyConstraint(["transcript_id"], ["transcripts.id"], ondelete="CASCADE"),
                    sa.PrimaryKeyConstraint("transcript_id", "position"))
    op.create_index("ix_transcript_tools_schema_hash", "transcript_tools", ["schema_hash"], unique=False)
    op.execute("INSERT INTO transcript_tools (transcript_id, position, schema_hash) SELECT tr.id, m.position, "
               "m.schema_hash FROM transcripts AS tr JOIN tool_set_tools AS m ON m.tool_set_id = tr.tool_set_id")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_constraint("transcripts_tool_set_id_fkey", "transcripts", type_="foreignkey")
        op.drop_column("transcripts", "tool_set_id")
    else:
        with op.batch_alter_table("transcripts", recreate="always") as batch:
            batch.drop_constraint("transcripts_tool_set_id_fkey", type_="foreignkey")
            batch.drop_column("tool_set_id")
    op.drop_index(op.f("ix_tool_set_tools_schema_hash"), table_name="tool_set_tools")
    op.drop_table("tool_set_tools")
    op.drop_table("tool_sets")
