"""Each argument matcher, parametrized over the representations it must and must not equate."""

from __future__ import annotations

import json
import re
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import canonical
from scorer.dates import parse_when, resolve_relative
from scorer.matchers import ABSENT, describe, e164, match_value, normalized_text, parse_money
from scorer.model import ArgRule

REF = datetime.fromisoformat("2026-07-01T10:00:00-05:00")  # a Wednesday


def rule(**fields: Any) -> ArgRule:
    return ArgRule(**fields)


CASES = [
    # exact: canonical JSON, structural
    (rule(), "C-1042", "C-1042", True),
    (rule(), "C-1042", "c-1042", False),
    (rule(), 5, 5.0, True),
    (rule(), 5, "5", False),
    (rule(), True, 1, False),
    (rule(), None, None, True),
    (rule(), {"a": 1, "b": [1, {"c": 2}]}, {"b": [1, {"c": 2.0}], "a": 1}, True),
    (rule(), {"a": 1}, {"a": 1, "b": None}, False),
    (rule(), [1, 2], [2, 1], False),
    (rule(accept=("C-1043",)), "C-1042", "C-1043", True),
    # one_of
    (rule(match="one_of", accept=("NYC", "New York")), "NYC", "New York", True),
    (rule(match="one_of", accept=("NYC", "New York")), "NYC", "Boston", False),
    # any
    (rule(match="any"), "x", {"anything": [1]}, True),
    # ci
    (rule(match="ci"), "New York", "new  YORK ", True),
    (rule(match="ci"), "New York", "Newark", False),
    (rule(match="ci"), 5, 5.0, True),
    # number
    (rule(match="number"), 10, 10.0, True),
    (rule(match="number"), 0.3, 0.1 + 0.2, True),
    (rule(match="number", tolerance=0.5), 10, 10.4, True),
    (rule(match="number", tolerance=0.5), 10, 10.6, False),
    (rule(match="number"), 1250, "1,250", True),
    (rule(match="number"), 10, "ten", False),
    (rule(match="number"), 1, True, False),
    # date: both sides parsed; relative gold phrases against the reference time
    (rule(match="date"), "2026-07-07", "July 7, 2026", True),
    (rule(match="date"), "2026-07-07", "2026-07-07T23:00:00-05:00", True),
    (rule(match="date"), "2026-07-07", "2026-07-08T01:00:00+00:00", True),  # still the 7th in UTC-5
    (rule(match="date"), "2026-07-07", "2026-07-08T06:00:00+00:00", False),
    (rule(match="date"), "next Tuesday", "2026-07-07", True),
    (rule(match="date"), "next Tuesday", "2026-07-03", False),
    (rule(match="date"), "tomorrow", "2026-07-02", True),
    (rule(match="date"), "in 3 days", "2026-07-04", True),
    (rule(match="date"), "last Friday", "2026-06-26", True),
    (rule(match="date"), "2026-07-07", "tomorrow", False),  # relative phrases are read in the gold only
    (rule(match="date"), "2026-07-07", "not a date", False),
    (rule(match="date"), "whenever", "2026-07-07", None),  # the gold is not a date: review, not fail
    # datetime: aware instants
    (rule(match="datetime"), "2026-07-07T15:00:00Z", "2026-07-07T10:00:00-05:00", True),
    (rule(match="datetime"), "2026-07-07T15:00:00Z", "2026-07-07T15:00:00", False),  # naive = reference zone
    (rule(match="datetime"), "2026-07-07T10:00:00-05:00", "2026-07-07T10:00:00", True),
    (rule(match="datetime", tolerance=60), "2026-07-07T15:00:00Z", "2026-07-07T15:00:59Z", True),
    (rule(match="datetime", tolerance=60), "2026-07-07T15:00:00Z", "2026-07-07T15:01:01Z", False),
    # currency
    (rule(match="currency"), "$100", "100 USD", True),
    (rule(match="currency"), "$100", "USD 100.00", True),
    (rule(match="currency", currency="USD"), "$100", 100, True),
    (rule(match="currency", currency="USD"), "$100", "100.00", True),
    (rule(match="currency"), "$100", "€100", False),
    (rule(match="currency"), "$1,250.50", "1250.5 usd", True),
    (rule(match="currency"), "$100", "$100.01", False),
    (rule(match="currency", tolerance=0.01), "$100", "$100.01", True),
    (rule(match="currency"), {"amount": 5, "currency": "EUR"}, "€5", True),
    (rule(match="currency"), "$100", "a hundred", False),
    # phone: E.164 through phonenumbers
    (rule(match="phone", region="US"), "+14155550123", "(415) 555-0123", True),
    (rule(match="phone", region="US"), "+14155550123", "415.555.0123", True),
    (rule(match="phone"), "+14155550123", "+1 415 555 0123", True),
    (rule(match="phone", region="GB"), "+442079460000", "020 7946 0000", True),
    (rule(match="phone", region="US"), "+14155550123", "415-555-0124", False),
    (rule(match="phone", region="US"), "+14155550123", "call me", False),
    # regex: full match
    (rule(match="regex", pattern=r"O-\d+"), "O-1", "O-77", True),
    (rule(match="regex", pattern=r"O-\d+"), "O-1", "order O-77", False),
    (rule(match="regex", pattern=r"\d{5}"), "94110", 94110, True),
    # semantic: only identity is settled here
    (rule(match="semantic", intent="a window seat"), "window seat", "window seat", True),
    (rule(match="semantic", intent="a window seat"), "window seat", "by the window", None),
    # from_call: the source is checked by the caller
    (rule(match="from_call", from_call=0), "O-7", "O-8", True),
]


@pytest.mark.parametrize(("arg_rule", "gold", "actual", "verdict"), CASES,
                         ids=[f"{c[0].match}-{i}" for i, c in enumerate(CASES)])
def test_matcher(arg_rule: ArgRule, gold: Any, actual: Any, verdict: bool | None) -> None:
    assert match_value(arg_rule, gold, actual, REF) is verdict


def test_an_argument_the_gold_does_not_set_matches_only_accepted_values() -> None:
    assert match_value(rule(), ABSENT, "x", REF) is False
    assert match_value(rule(accept=("x",)), ABSENT, "x", REF) is True
    assert match_value(rule(match="any"), ABSENT, "x", REF) is True


@pytest.mark.parametrize(("phrase", "day"), [
    ("today", "2026-07-01"), ("tomorrow", "2026-07-02"), ("yesterday", "2026-06-30"),
    ("day after tomorrow", "2026-07-03"), ("the day before yesterday", "2026-06-29"),
    ("in 3 days", "2026-07-04"), ("in a week", "2026-07-08"), ("in two months", "2026-09-01"),
    ("2 weeks ago", "2026-06-17"), ("next Tuesday", "2026-07-07"), ("next Wednesday", "2026-07-08"),
    ("this Wednesday", "2026-07-01"), ("this Friday", "2026-07-03"), ("last Wednesday", "2026-06-24"),
    ("next week", "2026-07-08"), ("last month", "2026-06-01"), ("  Next   TUESDAY ", "2026-07-07"),
])
def test_relative_phrases(phrase: str, day: str) -> None:
    resolved = resolve_relative(phrase, REF)
    assert resolved is not None and resolved.date().isoformat() == day


def test_unknown_phrases_and_missing_reference_times_resolve_to_nothing() -> None:
    assert resolve_relative("sometime soon", REF) is None
    assert parse_when("tomorrow", None, relative=True) is None
    assert parse_when("2026-07-07", None, relative=True) == datetime.fromisoformat("2026-07-07T00:00:00+00:00")


@pytest.mark.parametrize(("text", "money"), [
    ("$100", (Decimal("100"), "USD")), ("100 USD", (Decimal("100"), "USD")), ("usd 100", (Decimal("100"), "USD")),
    ("€5.50", (Decimal("5.50"), "EUR")), ("-$5", (Decimal("-5"), "USD")), ("1,250.50", (Decimal("1250.50"), None)),
    (100, (Decimal("100"), None)), (2.5, (Decimal("2.5"), None)),
])
def test_parse_money(text: Any, money: tuple[Decimal, str | None]) -> None:
    assert parse_money(text, None) == money


@pytest.mark.parametrize("text", ["", "a hundred", "$", "$100 USD", True, None, [100]])
def test_not_money(text: Any) -> None:
    assert parse_money(text, "USD") is None


def test_e164() -> None:
    assert e164("(415) 555-0123", "US") == "+14155550123"
    assert e164("not a number", "US") is None


@pytest.mark.parametrize(("arg_rule", "gold", "text"), [
    (rule(), "C-1042", "'C-1042' (exact)"),
    (rule(match="one_of", accept=("NYC", "New York")), "NYC", "one of 'NYC', 'New York' (one_of)"),
    (rule(match="number", tolerance=0.5), 10, "10 ± 0.5 (number)"),
    (rule(match="regex", pattern=r"O-\d+"), "O-1", r"a full match of O-\d+ (regex)"),
    (rule(match="date"), "next Tuesday", "2026-07-07 ('next Tuesday' from 2026-07-01) (date)"),
    (rule(match="ci"), "New York", "'New York', ignoring case (ci)"),
    (rule(match="any"), "x", "any value (any)"),
])
def test_describe_says_what_the_rule_expects(arg_rule: ArgRule, gold: Any, text: str) -> None:
    assert describe(arg_rule, gold, REF) == text


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5) | st.sampled_from([float("nan"), 5.0, -0.0])
    | st.sampled_from(["", "a", "5"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=8)


@given(JSON, JSON)
def test_canonical_equal_agrees_with_comparing_canonical_text(a: Any, b: Any) -> None:
    assert canonical.equal(a, b) is (canonical.dumps(a) == canonical.dumps(b))
    assert canonical.equal(a, a)
    assert canonical.equal(a, json.loads(canonical.dumps(a)))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6)


@given(gold=JSON_VALUES, accept=st.lists(JSON_VALUES, max_size=2),
       kind=st.sampled_from(["ci", "normalized", "regex", "semantic"]))
def test_a_value_equal_to_the_gold_matches_as_the_full_matcher_says(gold: Any, accept: list[Any], kind: str) -> None:
    # match_value answers True for these without running the matcher: the matcher must agree.
    from scorer.matchers import MATCHERS

    rule = ArgRule(match=kind, accept=accept, pattern="zz" if kind == "regex" else None,  # type: ignore[arg-type]
                   intent="same" if kind == "semantic" else None)
    copy = json.loads(json.dumps(gold))
    assert match_value(rule, gold, copy, None) is True
    assert MATCHERS[kind](rule, [gold, *accept], copy, None) is True


_BFCL_STANDARDIZE = re.compile(r"[ \,\.\/\-\_\*\^]")  # bfcl_eval ast_checker.standardize_string's, verbatim


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=30) | st.text(alphabet=" ,./-_*^'\"AbΣςẞİ\u0345x", max_size=20))
def test_normalized_text_is_bfcls_standardization_of_any_string(text: str) -> None:
    # including where the order of its steps shows: ``'`` is case-ignorable and ``"`` is not (a final sigma)
    assert normalized_text(text) == _BFCL_STANDARDIZE.sub("", text).lower().replace("'", '"')
    assert normalized_text(["A'Σ", {"k": "B-Σ"}]) == ['a"ς', {"k": "bς"}]
