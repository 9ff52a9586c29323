"""The scorer never crashes: arbitrary run records give a result or a clean error, and every file of the
bad-input corpus, fed to `toolgold score` as gold or as runs, gives one `FILE:LINE` line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labeler.cli import cli
from scorer.api import score_case
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record, parse_json_text, parse_record
from scorer.model import Answer, ArgRule, Call, GoldCase, Message, RunRecord, ToolSpec
from scorer.results import CaseResult

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"

GOLD = GoldCase(
    id="c1",
    tools=(ToolSpec(name="search_orders", parameters={
        "type": "object", "properties": {"customer_id": {"type": "string"}, "limit": {"type": "integer"},
                                         "since": {"type": "string", "format": "date"}},
        "required": ["customer_id"]}),
           ToolSpec(name="issue_refund")),
    messages=(Message(role="user", content="Orders for C-1042 since 2026-01-01, please"),),
    reference_time="2026-02-01T00:00:00Z",
    expected=Answer(behavior="call", calls=(Call(name="search_orders",
                                                 arguments={"customer_id": "C-1042", "since": "2026-01-01"}),)),
    arg_rules={"search_orders": {"since": ArgRule(match="date"), "limit": ArgRule(match="number", tolerance=1,
                                                                                   optional=True)}},
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
names = st.sampled_from(["search_orders", "issue_refund", "unknown_tool", ""]) | st.text(max_size=12)
arguments = (st.dictionaries(st.sampled_from(["customer_id", "limit", "since", "extra"]) | st.text(max_size=8),
                             json_values, max_size=5)
             | st.text(max_size=40) | json_values)
calls = st.lists(st.fixed_dictionaries({"name": names, "arguments": arguments}), max_size=4) | json_values
records = st.fixed_dictionaries(
    {"format": st.just("toolgold.run/1"), "case_id": st.just("c1")},
    optional={"calls": calls, "text": st.text(max_size=30) | json_values, "trial": st.integers(-2, 5),
              "messages": st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool"]),
                                                          "content": st.text(max_size=20)}), max_size=3)},
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_arbitrary_run_records_give_a_result_or_a_clean_error(raw: dict[str, Any]) -> None:
    try:
        run = parse_record(parse_json_text(json.dumps(raw), source="gen.jsonl", line=1), expect=RunRecord,
                           source="gen.jsonl", line=1)
    except InvalidRecord as err:
        assert str(err).startswith("gen.jsonl:1: ")
        return
    result = score_case(GOLD, run)
    assert isinstance(result, CaseResult)
    assert result.status in ("pass", "fail", "needs_review")
    assert (result.status == "pass") == (not result.errors)


@pytest.mark.parametrize("name", sorted(p.name for p in BAD.iterdir()))
@pytest.mark.parametrize("role", ["gold", "runs"])
def test_score_refuses_every_bad_file_cleanly(name: str, role: str, tmp_path: Path) -> None:
    good_gold = tmp_path / "gold.jsonl"
    good_gold.write_text(dumps_record(GOLD) + "\n")
    good_runs = tmp_path / "runs.jsonl"
    good_runs.write_text(dumps_record(RunRecord(case_id="c1", calls=())) + "\n")
    bad = BAD / name
    args = [str(bad), str(good_runs)] if role == "gold" else [str(good_gold), str(bad)]
    result = CliRunner().invoke(cli, ["score", *args], catch_exceptions=False)
    if result.exit_code == 2:
        assert result.stderr.startswith(f"error: {bad}"), result.stderr
        assert "Traceback" not in result.stderr
    else:
        # A few corpus files are bad transcripts but harmless here (blank lines only as runs: no runs).
        assert result.exit_code in (0, 1), result.output
