"""The store on a real SQLite file: migrations, pragmas, idempotent and atomic imports, gold export."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from labeler.store import ImportItem, Store, StoreError, head_revision
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record
from scorer.model import Answer, Call, GoldCase, Message, ToolCallRef, ToolSpec, Transcript
from tests.store_reads import audit_events

LOOKUP = ToolSpec(name="search_orders", description="Find orders",
                  parameters={"type": "object", "properties": {"customer_id": {"type": "string"}},
                              "required": ["customer_id"]})


def transcript(tid: str = "t1", *, answer: str = "Found it") -> Transcript:
    return Transcript(
        id=tid,
        messages=(
            Message(role="system", content="You are a support agent."),
            Message(role="user", content="Where is my order? I'm C-1042."),
            Message(role="assistant", tool_calls=(ToolCallRef(
                id="c1", function={"name": "search_orders", "arguments": '{"customer_id": "C-1042"}'}),)),
            Message(role="tool", tool_call_id="c1", content='{"order_id": "O-7"}'),
            Message(role="assistant", content=answer),
        ),
        tools=(LOOKUP,),
        metadata={"source": "unit", "timestamp": "2026-01-05T10:00:00Z"},
    )


def gold(cid: str = "g1", *, tags: tuple[str, ...] = ("happy_path",), split: str = "regression") -> GoldCase:
    tr = transcript()
    return GoldCase(
        id=cid, conversation_id="t1", turn=2, split=split, tools=tr.tools, messages=tr.messages[:2],
        expected=Answer(behavior="call", calls=(Call(name="search_orders", arguments={"customer_id": "C-1042"}),)),
        tags=tags,
    )


def test_new_database_has_every_migration_and_sqlite_pragmas(isolated_db: Path) -> None:
    store = Store(isolated_db)
    assert store.schema_version() == head_revision()
    con = sqlite3.connect(isolated_db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # Reopening applies nothing twice.
    assert Store(isolated_db).migrate() == []


def test_transcript_round_trips_with_its_tools_and_decision_points(any_store: Store) -> None:
    result = any_store.import_items([ImportItem(transcript(), "f.jsonl", 1)])
    assert (result.transcripts_added, result.turns_added) == (1, 2)
    detail = any_store.get_transcript("t1")
    assert detail.transcript == transcript()
    assert [(t.ordinal, t.message_index, t.observed_behavior, t.n_calls) for t in detail.turns] == [
        (0, 2, "call", 1), (1, 4, "text", 0)]
    [summary] = any_store.list_transcripts()
    assert (summary.source, summary.n_turns, summary.n_tool_calls, summary.title) == (
        "unit", 2, 1, "Where is my order? I'm C-1042.")


def test_reimporting_the_same_content_adds_nothing(any_store: Store) -> None:
    items = [ImportItem(transcript(), "f.jsonl", 1), ImportItem(gold(), "g.jsonl", 1)]
    any_store.import_items(items)
    before = any_store.dump()
    again = any_store.import_items(items)
    assert (again.transcripts_added, again.gold_added, again.transcripts_unchanged, again.gold_unchanged) == (0, 0, 1, 1)
    assert any_store.dump() == before


def test_same_id_with_other_content_refuses_the_whole_import_naming_the_line(any_store: Store) -> None:
    any_store.import_items([ImportItem(transcript(), "a.jsonl", 1)])
    before = any_store.dump()
    with pytest.raises(InvalidRecord) as info:
        any_store.import_items([ImportItem(transcript("t2"), "b.jsonl", 1),
                            ImportItem(transcript(answer="changed"), "b.jsonl", 2)])
    assert str(info.value).startswith("b.jsonl:2: transcript 't1' is already in the store with different content")
    assert any_store.dump() == before  # t2 was not written either


def test_skip_invalid_keeps_the_good_records_and_reports_the_rest(any_store: Store) -> None:
    any_store.import_items([ImportItem(transcript(), "a.jsonl", 1)])
    result = any_store.import_items([ImportItem(transcript("t2"), "b.jsonl", 1),
                                 ImportItem(transcript(answer="changed"), "b.jsonl", 2)], skip_invalid=True)
    assert result.transcripts_added == 1
    assert [str(r) for r in result.rejects] == [
        "b.jsonl:2: transcript 't1' is already in the store with different content "
        "(give it a new id to keep both)"]


def test_tool_schemas_are_versioned_by_content(any_store: Store) -> None:
    changed = LOOKUP.model_copy(update={"parameters": {**LOOKUP.parameters, "required": []}})
    tr2 = transcript("t2").model_copy(update={"tools": (changed,)})
    any_store.import_items([ImportItem(transcript(), "a", 1), ImportItem(tr2, "a", 2)])
    assert any_store.stats()["tool_schemas"] == 2
    assert any_store.get_transcript("t2").transcript.tools == (changed,)


def test_export_filters_and_streams_canonical_lines_in_id_order(any_store: Store) -> None:
    cases = [gold("g2", tags=("near_duplicate_tools",)), gold("g1"), gold("g3", split="rolling")]
    any_store.import_items([ImportItem(c, "g.jsonl", i) for i, c in enumerate(cases, 1)])
    assert list(any_store.iter_gold_lines()) == [dumps_record(c) for c in sorted(cases, key=lambda c: c.id)]
    assert [GoldCase.model_validate_json(x).id for x in any_store.iter_gold_lines(split="rolling")] == ["g3"]
    assert [GoldCase.model_validate_json(x).id for x in any_store.iter_gold_lines(tag="near_duplicate_tools")] == ["g2"]
    assert any_store.count_gold(split="regression") == 2
    assert any_store.get_gold("g1") == gold("g1")


def test_gold_cases_count_as_labels_on_their_transcript(any_store: Store) -> None:
    any_store.import_items([ImportItem(transcript(), "a", 1), ImportItem(gold(), "g", 1)])
    [summary] = any_store.list_transcripts()
    assert (summary.n_gold, summary.n_unlabeled) == (1, 1)
    assert any_store.get_transcript("t1").turns[0].gold_case_ids == ("g1",)


def test_unknown_ids_raise_a_store_error(any_store: Store) -> None:
    with pytest.raises(StoreError, match="no transcript with id 'nope'"):
        any_store.get_transcript("nope")
    with pytest.raises(StoreError, match="no gold case with id 'nope'"):
        any_store.get_gold("nope")


def test_every_import_is_audited(any_store: Store) -> None:
    any_store.import_items([ImportItem(transcript(), "a.jsonl", 1)], actor="alice")
    [event] = [e for e in audit_events(any_store) if e["action"] == "import"]
    assert event["actor"] == "alice"
    assert '"transcripts":1' in event["after"]


def test_a_question_awaiting_the_agents_reply_ends_with_an_open_decision_point() -> None:
    asked = Transcript(id="q", messages=(
        Message(role="user", content="hi"), Message(role="assistant", content="Hello, what do you need?"),
        Message(role="user", content="the weather in Paris")), metadata={"awaiting_reply": True})
    assert asked.decision_points() == (1, 3)
    assert asked.model_copy(update={"metadata": {}}).decision_points() == (1,)
    assert Transcript(id="bare", messages=(Message(role="user", content="hi"),)).decision_points() == (1,)
