"""tau2-bench simulation results and task files -> transcripts and trajectory gold cases, on the real data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scorer.importers import detect
from scorer.model import Answer, ArgRule, Call, FunctionCall, Message, ToolCallRef
from tests.importers.helpers import REAL, SHARED, convert, needs_shared

RESULTS = REAL / "tau2-bench" / "results"
AIRLINE = RESULTS / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
TELECOM = RESULTS / "gpt-4.1_telecom_default_gpt-4.1_1trials.json"
SOLO = RESULTS / "gpt-4.1_telecom_no-user_gpt-4.1_1trials.json"
APN_TASK = "[service_issue]break_apn_settings|lock_sim_card_pin[PERSONA:None]"
ROAMING_TASK = "[mobile_data_issue]airplane_mode_on|data_saver_mode_on|user_abroad_roaming_disabled_on[PERSONA:None]"


def test_each_simulation_becomes_a_transcript_opened_by_the_policy() -> None:
    result = convert(AIRLINE)
    raw = json.loads(AIRLINE.read_text())
    assert detect(AIRLINE).NAME == "tau2-bench"
    assert result.errors == []
    assert [t.id for t in result.transcripts] == [
        "tau2-bench/airline/gpt-4.1/task-13/trial-0", "tau2-bench/airline/gpt-4.1/task-6/trial-0",
        "tau2-bench/airline/gpt-4.1/task-26/trial-0"]
    run = result.transcript("tau2-bench/airline/gpt-4.1/task-13/trial-0")
    sim = raw["simulations"][0]
    assert run.messages[0] == Message(role="system", content=raw["info"]["environment_info"]["policy"])
    assert len(run.messages) == 1 + len(sim["messages"])
    assert run.metadata == {"source": "tau2-bench", "domain": "airline", "model": "gpt-4.1", "task_id": "13",
                            "trial": 0, "reward": 1.0, "termination_reason": "user_stop",
                            "simulated_at": sim["start_time"], "timestamp": "2024-05-15T15:00:00-05:00"}
    # dict arguments become OpenAI's JSON string; the result's ``id`` becomes ``tool_call_id``
    first_call = next(i for i, m in enumerate(run.messages) if m.tool_calls)
    assert run.messages[first_call:first_call + 2] == (
        Message(role="assistant", tool_calls=(ToolCallRef(id="call_fLxcMYQFvKcOdQNYvY2sKVRr", function=FunctionCall(
            name="get_user_details", arguments='{"user_id":"james_lee_6136"}')),)),
        Message(role="tool", tool_call_id="call_fLxcMYQFvKcOdQNYvY2sKVRr",
                content=sim["messages"][first_call]["content"]))


def test_the_user_simulators_own_device_calls_are_left_out() -> None:
    run, = convert(TELECOM).transcripts
    sim = json.loads(TELECOM.read_text())["simulations"][0]["messages"]
    user_calls = [c for m in sim if m["role"] == "user" for c in m.get("tool_calls") or []]
    assert len(user_calls) == 2
    kept_ids = {c.id for m in run.messages for c in m.tool_calls} | {m.tool_call_id for m in run.messages}
    assert not {c["id"] for c in user_calls} & kept_ids
    assert all(m.role != "user" or m.content for m in run.messages)
    assert run.decision_points() == tuple(i for i, m in enumerate(run.messages) if m.role == "assistant")
    assert len(run.messages) == 1 + len(sim) - 2 * 2  # each user call and its result, not the user's words
    assert [m.role for m in run.messages if m.role == "user"] == ["user"] * sum(
        1 for m in sim if m["role"] == "user" and m["content"])


def test_tasks_give_one_case_each_from_the_actions_the_agent_requests() -> None:
    result = convert(AIRLINE)
    assert [c.id for c in result.gold] == ["tau2-bench/airline/task-6", "tau2-bench/airline/task-13",
                                           "tau2-bench/airline/task-26"]
    transfer = result.case("tau2-bench/airline/task-13")
    assert transfer.kind == "trajectory" and transfer.order == "superset"
    assert transfer.arg_rules == {"transfer_to_human_agents": {"summary": ArgRule(match="any")}}
    assert transfer.tags == ("tau2-bench", "airline", "reward:db", "reward:communicate")
    assert result.case("tau2-bench/airline/task-26").expected == Answer(behavior="no_call")

    telecom = convert(TELECOM).case(f"tau2-bench/telecom/task-{ROAMING_TASK}")
    assert telecom.expected == Answer(behavior="call", calls=(
        Call(name="enable_roaming", arguments={"customer_id": "C1001", "line_id": "L1002"}),))
    assert telecom.forbidden == ()  # telecom's write tools are not known


def test_a_solo_agent_gets_the_ticket_and_the_users_actions_too() -> None:
    result = convert(SOLO)
    raw = json.loads(SOLO.read_text())
    run, = result.transcripts
    assert run.id == f"tau2-bench/telecom/solo/gpt-4.1/task-{APN_TASK}/trial-0"
    ticket = next(t["ticket"] for t in raw["tasks"] if t["id"] == APN_TASK)
    assert run.messages[0].content == f"{raw['info']['environment_info']['policy']}\n\n<ticket>\n{ticket}\n</ticket>"
    assert run.metadata["mode"] == "solo"
    case = result.case(f"tau2-bench/telecom/solo/task-{ROAMING_TASK}")
    assert [c.name for c in case.expected.calls] == ["toggle_airplane_mode", "toggle_data_saver_mode",
                                                     "enable_roaming"]
    assert "solo" in case.tags


def test_a_task_file_gives_the_same_case_as_the_results_file(tmp_path: Path) -> None:
    tasks = tmp_path / "airline" / "tasks.json"
    tasks.parent.mkdir()
    tasks.write_text(json.dumps(json.loads(AIRLINE.read_text())["tasks"], indent=2))
    assert detect(tasks).NAME == "tau2-bench"
    assert convert(tasks).gold == convert(AIRLINE).gold


def test_a_bad_simulation_is_reported_at_its_line(tmp_path: Path) -> None:
    raw = json.loads(AIRLINE.read_text())
    del raw["simulations"][1]["messages"]
    src = tmp_path / "results.json"
    src.write_text(json.dumps(raw, indent=2))
    result = convert(src)
    lines = src.read_text().splitlines()
    after = lines.index('  "simulations": [')
    starts = [n for n, text in enumerate(lines, start=1) if text == "    {" and n > after]
    assert result.error_lines == [f"{src}:{starts[1]}: simulation has no 'messages'"]
    assert len(result.transcripts) == 2 and len(result.gold) == 3


def test_a_file_without_simulations_is_one_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "results.json"
    src.write_text('{"info": {}, "tasks": []}')
    assert convert(src, "tau2-bench").error_lines == [
        f"{src}:1: no 'simulations': expected a tau2-bench results file {{info, tasks, simulations}}"]


@pytest.mark.parametrize("members", [
    '"info": {"environment_info": {"domain_name": "airline"}}, "tasks": {"a": 1}',
    '"info": [1, 2], "tasks": []',
    '"info": {"environment_info": {"domain_name": "airline"}}, "tasks": 7',
])
def test_a_results_file_whose_info_or_tasks_are_of_the_wrong_kind_is_one_clear_error(tmp_path: Path,
                                                                                      members: str) -> None:
    # read a block at a time (the simulations last), as the whole document reads it: one error, no traceback
    src = tmp_path / "results.json"
    src.write_text("{" + members + ', "simulations": [{"id": "s", "task_id": "1", "messages": []}]}')
    result = convert(src, "tau2-bench")
    assert len(result.errors) == 1 and not result.transcripts
    assert result.error_lines[0].startswith(f"{src}:")


FULL_COUNTS = {
    # file: (simulations, decision points, agent tool calls, tasks, no_call tasks); 200 simulations in all,
    # with 1,719 agent calls (plus 482 telecom calls the user simulator makes, left out)
    "ft-gpt-4.1-sierra-tau2-sft_airline_default_gpt-4.1_1trials.json": (20, 268, 147, 20, 2),
    "ft-gpt-4.1-sierra-tau2-sft_retail_default_gpt-4.1_1trials.json": (40, 571, 292, 40, 0),
    "gpt-4.1_airline_default_gpt-4.1_1trials.json": (20, 226, 148, 20, 2),
    "gpt-4.1_retail_default_gpt-4.1_1trials.json": (40, 516, 299, 40, 0),
    "gpt-4.1_telecom_default_gpt-4.1_1trials.json": (40, 660, 207, 40, 9),
    "gpt-4.1_telecom_no-user_gpt-4.1_1trials.json": (40, 606, 626, 40, 0),
}


@needs_shared
@pytest.mark.parametrize("name", sorted(FULL_COUNTS))
def test_every_results_file_converts_with_its_real_counts(name: str) -> None:
    result = convert(SHARED / "tau2-bench" / "results" / name)
    assert result.errors == []
    assert (len(result.transcripts), result.decision_points, result.tool_calls, len(result.gold),
            Counter(c.expected.behavior for c in result.gold)["no_call"]) == FULL_COUNTS[name]
