"""Faults in the judge's replies (the real SDK over httpx2.MockTransport): a 200 whose body is not JSON, a
NaN, a negative usage, an error body echoing the key. Answers that arrived are stored, the bad reply's
question stays pending, `score --judge` still writes its report, and nothing key-shaped is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import Store
from tests.fakes.anthropic_api import FakeMessagesAPI, error
from tests.judge.kit import (
    KEY,
    export_version,
    orders_case,
    orders_run,
    route_cli_to,
    seeded,
    verdict_reply,
    write_jsonl,
)

CUSTOMERS = ["O-1 and O-2", "O-3 and O-4", "O-5 and O-6", "O-7 and O-8"]
POISONED = "O-5"


def toolgold(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def four_questions(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
    """Four cases whose runs each raise one mismatch question, asked together; the report goes to a file."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("TOOLGOLD_JUDGE_MODEL", raising=False)
    cases = [orders_case(f"Where are my orders {c}?", tid=f"orders{i}") for i, c in enumerate(CUSTOMERS)]
    seeded(store, *cases)
    gold = export_version(store, "regression-v1", tmp_path / "gold.jsonl")
    runs = write_jsonl(tmp_path / "runs.jsonl", [orders_run(c.id) for c in cases])
    return str(gold), str(runs), str(tmp_path / "report.json")


def poisoned(bad: Any) -> FakeMessagesAPI:
    def reply(body: dict[str, Any]) -> Any:
        return bad if POISONED in json.dumps(body) else verdict_reply("equivalent", "a batch lookup is fine")
    return FakeMessagesAPI(default=reply)


HTML = httpx2.Response(200, content=b"<html><body>Please log in to the proxy</body></html>",
                       headers={"content-type": "text/html; charset=utf-8"})
HTML_AS_JSON = httpx2.Response(200, content=b"<html>", headers={"content-type": "application/json"})
NAN_BODY = httpx2.Response(200, content=json.dumps(verdict_reply("equivalent", "x")).replace(
    '"confidence": 0.9', '"confidence": NaN').encode(), headers={"content-type": "application/json"})
NEGATIVE = verdict_reply("equivalent", "x", input_tokens=-5000, output_tokens=-100)


@pytest.mark.parametrize("bad,problem", [
    (HTML, "HTTP 200 from the API but the body is not usable JSON (text/html)"),
    (HTML_AS_JSON, "HTTP 200 from the API but the body is not usable JSON (application/json)"),
    (NAN_BODY, "NaN/Infinity is not JSON"),
    (NEGATIVE, "the API reported negative token usage (-5000 in, -100 out)"),
], ids=["html", "html-as-json", "nan", "negative-usage"])
def test_one_bad_reply_keeps_the_other_answers_and_the_report(
        bad: Any, problem: str, four_questions: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch,
        store: Store) -> None:
    gold, runs, report = four_questions
    route_cli_to(monkeypatch, poisoned(bad))
    code, _, err = toolgold("score", gold, runs, "--judge", "--format", "json", "-o", report)
    assert code == 0, err
    usage = json.loads(Path(report).read_text())["judge"]
    assert (usage["mismatch_questions"], usage["answered"], usage["pending"]) == (4, 3, 1)
    assert usage["input_tokens"] >= 0 and usage["estimated_cost_usd"] >= 0
    [pending] = store.pending_judge_questions()
    assert POISONED in json.dumps(pending.request)
    assert problem in (pending.problem or "")

    route_cli_to(monkeypatch, poisoned(verdict_reply("equivalent", "fine now")))
    assert toolgold("judge")[:2] == (0, "judge: 1 answered, 0 still pending here, 0 pending in all\n")


def test_error_bodies_are_stored_without_anything_shaped_like_a_key(
        four_questions: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch, store: Store) -> None:
    gold, runs, report = four_questions
    leak = f"invalid x-api-key {KEY}; also tried sk-proj-abcdefghijklmnop1234 and Bearer eyJhbGciOiJIUzI1NiJ9.abc"
    route_cli_to(monkeypatch, poisoned(error(401, "authentication_error", leak)))
    code, _, err = toolgold("score", gold, runs, "--judge", "--format", "json", "-o", report)
    assert code == 0, err
    [pending] = store.pending_judge_questions()
    assert pending.problem == ("HTTP 401 from the API: invalid x-api-key [redacted]; also tried [redacted] and "
                               "[redacted]")
    dump = json.dumps(store.dump(), default=str)
    assert KEY not in dump and "sk-proj-" not in dump and "eyJhbGci" not in dump
