"""The strict reader's fast path (orjson, with the depth walk ``_too_deep`` only when the brackets could
exceed ``MAX_DEPTH``) gives the verdict of its slow path (``json`` with the strict hooks, then the full
``_problem`` walk) on every input, accepted or refused: NaN and Infinity, overflowing numbers, duplicate keys,
nesting at and around the limit, invalid UTF-8, lone surrogates, big integers."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scorer import strict_json
from scorer.errors import InvalidRecord


def _verdict(text: bytes, *, slow: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    with monkeypatch.context() as patch:
        if slow:
            patch.setattr(strict_json, "_fast", lambda data: strict_json._SLOW)
        try:
            return "ok", strict_json.loads(text, source="f", line=1)
        except InvalidRecord as err:
            return "refused", err.message.split(" (")[0]


def _nested(n: int, kinds: str, leaf: str) -> str:
    text = leaf
    for i in range(n):
        text = f"[{text}]" if kinds[i % len(kinds)] == "l" else f'{{"k": {text}}}'
    return text


INPUTS = [
    b'{"a": NaN}', b'{"a": Infinity}', b'[-Infinity]', b'{"a": 1e400}', b'[1e308, -1e308]',
    b'{"a": 1, "a": 2}', b'{"a": {"b": 1}, "a": [1, 2]}',
    b'{"a": "\xff"}', b'["\xc3\x28"]', b'"\xed\xa0\x80"', b'{"a": "\\ud800"}', b'["\\udfff x"]',
    b'[123456789012345678901234567890]', b'{"n": -9223372036854775809}', b'[1.5, 2.0, -0.0]',
    b'{"a": [1, 2', b'[1] [2]', b'', b'  {"a": "]]]]]]"} ',
    *(_nested(n, kinds, leaf).encode() for n in (199, 200, 201, 202, 203) for kinds in ("l", "d", "ld")
      for leaf in ("1", "[]", "{}", '"]]]"', "[1]")),
]


@pytest.mark.parametrize("text", INPUTS, ids=range(len(INPUTS)))
def test_the_fast_path_gives_the_slow_paths_verdict(text: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _verdict(text, slow=False, monkeypatch=monkeypatch) == _verdict(text, slow=True, monkeypatch=monkeypatch)


def test_the_limit_is_where_it_was() -> None:
    strict_json.loads(_nested(200, "l", "1"))
    with pytest.raises(InvalidRecord, match="nested deeper than 200"):
        strict_json.loads(_nested(201, "l", "1"))
    strict_json.loads(_nested(200, "d", "[]"))  # the innermost container is empty: 201 brackets, 200 levels
    with pytest.raises(InvalidRecord, match="nested deeper than 200"):
        strict_json.loads(_nested(201, "ld", "{}"))


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice([1, "s", None, 2.5, [], {}, True])
    if roll < 0.65:
        return [_random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}": _random_value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_the_container_walk_counts_depth_as_the_full_walk_does() -> None:
    rng = random.Random(15)
    values = [_random_value(rng, rng.randint(0, 14)) for _ in range(3000)]
    for n in range(196, 206):
        for leaf in (1, [], {}, "x", [1], {"a": None}, ()):
            chain: Any = leaf
            for i in range(n):
                chain = [chain] if i % 3 else {"a": chain}
            values += [chain, [chain, 1, [2]], {"x": [], "y": chain}, (chain,)]
    verdicts = [(strict_json._problem(v, check_leaves=False) is not None, strict_json._too_deep(v)) for v in values]
    assert [full for full, _ in verdicts] == [fast for _, fast in verdicts]
    assert 0 < sum(full for full, _ in verdicts) < len(values)


def _disguised(n: int) -> bytes:
    """``n`` nested lists whose strings hold brackets that pair up with the structural ones: ``["]",["]",
    ...,"["],"["]``. Counted as text, the brackets never nest deeper than one."""
    return ('["]",' * n + "1" + ',"["]' * n).encode()


def _escaped(n: int) -> bytes:
    """``n`` nested lists, each opened after a string ending in an escaped quote or backslash: the string
    boundaries must be found as JSON finds them."""
    return ('["a\\"]\\\\",' * n + "1" + "]" * n).encode()


DISGUISED = [make(n) for make in (_disguised, _escaped) for n in (100, 101, 199, 200, 201, 202, 260)]


@pytest.mark.parametrize("text", DISGUISED, ids=range(len(DISGUISED)))
def test_brackets_inside_strings_do_not_hide_the_depth(text: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _verdict(text, slow=False, monkeypatch=monkeypatch) == _verdict(text, slow=True, monkeypatch=monkeypatch)



# -- which long digit runs send a document to the slow path (has_long_number) ---------------------------------------

MAYBE_BIG_INTEGERS = [
    b'{"a": 18446744073709551616}', b'{"a": -9223372036854775809}', b"[1,123456789012345678901]",
    b"99999999999999999999", b'{"a":\n\t-12345678901234567890}', b"[ -9999999999999999999 ]",
    b'{"note": "order: 99999999999999999999"}',  # inside a string, but read as bytes it could be a number: kept
]
"""Integers orjson cannot read exactly: beyond 2**64 - 1, or below -2**63 (it reads them as floats)."""
READ_EXACTLY = [
    b'{"cost": 0.0035475000000000003}', b'{"a": 12345678901234567890.5}', b'{"a": 1.5e-0000000000000000001}',
    b'{"a": 2E+12345678901234567890}', b'{"id": "1234567890123456789"}', b'{"id": "id-12345678901234567890"}',
    b'{"t": "at 2026-12-07T03:14:40.123456789012345678Z"}', b'["x/12345678901234567890/y"]', b'{"a": 123456789012345678}',
    # integers of 19 and 20 digits that 64 bits hold (snowflake ids, nanosecond timestamps): orjson reads them exactly
    b'{"a": 1234567890123456789}', b'{"ts": 1733540000000000000}', b"[9999999999999999999]", b"18446744073709551615",
    b'{"a": -9223372036854775808}', b"[ -1234567890123456789 ]",
]


@pytest.mark.parametrize("text", MAYBE_BIG_INTEGERS)
def test_a_run_of_19_digits_that_may_be_an_integer_token_takes_the_slow_path(text: bytes) -> None:
    assert strict_json.has_long_number(text)


@pytest.mark.parametrize("text", READ_EXACTLY)
def test_a_long_run_orjson_reads_exactly_does_not(text: bytes) -> None:
    """The fraction or exponent of a float, a float's integer part, digits right after a quote, a letter or a
    slash (no JSON integer token starts or ends there), and integers 64 bits hold: orjson reads the document as
    ``json`` does. Before, any 19 digits in a row sent a record to the slow path (3-5x slower to import): snowflake
    ids, nanosecond timestamps, floats written to 17 significant digits (as tau-bench's raw trajectories write their
    costs: ``0.0035475000000000003``)."""
    assert not strict_json.has_long_number(text)


def _random_numbers_document(rng: random.Random) -> bytes:
    """A JSON document of big and small integers, floats at every magnitude and strings of digits."""
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(15, 25))).lstrip("0") or "7"
    pieces = [digits, f"-{digits}", f"{digits}.5", f"0.{digits}", f"1e-{rng.randint(1, 30)}", f"1.{digits}e{rng.randint(-30, 30)}",
              f'"{digits}"', f'"x{digits}"', f'"a: {digits}"', str(rng.random()), str(rng.random() / 10 ** rng.randint(1, 9)),
              str(rng.randint(-2**70, 2**70))]
    rng.shuffle(pieces)
    keep = pieces[:rng.randint(1, 4)]
    return (("[" + ", ".join(keep) + "]") if rng.random() < 0.5 else
            "{" + ", ".join(f'"k{i}": {p}' for i, p in enumerate(keep)) + "}").encode()


def test_whenever_no_run_may_be_an_integer_the_fast_path_reads_exactly_what_json_reads() -> None:
    """The reason for the check: a document it passes is read by orjson to the same values, of the same types
    (an integer beyond 64 bits would come back from orjson as a float, or not at all)."""
    import json

    import orjson

    rng = random.Random(34)
    passed = 0
    for _ in range(20_000):
        text = _random_numbers_document(rng)
        if strict_json.has_long_number(text):
            continue
        passed += 1
        try:
            fast = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue  # refused: the slow path decides
        slow = json.loads(text)
        assert fast == slow and repr(fast) == repr(slow), text
    assert passed > 5_000
