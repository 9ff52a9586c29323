"""`toolgold score --judge` and `toolgold judge` end to end: the real CLI, store and SDK client, a fake API."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import ImportItem, Store
from tests.fakes.anthropic_api import OVERLOADED, FakeMessagesAPI, error
from tests.judge.kit import (
    KEY,
    by_kind,
    export_version,
    orders_case,
    orders_run,
    route_cli_to,
    seeded,
    shoes_case,
    shoes_run,
    verdict_reply,
    write_jsonl,
)


def toolgold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def agreeable(body: dict[str, Any]) -> dict[str, Any]:
    """The semantic query captures the intent; the batch tool is a legitimate alternative."""
    return verdict_reply("equivalent", f"fine ({by_kind(body)})")


@pytest.fixture
def files(store: Store, tmp_path: Path) -> tuple[str, str]:
    seeded(store, shoes_case(), orders_case())
    gold = export_version(store, "regression-v1", tmp_path / "gold.jsonl")
    runs = write_jsonl(tmp_path / "runs.jsonl", [shoes_run(), orders_run()])
    return str(gold), str(runs)


@pytest.fixture
def with_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("TOOLGOLD_JUDGE_MODEL", raising=False)


@pytest.fixture
def without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("TOOLGOLD_JUDGE_MODEL", raising=False)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {c["case_id"]: c["status"] for c in report["cases"]}


def test_score_with_the_judge_counts_calls_tokens_and_cost_and_rescoring_is_free(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    api = FakeMessagesAPI(default=agreeable)
    route_cli_to(monkeypatch, api)
    code, out, err = toolgold("score", *files, "--judge", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert statuses(report) == {"orders#t2": "fail", "shoes#t2": "pass"}
    assert report["judge"] == {
        "model": "claude-sonnet-4-6", "prompt_versions": ["semantic_argument/1", "mismatch/1"], "questions": 2,
        "semantic_questions": 1, "mismatch_questions": 1, "cache_hits": 0, "api_calls": 2, "answered": 2,
        "needs_review": 0, "pending": 0, "input_tokens": 240, "output_tokens": 60, "estimated_cost_usd": 0.00162,
        "queued_for_review": 1, "not_queued_unknown_case": 0, "skipped": None}
    assert sorted(by_kind(r) for r in api.requests) == ["mismatch", "semantic_argument"]
    assert "judge: 2 question(s) for claude-sonnet-4-6" in err and "≈ $0.0016 (estimate)" in err

    code, out, err = toolgold("score", *files, "--judge", "--format", "json")
    again = json.loads(out)
    assert len(api.requests) == 2  # everything came from the cache
    assert (again["judge"]["cache_hits"], again["judge"]["api_calls"], again["judge"]["queued_for_review"]) == (2, 0, 0)
    assert statuses(again) == statuses(report)
    assert [i.case_id for i in store.adjudication_queue(actor="rita")] == ["orders#t2"]


def test_the_table_and_markdown_reports_say_what_the_judge_did(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    route_cli_to(monkeypatch, FakeMessagesAPI(default=agreeable))
    _, table, _ = toolgold("score", *files, "--judge")
    assert "Judge:\n  2 question(s) for claude-sonnet-4-6 (1 semantic argument, 1 mismatch)" in table
    _, markdown, _ = toolgold("score", *files, "--judge", "--format", "markdown")
    assert "### Judge" in markdown and "2 from the cache, 0 API call(s)" in markdown


def test_without_a_key_the_step_is_skipped_the_exit_code_kept_and_toolgold_judge_resumes(
        files: tuple[str, str], without_key: None, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    gate = ("--fail-under", "pass_rate=0.9")
    plain_code, plain, _ = toolgold("score", *files, *gate, "--format", "json")
    code, out, err = toolgold("score", *files, *gate, "--judge", "--format", "json")
    assert (plain_code, code) == (1, 1)
    assert "judge: skipped: no Anthropic API key (set ANTHROPIC_API_KEY)" in err
    report = json.loads(out)
    assert statuses(report) == statuses(json.loads(plain)) == {"orders#t2": "fail", "shoes#t2": "needs_review"}
    assert (report["judge"]["pending"], report["judge"]["api_calls"]) == (2, 0)
    assert [p.problem for p in store.pending_judge_questions()] == [report["judge"]["skipped"]] * 2

    code, _, err = toolgold("judge")
    assert code == 2 and "error: no Anthropic API key" in err  # nothing to ask with: say so, keep them

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    api = FakeMessagesAPI(default=agreeable)
    route_cli_to(monkeypatch, api)
    code, out, _ = toolgold("judge")
    assert (code, out) == (0, "judge: 2 answered, 0 still pending here, 0 pending in all\n")
    assert len(api.requests) == 2 and store.pending_judge_questions() == []
    assert [i.case_id for i in store.adjudication_queue(actor="rita")] == ["orders#t2"]

    code, out, _ = toolgold("score", *files, *gate, "--judge", "--format", "json")
    assert len(api.requests) == 2 and code == 1
    assert statuses(json.loads(out)) == {"orders#t2": "fail", "shoes#t2": "pass"}
    assert toolgold("judge") == (0, "judge: nothing pending\n", "")


def test_an_overloaded_api_leaves_questions_pending_and_nothing_is_lost(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    route_cli_to(monkeypatch, FakeMessagesAPI(default=lambda body: error(*OVERLOADED)))
    code, out, _ = toolgold("score", *files, "--judge", "--format", "json")
    assert code == 0
    usage = json.loads(out)["judge"]
    assert (usage["api_calls"], usage["answered"], usage["pending"]) == (2, 0, 2)
    assert sorted((p.kind, p.attempts, p.problem) for p in store.pending_judge_questions()) == [
        ("mismatch", 1, "HTTP 529 from the API: Overloaded"),
        ("semantic_argument", 1, "HTTP 529 from the API: Overloaded")]

    api = FakeMessagesAPI(default=agreeable)
    route_cli_to(monkeypatch, api)
    code, out, _ = toolgold("judge", "--limit", "1")
    assert (code, out) == (0, "judge: 1 answered, 0 still pending here, 1 pending in all\n")
    code, out, _ = toolgold("score", *files, "--judge", "--format", "json")
    usage = json.loads(out)["judge"]
    assert (usage["cache_hits"], usage["api_calls"], usage["pending"]) == (1, 1, 0)  # the other one, now
    assert statuses(json.loads(out)) == {"orders#t2": "fail", "shoes#t2": "pass"}


def test_questions_still_failing_in_toolgold_judge_exit_1(
        files: tuple[str, str], without_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    toolgold("score", *files, "--judge")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    route_cli_to(monkeypatch, FakeMessagesAPI(default=lambda body: error(*OVERLOADED)))
    code, out, _ = toolgold("judge")
    assert (code, out) == (1, "judge: 0 answered, 2 still pending here, 2 pending in all\n")


def test_the_judge_model_comes_from_the_flag_the_environment_or_the_settings(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    api = FakeMessagesAPI(default=agreeable)
    route_cli_to(monkeypatch, api)
    store.set_judge_model_setting("claude-haiku-4-5", actor="root")
    toolgold("score", *files, "--judge")
    monkeypatch.setenv("TOOLGOLD_JUDGE_MODEL", "claude-opus-4-6")
    toolgold("score", *files, "--judge")
    toolgold("score", *files, "--judge", "--judge-model", "claude-haiku-4-5-20251001")
    assert [r["model"] for r in api.requests] == ["claude-haiku-4-5"] * 2 + ["claude-opus-4-6"] * 2 + [
        "claude-haiku-4-5-20251001"] * 2


def test_the_api_key_is_never_stored_reported_or_logged(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch, store: Store,
        tmp_path: Path, isolated_db: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_LOG", "debug")
    api = FakeMessagesAPI([error(*OVERLOADED)], default=agreeable)
    route_cli_to(monkeypatch, api)
    report = tmp_path / "report.json"
    outputs = [toolgold("score", *files, "--judge", "--format", "json", "--out", str(report)),
               toolgold("score", *files, "--judge", "--format", "markdown"), toolgold("judge", "stats")]
    [item] = store.adjudication_queue(actor="rita")
    store.adjudicate(item.item_id, "accept_alternative", actor="rita")
    assert len(api.requests) == 3 and caplog.text  # the SDK did log, at debug level
    dumped = repr(store.dump())
    assert "judge_verdicts" in dumped and KEY not in dumped
    for path in isolated_db.parent.glob(isolated_db.name + "*"):  # the database, its WAL and shared memory
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in report.read_text(encoding="utf-8")
    assert KEY not in caplog.text
    assert all(KEY not in text for output in outputs for text in output[1:])


def test_judge_stats_shows_agreement_per_question_and_prompt_version(
        files: tuple[str, str], with_key: None, monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    route_cli_to(monkeypatch, FakeMessagesAPI(default=agreeable))
    toolgold("score", *files, "--judge")
    [item] = store.adjudication_queue(actor="rita")
    store.adjudicate(item.item_id, "judge_wrong", actor="rita", note="skips the audit log",
                     reviewer_verdict="not_equivalent")
    code, out, _ = toolgold("judge", "stats")
    lines = out.splitlines()
    assert code == 0 and lines[0] == ("verdicts: 2 answered, 0 pending; 240 input + 60 output tokens, "
                                      "≈ $0.0016 (estimate)")
    assert lines[2].split() == ["mismatch", "mismatch/1", "1", "0.0%", "0.000", "0"]


def test_verdicts_for_cases_the_store_does_not_have_are_counted_not_queued(
        store: Store, tmp_path: Path, with_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    route_cli_to(monkeypatch, FakeMessagesAPI(default=agreeable))
    gold = write_jsonl(tmp_path / "gold.jsonl", [orders_case()])  # scored from a file, never imported
    runs = write_jsonl(tmp_path / "runs.jsonl", [orders_run()])
    code, out, err = toolgold("score", str(gold), str(runs), "--judge", "--format", "json")
    usage = json.loads(out)["judge"]
    assert (code, usage["answered"], usage["queued_for_review"], usage["not_queued_unknown_case"]) == (0, 1, 0, 1)
    assert "judge: 1 verdict(s) not queued: their gold cases are not in the store" in err
    store.add_user("root", "admin")
    assert not store.import_items([ImportItem(orders_case(), "gold.jsonl", 1)]).rejects
    code, out, _ = toolgold("score", str(gold), str(runs), "--judge", "--format", "json")
    usage = json.loads(out)["judge"]
    assert (usage["api_calls"], usage["queued_for_review"], usage["not_queued_unknown_case"]) == (0, 1, 0)
