"""ToolTalk conversations -> transcripts and per-turn gold cases, on the real data."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from scorer.importers import ImportOptions, detect
from scorer.model import (
    Answer,
    Call,
    FunctionCall,
    GoldCase,
    Message,
    Provenance,
    ToolCallRef,
    ToolSpec,
    Transcript,
)
from tests.importers.helpers import REAL, SHARED, convert, needs_shared

TOOLTALK = REAL / "tooltalk"
EASY = TOOLTALK / "data" / "easy" / "AddAlarm-easy.json"
MULTI = TOOLTALK / "data" / "tooltalk" / "AccountTools-Alarm-Calendar-AddAlarm-0.json"
ADD_ALARM = ToolSpec(name="AddAlarm", description="Adds an alarm for a set time.", parameters={
    "type": "object",
    "properties": {"time": {"type": "string", "description": "The time for alarm. Format: %H:%M:%S"},
                   "session_token": {"type": "string",
                                     "description": "The session token of the logged-in user (authentication)."}},
    "required": ["time", "session_token"]})


def test_a_conversation_becomes_a_transcript_and_a_case_per_assistant_turn() -> None:
    assert detect(EASY).NAME == "tooltalk"
    result = convert(EASY)
    assert result.errors == []
    transcript, = result.transcripts
    tools = transcript.tools
    assert len(tools) == 28 and tools[10] == ADD_ALARM
    call = ToolCallRef(id="tt2_0", function=FunctionCall(
        name="AddAlarm", arguments='{"session_token": "98a5a87a-7714-b404", "time": "18:30:00"}'))
    assert transcript == Transcript(
        id="tooltalk/AddAlarm-easy",
        messages=(
            Message(role="system", content="You are a helpful assistant. Here is some user data:\nlocation: New York\n"
                    "timestamp: 2023-09-11 13:00:00\nusername (if logged in): justinkool\n"
                    "session_token (if logged in): 98a5a87a-7714-b404"),
            Message(role="user", content="Hey I have class tonight at 7. Can you set an alarm for 6:30?"),
            Message(role="assistant", content="I have set an alarm for you at 6:30 PM", tool_calls=(call,)),
            Message(role="tool", tool_call_id="tt2_0", content='{"response": {"alarm_id": "5bff-dd80"}, "exception": null}'),
            Message(role="user", content="Thanks, I think I'll take a quick nap."),
        ),
        tools=tools,
        metadata={"source": "tooltalk", "split": "easy", "conversation_id": "90a1a217-55bc-4d6d-8b76-99440aae3a1a",
                  "scenario": "AddAlarm easy scenario", "timestamp": "2023-09-11 13:00:00", "location": "New York",
                  "apis_used": ["AddAlarm"]})
    assert result.gold == [GoldCase(
        id="tooltalk/AddAlarm-easy/turn-2", conversation_id="tooltalk/AddAlarm-easy", turn=2, tools=tools,
        messages=transcript.messages[:2], reference_time=datetime(2023, 9, 11, 13, 0, tzinfo=UTC),
        expected=Answer(behavior="call", calls=(
            Call(name="AddAlarm", arguments={"session_token": "98a5a87a-7714-b404", "time": "18:30:00"}),)),
        tags=("tooltalk", "easy"), rationale="ToolTalk's gold calls for this assistant turn.",
        provenance=Provenance(source="tooltalk"))]


def test_turns_without_calls_are_no_call_and_several_calls_stay_one_case() -> None:
    result = convert(MULTI)
    raw = json.loads(MULTI.read_text())["conversation"]
    assert [(c.turn, c.expected.behavior, [x.name for x in c.expected.calls]) for c in result.gold] == [
        (2, "no_call", []), (4, "call", ["RegisterUser"]), (7, "call", ["CreateEvent", "AddAlarm"])]
    assert [len(c.expected.calls) for c in result.gold] == [len(t.get("apis") or []) for t in raw
                                                           if t["role"] == "assistant"]
    transcript, = result.transcripts
    assert transcript.decision_points() == tuple(c.turn for c in result.gold)
    assert all(c.messages == transcript.messages[:c.turn] for c in result.gold)


def test_tools_come_from_the_options_when_given_and_are_empty_when_apis_json_is_missing(tmp_path: Path) -> None:
    mine = (ADD_ALARM,)
    assert [c.tools for c in convert(EASY, options=ImportOptions(tools=mine)).gold] == [mine]
    alone = tmp_path / "AddAlarm-easy.json"
    shutil.copyfile(EASY, alone)
    result = convert(alone)
    assert result.transcripts[0].tools == () and result.errors == []


def test_a_bad_turn_is_reported_at_its_own_line(tmp_path: Path) -> None:
    raw = json.loads(EASY.read_text())
    raw["conversation"][1]["apis"][0]["request"].pop("api_name")
    bad = tmp_path / "data" / "easy" / "AddAlarm-easy.json"
    bad.parent.mkdir(parents=True)
    bad.write_text(json.dumps(raw, indent=4))
    turn_starts = [n for n, text in enumerate(bad.read_text().splitlines(), start=1) if text == "        {"]
    assert convert(bad).error_lines == [
        f"{bad}:{turn_starts[1]}: conversation[1].apis[0].request.api_name should be a non-empty string, got null"]


def test_a_file_of_another_shape_is_one_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "x.json"
    src.write_text("[1, 2]")
    assert convert(src, "tooltalk").error_lines == [f"{src}:1: expected one ToolTalk conversation (a JSON object)"]


@needs_shared
def test_the_78_conversations_give_230_cases_of_which_66_make_no_call() -> None:
    files = sorted(p for p in (SHARED / "tooltalk" / "data").glob("*/*.json") if p.parent.name != "databases")
    results = [convert(path) for path in files]
    assert [r.error_lines for r in results if r.errors] == []
    assert sum(len(r.transcripts) for r in results) == 78
    gold = [c for r in results for c in r.gold]
    assert Counter(c.expected.behavior for c in gold) == {"call": 164, "no_call": 66}
    assert sum(len(c.expected.calls) for c in gold) == sum(
        len(t.get("apis") or []) for path in files for t in json.loads(path.read_text())["conversation"])
    assert sum(r.decision_points for r in results) == len(gold) == 230
    assert len({c.id for c in gold}) == 230
    assert all(c.reference_time is not None and c.reference_time.tzinfo is UTC for c in gold)


def test_create_event_s_enum_is_on_event_type_where_toolTalk_s_own_description_puts_it() -> None:
    # ToolTalk's apis.json (and its calendar.py) lists ["meeting", "event"] as the enum of `name`, while
    # `event_type`'s description says "either 'meeting' or 'event'" and every gold call names its event
    # freely ("Birthday Party"): the importer moves the enum onto event_type.
    from scorer.schemas import compiled

    raw = json.loads((TOOLTALK / "converted" / "apis.json").read_text())
    assert next(a for a in raw if a["name"] == "CreateEvent")["parameters"]["name"]["enum"] == ["meeting", "event"]
    result = convert(MULTI)
    create = next(t for t in result.transcripts[0].tools if t.name == "CreateEvent")
    assert "enum" not in create.properties["name"]
    assert create.properties["event_type"] == {
        "type": "string", "enum": ["meeting", "event"],
        "description": "The type of the event, either 'meeting' or 'event'."}
    calls = [c for case in result.gold for c in case.expected.calls if c.name == "CreateEvent"]
    assert calls and all(compiled(create.parameters).problems(c.arguments) == [] for c in calls)
