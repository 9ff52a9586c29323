"""Transcripts and turns, and the live gold set as read: importing, listing, loading, exporting, coverage.

An import adds transcripts (their tools stored once per schema hash, their decision points as turns) and
gold cases in one transaction; content already present is left alone, and an id that exists with other
content is refused naming the file and line. One exception: a transcript that comes again with the same
conversation and other tools is that conversation's tool set changing, so its tools are replaced (audited
as ``transcript.tools``); a gold case that comes again differing only in its tools is kept as labeled.
Schema drift (``labeler.store.drift``) then compares each case with its own transcript's tools.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Connection, delete, func, insert, select, update

from labeler.candidates import is_candidate
from labeler.store import tables as t
from labeler.store.common import REVIEWER_ROLES, PermissionDenied, audit, require_role, stored_transcript
from labeler.store.engine import CHUNK, IMPORT_LOCK, Database, StoreError, now_iso, one_at_a_time
from scorer import canonical
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record, to_json
from scorer.model import GoldCase, Message, Transcript

_TOOL_MEMO: dict[str, tuple[str, str, str]] = {}
"""(hash, name, canonical JSON) by a tool's JSON: the same tools recur in every transcript of an import."""


@dataclass(frozen=True)
class ImportItem:
    """One converted record with where it came from, so the store can name the line on a conflict."""

    record: Transcript | GoldCase
    source: str
    line: int | None = None


@dataclass
class ImportResult:
    transcripts_added: int = 0
    transcripts_unchanged: int = 0
    gold_added: int = 0
    gold_unchanged: int = 0
    turns_added: int = 0
    transcripts_retooled: int = 0
    """Transcripts already stored with the same conversation that came with other tools: their tools now
    are the new ones (schema drift checks the gold labeled on them)."""
    gold_retooled: int = 0
    """Gold cases already stored that came again differing only in their tools: kept as labeled."""
    rejects: list[InvalidRecord] = field(default_factory=list)

    @property
    def summary(self) -> str:
        parts = [
            f"{self.transcripts_added} transcripts added ({self.turns_added} decision points)",
            f"{self.gold_added} gold cases added",
        ]
        same = self.transcripts_unchanged + self.gold_unchanged
        if same:
            parts.append(f"{same} already present")
        if self.transcripts_retooled:
            parts.append(f"{self.transcripts_retooled} transcripts' tools changed")
        if self.gold_retooled:
            parts.append(f"{self.gold_retooled} gold cases kept as labeled under their earlier tools")
        if self.rejects:
            parts.append(f"{len(self.rejects)} rejected")
        return ", ".join(parts)


@dataclass(frozen=True)
class TranscriptSummary:
    id: str
    source: str
    title: str
    n_messages: int
    n_turns: int
    n_tool_calls: int
    n_gold: int
    started_at: str | None

    @property
    def n_unlabeled(self) -> int:
        return max(self.n_turns - self.n_gold, 0)


@dataclass(frozen=True)
class TurnSummary:
    ordinal: int
    message_index: int
    observed_behavior: str
    n_calls: int
    gold_case_ids: tuple[str, ...]


@dataclass(frozen=True)
class TranscriptDetail:
    transcript: Transcript
    source: str
    turns: tuple[TurnSummary, ...]


# -- labeling read models ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """The gold set at a glance."""

    total: int
    by_behavior: dict[str, int]
    by_tool: dict[str, int]
    by_tag: dict[str, int]
    happy_path: int
    adversarial: int

    @property
    def adversarial_ratio(self) -> float | None:
        """Adversarial cases per happy-path case (the team's target is at least 2)."""
        return self.adversarial / self.happy_path if self.happy_path else None


def import_items(db: Database, items: Iterable[ImportItem], *, actor: str = "import",
                 skip_invalid: bool = False) -> ImportResult:
    """Add transcripts and gold cases in one transaction; content already present is left alone.

    An id that exists with different content is a conflict: the whole import is refused (nothing
    written) and the error names the file and line, unless ``skip_invalid`` sets it aside as a reject.

    ``items`` is consumed before the transaction begins: each record is turned into the rows it becomes
    (plain strings and numbers) and spooled to a temporary file a chunk at a time, so memory stays flat
    however large the import, and converting the input (the slow part) never holds the write lock that
    annotators' saves wait for. The transaction then replays the spool, transcripts first.
    """
    result = ImportResult()
    with tempfile.TemporaryFile() as transcripts, tempfile.TemporaryFile() as gold:
        sources = _spool(items, transcripts, gold)
        with db.write() as conn:
            # Imports run one at a time: two imports of the same content (or of files sharing a tool schema
            # new to the store) would otherwise both find it missing and both insert it (PostgreSQL:
            # IntegrityError).
            one_at_a_time(conn, IMPORT_LOCK)
            for batch in _replayed(transcripts):
                _import_transcripts(conn, batch, result, skip_invalid, actor)
            for batch in _replayed(gold):
                _import_gold(conn, batch, result, skip_invalid)
            if result.transcripts_added or result.gold_added or result.transcripts_retooled:
                audit(conn, actor=actor, action="import", entity="batch", entity_id=now_iso(),
                      after={"transcripts": result.transcripts_added, "gold_cases": result.gold_added,
                             "transcripts_retooled": result.transcripts_retooled, "sources": sorted(sources)})
    return result


@dataclass(slots=True)
class _Staged:
    """One record as the rows it becomes, ready to write: cheap to spool and to hold a chunk of."""

    id: str
    digest: str
    source: str
    line: int | None
    row: dict[str, Any]
    tools: list[tuple[str, str, str]] = field(default_factory=list)
    children: list[dict[str, Any]] = field(default_factory=list)
    """Turn rows (without their transcript's key) or tag rows."""


def _spool(items: Iterable[ImportItem], transcripts: IO[bytes], gold: IO[bytes]) -> set[str]:
    """Stage ``items`` into the two spools in chunks of ``CHUNK``; return their sources."""
    sources: set[str] = set()
    pending: dict[IO[bytes], list[_Staged]] = {transcripts: [], gold: []}
    for item in items:
        sources.add(item.source)
        if isinstance(item.record, Transcript):
            spool, staged = transcripts, _stage_transcript(item, item.record)
        else:
            spool, staged = gold, _stage_gold(item, item.record)
        batch = pending[spool]
        batch.append(staged)
        if len(batch) >= CHUNK:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
            batch.clear()
    for spool, batch in pending.items():
        if batch:
            pickle.dump(batch, spool, protocol=pickle.HIGHEST_PROTOCOL)
        spool.seek(0)
    return sources


def _replayed(spool: IO[bytes]) -> Iterator[list[_Staged]]:
    while True:
        try:
            yield pickle.load(spool)
        except EOFError:
            return


def _reject_or_raise(err: InvalidRecord, result: ImportResult, skip: bool) -> None:
    if not skip:
        raise err
    result.rejects.append(err)


def _stage_transcript(item: ImportItem, tr: Transcript) -> _Staged:
    body = to_json(tr)
    tools = [_tool_canonical(tool) for tool in body.pop("tools")]
    text = canonical.dumps(body)
    # The content hash covers the body and the tools' hashes, so nothing is serialized twice.
    digest = hashlib.sha256("\n".join([text, *(h for h, _, _ in tools)]).encode("utf-8")).hexdigest()
    row = {"external_id": tr.id, "source": _source_of(tr, item.source), "content_hash": digest,
           "title": _title(tr), "body": text, "n_messages": len(tr.messages),
           "n_turns": len(labelable_points(tr)), "n_tool_calls": sum(len(m.tool_calls) for m in tr.messages),
           "started_at": _started_at(tr)}
    return _Staged(tr.id, digest, item.source, item.line, row, tools, _turn_rows(tr))


def _import_transcripts(conn: Connection, batch: Sequence[_Staged], result: ImportResult, skip: bool,
                        actor: str) -> None:
    existing = {ext: (pk, digest, body) for ext, pk, digest, body in conn.execute(
        select(t.TranscriptRow.external_id, t.TranscriptRow.id, t.TranscriptRow.content_hash, t.TranscriptRow.body)
        .where(t.TranscriptRow.external_id.in_([s.id for s in batch]))
    ).all()}
    seen_in_batch: dict[str, str] = {}
    rows, tool_links, new = [], [], []
    stamp = now_iso()
    for staged in batch:
        stored = existing.get(staged.id)
        prior = seen_in_batch.get(staged.id) or (stored[1] if stored else None)
        if prior == staged.digest:
            result.transcripts_unchanged += 1
            continue
        if stored is not None and staged.id not in seen_in_batch and stored[2] == staged.row["body"]:
            # The same conversation with other tools: the conversation's tool set changed.
            _retool(conn, stored[0], staged, actor)
            seen_in_batch[staged.id] = staged.digest
            result.transcripts_retooled += 1
            continue
        if prior is not None:
            _reject_or_raise(InvalidRecord(
                f"transcript {staged.id!r} is already in the store with different content "
                "(give it a new id to keep both)", source=staged.source, line=staged.line), result, skip)
            continue
        seen_in_batch[staged.id] = staged.digest
        new.append(staged)
        rows.append({**staged.row, "imported_at": stamp})
    if not rows:
        return
    id_of = {ext: pk for pk, ext in conn.execute(
        insert(t.TranscriptRow).returning(t.TranscriptRow.id, t.TranscriptRow.external_id),
        rows)}
    _ensure_tool_schemas(conn, [tool for staged in new for tool in staged.tools])
    turn_rows = []
    for staged in new:
        pk = id_of[staged.id]
        tool_links += [{"transcript_id": pk, "position": i, "schema_hash": digest}
                       for i, (digest, _, _) in enumerate(staged.tools)]
        turn_rows += [{**turn, "transcript_id": pk} for turn in staged.children]
    if tool_links:
        conn.execute(insert(t.TranscriptToolRow), tool_links)
    if turn_rows:
        conn.execute(insert(t.TurnRow), turn_rows)
    result.transcripts_added += len(rows)
    result.turns_added += len(turn_rows)


def _retool(conn: Connection, pk: int, staged: _Staged, actor: str) -> None:
    """Replace the stored transcript ``pk``'s tools with ``staged``'s (its conversation is the same)."""
    before = list(conn.scalars(select(t.TranscriptToolRow.schema_hash).where(
        t.TranscriptToolRow.transcript_id == pk).order_by(t.TranscriptToolRow.position)))
    _ensure_tool_schemas(conn, staged.tools)
    conn.execute(delete(t.TranscriptToolRow).where(t.TranscriptToolRow.transcript_id == pk))
    if staged.tools:
        conn.execute(insert(t.TranscriptToolRow), [
            {"transcript_id": pk, "position": i, "schema_hash": digest}
            for i, (digest, _, _) in enumerate(staged.tools)])
    conn.execute(update(t.TranscriptRow).where(t.TranscriptRow.id == pk).values(content_hash=staged.digest))
    audit(conn, actor=actor, action="transcript.tools", entity="transcript", entity_id=staged.id,
          before={"tools": before}, after={"tools": [digest for digest, _, _ in staged.tools]},
          note=f"re-imported from {staged.source}" + (f":{staged.line}" if staged.line else "")
               + " with other tools")


def _tool_canonical(tool: dict[str, Any]) -> tuple[str, str, str]:
    """(hash, name, canonical JSON) of a tool schema, memoized: the same tools recur in every transcript."""
    key = json.dumps(tool)
    hit = _TOOL_MEMO.get(key)
    if hit is None:
        text = canonical.dumps(tool)
        hit = (hashlib.sha256(text.encode("utf-8")).hexdigest(), str(tool["name"]), text)
        if len(_TOOL_MEMO) < 10_000:
            _TOOL_MEMO[key] = hit
    return hit


def _ensure_tool_schemas(conn: Connection, tools: list[tuple[str, str, str]]) -> None:
    by_hash = {digest: (name, text) for digest, name, text in tools}
    if not by_hash:
        return
    known = set(conn.scalars(select(t.ToolSchemaRow.hash).where(
        t.ToolSchemaRow.hash.in_(list(by_hash)))))
    fresh = [{"hash": h, "name": name, "body": text, "first_seen": now_iso()}
             for h, (name, text) in by_hash.items() if h not in known]
    if fresh:
        conn.execute(insert(t.ToolSchemaRow), fresh)


def _stage_gold(item: ImportItem, case: GoldCase) -> _Staged:
    row = {"id": case.id, "conversation_id": case.conversation_id, "turn": case.turn, "split": case.split,
           "kind": case.kind, "status": case.provenance.status, "behavior": case.expected.behavior,
           "tags": canonical.dumps(list(case.tags)), "source": case.provenance.source or item.source,
           "body": dumps_record(case), "content_hash": canonical.content_hash(to_json(case))}
    tags = [{"case_id": case.id, "tag": tag} for tag in dict.fromkeys(case.tags)]
    return _Staged(case.id, str(row["content_hash"]), item.source, item.line, row, children=tags)


def _import_gold(conn: Connection, batch: Sequence[_Staged], result: ImportResult, skip: bool) -> None:
    existing = {cid: (digest, body) for cid, digest, body in conn.execute(
        select(t.GoldCaseRow.id, t.GoldCaseRow.content_hash, t.GoldCaseRow.body)
        .where(t.GoldCaseRow.id.in_([s.id for s in batch]))
    ).all()}
    seen: dict[str, str] = {}
    rows, tag_rows = [], []
    stamp = now_iso()
    for staged in batch:
        stored = existing.get(staged.id)
        prior = seen.get(staged.id) or (stored[0] if stored else None)
        if prior == staged.digest:
            result.gold_unchanged += 1
            continue
        if stored is not None and staged.id not in seen and _but_tools(stored[1]) == _but_tools(
                str(staged.row["body"])):
            # Labeled under other tools: the stored gold stays; schema drift says whether it still fits.
            seen[staged.id] = staged.digest
            result.gold_retooled += 1
            continue
        if prior is not None:
            _reject_or_raise(InvalidRecord(
                f"gold case {staged.id!r} is already in the store with different content",
                source=staged.source, line=staged.line), result, skip)
            continue
        seen[staged.id] = staged.digest
        rows.append({**staged.row, "created_at": stamp, "updated_at": stamp})
        tag_rows += staged.children
    if rows:
        conn.execute(insert(t.GoldCaseRow), rows)
        result.gold_added += len(rows)
    if tag_rows:
        conn.execute(insert(t.GoldCaseTagRow), tag_rows)

def _but_tools(body: str) -> Any:
    record = json.loads(body)
    if isinstance(record, dict):
        record.pop("tools", None)
    return record


# -- transcripts ------------------------------------------------------------------------------


def list_transcripts(db: Database, *, source: str | None = None, search: str | None = None,
                     limit: int = 1000, offset: int = 0) -> list[TranscriptSummary]:
    gold_count = (select(func.count()).select_from(t.GoldCaseRow)
                  .where(t.GoldCaseRow.conversation_id == t.TranscriptRow.external_id)
                  .where(t.GoldCaseRow.kind == "turn")
                  .correlate(t.TranscriptRow).scalar_subquery())
    q = select(
        t.TranscriptRow.external_id, t.TranscriptRow.source, t.TranscriptRow.title,
        t.TranscriptRow.n_messages, t.TranscriptRow.n_turns, t.TranscriptRow.n_tool_calls,
        gold_count, t.TranscriptRow.started_at,
    ).order_by(t.TranscriptRow.id).limit(limit).offset(offset)
    if source:
        q = q.where(t.TranscriptRow.source == source)
    if search:
        like = f"%{search}%"
        q = q.where(t.TranscriptRow.external_id.like(like) | t.TranscriptRow.title.like(like))
    with db.read() as conn:
        return [TranscriptSummary(*row) for row in conn.execute(q)]


def sources(db: Database) -> list[str]:
    with db.read() as conn:
        return list(conn.scalars(select(t.TranscriptRow.source).distinct().order_by(t.TranscriptRow.source)))


def count_transcripts(db: Database) -> int:
    with db.read() as conn:
        return conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0


def get_transcript(db: Database, external_id: str) -> TranscriptDetail:
    with db.read() as conn:
        row = conn.execute(select(t.TranscriptRow).where(t.TranscriptRow.external_id == external_id)).first()
        if row is None:
            raise StoreError(f"no transcript with id {external_id!r}")
        pk = row.id
        tools = conn.scalars(
            select(t.ToolSchemaRow.body)
            .join(t.TranscriptToolRow, t.TranscriptToolRow.schema_hash == t.ToolSchemaRow.hash)
            .where(t.TranscriptToolRow.transcript_id == pk)
            .order_by(t.TranscriptToolRow.position)).all()
        turns = conn.execute(
            select(t.TurnRow.ordinal, t.TurnRow.message_index, t.TurnRow.observed_behavior,
                   t.TurnRow.n_calls)
            .where(t.TurnRow.transcript_id == pk).order_by(t.TurnRow.ordinal)).all()
        gold = conn.execute(
            select(t.GoldCaseRow.turn, t.GoldCaseRow.id)
            .where(t.GoldCaseRow.conversation_id == external_id)
            .order_by(t.GoldCaseRow.id)).all()
    transcript = stored_transcript(external_id, row.body, tools)
    by_turn: dict[int | None, list[str]] = {}
    for turn, case_id in gold:
        by_turn.setdefault(turn, []).append(case_id)
    return TranscriptDetail(
        transcript=transcript, source=row.source,
        turns=tuple(TurnSummary(o, mi, b, n, tuple(by_turn.get(mi, ()))) for o, mi, b, n in turns),
    )

# -- gold cases -------------------------------------------------------------------------------

def _gold_query(split: str | None, status: str | None, tag: str | None) -> Any:
    q = select(t.GoldCaseRow.body).order_by(t.GoldCaseRow.id)
    if split:
        q = q.where(t.GoldCaseRow.split == split)
    if status:
        q = q.where(t.GoldCaseRow.status == status)
    if tag:
        q = q.where(t.GoldCaseRow.id.in_(
            select(t.GoldCaseTagRow.case_id).where(t.GoldCaseTagRow.tag == tag)))
    return q


def count_gold(db: Database, *, split: str | None = None, status: str | None = None, tag: str | None = None) -> int:
    q = _gold_query(split, status, tag)
    with db.read() as conn:
        return conn.scalar(select(func.count()).select_from(q.subquery())) or 0


def authorize_gold_export(db: Database, *, split: str | None = None, status: str | None = None,
                          tag: str | None = None, actor: str | None, target: str) -> int:
    """Check that ``actor`` may export this selection, record the export, and return its size.

    Approved regression cases are the held-out set: only a reviewer or admin exports them, and each such
    export is an audit event (as exporting a frozen version is). Other selections need no user."""
    q = _gold_query(split, status, tag).subquery()
    # A read-only database (a snapshot on a read-only volume) can still be exported by someone with the
    # right role; it cannot take the audit event, and whoever has the file can read it anyway.
    with (db.read() if db.read_only else db.write()) as conn:
        total = conn.scalar(select(func.count()).select_from(q)) or 0
        held_out = conn.scalar(select(func.count()).select_from(t.GoldCaseRow).where(
            t.GoldCaseRow.id.in_(select(_gold_query(split, status, tag).with_only_columns(
                t.GoldCaseRow.id).subquery())),
            t.GoldCaseRow.split == "regression", t.GoldCaseRow.status == "approved")) or 0
        if held_out:
            if not actor:
                raise PermissionDenied(f"the selection holds {held_out} approved regression cases (the held-out "
                                       "set): exporting them needs --user NAME (a reviewer or admin), or "
                                       "TOOLGOLD_USER")
            require_role(conn, actor, REVIEWER_ROLES, "export approved regression cases")
            if not db.read_only:
                audit(conn, actor=actor, action="gold.export", entity="gold", entity_id=split or "all",
                      after={"split": split, "status": status, "tag": tag, "cases": total, "held_out": held_out,
                             "target": target})
    return total


def iter_gold_lines(db: Database, *, split: str | None = None, status: str | None = None,
                    tag: str | None = None, batch: int = 2000) -> Iterator[str]:
    """Canonical JSON lines of the gold cases, ordered by id, streamed (memory stays flat)."""
    q = _gold_query(split, status, tag)
    with db.engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=batch).execute(q)
        for (body,) in result:
            yield body


def get_gold(db: Database, case_id: str) -> GoldCase:
    with db.read() as conn:
        body = conn.scalar(select(t.GoldCaseRow.body).where(t.GoldCaseRow.id == case_id))
    if body is None:
        raise StoreError(f"no gold case with id {case_id!r}")
    return GoldCase.model_validate_json(body)


def gold_cases(db: Database, *, split: str | None = None, status: str | None = None) -> list[GoldCase]:
    """The live gold cases (for hygiene checks), ordered by id."""
    return [GoldCase.model_validate_json(line) for line in iter_gold_lines(db, split=split, status=status)]


# -- vocabulary and coverage ------------------------------------------------------------------------


def tool_names(db: Database) -> list[str]:
    """Names of every tool offered in some transcript (for filters)."""
    with db.read() as conn:
        return list(conn.scalars(select(t.ToolSchemaRow.name).distinct().order_by(t.ToolSchemaRow.name)))


def coverage(db: Database, *, status: str | None = None) -> Coverage:
    """Turn gold cases by decision kind, by expected tool and by tag, and the adversarial : happy-path
    balance (a case is adversarial when it carries a tag the vocabulary marks adversarial)."""
    cases = select(t.GoldCaseRow.id).where(t.GoldCaseRow.kind == "turn")
    if status:
        cases = cases.where(t.GoldCaseRow.status == status)
    in_cases = t.GoldCaseTagRow.case_id.in_(cases)
    adversarial_tags = select(t.TagRow.tag).where(t.TagRow.adversarial == True)  # noqa: E712
    with db.read() as conn:
        by_behavior = dict(conn.execute(
            select(t.GoldCaseRow.behavior, func.count()).where(t.GoldCaseRow.id.in_(cases))
            .group_by(t.GoldCaseRow.behavior)).all())
        by_tag = dict(conn.execute(select(t.GoldCaseTagRow.tag, func.count()).where(in_cases)
                                   .group_by(t.GoldCaseTagRow.tag)).all())
        happy = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                            .where(in_cases, t.GoldCaseTagRow.tag == "happy_path")) or 0
        adversarial = conn.scalar(select(func.count(func.distinct(t.GoldCaseTagRow.case_id)))
                                  .where(in_cases, t.GoldCaseTagRow.tag.in_(adversarial_tags))) or 0
        by_tool: dict[str, int] = {}
        bodies = conn.execution_options(yield_per=2000).execute(
            select(t.GoldCaseRow.body).where(t.GoldCaseRow.id.in_(cases), t.GoldCaseRow.behavior == "call"))
        for (body,) in bodies:
            for name in {c["name"] for c in json.loads(body)["expected"]["calls"]}:
                by_tool[name] = by_tool.get(name, 0) + 1
    return Coverage(total=sum(by_behavior.values()), by_behavior=by_behavior,
                    by_tool=dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0]))),
                    by_tag=dict(sorted(by_tag.items(), key=lambda kv: (-kv[1], kv[0]))),
                    happy_path=happy, adversarial=adversarial)


def stats(db: Database) -> dict[str, int]:
    with db.read() as conn:
        return {
            "transcripts": conn.scalar(select(func.count()).select_from(t.TranscriptRow)) or 0,
            "turns": conn.scalar(select(func.count()).select_from(t.TurnRow)) or 0,
            "gold_cases": conn.scalar(select(func.count()).select_from(t.GoldCaseRow)) or 0,
            "tool_schemas": conn.scalar(select(func.count()).select_from(t.ToolSchemaRow)) or 0,
        }


# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


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
    rows = []
    for ordinal, index in enumerate(labelable_points(tr)):
        message = tr.messages[index] if index < len(tr.messages) else None
        calls = observed_calls(message)
        behavior = "open" if message is None else ("call" if calls else "text")
        rows.append({"ordinal": ordinal, "message_index": index,
                     "observed": canonical.dumps(calls), "observed_behavior": behavior, "n_calls": len(calls)})
    return rows


# -- labeling helpers


__all__ = ["Coverage", "ImportItem", "ImportResult", "TranscriptDetail", "TranscriptSummary", "TurnSummary",
           "count_gold", "count_transcripts", "coverage", "get_gold", "get_transcript", "gold_cases",
           "import_items", "iter_gold_lines", "list_transcripts", "observed_calls", "sources", "stats",
           "tool_names"]
