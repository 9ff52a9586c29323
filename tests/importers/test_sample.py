"""`toolgold sample`: seeded, stratified by source and first tool, weighted towards what needs labels."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from labeler.cli import cli
from scorer.formats import dumps_record
from scorer.model import FunctionCall, Message, ToolCallRef, Transcript
from scorer.sampling import StratifiedSampler, stratum_of
from tests.importers.helpers import REAL, convert

BFCL_MT = REAL / "bfcl" / "BFCL_v4_multi_turn_base.json"
TOOLTALK = REAL / "tooltalk" / "data" / "easy" / "AddAlarm-easy.json"


def conversation(i: int, tool: str | None, source: str = "logs") -> Transcript:
    calls = (ToolCallRef(id=f"c{i}", function=FunctionCall(name=tool, arguments='{"q": 1}')),) if tool else ()
    return Transcript(id=f"conv-{i}", metadata={"source": source}, messages=(
        Message(role="user", content=f"question {i}"), Message(role="assistant", tool_calls=calls)))


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stderr


def test_every_stratum_gets_its_share_and_the_seed_fixes_the_sample() -> None:
    population = [conversation(i, "search" if i % 50 else "refund") for i in range(1000)]  # refund: 20 of 1000
    population += [conversation(1000 + i, None, source="chat") for i in range(30)]
    picks = []
    for seed in (7, 7, 8):
        sampler = StratifiedSampler(30, seed)
        sampler.offer_all(population)
        picks.append([population[n - 1].id for _, n in sampler.sample()])
    assert picks[0] == picks[1] and picks[0] != picks[2]
    sampler = StratifiedSampler(30, 7)
    sampler.offer_all(population)
    strata = [stratum for stratum, _ in sampler.sample()]
    # dealt over the sources first (chat, logs), then over each source's first tools
    assert {s: strata.count(s) for s in set(strata)} == {("chat", "no_call"): 15, ("logs", "refund"): 8,
                                                         ("logs", "search"): 7}
    assert sampler.seen == 1030 and sampler.strata[("logs", "search")] == 30  # bounded: n per stratum


def test_weights_favour_what_the_caller_asks_for() -> None:
    population = [conversation(i, "search") for i in range(500)]
    favoured = {f"conv-{i}" for i in range(0, 500, 100)}
    sampler = StratifiedSampler(5, 1, lambda t: 1e6 if t.id in favoured else 1.0)
    sampler.offer_all(population)
    assert {population[n - 1].id for _, n in sampler.sample()} == favoured
    assert stratum_of(population[0]) == ("logs", "search")


def test_the_command_samples_real_files_into_an_importable_file(tmp_path: Path) -> None:
    out = tmp_path / "sample.jsonl"
    code, err = run("sample", str(BFCL_MT), str(TOOLTALK), "-n", "4", "--seed", "3", "-o", str(out))
    assert code == 0, err
    chosen = convert(out).transcripts
    everything = convert(BFCL_MT).transcripts + convert(TOOLTALK).transcripts
    assert len(chosen) == 4 and {t.id for t in chosen} <= {t.id for t in everything}
    assert {t.metadata["source"] for t in chosen} == {"bfcl", "tooltalk"}  # both sources represented
    assert err.splitlines()[-1] == f"4 of {len(everything)} conversations written to {out}"
    again = tmp_path / "again.jsonl"
    run("sample", str(BFCL_MT), str(TOOLTALK), "-n", "4", "--seed", "3", "-o", str(again))
    assert again.read_bytes() == out.read_bytes()
    assert run("import", str(out))[0] == 0


def test_favoured_ids_and_uncovered_tools_are_preferred(tmp_path: Path) -> None:
    logs = tmp_path / "logs.jsonl"
    logs.write_text("".join(dumps_record(conversation(i, "search")) + "\n" for i in range(300))
                    + dumps_record(conversation(999, "search").model_copy(update={"messages": (
                        Message(role="user", content="x"), Message(role="assistant", tool_calls=(ToolCallRef(
                            id="n", function=FunctionCall(name="search", arguments='{"q": 1, "page": 2}')),)))}))
                    + "\n")
    ids = tmp_path / "flagged.txt"
    ids.write_text("conv-17\nconv-123\n")
    out = tmp_path / "s.jsonl"
    code, err = run("sample", str(logs), "-n", "2", "--favor-ids", str(ids), "--weight", "1000000", "-o", str(out))
    assert code == 0, err
    assert sorted(t.id for t in convert(out).transcripts) == ["conv-123", "conv-17"]
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"format": "toolgold.gold/1", "id": "g1", "messages": [
        {"role": "user", "content": "x"}], "expected": {"behavior": "call", "calls": [
            {"name": "search", "arguments": {"q": 1}}]}}) + "\n")
    assert run("import", str(gold))[0] == 0
    code, err = run("sample", str(logs), "-n", "1", "--favor-uncovered", "--weight", "1000000", "-o", str(out))
    assert code == 0, err
    assert [t.id for t in convert(out).transcripts] == ["conv-999"]  # the one argument shape no gold has


def test_conversations_that_failed_a_saved_run_are_preferred(tmp_path: Path, isolated_db: Path) -> None:
    from labeler.store import Store

    logs = tmp_path / "logs.jsonl"
    logs.write_text("".join(dumps_record(conversation(i, "search")) + "\n" for i in range(200)))
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({
        "format": "toolgold.gold/1", "id": f"conv-{i}#1", "conversation_id": f"conv-{i}", "turn": 1,
        "messages": [{"role": "user", "content": f"question {i}"}],
        "expected": {"behavior": "call", "calls": [{"name": "search", "arguments": {"q": 1}}]}}) + "\n"
        for i in (40, 41)))
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps({"format": "toolgold.run/1", "case_id": f"conv-{i}#1", "calls": [
        {"name": "search", "arguments": {"q": 1 if i == 40 else 2}}]}) + "\n" for i in (40, 41)))
    code, _ = run("score", str(gold), str(runs), "--save", "--label", "nightly")
    assert code in (0, 1)
    run_id = Store(isolated_db).list_runs()[0].run_id
    out = tmp_path / "s.jsonl"
    code, err = run("sample", str(logs), "-n", "1", "--favor-failed", run_id, "--weight", "1000000", "-o", str(out))
    assert code == 0, err
    assert [t.id for t in convert(out).transcripts] == ["conv-41"]  # the one whose case failed
