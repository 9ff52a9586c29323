"""Reading records fast must read them exactly as before: orjson's answers where it agrees with json, json's
where it refuses or might differ, and validated tool specs reused only for identical tools."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scorer.engine import ToolCache, score_files
from scorer.errors import InvalidRecord
from scorer.formats import parse_json_text, parse_record
from scorer.model import GoldCase


@pytest.mark.parametrize("text", [
    '{"id": 123456789012345678901234567890}',  # beyond 64 bits: orjson would make it a float
    '{"id": -9999999999999999999}',
    '{"id": 18446744073709551615, "n": 1.5}',
    '{"a": 1, "a": 2}',
    '{"t": "caf\\u00e9 \\u2603", "n": [1, 2.0, -0, 1e-7, true, null]}',
])
def test_parse_json_text_reads_every_value_as_json_does(text: str) -> None:
    got, want = parse_json_text(text), json.loads(text)
    assert repr(got) == repr(want)  # repr: exact types (int vs float), and NaN compares unequal to itself


@pytest.mark.parametrize(("text", "why"), [
    ('{"x": NaN, "y": [Infinity, -Infinity]}', "NaN/Infinity is not JSON"),
    ('{"x": 1e400}', "NaN/Infinity is not JSON"),
    ('{"s": "\\ud800"}', "lone UTF-16 surrogate"),
])
def test_what_json_would_accept_but_is_not_json_is_refused_on_every_path(text: str, why: str) -> None:
    """orjson's fast path and the strict reader agree: non-finite numbers and lone surrogates are bad input,
    read from text or straight from bytes, with the same message."""
    with pytest.raises(InvalidRecord, match=why) as from_text:
        parse_json_text(text, source="f.jsonl", line=3)
    with pytest.raises(InvalidRecord) as from_bytes:
        parse_json_text(text.encode(), source="f.jsonl", line=3)
    assert str(from_bytes.value) == str(from_text.value)


@pytest.mark.parametrize(("data", "words"), [
    (b'{"s": "\xed\xa0\x80"}', "not valid UTF-8 (byte 7)"),  # a surrogate encoded raw: not UTF-8
    (b'{"s": "\xff"}', "not valid UTF-8 (byte 7)"),
    (b"\xef\xbb\xbf{}", "Unexpected UTF-8 BOM"),
    (b'{"a": ' + b"[" * 201 + b"]" * 201 + b"}", "nested deeper than 200 levels"),
])
def test_bytes_the_fast_path_reads_are_held_to_the_same_rules(data: bytes, words: str) -> None:
    with pytest.raises(InvalidRecord, match=re.escape(words)):
        parse_json_text(data, source="f.jsonl", line=3)


def test_bytes_read_as_their_text_does() -> None:
    text = r'{"t": "caf\u00e9 \u2603 \ud83d\ude00", "big": 123456789012345678901234567890, "n": [1, 2.0, -0]}'
    assert repr(parse_json_text(text.encode())) == repr(json.loads(text))


@pytest.mark.parametrize("text", ['{"a": ', '{"a": 1,}', "[1, 2", '{"a": tru}', "nul"])
def test_invalid_json_gets_json_s_message(text: str) -> None:
    with pytest.raises(InvalidRecord) as raised:
        parse_json_text(text, source="f.jsonl", line=3)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        assert str(raised.value) == f"f.jsonl:3: not valid JSON: {exc.msg} (column {exc.colno})"


def test_deep_nesting_is_refused_on_the_fast_path_too() -> None:
    with pytest.raises(InvalidRecord, match="nested deeper than 200 levels"):
        parse_json_text('{"a": ' + "[" * 300 + "]" * 300 + "}")


def _gold(case_id: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "toolgold.gold/1", "id": case_id, "tools": tools,
            "messages": [{"role": "user", "content": "hi"}],
            "expected": {"behavior": "call", "calls": [{"name": tools[0]["name"], "arguments": {}}]}}


TOOL = {"name": "get_order", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}


def test_cached_tool_specs_give_the_same_case_as_full_validation() -> None:
    cache = ToolCache()
    other = {"name": "refund", "description": "Refund.", "parameters": {"type": "object"}}
    for n in range(3):
        value = _gold(f"c{n}", [TOOL, other])
        assert cache.parse(json.loads(json.dumps(value)), source="g", line=n + 1) == parse_record(
            value, expect=GoldCase)


def test_a_bad_tool_is_reported_the_same_after_a_good_one_with_its_name_was_cached() -> None:
    cache = ToolCache()
    cache.parse(_gold("c1", [TOOL]), source="g", line=1)
    bad = {**TOOL, "parameters": {"type": "object", "properties": {"order_id": {"type": "strin"}}}}
    with pytest.raises(InvalidRecord) as cached:
        cache.parse(_gold("c2", [bad]), source="g", line=2)
    with pytest.raises(InvalidRecord) as plain:
        parse_record(_gold("c2", [bad]), expect=GoldCase, source="g", line=2)
    assert str(cached.value) == str(plain.value)
    assert "tools.0.parameters" in str(cached.value)


def test_a_tool_cached_from_one_case_does_not_hide_another_case_s_duplicate_tools(tmp_path: Path) -> None:
    cache = ToolCache()
    cache.parse(_gold("c1", [TOOL]), source="g", line=1)
    with pytest.raises(InvalidRecord, match="g:2"):
        cache.parse(_gold("c2", [TOOL, TOOL]), source="g", line=2)


def test_score_files_reads_gold_with_huge_integers_exactly(tmp_path: Path) -> None:
    big = 123456789012345678901234567890
    gold = _gold("c1", [TOOL])
    gold["expected"]["calls"][0]["arguments"] = {"order_id": big}
    gold["tools"][0] = {"name": "get_order", "parameters": {"type": "object"}}
    (tmp_path / "gold.jsonl").write_text(json.dumps(gold) + "\n", encoding="utf-8")
    # A float that orjson would read the gold value as: it must not match.
    run = {"format": "toolgold.run/1", "case_id": "c1",
           "calls": [{"name": "get_order", "arguments": {"order_id": float(big)}}]}
    (tmp_path / "runs.jsonl").write_text(json.dumps(run) + "\n", encoding="utf-8")
    report = score_files(tmp_path / "gold.jsonl", tmp_path / "runs.jsonl", workers=1).report
    assert (report.totals.passed, report.totals.failed) == (0, 1)
