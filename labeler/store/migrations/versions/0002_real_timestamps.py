"""Real timestamps: every moment the store writes becomes a timezone-aware timestamp column.

Revision ID: 0002_real_timestamps
Revises: 0001_baseline
Create Date: 2026-12-01

Until now they were ISO-8601 text compared as strings, which orders ``2026-03-06T10:00:00-05:00`` before
``2026-03-06T14:30:00+00:00`` although it is half an hour later. PostgreSQL: ``timestamptz``, converted by
the server (``USING col::timestamptz`` with the session in UTC, so a value without an offset is read as
UTC). SQLite has no timestamp type: the column becomes ``DATETIME`` (the table is rebuilt with
``batch_alter_table``; migrations run with foreign keys off, so the rebuild cascades nothing) and each
value is rewritten in UTC in SQLAlchemy's fixed-width form, which sorts as time.

``transcripts.started_at`` stays text: it is whatever the transcript's own metadata said, not a moment
the store recorded, and need not be a timestamp at all.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0002_real_timestamps"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None

# table -> (its primary key columns, its timestamp columns with whether they may be null)
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]] = {
    "audit_log": (("id",), (("at", False),)),
    "gold_cases": (("id",), (("created_at", False), ("updated_at", False))),
    "gold_versions": (("id",), (("created_at", False),)),
    "judge_adjudications": (("id",), (("created_at", False),)),
    "judge_uses": (("verdict_key", "ref_hash"), (("created_at", False),)),
    "judge_verdicts": (("key",), (("created_at", False), ("updated_at", False), ("answered_at", True))),
    "labels": (("id",), (("created_at", False), ("updated_at", False), ("submitted_at", True))),
    "leases": (("transcript_id",), (("claimed_at", False), ("expires_at", False))),
    "relabel_items": (("id",), (("detected_at", False), ("decided_at", True))),
    "review_items": (("id",), (("created_at", False), ("decided_at", True))),
    "review_settings": (("key",), (("updated_at", False),)),
    "runs": (("id",), (("created_at", False),)),
    "tool_schemas": (("hash",), (("first_seen", False),)),
    "trajectory_labels": (("id",), (("created_at", False), ("updated_at", False), ("submitted_at", True))),
    "transcripts": (("id",), (("imported_at", False),)),
    "users": (("name",), (("created_at", False),)),
}
MOMENT = sa.DateTime(timezone=True)


def _utc(table: str, column: str, value: str) -> datetime:
    """A stored text timestamp as naive UTC (what SQLite's DATETIME holds); a value without an offset was
    written as UTC."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{table}.{column}: {value!r} is not an ISO-8601 timestamp; fix or delete that row "
                         "and open the database again") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None)


def _sqlite_upgrade(table: str, keys: tuple[str, ...], columns: tuple[tuple[str, bool], ...]) -> None:
    conn = op.get_bind()
    names = [c for c, _ in columns]
    text_view = sa.table(table, *(sa.column(k) for k in keys), *(sa.column(c, sa.String()) for c in names))
    rows = conn.execute(sa.select(text_view)).all()
    with op.batch_alter_table(table, recreate="always") as batch:
        for column, nullable in columns:
            batch.alter_column(column, existing_type=sa.String(), type_=MOMENT, existing_nullable=nullable)
    moment_view = sa.table(table, *(sa.column(k) for k in keys), *(sa.column(c, MOMENT) for c in names))
    updates = [{**{f"k_{k}": getattr(row, k) for k in keys},
                **{f"v_{c}": None if getattr(row, c) is None else _utc(table, c, getattr(row, c)) for c in names}}
               for row in rows]
    if updates:
        stmt = (sa.update(moment_view)
                .where(*(moment_view.c[k] == sa.bindparam(f"k_{k}") for k in keys))
                .values({c: sa.bindparam(f"v_{c}", type_=MOMENT) for c in names}))
        conn.execute(stmt, updates)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table, (keys, columns) in COLUMNS.items():
            _sqlite_upgrade(table, keys, columns)
        return
    op.execute("SET LOCAL timezone = 'UTC'")
    for table, (_keys, columns) in COLUMNS.items():
        for column, nullable in columns:
            op.alter_column(table, column, existing_type=sa.String(), type_=MOMENT, existing_nullable=nullable,
                            postgresql_using=f"{column}::timestamptz")


def downgrade() -> None:
    """Back to text in the store's old form (UTC, milliseconds, ``Z``)."""
    conn = op.get_bind()
    if conn.dialect.name != "sqlite":
        op.execute("SET LOCAL timezone = 'UTC'")
        for table, (_keys, columns) in COLUMNS.items():
            for column, nullable in columns:
                op.alter_column(table, column, existing_type=MOMENT, type_=sa.String(), existing_nullable=nullable,
                                postgresql_using=f"""to_char({column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')""")
        return
    for table, (keys, columns) in COLUMNS.items():
        names = [c for c, _ in columns]
        moment_view = sa.table(table, *(sa.column(k) for k in keys), *(sa.column(c, MOMENT) for c in names))
        rows = conn.execute(sa.select(moment_view)).all()
        with op.batch_alter_table(table, recreate="always") as batch:
            for column, nullable in columns:
                batch.alter_column(column, existing_type=MOMENT, type_=sa.String(), existing_nullable=nullable)
        text_view = sa.table(table, *(sa.column(k) for k in keys), *(sa.column(c, sa.String()) for c in names))
        updates = [{**{f"k_{k}": getattr(row, k) for k in keys},
                    **{f"v_{c}": None if getattr(row, c) is None else
                       getattr(row, c).isoformat(timespec="milliseconds") + "Z" for c in names}}
                   for row in rows]
        if updates:
            conn.execute(sa.update(text_view)
                         .where(*(text_view.c[k] == sa.bindparam(f"k_{k}") for k in keys))
                         .values({c: sa.bindparam(f"v_{c}") for c in names}), updates)
