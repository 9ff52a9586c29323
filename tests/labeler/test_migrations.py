"""Alembic revisions on a real SQLite file and a real PostgreSQL database.

Fresh and upgraded databases must end with the same schema: the one the table classes describe. A
database made by toolgold before Alembic (hand-written migrations 1-6 and their ``toolgold_migrations``
table) is recognised and upgraded in place, its rows kept. The old schemas are pinned as golden files:
``legacy-v6.sqlite.sql`` is the dump of a database the pre-Alembic store made (with a user, a transcript,
an imported gold case and a submitted label); ``legacy-v6.postgresql.sql`` is the DDL that store ran on
PostgreSQL, table by table in migration order.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from sqlalchemy import DateTime, Engine, create_engine, func, insert, inspect, select, text
from sqlalchemy import column as sa_column
from sqlalchemy import table as sa_table
from sqlalchemy.exc import StatementError

from labeler.store import Database, Store, head_revision
from labeler.store import engine as engine_module
from labeler.store import tables as t
from labeler.store.engine import (
    METADATA,
    SQLITE_HEAD,
    _create_from_head,
    known_head,
    migration_script,
    sqlite_head,
    upgrade,
)
from tests.labeler.test_cli_startup import loaded_by

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "store"
OLD_MIGRATIONS = [
    (1, "initial tables"), (2, "labeling: users, labels, leases, tag vocabulary"),
    (3, "review and gold versions: versions, review queue, settings, re-labeling queue"),
    (4, "trajectory labels"),
    (5, "judge verdicts and queue: verdict cache, where questions came from, adjudications"),
    (6, "run history: saved runs, their numbers and per-case outcomes"),
]


def schema(engine: Engine) -> dict[str, Any]:
    """Everything about the tables that matters: columns, keys, foreign keys, indexes, uniques."""
    insp = inspect(engine)
    out: dict[str, Any] = {}
    for name in sorted(insp.get_table_names()):
        if name == "alembic_version":
            continue
        out[name] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"], str(c.get("default"))) for c in
                        insp.get_columns(name)],
            "pk": insp.get_pk_constraint(name)["constrained_columns"],
            "fks": sorted((tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]),
                           (f.get("options") or {}).get("ondelete")) for f in insp.get_foreign_keys(name)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                              for i in insp.get_indexes(name)),
            "uniques": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(name)),
        }
    return out


@pytest.fixture(params=["sqlite", "postgres"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    return str(request.getfixturevalue("postgres_url"))


def fresh_schema(tmp_path: Path, url: str) -> dict[str, Any]:
    """The schema of a database created from nothing on the same backend as ``url``."""
    if url.startswith("sqlite"):
        store = Store(tmp_path / "fresh.db")
    else:
        base = url.rsplit("/", 1)[0]
        admin = create_engine(url, isolation_level="AUTOCOMMIT")
        name = url.rsplit("/", 1)[1] + "_fresh"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        admin.dispose()
        store = Store(f"{base}/{name}")
    try:
        return schema(store.engine)
    finally:
        store.close()
        if not url.startswith("sqlite"):
            admin = create_engine(url, isolation_level="AUTOCOMMIT")
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()


def test_the_revisions_build_exactly_the_schema_the_table_classes_describe(empty_url: str) -> None:
    store = Store(empty_url)
    try:
        with store.engine.connect() as conn:
            differences = compare_metadata(MigrationContext.configure(conn), METADATA)
        assert differences == []
        assert store.schema_version() == head_revision()
        assert store.migrate() == []  # reopening applies nothing twice
    finally:
        store.close()


# Text timestamps as the oldest revision stored them, some written with other offsets than UTC. In time
# order: 14:30 UTC, then 10:00 at -05:00 (15:00 UTC), then 16:00 at +01:00 (15:00 UTC too), then 15:30 UTC.
# As strings they sort 10:00-05:00 < 14:30Z < 15:30Z < 16:00+01:00: wrong.
OLD_STAMPS = {"a": "2026-03-06T14:30:00+00:00", "b": "2026-03-06T10:00:00-05:00",
              "c": "2026-03-06T16:00:00.250+01:00", "d": "2026-03-06T15:30:00.000Z"}
UTC_STAMPS = {"a": "2026-03-06T14:30:00.000Z", "b": "2026-03-06T15:00:00.000Z",
              "c": "2026-03-06T15:00:00.250Z", "d": "2026-03-06T15:30:00.000Z"}


def rows_at_the_oldest_revision(conn: Any) -> None:
    """Users, audit events, a transcript, a lease and review items whose timestamps mix offsets."""
    conn.execute(text("INSERT INTO users (name, role, active, created_at) VALUES ('rev', 'reviewer', true, :at)"),
                 {"at": OLD_STAMPS["a"]})
    for name, stamp in OLD_STAMPS.items():
        conn.execute(text("INSERT INTO users (name, role, active, created_at) VALUES (:n, 'annotator', true, :at)"),
                     {"n": name, "at": stamp})
        conn.execute(text("INSERT INTO audit_log (at, actor, action, entity, entity_id) "
                          "VALUES (:at, :n, 'user.add', 'user', :n)"), {"n": name, "at": stamp})
        conn.execute(text("INSERT INTO review_items (kind, ref, status, payload, created_at, created_by) "
                          "VALUES ('unsure', :n, 'open', '{}', :at, 'cli')"), {"n": name, "at": stamp})
    conn.execute(text("INSERT INTO transcripts (id, external_id, source, content_hash, title, body, n_messages, "
                      "n_turns, n_tool_calls, started_at, imported_at) VALUES (1, 't1', 'demo', 'h1', '', '{}', "
                      "0, 0, 0, 'yesterday, roughly', :at)"), {"at": OLD_STAMPS["b"]})
    conn.execute(text("INSERT INTO leases (transcript_id, holder, claimed_at, expires_at) "
                      "VALUES (1, 'a', :c, '2999-01-01T01:00:00+02:00')"), {"c": OLD_STAMPS["a"]})


def test_a_database_at_the_oldest_revision_upgrades_to_the_schema_of_a_fresh_one(
        empty_url: str, tmp_path: Path) -> None:
    oldest = list(migration_script().walk_revisions())[-1].revision
    engine = create_engine(empty_url)
    with engine.begin() as conn:
        assert upgrade(conn, oldest) == [oldest]
        rows_at_the_oldest_revision(conn)
    engine.dispose()
    store = Store(empty_url)
    try:
        assert store.schema_version() == head_revision()
        assert schema(store.engine) == fresh_schema(tmp_path, empty_url)
        # The rows are kept, each moment the same, now ordered and compared as time.
        with store.engine.connect() as conn:
            users = conn.execute(select(t.UserRow.name, t.UserRow.created_at).where(t.UserRow.name != "rev")
                                 .order_by(t.UserRow.created_at))
            assert [tuple(r) for r in users] == sorted(UTC_STAMPS.items(), key=lambda kv: kv[1])
            assert [r.entity_id for r in conn.execute(select(t.AuditRow.entity_id).order_by(t.AuditRow.at))] \
                == ["a", "b", "c", "d"]
            later = conn.scalars(select(t.AuditRow.entity_id)
                                 .where(t.AuditRow.at > "2026-03-06T09:45:00-05:00")
                                 .order_by(t.AuditRow.at)).all()
            assert later == ["b", "c", "d"]  # 14:45 UTC: after a (14:30 UTC), before the rest (as text: all four)
            assert conn.scalar(select(t.TranscriptRow.started_at)) == "yesterday, roughly"  # the transcript's own
            assert conn.scalar(select(t.LeaseRow.expires_at)) == "2998-12-31T23:00:00.000Z"
        assert [(r.ref, r.created_at) for r in store.review_queue(actor="rev")] == list(UTC_STAMPS.items())
        held = store.take_lease("t1", "b")  # the converted expiry is still in the future: a keeps it
        assert (held.holder, held.expires_at) == ("a", "2998-12-31T23:00:00.000Z")
    finally:
        store.close()


def test_timestamps_are_stored_as_moments_so_other_offsets_sort_and_compare_by_time(empty_url: str) -> None:
    store = Store(empty_url)
    try:
        with store.engine.begin() as conn:
            for name, stamp in OLD_STAMPS.items():
                conn.execute(insert(t.UserRow).values(name=name, role="annotator", active=True, created_at=stamp))
            column = inspect(conn).get_columns("users")[-1]
            assert column["name"] == "created_at" and isinstance(column["type"], DateTime)
            assert [tuple(r) for r in conn.execute(select(t.UserRow.name, t.UserRow.created_at)
                                                   .order_by(t.UserRow.created_at.desc()))] \
                == sorted(UTC_STAMPS.items(), key=lambda kv: kv[1], reverse=True)
            with pytest.raises(StatementError, match="no UTC offset"):
                conn.execute(insert(t.UserRow).values(name="e", role="annotator", active=True,
                                                      created_at="2026-03-06T10:00:00"))
    finally:
        store.close()


MIGRATION_1_TABLES = ("toolgold_migrations", "transcripts", "tool_schemas", "transcript_tools", "turns",
                      "gold_cases", "gold_case_tags", "audit_log")


def legacy_sqlite(path: Path, *, only: tuple[str, ...] | None = None) -> None:
    """A database as the pre-Alembic store left it (``only``: just these tables and their indexes, empty)."""
    script = (GOLDEN / "legacy-v6.sqlite.sql").read_text(encoding="utf-8")
    con = sqlite3.connect(path)
    if only is None:
        con.executescript(script)
    else:
        for statement in script.split(";\n"):
            words = statement.replace('"', " ").split()
            table = words[2] if words[:2] == ["CREATE", "TABLE"] else (
                words[words.index("ON") + 1] if words[:2] == ["CREATE", "INDEX"] else None)
            if table in only:
                con.execute(statement)
        con.commit()
    con.close()


def test_a_sqlite_database_made_before_alembic_is_upgraded_in_place_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    legacy_sqlite(path)
    store = Store(path)
    try:
        assert store.schema_version() == head_revision()
        assert schema(store.engine) == fresh_schema(tmp_path, f"sqlite:///{path}")
        assert "toolgold_migrations" not in inspect(store.engine).get_table_names()
        assert store.get_user("ana") is not None and store.get_user("ana").role == "admin"  # type: ignore[union-attr]
        assert store.get_transcript("t1").transcript.id == "t1"
        label = store.get_label("t1", 2, "ana")
        assert label is not None and (label.status, label.version) == ("submitted", 2)
        assert sorted(c.id for c in store.gold_cases()) == ["g1", "t1#t2"]
        assert len(store.tags()) == 11  # the vocabulary is not seeded twice
    finally:
        store.close()


def test_a_partly_migrated_database_from_before_alembic_gets_the_missing_tables(tmp_path: Path) -> None:
    path = tmp_path / "partial.db"
    legacy_sqlite(path, only=MIGRATION_1_TABLES)  # as migration 1 alone left it
    store = Store(path)
    try:
        assert schema(store.engine) == fresh_schema(tmp_path, f"sqlite:///{path}")
        assert len(store.tags()) == 11  # tag_vocabulary was created now, so it is seeded now
    finally:
        store.close()


def test_a_postgresql_database_made_before_alembic_is_upgraded_in_place_keeping_its_rows(
        postgres_url: str, tmp_path: Path) -> None:
    engine = create_engine(postgres_url)
    with engine.begin() as conn:
        for statement in (GOLDEN / "legacy-v6.postgresql.sql").read_text(encoding="utf-8").split(";\n"):
            if statement.strip():
                conn.execute(text(statement))
        for version, name in OLD_MIGRATIONS:
            conn.execute(text("INSERT INTO toolgold_migrations (version, name, applied_at) VALUES (:v, :n, :a)"),
                         {"v": version, "n": name, "a": "2026-11-30T10:00:00.000Z"})
        conn.execute(text("INSERT INTO tag_vocabulary (tag, adversarial, description) VALUES "
                          "('happy_path', false, 'A clear request.')"))
        conn.execute(text("INSERT INTO users (name, role, active, created_at) VALUES "
                          "('ana', 'admin', true, '2026-11-30T10:00:00.000Z')"))
    engine.dispose()
    store = Store(postgres_url)
    try:
        assert store.schema_version() == head_revision()
        assert schema(store.engine) == fresh_schema(tmp_path, postgres_url)
        assert "toolgold_migrations" not in inspect(store.engine).get_table_names()
        assert store.get_user("ana") is not None
        assert [t.tag for t in store.tags()] == ["happy_path"]  # kept as it was, not re-seeded
    finally:
        store.close()


def downgrade(conn: Any, destination: str) -> None:
    script = migration_script()
    with EnvironmentContext(Config(), script, fn=lambda rev, _ctx: script._downgrade_revs(destination, rev),
                            destination_rev=destination) as env:
        env.configure(connection=conn, target_metadata=METADATA)
        with env.begin_transaction():
            env.run_migrations()


def test_real_timestamps_downgrade_to_utc_text(empty_url: str) -> None:
    engine = create_engine(empty_url)
    with engine.begin() as conn:
        upgrade(conn, "0001_baseline")
        rows_at_the_oldest_revision(conn)
        upgrade(conn, "0002_real_timestamps")
        downgrade(conn, "0001_baseline")
        stamps = conn.execute(text("SELECT name, created_at FROM users WHERE name != 'rev' ORDER BY name")).all()
        assert [tuple(r) for r in stamps] == list(UTC_STAMPS.items())
    engine.dispose()


# -- migrations on start, with Alembic imported only when there is something to migrate ---------------


def test_the_head_read_without_alembic_is_the_one_alembic_reads() -> None:
    assert known_head() == head_revision()


def _revision_file(directory: Path, name: str, revision: str, down: str) -> None:
    (directory / "versions").mkdir(parents=True, exist_ok=True)
    (directory / "versions" / f"{name}.py").write_text(
        f'"""A revision.\n\nRevision ID: {revision}\nRevises: {down}\n"""\n\nfrom alembic import op\n\n'
        f"revision = {revision!r}\ndown_revision = {down}\nbranch_labels = None\n", encoding="utf-8")


def test_the_head_read_without_alembic_is_none_unless_the_revisions_are_one_chain(tmp_path: Path) -> None:
    chain = tmp_path / "chain"
    _revision_file(chain, "a", "0001_a", "None")
    _revision_file(chain, "c", "0003_c", "'0002_b'")
    _revision_file(chain, "b", "0002_b", "'0001_a'")
    assert known_head(chain) == "0003_c"
    two_heads = tmp_path / "two_heads"
    _revision_file(two_heads, "a", "0001_a", "None")
    _revision_file(two_heads, "b", "0002_b", "'0001_a'")
    _revision_file(two_heads, "c", "0002_c", "'0001_a'")
    assert known_head(two_heads) is None
    merge = tmp_path / "merge"
    _revision_file(merge, "a", "0001_a", "None")
    _revision_file(merge, "b", "0002_b", "('0001_a', '0001_x')")
    assert known_head(merge) is None
    dangling = tmp_path / "dangling"
    _revision_file(dangling, "b", "0002_b", "'0001_gone'")
    assert known_head(dangling) is None


def test_only_a_database_at_the_newest_revision_counts_as_current(empty_url: str, tmp_path: Path) -> None:
    engine = create_engine(empty_url)
    with engine.begin() as conn:
        upgrade(conn, "0001_baseline")  # one revision behind
    engine.dispose()
    behind = Database.__new__(Database)  # the engine without its migration on construction
    behind.url, behind.is_sqlite, behind.read_only = empty_url, empty_url.startswith("sqlite"), False
    behind.engine, behind._in_transaction = create_engine(empty_url), threading.local()
    try:
        assert not behind.at_head()
    finally:
        behind.close()
    store = Store(empty_url)  # migrates on start
    try:
        assert store.at_head() and store.schema_version() == head_revision()
        assert schema(store.engine) == fresh_schema(tmp_path, empty_url)
    finally:
        store.close()


def test_a_store_command_migrates_an_empty_file_and_one_a_revision_behind_and_opens_a_current_one_without_alembic(
        tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    behind = tmp_path / "behind.db"
    engine = create_engine(f"sqlite:///{behind}")
    with engine.begin() as conn:
        upgrade(conn, "0001_baseline")
        conn.execute(text("INSERT INTO users (name, role, active, created_at) "
                          "VALUES ('ana', 'admin', true, '2026-03-06T10:00:00-05:00')"))
    engine.dispose()
    for path in (empty, behind):
        alembic = [m for m in loaded_by("users", "list", "--db", str(path)) if m.split(".")[0] == "alembic"]
        assert bool(alembic) == (path == behind)  # an empty file is made from the snapshot (SQLITE_HEAD)
        with sqlite3.connect(path) as con:
            assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [(head_revision(),)]
        assert schema(create_engine(f"sqlite:///{path}")) == fresh_schema(tmp_path, f"sqlite:///{path}")
    with sqlite3.connect(behind) as con:  # the row was migrated with it: its moment now stored in UTC
        assert con.execute("SELECT name, created_at FROM users").fetchall() == [("ana", "2026-03-06 15:00:00.000000")]
    current = loaded_by("users", "list", "--db", str(behind))
    assert not [m for m in current if m == "alembic" or m.startswith("alembic.")]


_CONSTRAINT = ("PRIMARY KEY", "FOREIGN KEY", "UNIQUE", "CHECK", "CONSTRAINT")


def _ddl(sql: str | None) -> Any:
    """A CREATE TABLE's text with its table constraints in a set: the column lines keep their order."""
    if sql is None or not sql.startswith("CREATE TABLE"):
        return sql
    head, _, body = sql.partition("(\n")
    clauses = [c.strip() for c in body.rstrip(")").rstrip().split(", \n")]
    return (head, [c for c in clauses if not c.startswith(_CONSTRAINT)],
            sorted(c for c in clauses if c.startswith(_CONSTRAINT)))


def _comparable(head: dict[str, Any]) -> dict[str, Any]:
    """``sqlite_head``'s form with what two runs of the revisions themselves differ in taken out: the order of a
    rebuilt table's indexes in ``sqlite_master`` and of its constraints in its DDL (Alembic's batch mode makes
    them again from sets, so it changes with the hash seed), and the gold revision's token (revision 0007 draws it
    at random: a new file made from the snapshot holds the snapshot's, which only ever stands for its empty gold).
    Every entry, every column in order, every constraint's and index's text, the order of the tables, and the
    other rows are kept."""
    entries = [(kind, name, table, _ddl(sql)) for kind, name, table, sql in head["schema"]]
    rows = {**head["rows"], "gold_revision": [[*row[:-1], "(token)"] for row in head["rows"]["gold_revision"]]}
    return {**head, "rows": rows, "schema": sorted(entries, key=repr),
            "tables": [e[1] for e in entries if e[0] == "table"]}


def _made_by_the_revisions(path: Path) -> dict[str, Any]:
    """What Alembic's revisions leave in the new SQLite file ``path`` (``sqlite_head``'s form)."""
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        revisions = upgrade(conn)
    engine.dispose()
    with sqlite3.connect(path) as raw:
        return _comparable({"revisions": revisions, **sqlite_head(raw)})


def _made(path: Path, revisions: list[str]) -> dict[str, Any]:
    with sqlite3.connect(path) as raw:
        return _comparable({"revisions": revisions, **sqlite_head(raw)})


def test_a_new_sqlite_file_is_made_without_alembic_exactly_as_the_revisions_make_it(tmp_path: Path) -> None:
    # The same sqlite_master (every table and index with its DDL text; the tables in the same order), the same
    # rows (the tag vocabulary, alembic_version) and user_version, from the snapshot of the revisions' result,
    # in 0.02 CPU s instead of 0.3 (Alembic imported and run).
    reference = _made_by_the_revisions(tmp_path / "alembic.db")
    assert _comparable(json.loads(SQLITE_HEAD.read_text(encoding="utf-8"))) == reference, (
        f"{SQLITE_HEAD} is not what the revisions make: rewrite it with "
        "python -c 'from labeler.store.engine import write_sqlite_head; write_sqlite_head()'")
    new = tmp_path / "new.db"
    modules = loaded_by("users", "list", "--db", str(new))
    assert not [m for m in modules if m == "alembic" or m.startswith("alembic.")]
    assert _made(new, reference["revisions"]) == reference
    store = Store(new)
    try:
        assert store.migrate() == [] and store.schema_version() == head_revision()
        with store.engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), METADATA) == []
    finally:
        store.close()


def test_a_new_sqlite_file_is_migrated_by_alembic_when_the_snapshot_is_not_of_the_newest_revision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _made_by_the_revisions(tmp_path / "alembic.db")
    stale = tmp_path / "sqlite_head.json"
    stale.write_text(json.dumps({**json.loads(SQLITE_HEAD.read_text(encoding="utf-8")),
                                 "revisions": ["0001_baseline"]}), encoding="utf-8")
    monkeypatch.setattr(engine_module, "SQLITE_HEAD", stale)
    ran: list[list[str]] = []
    real_upgrade = engine_module.upgrade
    monkeypatch.setattr(engine_module, "upgrade", lambda conn: ran.append(real_upgrade(conn)) or ran[-1])
    database = Database(tmp_path / "new.db")
    database.close()
    assert ran == [reference["revisions"]]
    assert _made(tmp_path / "new.db", reference["revisions"]) == reference


def test_the_snapshot_makes_only_empty_files(tmp_path: Path) -> None:
    # A file holding any table (a database from before Alembic, a half-made one) is left to the revisions.
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE users (name VARCHAR PRIMARY KEY)")
        raw.execute("BEGIN")
        assert _create_from_head(raw) is None
        assert [name for (name,) in raw.execute("SELECT name FROM sqlite_master")] == ["users",
                                                                                     "sqlite_autoindex_users_1"]


def test_transcripts_stored_before_their_bodies_and_tools_moved_read_back_identically(
        empty_url: str, tmp_path: Path) -> None:
    """Revision 0003 moves each transcript's body into ``transcript_bodies`` (an import writes them ahead of
    its publish), 0004 its tool links into shared tool sets: a store holding transcripts at 0002 migrates,
    reads them back exactly (bodies and tools), and imports on."""
    from labeler.cli.data import convert_files
    from scorer.importers import ImportOptions
    from scorer.model import Transcript

    converted, _ = convert_files([Path(__file__).resolve().parents[2] / "data" / "demo" / "tau-bench-airline.jsonl"],
                                 None, ImportOptions())
    items = [item for item in converted if isinstance(item.record, Transcript)]
    scratch = Store(tmp_path / "scratch.db")  # the rows an import stores, to put into a store at 0002
    scratch.import_items(items[:4])
    ids = [item.record.id for item in items[:6]]
    stamp = t.Timestamp()
    columns = {
        "tool_schemas": ("hash", "name", "body", "first_seen"),
        "transcripts": ("id", "external_id", "source", "content_hash", "title", "body", "n_messages", "n_turns",
                        "n_tool_calls", "started_at", "imported_at"),
        "transcript_tools": ("transcript_id", "position", "schema_hash"),
        "turns": ("id", "transcript_id", "ordinal", "message_index", "observed", "observed_behavior", "n_calls"),
    }
    joins = {"transcripts": " JOIN transcript_bodies AS b ON b.id = transcripts.body_id",
             "transcript_tools": " JOIN tool_set_tools AS m ON m.tool_set_id = transcripts.tool_set_id"}
    read_as = {("transcripts", "body"): "b.body", ("transcript_tools", "transcript_id"): "transcripts.id",
               ("transcript_tools", "position"): "m.position", ("transcript_tools", "schema_hash"): "m.schema_hash"}
    with scratch.engine.connect() as conn:  # each table's rows as 0002 held them
        rows = {table: [dict(r._mapping) for r in conn.execute(text(
            f"SELECT {', '.join(read_as.get((table, c), f'{table}.{c}') + f' AS {c}' for c in cols)} "
            f"FROM {'transcripts' if table == 'transcript_tools' else table}{joins.get(table, '')}"))]
            for table, cols in columns.items()}
    assert len(rows["transcript_tools"]) > len(rows["transcripts"])
    for table in ("tool_schemas", "transcripts"):  # (read back as SQLite's text: any moment will do)
        for row in rows[table]:
            row["first_seen" if table == "tool_schemas" else "imported_at"] = "2026-12-01T00:00:00Z"
    before = {tid: scratch.get_transcript(tid) for tid in ids[:4]}
    bodies = {r["external_id"]: r["body"] for r in rows["transcripts"]}
    scratch.close()
    engine = create_engine(empty_url)
    with engine.begin() as conn:
        upgrade(conn, "0002_real_timestamps")
        for table, cols in columns.items():
            view = sa_table(table, *(sa_column(c, stamp if c in ("first_seen", "imported_at") else None)
                                     for c in cols))
            conn.execute(insert(view), rows[table])
            if conn.dialect.name == "postgresql" and "id" in cols:  # as if the sequence had given the ids
                conn.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), max(id)) FROM {table}"))
    engine.dispose()
    store = Store(empty_url)
    try:
        assert store.schema_version() == head_revision()
        assert {tid: store.get_transcript(tid) for tid in ids[:4]} == before
        with store.engine.connect() as conn:
            stored = {ext: body for ext, body in conn.execute(
                select(t.TranscriptRow.external_id, t.TranscriptBodyRow.body)
                .join(t.TranscriptBodyRow, t.TranscriptBodyRow.id == t.TranscriptRow.body_id))}
        assert stored == bodies
        with store.engine.connect() as conn:
            assert conn.scalar(select(func.count()).select_from(t.ToolSetRow)) == 1  # they all offer the same
        result = store.import_items(items[:6])  # the same four again, and two new: their ids follow the old
        assert (result.transcripts_unchanged, result.transcripts_added) == (4, 2)
        assert [s.id for s in store.list_transcripts()] == ids
        assert [store.get_transcript(tid).transcript for tid in ids[4:]] == [i.record for i in items[4:6]]
    finally:
        store.close()


def test_gold_cases_stored_before_their_bodies_moved_read_back_identically(empty_url: str, tmp_path: Path) -> None:
    """Revision 0005 moves each gold case's body into ``gold_bodies`` (an import writes them ahead of its
    publish): a store holding gold cases at 0004 migrates, exports the same bytes, reads each case back the same,
    numbers the bodies in id order, and imports on (the new bodies' ids follow the old)."""
    from labeler.cli.data import convert_files
    from scorer.importers import ImportOptions
    from scorer.model import GoldCase

    converted, _ = convert_files([Path(__file__).resolve().parents[2] / "data" / "demo" / "tau-bench-airline.jsonl"],
                                 None, ImportOptions())
    items = [item for item in converted if isinstance(item.record, GoldCase)]
    assert len(items) >= 6
    scratch = Store(tmp_path / "scratch.db")  # the rows an import stores, to put into a store at 0004
    scratch.import_items(items[4:])
    columns = ("id", "conversation_id", "turn", "split", "kind", "status", "behavior", "tags", "source", "body",
               "content_hash", "created_at", "updated_at")
    with scratch.engine.connect() as conn:  # as 0004 held them
        rows = [dict(r._mapping) for r in conn.execute(text(
            f"SELECT {', '.join('b.body AS body' if c == 'body' else f'g.{c} AS {c}' for c in columns)} "
            "FROM gold_cases AS g JOIN gold_bodies AS b ON b.id = g.body_id ORDER BY g.id DESC"))]
        tags = [dict(r._mapping) for r in conn.execute(text("SELECT case_id, tag FROM gold_case_tags"))]
    for row in rows:  # (read back as SQLite's text: any moment will do)
        row["created_at"] = row["updated_at"] = "2026-12-01T00:00:00Z"
    exported = b"".join(block for _, block in scratch.iter_gold_blocks())
    before = {case.id: case for case in scratch.gold_cases()}
    scratch.close()
    engine = create_engine(empty_url)
    stamp = t.Timestamp()
    with engine.begin() as conn:
        upgrade(conn, "0004_tool_sets")
        view = sa_table("gold_cases", *(sa_column(c, stamp if c.endswith("_at") else None) for c in columns))
        conn.execute(insert(view), rows)
        conn.execute(insert(sa_table("gold_case_tags", sa_column("case_id"), sa_column("tag"))), tags)
    engine.dispose()
    store = Store(empty_url)
    try:
        assert store.schema_version() == head_revision()
        assert b"".join(block for _, block in store.iter_gold_blocks()) == exported
        assert {case.id: case for case in store.gold_cases()} == before
        with store.engine.connect() as conn:
            numbered = conn.execute(select(t.GoldCaseRow.id, t.GoldCaseRow.body_id).order_by(t.GoldCaseRow.id)).all()
            assert [body_id for _, body_id in numbered] == list(range(1, len(rows) + 1))
        result = store.import_items(items)  # the same ones again, and four new: their bodies' ids follow the old
        assert (result.gold_unchanged, result.gold_added) == (len(rows), 4)
        assert [store.get_gold(item.record.id) for item in items] == [item.record for item in items]
        with store.engine.connect() as conn:
            assert conn.scalar(select(func.min(t.GoldBodyRow.id)).join(
                t.GoldCaseRow, t.GoldCaseRow.body_id == t.GoldBodyRow.id).where(
                t.GoldCaseRow.id.in_([item.record.id for item in items[:4]]))) > len(rows)
    finally:
        store.close()


def test_gold_bodies_downgrade_back_into_gold_cases(empty_url: str) -> None:
    store = Store(empty_url)
    try:
        store.import_items([_gold_item("g1"), _gold_item("g2")])
        exported = b"".join(block for _, block in store.iter_gold_blocks())
    finally:
        store.close()
    engine = create_engine(empty_url)
    with engine.begin() as conn:
        downgrade(conn, "0004_tool_sets")
        bodies = [r[0] for r in conn.execute(text("SELECT body FROM gold_cases ORDER BY id"))]
        assert "gold_bodies" not in inspect(conn).get_table_names()
    engine.dispose()
    assert "".join(body + "\n" for body in bodies).encode("utf-8") == exported


def _gold_item(case_id: str) -> Any:
    from labeler.store import ImportItem
    from tests.labeler.test_store import gold

    return ImportItem(gold(case_id), "g.jsonl", 1)
