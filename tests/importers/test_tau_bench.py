"""tau-bench trajectories and task files -> transcripts and trajectory gold cases, on the real data."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from scorer import canonical
from scorer.importers import ImportOptions, detect
from scorer.importers.tau_gold import WRITE_TOOLS as DOMAIN_WRITES
from scorer.model import Answer, Call, ForbiddenCall, GoldCase, Message, Provenance, ToolSpec, Transcript
from tests.importers.helpers import REAL, SHARED, convert, needs_shared

SLICE = REAL / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TASKS = REAL / "tau-bench" / "converted" / "airline_tasks_test.json"
TOOLS = REAL / "tau-bench" / "converted" / "airline_tools.json"
FULL = SHARED / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
WRITE_TOOLS = ["book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
               "update_reservation_flights", "update_reservation_passengers"]


def airline_tools() -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec.model_validate(t["function"]) for t in json.loads(TOOLS.read_text()))


def test_the_slice_gives_a_transcript_per_run_and_a_case_per_task() -> None:
    result = convert(SLICE)
    assert detect(SLICE).NAME == "tau-bench"
    assert result.errors == []
    assert [t.id for t in result.transcripts] == [
        "tau-bench/airline/gpt-4o/task-0/trial-0", "tau-bench/airline/gpt-4o/task-1/trial-0",
        "tau-bench/airline/gpt-4o/task-6/trial-0", "tau-bench/airline/gpt-4o/task-12/trial-0",
        "tau-bench/airline/gpt-4o/task-0/trial-1", "tau-bench/airline/gpt-4o/task-1/trial-1"]
    assert [c.id for c in result.gold] == [f"tau-bench/airline/task-{n}" for n in (0, 1, 6, 12)]
    raw = json.loads(SLICE.read_text())
    assert [len(t.messages) for t in result.transcripts] == [len(r["traj"]) for r in raw]
    assert result.decision_points == sum(m["role"] == "assistant" for r in raw for m in r["traj"])
    assert result.tool_calls == sum(len(m.get("tool_calls") or []) for r in raw for m in r["traj"])
    assert all(t.tools == airline_tools() for t in result.transcripts)


def test_a_run_keeps_its_metadata_and_reused_call_ids_are_renamed() -> None:
    run = convert(SLICE).transcript("tau-bench/airline/gpt-4o/task-0/trial-0")
    instruction = json.loads(SLICE.read_text())[0]["info"]["task"]["instruction"]
    assert run.metadata == {"source": "tau-bench", "domain": "airline", "model": "gpt-4o", "task_id": 0, "trial": 0,
                            "reward": 0.0, "instruction": instruction, "timestamp": "2024-05-15T15:00:00-05:00"}
    call_ids = [c.id for m in run.messages for c in m.tool_calls]
    assert call_ids[:4] == ["call_oIHazX6yQrB8hUwl4cRilFKj", "call_HGn16KZh9oNCruxsMJ4gYXan",
                            "call_HGn16KZh9oNCruxsMJ4gYXan~2", "call_oIHazX6yQrB8hUwl4cRilFKj~2"]
    # the second search result answers the second search, not the first
    assert run.messages[13] == Message(role="tool", tool_call_id="call_HGn16KZh9oNCruxsMJ4gYXan~2",
                                       name="search_onestop_flight", content=run.messages[13].content)
    assert run.messages[12].tool_calls[0].function.name == "search_onestop_flight"


def test_a_task_becomes_a_superset_trajectory_case_with_unused_write_tools_forbidden() -> None:
    case = convert(SLICE).case("tau-bench/airline/task-0")
    task = json.loads(SLICE.read_text())[0]["info"]["task"]
    assert case == GoldCase(
        id="tau-bench/airline/task-0", kind="trajectory", tools=tuple(
            t.model_copy(update={"annotations": {"readOnlyHint": t.name not in DOMAIN_WRITES["airline"]}})
            for t in airline_tools()),
        expected=Answer(behavior="call", calls=(Call(name="book_reservation", arguments=task["actions"][0]["kwargs"]),)),
        order="superset",
        forbidden=tuple(ForbiddenCall(name=name, reason="changes the airline database and the gold never calls it")
                        for name in WRITE_TOOLS if name != "book_reservation"),
        tags=("tau-bench", "airline"),
        rationale="tau-bench airline task: the gold actions whose replay gives the expected final state.\n"
                  f"User goal: {task['instruction']}",
        provenance=Provenance(source="tau-bench"))


def test_a_task_without_actions_forbids_every_write() -> None:
    case = convert(SLICE).case("tau-bench/airline/task-12")
    assert case.expected == Answer(behavior="no_call")
    assert [f.name for f in case.forbidden] == WRITE_TOOLS
    assert case.tags == ("tau-bench", "airline", "no_action")


def test_the_task_file_gives_the_same_cases_as_the_runs() -> None:
    from_tasks = convert(TASKS)
    assert detect(TASKS).NAME == "tau-bench"
    assert from_tasks.errors == [] and from_tasks.transcripts == []
    assert [c.id for c in from_tasks.gold] == [f"tau-bench/airline/task-{n}" for n in range(13)]
    for case in convert(SLICE).gold:
        assert from_tasks.case(case.id) == case


def test_tools_given_in_options_replace_the_ones_found_beside_the_data() -> None:
    mine = (ToolSpec(name="book_reservation"),)
    result = convert(SLICE, options=ImportOptions(tools=mine, split="rolling"))
    assert all(t.tools == mine for t in result.transcripts)
    # the gold's copy says which tools write (book_reservation does), for redundancy
    written = (ToolSpec(name="book_reservation", annotations={"readOnlyHint": False}),)
    assert all(c.tools == written and c.split == "rolling" for c in result.gold)


def test_a_bad_run_is_reported_at_its_line_and_the_others_still_convert(tmp_path: Path) -> None:
    runs = json.loads(SLICE.read_text())[:3]
    del runs[1]["traj"]
    runs[2]["traj"][1]["role"] = "narrator"
    src = tmp_path / "gpt-4o-airline.json"
    src.write_text(json.dumps(runs, indent=1))
    result = convert(src)
    starts = [n for n, text in enumerate(src.read_text().splitlines(), start=1) if text == " {"]
    assert result.error_lines == [
        f"{src}:{starts[1]}: trajectory has no 'traj'",
        f"{src}:{starts[2]}: traj[1].role 'narrator' is not one of system, developer, user, assistant, tool",
    ]
    assert [t.id for t in result.transcripts] == ["tau-bench/airline/gpt-4o/task-0/trial-0"]
    assert result.transcripts[0].tools == ()  # no converted/ folder beside this copy


def test_runs_of_one_task_must_agree_on_its_gold_actions(tmp_path: Path) -> None:
    runs = json.loads(SLICE.read_text())
    task0 = [run for run in runs if run["task_id"] == 0]
    assert len(task0) == 2
    other = json.loads(json.dumps(task0[1]))
    other["trial"] = 2
    other["info"]["task"]["actions"] = other["info"]["task"]["actions"][:-1]
    src = tmp_path / "gpt-4o-airline.json"
    src.write_text(json.dumps([*task0, other], indent=1))
    result = convert(src)
    starts = [n for n, text in enumerate(src.read_text().splitlines(), start=1) if text == " {"]
    assert result.error_lines == [f"{src}:{starts[2]}: task 'tau-bench/airline/task-0' has other gold actions "
                                  f"than at line {starts[0]}"]
    assert len(result.transcripts) == 3
    assert [c.id for c in result.gold] == ["tau-bench/airline/task-0"]  # the two that agree: one case


def test_the_runs_of_a_task_are_compared_by_their_fast_canonical_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each run brings its task's gold case again (12 KB of tools with it): comparing them through
    # ``model_dump`` and the reference encoder took ~210 us a run, more than the rest of the run's conversion.
    expected = convert(SLICE)
    assert len(expected.gold) < len(expected.transcripts)

    def refused(*_: object, **__: object) -> str:
        raise AssertionError("model_dump")

    monkeypatch.setattr(GoldCase, "model_dump", refused)
    got = convert(SLICE)
    assert (got.transcripts, got.gold, got.errors) == (expected.transcripts, expected.gold, [])


def test_the_cases_of_a_file_share_their_annotated_tools() -> None:
    # One set of ToolSpec objects for every case of a domain (not a copy per run): what is learnt of a tool list
    # (its canonical text, compiled schemas) is found again by identity, where a copy per run made every case
    # write its 14 tools again (~210 us of a ~230 us case, through record_json_text).
    cases = convert(SLICE).gold
    assert len(cases) >= 3
    assert all(case.tools == cases[0].tools for case in cases)
    assert all(a is b for case in cases[1:] for a, b in zip(case.tools, cases[0].tools, strict=True))


def test_a_file_of_the_wrong_shape_is_one_clear_error(tmp_path: Path) -> None:
    src = tmp_path / "runs.json"
    src.write_text('{"traj": []}')
    assert convert(src, "tau-bench").error_lines == [
        f"{src}:1: expected a JSON array of tau-bench trajectories or tasks"]


@needs_shared
def test_the_200_gpt4o_runs_give_200_transcripts_2454_decision_points_1164_calls_and_50_cases() -> None:
    result = convert(FULL)
    assert result.errors == []
    assert len(result.transcripts) == 200
    assert len({t.id for t in result.transcripts}) == 200
    assert result.decision_points == 2454
    assert result.tool_calls == 1164
    assert len(result.gold) == 50
    assert Counter(c.expected.behavior for c in result.gold) == {"call": 43, "no_call": 7}
    assert sum(len(c.expected.calls) for c in result.gold) == 158  # the gold actions of the 50 tasks
    renamed = [t for t in result.transcripts if any("~" in c.id for m in t.messages for c in m.tool_calls)]
    assert len(renamed) == 49  # runs that reuse a tool-call id
    assert convert(FULL).transcripts == result.transcripts  # deterministic


def made_calls(case: GoldCase, run: Transcript) -> tuple[list[str], list[str]]:
    """Canonical (name, arguments minus the ``any`` ones) of the expected calls and of the run's calls."""
    def key(name: str, args: object) -> str:
        loose = case.arg_rules.get(name, {})
        kept = {k: v for k, v in args.items() if k not in loose} if isinstance(args, dict) else args
        return canonical.dumps([name, kept])
    made = [key(c.function.name, c.parsed_arguments()) for m in run.messages for c in m.tool_calls]
    return [key(c.name, c.arguments) for c in case.expected.calls], made


def passes(case: GoldCase, run: Transcript, *, strict: bool = False, forbid: bool = True) -> bool:
    """A minimal reference reading of the tau gold (the scorer proper lives elsewhere): every expected
    call occurs and no forbidden tool is called; ``strict`` asks for exactly the expected sequence."""
    expected, made = made_calls(case, run)
    if strict:
        return made == expected
    names = [c.function.name for m in run.messages for c in m.tool_calls]
    if forbid and any(name == f.name for name in names for f in case.forbidden):
        return False
    return not Counter(expected) - Counter(made)


@needs_shared
def test_the_gold_agrees_with_tau_bench_rewards_as_its_docstring_says() -> None:
    result = convert(FULL)
    cases = {c.id: c for c in result.gold}
    outcome: Counter[tuple[str, float, bool]] = Counter()
    for run in result.transcripts:
        case = cases[f"tau-bench/airline/task-{run.metadata['task_id']}"]
        reward = run.metadata["reward"]
        outcome["superset+forbidden", reward, passes(case, run)] += 1
        outcome["superset", reward, passes(case, run, forbid=False)] += 1
        outcome["strict", reward, passes(case, run, strict=True)] += 1
    assert outcome == {
        ("superset+forbidden", 1.0, True): 59, ("superset+forbidden", 1.0, False): 25,
        ("superset+forbidden", 0.0, True): 3, ("superset+forbidden", 0.0, False): 113,
        ("superset", 1.0, True): 62, ("superset", 1.0, False): 22,
        ("superset", 0.0, True): 19, ("superset", 0.0, False): 97,
        ("strict", 1.0, True): 13, ("strict", 1.0, False): 71, ("strict", 0.0, False): 116,
    }
