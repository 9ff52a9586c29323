"""Schema drift: the re-labeling queue of gold cases whose tool schemas moved since they were labeled.

``check_schema_drift`` flags cases the current schemas no longer fit, with the reasons; a reviewer migrates
a case mechanically onto the new schemas, fixes it, or dismisses the flag (saying why).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, insert, or_, select, update

from labeler.store import tables as t
from labeler.store.common import GOLD_BODY, REVIEWER_ROLES, audit, put_gold, require_role
from labeler.store.engine import Database, StoreError, now_iso
from scorer import canonical
from scorer.drift import DriftReason, StaleCase, case_drift, migrate_case
from scorer.formats import fast_record
from scorer.model import GoldCase, ToolSpec


@dataclass(frozen=True)
class RelabelItem:
    """A gold case whose tools changed under it, waiting for a reviewer to migrate, edit or dismiss it."""

    id: int
    case_id: str
    status: str  # open | resolved | dismissed
    reasons: tuple[DriftReason, ...]
    tools: tuple[ToolSpec, ...]
    """The current schemas the case was checked against."""
    detected_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    note: str | None = None

    @property
    def blocking(self) -> bool:
        return any(r.blocking for r in self.reasons)


def _relabel_item(row: Any) -> RelabelItem:
    data = json.loads(row.reasons)
    return RelabelItem(row.id, row.case_id, row.status,
                       tuple(DriftReason.model_validate(r) for r in data["reasons"]),
                       tuple(ToolSpec.model_validate(x) for x in data["tools"]), row.detected_at, row.decided_at,
                       row.decided_by, row.note)


# -- schema drift: the re-labeling queue ---------------------------------------------------------------

def current_tools(db: Database, source: str) -> list[ToolSpec]:
    """The newest schema of each tool offered in the source's transcripts (by import order)."""
    with db.read() as conn:
        return _current_tools(conn, source)


def _current_tools(conn: Connection, source: str) -> list[ToolSpec]:
    rows = conn.execute(
        select(t.ToolSchemaRow.name, t.ToolSchemaRow.hash, func.max(t.TranscriptRow.id))
        .join(t.ToolSetToolRow, t.ToolSetToolRow.schema_hash == t.ToolSchemaRow.hash)
        .join(t.TranscriptRow, t.TranscriptRow.tool_set_id == t.ToolSetToolRow.tool_set_id)
        .where(t.TranscriptRow.source == source)
        .group_by(t.ToolSchemaRow.name, t.ToolSchemaRow.hash)).all()
    newest: dict[str, tuple[int, str]] = {}
    for name, digest, last in rows:
        if name not in newest or last > newest[name][0]:
            newest[name] = (last, digest)
    bodies = dict(conn.execute(select(t.ToolSchemaRow.hash, t.ToolSchemaRow.body).where(
        t.ToolSchemaRow.hash.in_([d for _, d in newest.values()]))).all())
    return [ToolSpec.model_validate_json(bodies[newest[name][1]]) for name in sorted(newest)]


def _own_tools(conn: Connection, cases: Any) -> dict[str, list[ToolSpec]]:
    """The tools each stored transcript that ``cases`` (a query of gold case rows) were labeled on offers
    now, by transcript id (an empty list for a transcript that offers none)."""
    conversations = cases.with_only_columns(t.GoldCaseRow.conversation_id).where(
        t.GoldCaseRow.conversation_id.is_not(None))
    own: dict[str, list[ToolSpec]] = {ext: [] for ext in conn.scalars(
        select(t.TranscriptRow.external_id).where(t.TranscriptRow.external_id.in_(conversations)))}
    parsed: dict[str, ToolSpec] = {}
    for ext, digest, body in conn.execute(
            select(t.TranscriptRow.external_id, t.ToolSchemaRow.hash, t.ToolSchemaRow.body)
            .join(t.ToolSetToolRow, t.ToolSetToolRow.tool_set_id == t.TranscriptRow.tool_set_id)
            .join(t.ToolSchemaRow, t.ToolSchemaRow.hash == t.ToolSetToolRow.schema_hash)
            .where(t.TranscriptRow.external_id.in_(conversations))
            .order_by(t.TranscriptRow.external_id, t.ToolSetToolRow.position)):
        if digest not in parsed:
            parsed[digest] = ToolSpec.model_validate_json(body)
        own[ext].append(parsed[digest])
    return own


DRIFT_BATCH = 500
"""Gold cases read from the database at a time by ``check_schema_drift`` (their bodies: a few MB), and flags written
per write transaction."""


def check_schema_drift(db: Database, *, tools: Sequence[ToolSpec] | None = None, source: str | None = None,
                       actor: str = "drift", cases: Collection[str] | None = None,
                       conversations: Collection[str] | None = None) -> list[StaleCase]:
    """Flag every gold case the current tool schemas no longer fit into the re-labeling queue, with the
    reasons, and return them.

    With ``tools`` (a declared toolset) cases are checked against exactly those: removed and added tools
    count. Without, each case is checked against its own tool set as it is now: the tools its own
    transcript (the conversation it was labeled on) offers, which change when that transcript is
    re-imported with other tools, so a renamed parameter or a new required field is caught on import while
    other transcripts' tools of the same name never count. A case whose transcript is not in the store
    falls back to the newest schema of each of its tools in its source. A case a reviewer dismissed is not
    flagged again for the same schemas; an open item whose case fits again is closed.

    The cases are read without the write lock, ``DRIFT_BATCH`` at a time (every gold case in the store, or an
    import's scope, below); the lock is taken only to write the flags that
    change, ``DRIFT_BATCH`` a transaction, for the cases still as they were read (one edited meanwhile is left to
    the next check).

    ``cases`` and ``conversations`` (an import's ``ImportResult.drift_scope()``) limit the check to the gold an
    import could have changed: the cases it added, those labeled on the transcripts it added or retooled, and
    those of the same sources whose conversations are not stored (checked against their source's newest
    tools, which those transcripts may have moved). No other case's tools, nor its content, changed."""
    q = select(GOLD_BODY, t.GoldCaseRow.source, t.GoldCaseRow.content_hash, t.GoldCaseRow.id).where(
        t.GoldCaseRow.status != "rejected")
    if source:
        q = q.where(t.GoldCaseRow.source == source)
    scoped = cases is not None or conversations is not None
    found: list[StaleCase] = []
    changes: list[_Change] = []
    hashes = _ToolsHashes()
    with db.read() as conn:
        queries = _scoped(conn, q, cases or (), conversations or ()) \
            if scoped and _more_cases_than(conn, len(cases or ()) + len(conversations or ())) else [q]
        relabels = _Relabels.read(conn)
        per_source: dict[str, list[ToolSpec]] = {}
        seen: set[str] | None = set() if len(queries) > 1 else None  # a case two queries name is checked once
        for query in queries:
            own = _own_tools(conn, query) if tools is None else {}
            result = conn.execution_options(stream_results=True, yield_per=DRIFT_BATCH).execute(query)
            _check_cases(conn, result, tools, own, per_source, relabels, hashes, seen, found, changes)
    for start in range(0, len(changes), DRIFT_BATCH):  # short transactions: saves get the lock in between
        batch = changes[start:start + DRIFT_BATCH]
        with db.write() as conn:
            now = dict(conn.execute(select(t.GoldCaseRow.id, t.GoldCaseRow.content_hash).where(
                t.GoldCaseRow.id.in_([c.case_id for c in batch]))).all())
            for change in batch:
                if now.get(change.case_id) == change.digest:
                    _flag_drift(conn, change.case_id, change.drift, change.current, actor, change.tools_hash)
    return found


def _check_cases(conn: Connection, result: Any, tools: Sequence[ToolSpec] | None, own: dict[str, list[ToolSpec]],
                 per_source: dict[str, list[ToolSpec]], relabels: _Relabels, hashes: _ToolsHashes,
                 seen: set[str] | None, found: list[StaleCase], changes: list[_Change]) -> None:
    """Check the cases of one query's ``result`` (body, source, content hash, id), adding to ``found`` and
    ``changes``; ``seen``, when given, the ids checked already (and this query's, once checked)."""
    for body, case_source, digest, case_id in result:
        if seen is not None:
            if case_id in seen:
                continue
            seen.add(case_id)
        case = _case(body)
        if tools is not None:
            current, added = list(tools), True
        elif not case.tools:
            continue
        elif case.conversation_id is not None and case.conversation_id in own:
            current, added = own[case.conversation_id], False
        else:
            source_key = case_source or ""
            if source_key not in per_source:
                per_source[source_key] = _current_tools(conn, source_key)
            newest = {x.name: x for x in per_source[source_key]}
            current, added = [newest.get(x.name, x) for x in case.tools], False
        drift = case_drift(case, current, added_tools=added)
        if drift is not None:
            found.append(drift)
        change = relabels.change(case.id, digest, drift, current, hashes)
        if change is not None:
            changes.append(change)


def _more_cases_than(conn: Connection, named: int) -> bool:
    """Whether the store holds more gold cases than a scope names ids: a store that holds fewer is read whole,
    sooner than the ids are bound (10,000 of them: ~0.1 s, the time of reading ~2,000 cases), and found the
    same (a whole check finds what a scoped one does, and more only where the scope was stale anyway)."""
    return conn.execute(select(t.GoldCaseRow.id).limit(1).offset(named)).first() is not None


SCOPE_CHUNK = 5_000
"""Ids per query of a scoped check: an import's scope is read ``SCOPE_CHUNK`` cases and conversations at a time."""


def _scoped(conn: Connection, q: Any, cases: Collection[str], conversations: Collection[str]) -> list[Any]:
    """``q`` for the gold cases an import that added ``cases`` and added or retooled the transcripts
    ``conversations`` could have changed (see ``check_schema_drift``): the cases named, and those labeled on
    the conversations named, ``SCOPE_CHUNK`` ids a query; then, in one query, those of the conversations'
    sources whose conversations are not stored. Each query is found through indexes."""
    named_cases, named_conversations = sorted(cases), sorted(conversations)
    queries: list[Any] = []
    sources: set[str] = set()
    for start in range(0, max(len(named_cases), len(named_conversations)), SCOPE_CHUNK):
        some_cases = named_cases[start:start + SCOPE_CHUNK]
        some_conversations = named_conversations[start:start + SCOPE_CHUNK]
        queries.append(q.where(_named(some_cases, some_conversations)))
        if some_conversations:
            sources.update(conn.scalars(select(t.TranscriptRow.source).distinct().where(
                t.TranscriptRow.external_id.in_(some_conversations))))
    if sources:
        queries.append(q.where(_unstored_of(sorted(sources))))
    return queries


def _named(cases: Sequence[str], conversations: Sequence[str]) -> Any:
    """The gold cases named, and those labeled on the conversations named."""
    return or_(t.GoldCaseRow.id.in_(cases), t.GoldCaseRow.conversation_id.in_(conversations))


def _unstored_of(sources: Sequence[str]) -> Any:
    """The gold cases of ``sources`` whose conversations are not stored (checked against their source's tools)."""
    stored = select(t.TranscriptRow.external_id)
    return and_(t.GoldCaseRow.source.in_(sources),
                or_(t.GoldCaseRow.conversation_id.is_(None), t.GoldCaseRow.conversation_id.not_in(stored)))


def _case(body: str) -> GoldCase:
    """A stored gold case's body read back (as an import reads it: tool lists seen before are not validated
    again, and the cases that share one share its objects)."""
    fast = fast_record(1, body.encode("utf-8"))
    return fast if isinstance(fast, GoldCase) else GoldCase.model_validate_json(body)


class _ToolsHashes:
    """``canonical.content_hash`` of each list of current tools, once a check: the cases of a transcript, or of
    a source, share one list (its tools are the same objects). At most ``TOOLS_HASHES`` lists are kept: a store
    whose every case brings tools of its own (BFCL's) would otherwise keep them all."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, ...], tuple[Sequence[ToolSpec], str]] = {}

    def __call__(self, current: Sequence[ToolSpec]) -> str:
        key = tuple(map(id, current))
        hit = self._known.get(key)
        if hit is None:  # the entry holds the tools: no other object takes their ids while it is kept
            if len(self._known) >= TOOLS_HASHES:
                self._known.clear()
            hit = self._known[key] = (list(current), canonical.content_hash([x.model_dump(mode="json")
                                                                            for x in current]))
        return hit[1]

    def __len__(self) -> int:
        return len(self._known)


TOOLS_HASHES = 256


@dataclass(frozen=True)
class _Change:
    """A flag to write (or close) for one case, as it was when read."""

    case_id: str
    digest: str
    drift: StaleCase | None
    current: Sequence[ToolSpec]
    tools_hash: str


@dataclass(frozen=True)
class _Relabels:
    """The re-labeling queue as a check reads it first: which cases have an open item (with its reasons) and
    which were dismissed for which schemas. Only a case whose flag would change is written (``_flag_drift``,
    which reads the queue again under the lock)."""

    open: dict[str, str]
    dismissed: set[tuple[str, str]]

    @classmethod
    def read(cls, conn: Connection) -> _Relabels:
        rows = conn.execute(select(t.RelabelItemRow.case_id, t.RelabelItemRow.status, t.RelabelItemRow.reasons,
                                   t.RelabelItemRow.tools_hash)
                            .where(t.RelabelItemRow.status.in_(("open", "dismissed")))).all()
        return cls({case_id: reasons for case_id, status, reasons, _ in rows if status == "open"},
                   {(case_id, tools_hash) for case_id, status, _, tools_hash in rows if status == "dismissed"})

    def change(self, case_id: str, digest: str, drift: StaleCase | None, current: Sequence[ToolSpec],
               hashes: _ToolsHashes) -> _Change | None:
        opened = self.open.get(case_id)
        if drift is None:
            return _Change(case_id, digest, None, current, "") if opened is not None else None
        tools_hash = hashes(current)
        if (case_id, tools_hash) in self.dismissed:
            return None
        if opened is not None and opened == _reasons_text(drift, current):
            return None
        return _Change(case_id, digest, drift, current, tools_hash)


def _reasons_text(drift: StaleCase, current: Sequence[ToolSpec]) -> str:
    return canonical.dumps_stored({"reasons": [r.model_dump(mode="json") for r in drift.reasons],
                                   "tools": [x.model_dump(mode="json") for x in current]})


def _flag_drift(conn: Connection, case_id: str, drift: StaleCase | None, current: Sequence[ToolSpec],
                actor: str, tools_hash: str) -> None:
    open_row = conn.execute(select(t.RelabelItemRow).where(t.RelabelItemRow.case_id == case_id,
                                                           t.RelabelItemRow.status == "open")).first()
    if drift is None:
        if open_row is not None:
            conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == open_row.id).values(
                status="resolved", decided_at=now_iso(), decided_by=actor, note="the schemas fit again"))
            audit(conn, actor=actor, action="relabel.close", entity="gold_case", entity_id=case_id,
                  note="the schemas fit again")
        return
    dismissed = conn.scalar(select(t.RelabelItemRow.id).where(
        t.RelabelItemRow.case_id == case_id, t.RelabelItemRow.status == "dismissed",
        t.RelabelItemRow.tools_hash == tools_hash))
    if dismissed is not None:
        return
    reasons = _reasons_text(drift, current)
    if open_row is not None:
        if open_row.reasons != reasons:
            conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == open_row.id)
                         .values(reasons=reasons, tools_hash=tools_hash))
        return
    conn.execute(insert(t.RelabelItemRow).values(case_id=case_id, status="open", reasons=reasons,
                                                 tools_hash=tools_hash, detected_at=now_iso()))
    audit(conn, actor=actor, action="relabel.flag", entity="gold_case", entity_id=case_id,
          after={"reasons": [r.message for r in drift.reasons]})


def relabel_queue(db: Database, *, actor: str, include_closed: bool = False) -> list[RelabelItem]:
    """Gold cases flagged for re-labeling because their tools changed (reviewers and admins)."""
    q = select(t.RelabelItemRow).order_by(t.RelabelItemRow.id)
    if not include_closed:
        q = q.where(t.RelabelItemRow.status == "open")
    with db.read() as conn:
        require_role(conn, actor, REVIEWER_ROLES, "see the re-labeling queue")
        return [_relabel_item(r) for r in conn.execute(q)]


def _relabel_row(conn: Connection, item_id: int, actor: str) -> Any:
    require_role(conn, actor, REVIEWER_ROLES, "decide re-labeling items")
    row = conn.execute(select(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id)).first()
    if row is None:
        raise StoreError(f"no re-labeling item {item_id}")
    if row.status != "open":
        raise StoreError(f"re-labeling item {item_id} is {row.status} already")
    return row


def resolve_relabel(db: Database, item_id: int, case: GoldCase | None = None, *, actor: str,
                    note: str = "") -> GoldCase:
    """Settle a flagged case: with ``case`` (the reviewer's fix, same id), approve it; without, migrate it
    mechanically onto the current schemas (renamed parameters) and approve that. Refused when the drift
    needs a person and no fix is given."""
    with db.write() as conn:
        row = _relabel_row(conn, item_id, actor)
        item = _relabel_item(row)
        live = conn.scalar(select(GOLD_BODY).where(t.GoldCaseRow.id == row.case_id))
        if live is None:
            raise StoreError(f"gold case {row.case_id!r} is gone")
        how = "edited"
        if case is None:
            case = migrate_case(GoldCase.model_validate_json(live), item.tools)
            if case is None:
                raise StoreError(f"{row.case_id} cannot be migrated mechanically ("
                                 + "; ".join(r.message for r in item.reasons)
                                 + "): edit it, or dismiss the flag")
            how = "migrated"
        elif case.id != row.case_id:
            raise StoreError(f"the fix is for {case.id!r}, but the item is about {row.case_id!r}")
        approved = case.model_copy(update={"provenance": case.provenance.model_copy(
            update={"status": "approved", "reviewer": actor, "gold_version": None})})
        put_gold(conn, approved, actor=actor, action="gold.relabel",
                 before={"content_hash": canonical.content_hash(json.loads(live))},
                 note=note or f"{how} onto the current tool schemas")
        conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id).values(
            status="resolved", decided_at=now_iso(), decided_by=actor, note=note or how))
        return approved


def dismiss_relabel(db: Database, item_id: int, *, actor: str, note: str) -> None:
    """The drift does not matter for this case (say why): it is not flagged again for these schemas."""
    if not note.strip():
        raise StoreError("say why the case still holds: the next reviewer will read it")
    with db.write() as conn:
        row = _relabel_row(conn, item_id, actor)
        conn.execute(update(t.RelabelItemRow).where(t.RelabelItemRow.id == item_id).values(
            status="dismissed", decided_at=now_iso(), decided_by=actor, note=note))
        audit(conn, actor=actor, action="relabel.dismiss", entity="gold_case", entity_id=row.case_id,
              note=note)


__all__ = ["RelabelItem", "check_schema_drift", "current_tools", "dismiss_relabel", "relabel_queue",
           "resolve_relabel"]
