"""An import's records as the rows they become, and writing those rows into the import's stage file: what
``toolgold import``'s worker processes run (``labeler.cli.import_pool``), and the importing process too for what
it converts itself.

No SQL library is loaded here (``sqlite3`` only; ``make lint`` checks it): the workers are forked before the
importing process loads SQLAlchemy and the store's tables (~0.3 s), so they convert records meanwhile. The
stage's reading, checking and publishing are ``labeler.store.transcripts``'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from labeler.candidates import is_candidate
from labeler.store.base import BUSY_TIMEOUT_MS, CHUNK, StoreError
from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.formats import record_json_text
from scorer.model import GoldCase, Message, Transcript

_TOOL_MEMO: dict[bytes | str, tuple[str, str, str]] = {}
"""(hash, name, canonical JSON) by a tool's JSON: the same tools recur in every transcript of an import."""


@dataclass(frozen=True)
class ImportItem:
    """One converted record with where it came from, so the store can name the line on a conflict."""

    record: Transcript | GoldCase
    source: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class PreparedItem:
    """An ``ImportItem`` already turned into the rows it becomes (``prepare_item``): made in another process,
    so an import converts on one core while it writes on the other. Plain strings and numbers: cheap to pickle."""

    transcript: bool
    staged: Staged

    def __reduce__(self) -> tuple[Any, ...]:  # a frozen dataclass pickles through fields(): 25 us a record
        return PreparedItem, (self.transcript, self.staged)


def prepare_item(item: ImportItem) -> PreparedItem:
    """The rows ``item`` becomes (canonical JSON bodies, content hashes, turns, tags); no database needed."""
    if isinstance(item.record, Transcript):
        prepared = PreparedItem(True, _stage_transcript(item, item.record))
    else:
        prepared = PreparedItem(False, _stage_gold(item, item.record))
    _check_stage_keys(prepared)
    return prepared


def _check_stage_keys(prepared: PreparedItem) -> None:
    """A record's children (turns or tags) and tool links are staged under one key range of ``CHILD_BITS``
    (``STAGE_SCHEMA``): one more would land in the next record's range and never be published, so refuse it."""
    staged, limit = prepared.staged, 1 << CHILD_BITS
    what = "transcript" if prepared.transcript else "gold case"
    for count, name in ((len(staged.children), "decision points" if prepared.transcript else "tags"),
                        (len(staged.tools), "tools")):
        if count >= limit:
            raise InvalidRecord(f"{what} {staged.id!r} has {count:,} {name}; an import takes at most {limit - 1:,} "
                                "per record (split it)", source=staged.source, line=staged.line)


STAGE_PRAGMAS = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
"""Every connection to a stage file (the importing process's and its workers'): a throwaway file, never synced."""
STAGE_PAGE_SIZE = "PRAGMA page_size=65536;"
"""Set when the stage file is made: a tau-bench transcript's ~30 KB body then takes one page, not a chain of eight
4 KiB overflow pages (the workers' stage write took half the CPU: 48 against 86 µs per transcript)."""
STAGE_SCHEMA = """
CREATE TABLE transcripts (id INTEGER PRIMARY KEY, external_id TEXT NOT NULL UNIQUE, content_hash TEXT, src TEXT,
                          line INTEGER, seq INTEGER, n_turns INTEGER, body_id INTEGER, tool_list INTEGER);
CREATE TABLE tool_lists (id INTEGER PRIMARY KEY, hashes TEXT NOT NULL UNIQUE);
CREATE TABLE gold_cases (id TEXT PRIMARY KEY, content_hash TEXT, src TEXT, line INTEGER, seq INTEGER, body_id INTEGER);
CREATE TABLE rows_transcripts (seq INTEGER PRIMARY KEY, external_id TEXT, source TEXT, content_hash TEXT, title TEXT,
                               n_messages INTEGER, n_turns INTEGER, n_tool_calls INTEGER, started_at TEXT, tools TEXT);
CREATE TABLE rows_transcript_bodies (seq INTEGER PRIMARY KEY, body TEXT);
CREATE TABLE rows_tool_schemas (hash TEXT PRIMARY KEY, name TEXT, body TEXT);
CREATE TABLE rows_turns (key INTEGER PRIMARY KEY, ordinal INTEGER, message_index INTEGER, observed TEXT,
                         observed_behavior TEXT, n_calls INTEGER);
CREATE TABLE rows_gold_cases (seq INTEGER PRIMARY KEY, id TEXT, conversation_id TEXT, turn INTEGER, split TEXT,
                              kind TEXT, status TEXT, behavior TEXT, tags TEXT, source TEXT, content_hash TEXT);
CREATE TABLE rows_gold_bodies (seq INTEGER PRIMARY KEY, body TEXT);
CREATE TABLE rows_gold_case_tags (key INTEGER PRIMARY KEY, case_id TEXT, tag TEXT);
"""
"""Two kinds of tables. ``rows_*``: every record's rows as written (by a worker process, or by the importing
process for what it converts itself), under the record's ``seq``; a child row (tool link, turn, tag) under
``seq << CHILD_BITS | its position``, so a record's children are one key range. ``transcripts`` and
``gold_cases``: the records the checks accepted, in input order, with the store key each transcript gets (and
the id of its body, written into the store ahead of the publish: ``transcripts._write_bodies``; so is a gold
case's); only these are published (joined to their rows), so a duplicate or a reject needs no row taken out. A
transcript's body and a gold case's are tables of their own (``rows_transcript_bodies``,
``rows_gold_bodies``), so the publish reads none of the bodies' pages. A transcript's tools are the schema
hashes in order, joined by spaces (``rows_transcripts.tools``); ``tool_lists`` numbers the distinct lists of
the accepted transcripts (``transcripts.tool_list``; none for no tools), each a tool set in the store."""
CHILD_BITS = 20
MAIN_CHUNKS = 1 << 22
"""Chunk numbers from here on are the importing process's own (below: the workers', one per chunk of lines)."""
STAGE_WAIT_SECONDS = 600.0
"""How long a stage connection waits for another's write (the workers' and this process's take turns)."""


@dataclass(frozen=True, slots=True)
class StagedItem:
    """A record whose rows are already in the import's stage file (written there by a worker,
    ``StageWriter``): what the checks and the publish need of it, not its rows."""

    transcript: bool
    id: str
    digest: str
    source: str
    line: int | None
    seq: int
    n_children: int
    body_id: int | None = None
    """Where the worker wrote its body: that id in the store's table of bodies (noted pending under the stage,
    ``StageWriter``), or None: in the stage file, copied into the store if it is accepted
    (``transcripts._write_bodies``)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return StagedItem, (self.transcript, self.id, self.digest, self.source, self.line, self.seq, self.n_children,
                            self.body_id)


class StageFailed(StoreError):
    """The stage file could not be written (in this process or a worker): the import stops, nothing written."""

    def __init__(self, reason: BaseException | str) -> None:
        text = reason if isinstance(reason, str) else getattr(reason, "strerror", None) or str(reason)
        super().__init__((str(text).splitlines() or [type(reason).__name__])[0])
        self.strerror = str(self)


@contextlib.contextmanager
def stage_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction on a stage file, taken at once (the workers and the importing process take turns):
    committed, or rolled back on any error and the error raised."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


class BodyWriteFailed(StageFailed):
    """A worker could not write bodies into the store itself (the disk is full, the write lock was held past the
    busy timeout): the import stops, nothing published; the message is the driver's first line."""


class StageWriter:
    """Writes prepared records' rows into an import's stage file, from the importing process or from a worker
    process converting its records (each record under its ``seq``, unique within the import).

    Given the store's file (``store``: a worker's writer), the bodies (most of the bytes) go straight into the
    store's tables of bodies instead of the stage, in short write transactions of their own noted as this
    import's (``pending_bodies``, ``pending_gold_bodies`` under the stage's name), as
    ``transcripts._write_bodies`` does for what the importing process converts: so no body is written into the
    stage, read back and copied by the importing process. Nothing refers to them until the publish; a record
    the importing process does not accept has its body deleted (``transcripts._delete_bodies``), a failed
    import deletes them all (``_discard_pending``) and a killed one's are swept by the next import. A record
    the store already holds with the same content (a re-import: it will be counted unchanged) keeps its body
    in the stage, where a record the checks then accept after all (it was deleted meanwhile) still finds it."""

    def __init__(self, path: Path | str, store: Path | str | None = None) -> None:
        # mode=rw: the stage must exist already. A worker opening it after the importing process gave up and
        # removed it would otherwise create an empty one in its place.
        self.stage_name = Path(path).name
        try:
            self.conn = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=rw", uri=True,
                                        isolation_level=None, timeout=STAGE_WAIT_SECONDS)
            self.conn.executescript(STAGE_PRAGMAS)
        except sqlite3.Error as exc:
            raise StageFailed(exc) from None
        self.store: sqlite3.Connection | None = None
        if store is not None:
            try:  # the store's own connection settings (``engine``): its busy timeout, so saves and this take turns
                self.store = sqlite3.connect(Path(store).resolve().as_uri() + "?mode=rw", uri=True,
                                             isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
                # No checkpoints here: the importing process runs them (``Database.flushing``), so a worker
                # never waits on a checkpoint's syncs while the other waits for its turn to write.
                self.store.executescript(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}; PRAGMA synchronous=NORMAL; "
                                         "PRAGMA foreign_keys=ON; PRAGMA wal_autocheckpoint=0;")
            except sqlite3.Error as exc:
                raise BodyWriteFailed(exc) from None

    def _bodies_into_store(self, records: Sequence[PreparedItem], turn: AbstractContextManager[Any],
                           gold: bool = True) -> list[int | None]:
        """Write the bodies of ``records`` into the store (see the class), each chunk's transcripts' and gold
        cases' (unless not ``gold``) in short transactions; the id of each, or None for one kept in the stage
        (stored unchanged, or a gold case left there)."""
        assert self.store is not None
        ids: list[int | None] = [None] * len(records)
        try:
            for transcript, kind in ((True, TRANSCRIPT_BODY_TABLES), (False, GOLD_BODY_TABLES)):
                if not transcript and not gold:
                    continue
                picked = [n for n, prepared in enumerate(records) if prepared.transcript is transcript]
                if not picked:
                    continue
                key = "external_id" if transcript else "id"
                owner = kind.owner
                wanted = list(dict.fromkeys(records[n].staged.id for n in picked))
                stored: dict[str, str] = {}
                for start in range(0, len(wanted), CHUNK):  # a read: no lock taken
                    part = wanted[start:start + CHUNK]
                    stored.update(self.store.execute(f"SELECT {key}, content_hash FROM {owner} WHERE {key} IN "
                                                     f"({', '.join('?' * len(part))})", part).fetchall())
                fresh = [n for n in picked if stored.get(records[n].staged.id) != records[n].staged.digest]
                with turn:
                    for span, first in write_body_spans(self.store, kind, self.stage_name,
                                                         [records[n].staged.row["body"] for n in fresh]):
                        for offset, n in enumerate(fresh[span]):
                            ids[n] = first + offset
        except sqlite3.Error as exc:
            raise BodyWriteFailed(exc) from None
        return ids

    def write(self, number: int, records: Sequence[PreparedItem], *,
              store_turn: AbstractContextManager[Any] | None = None,
              stage_turn: AbstractContextManager[Any] | None = None, gold_in_store: bool = True) -> list[StagedItem]:
        """Write the rows of chunk ``number``'s records (each number used once in an import) in one
        transaction; return what stands for each. The writes into the store and into the stage are made
        holding ``store_turn`` and ``stage_turn`` (the workers' locks: they take turns without polling).
        Not ``gold_in_store``: the gold cases' bodies stay in the stage, where a case the importing process drops
        costs no write into the store and no delete (tau-bench's trajectories bring their task's case again
        each)."""
        if len(records) >= 1 << CHILD_BITS or not 0 <= number < 2 * MAIN_CHUNKS:
            raise ValueError(f"chunk {number} of {len(records)} records: beyond what a stage key numbers")
        store_turn = store_turn or contextlib.nullcontext()
        stage_turn = stage_turn or contextlib.nullcontext()
        body_ids = (self._bodies_into_store(records, store_turn, gold_in_store) if self.store is not None
                    else [None] * len(records))
        transcripts, bodies, tools, turns, gold, gold_bodies, tags, out = [], [], {}, [], [], [], [], []
        for index, prepared in enumerate(records):
            seq = number << CHILD_BITS | index
            staged = prepared.staged
            row = staged.row
            key = seq << CHILD_BITS
            body_id = body_ids[index]
            if prepared.transcript:
                transcripts.append((seq, *_TRANSCRIPT_ROW(row), " ".join(tool[0] for tool in staged.tools)))
                if body_id is None:
                    bodies.append((seq, row["body"]))
                for tool in staged.tools:
                    tools[tool[0]] = tool
                turns += [(key | n, *_TURN_ROW(turn)) for n, turn in enumerate(staged.children)]
            else:
                gold.append((seq, *_GOLD_ROW(row)))
                if body_id is None:
                    gold_bodies.append((seq, row["body"]))
                tags += [(key | n, tag["case_id"], tag["tag"]) for n, tag in enumerate(staged.children)]
            out.append(StagedItem(prepared.transcript, staged.id, staged.digest, staged.source, staged.line, seq,
                                  len(staged.children), body_id))
        run = self.conn.executemany
        try:
            with stage_turn, stage_transaction(self.conn):
                run("INSERT INTO rows_transcripts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", transcripts)
                run("INSERT INTO rows_transcript_bodies VALUES (?, ?)", bodies)
                run("INSERT OR IGNORE INTO rows_tool_schemas VALUES (?, ?, ?)", list(tools.values()))
                run("INSERT INTO rows_turns VALUES (?, ?, ?, ?, ?, ?)", turns)
                run(f"INSERT INTO rows_gold_cases VALUES ({', '.join('?' * (len(GOLD_COLUMNS) + 1))})", gold)
                run("INSERT INTO rows_gold_bodies VALUES (?, ?)", gold_bodies)
                run("INSERT INTO rows_gold_case_tags VALUES (?, ?, ?)", tags)
        except sqlite3.Error as exc:  # the stage file's own database (a full disk, say)
            raise StageFailed(exc) from None
        return out

    def close(self) -> None:
        self.conn.close()
        if self.store is not None:
            self.store.close()


TRANSCRIPT_COLUMNS = ("external_id", "source", "content_hash", "title", "n_messages", "n_turns", "n_tool_calls",
                       "started_at")
"""A transcript's columns in the store and the stage but its body (``transcript_bodies``, ``rows_transcript_bodies``)."""
TURN_COLUMNS = ("ordinal", "message_index", "observed", "observed_behavior", "n_calls")
GOLD_COLUMNS = ("id", "conversation_id", "turn", "split", "kind", "status", "behavior", "tags", "source",
                 "content_hash")
"""A gold case's columns in the store and the stage but its body (``gold_bodies``, ``rows_gold_bodies``)."""
_TRANSCRIPT_ROW = operator.itemgetter(*TRANSCRIPT_COLUMNS)
_TURN_ROW = operator.itemgetter(*TURN_COLUMNS)
_GOLD_ROW = operator.itemgetter(*GOLD_COLUMNS)


@dataclass(frozen=True)
class BodyTables:
    """Where one kind of record keeps the bodies an import writes ahead, by table name (``labeler.store.tables``
    defines them; tests/labeler/test_import_early_fork.py checks the names agree)."""

    bodies: str
    """The store's table of bodies: ``transcript_bodies`` or ``gold_bodies``."""
    owner: str
    """The store's records referring to their bodies: ``transcripts`` or ``gold_cases``."""
    pending: str
    """The store's table of bodies written ahead, not published yet."""
    staged: str
    """The stage file's table of them."""


TRANSCRIPT_BODY_TABLES = BodyTables("transcript_bodies", "transcripts", "pending_bodies", "rows_transcript_bodies")
"""Transcripts' bodies (revision 0003)."""
GOLD_BODY_TABLES = BodyTables("gold_bodies", "gold_cases", "pending_gold_bodies", "rows_gold_bodies")
"""Gold cases' bodies (revision 0005)."""


BODY_BYTES = 16 << 20
"""How many bytes of bodies one write transaction of ``_write_bodies`` copies at most: a chunk (500) of tau-bench
transcripts in one (~30 ms on a quiet machine), so saves slot in while the next chunk converts; larger ones split."""


def write_body_spans(conn: sqlite3.Connection, kind: BodyTables, stage_name: str, bodies: Sequence[str],
                      ) -> Iterator[tuple[slice, int]]:
    """A worker's ``_write_bodies``: ``bodies`` into the store's table of them on the worker's own connection,
    ``BODY_BYTES`` a transaction, each noted pending under ``stage_name`` in the same transaction; yields each
    transaction's slice of ``bodies`` and the id of its first."""
    table, pending = kind.bodies, kind.pending
    start = 0
    while start < len(bodies):
        end, size = start, 0
        while end < len(bodies) and (end == start or size + len(bodies[end]) <= BODY_BYTES):
            size += len(bodies[end])
            end += 1
        with stage_transaction(conn):  # BEGIN IMMEDIATE: the store's write lock, for this copy alone
            first = (conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0] or 0) + 1
            conn.executemany(f"INSERT INTO {table} (id, body) VALUES (?, ?)",
                             [(first + n, body) for n, body in enumerate(bodies[start:end])])
            conn.execute(f"INSERT INTO {pending} (first_id, last_id, stage) VALUES (?, ?, ?)",
                         (first, first + end - start - 1, stage_name))
        yield slice(start, end), first
        start = end


@dataclass(slots=True)
class Staged:
    """One record as the rows it becomes, ready to write: cheap to spool and to hold a chunk of."""

    id: str
    digest: str
    source: str
    line: int | None
    row: dict[str, Any]
    tools: list[tuple[str, str, str]] = field(default_factory=list)
    children: list[dict[str, Any]] = field(default_factory=list)
    """Turn rows (without their transcript's key) or tag rows."""


def _stage_transcript(item: ImportItem, tr: Transcript) -> Staged:
    # the canonical text of to_json(tr) without its tools, and the tools as to_json writes them
    text, tools_json = record_json_text(tr, with_tools=False)
    tools = _tools_canonical(tools_json)
    # The content hash covers the body and the tools' hashes, so nothing is serialized twice:
    # sha256 of "\n".join([text, *tool hashes]), fed in pieces (no copy of the body joined to them)
    hasher = hashlib.sha256(text.encode("utf-8"))
    for tool_hash, _, _ in tools:
        hasher.update(b"\n" + tool_hash.encode("ascii"))
    digest = hasher.hexdigest()
    turns = _turn_rows(tr)
    row = {"external_id": tr.id, "source": _source_of(tr, item.source), "content_hash": digest,
           "title": _title(tr), "body": text, "n_messages": len(tr.messages),
           "n_turns": len(turns), "n_tool_calls": sum(len(m.tool_calls) for m in tr.messages),
           "started_at": _started_at(tr)}
    return Staged(tr.id, digest, item.source, item.line, row, tools, turns)


def _tool_canonical(tool: dict[str, Any]) -> tuple[str, str, str]:
    """(hash, name, canonical JSON) of a tool schema, memoized: the same tools recur in every transcript."""
    try:  # the memo's key only (what is stored is canonical.dumps): orjson is ~10x json.dumps
        key: bytes | str = orjson.dumps(tool)
    except (TypeError, orjson.JSONEncodeError):  # an integer beyond 64 bits
        key = json.dumps(tool)
    hit = _TOOL_MEMO.get(key)
    if hit is None:
        text = canonical.dumps(tool)
        hit = (hashlib.sha256(text.encode("utf-8")).hexdigest(), str(tool["name"]), text)
        if len(_TOOL_MEMO) < 10_000:
            _TOOL_MEMO[key] = hit
    return hit


_TOOL_LISTS: dict[int, tuple[list[dict[str, Any]], list[tuple[str, str, str]]]] = {}
"""``_tool_canonical`` of each tool of a list ``record_json_text`` returned, by the list's identity (the entry
holds the list): records that share their tools get the one list back."""


def _tools_canonical(tools: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    if not tools:
        return []
    hit = _TOOL_LISTS.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    found = [_tool_canonical(tool) for tool in tools]
    if len(_TOOL_LISTS) >= 256:
        _TOOL_LISTS.clear()
    _TOOL_LISTS[id(tools)] = (tools, found)
    return found


def _stage_gold(item: ImportItem, case: GoldCase) -> Staged:
    row = {"id": case.id, "conversation_id": case.conversation_id, "turn": case.turn, "split": case.split,
           "kind": case.kind, "status": case.provenance.status, "behavior": case.expected.behavior,
           "tags": canonical.dumps_float_free(list(case.tags)),  # strings only: canonical.dumps' text, sooner
           "source": case.provenance.source or item.source}
    # canonical.content_hash(to_json(case)) is the hash of this very text: serialize once, hash it
    row["body"] = body = record_json_text(case)[0]  # dumps_record(case)
    row["content_hash"] = hashlib.sha256(body.encode("utf-8")).hexdigest()
    tags = [{"case_id": case.id, "tag": tag} for tag in dict.fromkeys(case.tags)]
    return Staged(case.id, str(row["content_hash"]), item.source, item.line, row, children=tags)


def _source_of(tr: Transcript, fallback: str) -> str:
    src = tr.metadata.get("source")
    return str(src) if src else Path(fallback).name


def _title(tr: Transcript) -> str:
    for m in tr.messages:
        if m.role == "user" and m.content:
            text = " ".join(m.content.split())
            return text[:120] + ("…" if len(text) > 120 else "")
    return ""


def _started_at(tr: Transcript) -> str | None:
    for key in ("timestamp", "started_at", "created_at"):
        value = tr.metadata.get(key)
        if value:
            return str(value)
    return None


def observed_calls(message: Message | None) -> list[dict[str, Any]]:
    """The agent's calls at a decision point, with arguments parsed where they are JSON objects."""
    if message is None:
        return []
    return [{"name": c.function.name, "arguments": c.parsed_arguments()} for c in message.tool_calls]


def labelable_points(tr: Transcript) -> tuple[int, ...]:
    """The decision points that become turns to label: all of them, except in a synthetic candidate, whose
    earlier ones are copies of its parent's (labeled there): only its last one, where the candidate is."""
    points = tr.decision_points()
    return points[-1:] if is_candidate(tr) else points


def _turn_rows(tr: Transcript) -> list[dict[str, Any]]:
    points = labelable_points(tr)
    messages = [tr.messages[index] if index < len(tr.messages) else None for index in points]
    observed = [observed_calls(message) for message in messages]
    # JSON values with string keys, parsed strictly (no NaN): the fast canonical form, without a NaN walk
    texts = canonical.dumps_finite_json_values_each(observed)
    return [{"ordinal": ordinal, "message_index": index, "observed": text,
             "observed_behavior": "open" if message is None else ("call" if calls else "text"), "n_calls": len(calls)}
            for ordinal, (index, message, calls, text) in enumerate(zip(points, messages, observed, texts, strict=True))]


__all__ = ["BODY_BYTES", "CHILD_BITS", "GOLD_BODY_TABLES", "GOLD_COLUMNS", "MAIN_CHUNKS", "STAGE_PAGE_SIZE",
           "STAGE_PRAGMAS", "STAGE_SCHEMA", "STAGE_WAIT_SECONDS", "TRANSCRIPT_BODY_TABLES", "TRANSCRIPT_COLUMNS",
           "TURN_COLUMNS", "BodyTables", "BodyWriteFailed", "ImportItem", "PreparedItem", "StageFailed", "StageWriter",
           "Staged", "StagedItem", "labelable_points", "observed_calls", "prepare_item", "stage_transaction",
           "write_body_spans"]
