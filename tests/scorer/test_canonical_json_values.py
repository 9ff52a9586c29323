"""``canonical.dumps_json_values`` is ``canonical.dumps`` for JSON-mode values (string keys), only faster:
the stored bodies and content hashes of imported records must not change."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import canonical
from scorer.formats import dumps_record, to_json
from scorer.matchers import show
from tests.conftest import pure_core_only
from tests.labeler.test_store import gold

_leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text() | st.sampled_from([".0,", "5.0]", "1e+16", "x.0}", ".0", "8.854e-12", "0.000001256"]))
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_the_same_text_as_dumps_for_any_json_value(value: Any) -> None:
    assert canonical.dumps_json_values(value) == canonical.dumps(value)


def test_integral_floats_collapse_as_dumps_does() -> None:
    for value in [5.0, -0.0, 1e16, 1.5e16, [1.0, 2.5], {"a": {"b": 3.0}}, {"s": "no float .0, here"}, 0.5, 1.5e-07]:
        assert canonical.dumps_json_values(value) == canonical.dumps(value)
    assert canonical.dumps_json_values({"a": [5.0]}) == '{"a":[5]}'


def test_a_record_line_and_its_content_hash_are_unchanged() -> None:
    case = gold("g1")
    assert dumps_record(case) == canonical.dumps(to_json(case))


def test_every_float_magnitude_and_the_strings_orjson_escapes() -> None:
    # orjson writes 1e-5 <= |x| < 1e-4 positionally and signs every exponent; Python does neither: the
    # fast path must notice and agree with dumps byte for byte.
    floats = [m * 10.0 ** e for e in range(-325, 309) for m in (1.0, 1.5, 2.2250738585072014, 9.999999999999999)
              if abs(m * 10.0 ** e) < float("inf")]
    values: list[Any] = [*floats, *(-f for f in floats), 1.5212603486793025e-05, 0.00001, 0.0001, 5e-324,
                         2 ** 63 - 1, 2 ** 63, -(2 ** 63), 2 ** 64, 10 ** 30,
                         "\x00\x1f\x7f\u2028\u2029\b\f\n\r\t\"\\/", "é\U0001f600\uffff",
                         {"é": 1, "z": 2, "\U0001f600": 3, "\uffff": 4, "Z": 5, "": 6, "a b": 7},
                         {"price": 0.000015, "n": [1e-7, 12.0, 3.25]}, {"s": "version 1.0, e+5 e-5 0.0000"}]
    for value in values:
        assert canonical.dumps_json_values(value) == canonical.dumps(value), value


def test_to_json_keeps_integers_beyond_64_bits_and_every_float() -> None:
    from scorer.model import Transcript

    record = Transcript.model_validate({"id": "t", "messages": [{"role": "user", "content": "hi"}],
                                        "metadata": {"big": 2 ** 70, "neg": -(10 ** 19), "f": 1.5e-05,
                                                     "tiny": 5e-324, "z": -0.0, "i": 2 ** 63 - 1}})
    assert to_json(record) == record.model_dump(mode="json")
    assert to_json(record)["metadata"]["big"] == 2 ** 70


@settings(max_examples=400, deadline=None)
@given(_values)
def test_the_finite_variant_gives_the_same_text(value: Any) -> None:
    # hypothesis' floats above exclude NaN and infinities: the values ``dumps_finite_json_values`` is for
    assert canonical.dumps_finite_json_values(value) == canonical.dumps_json_values(value)


_float_free_leaves = (st.none() | st.booleans() | st.integers() | st.text()
                      | st.sampled_from([".0,", "5.0]", "1e+16", "x.0}", ".0", "1e-07", "0.00001"]))
_float_free_values = st.recursive(_float_free_leaves, lambda inner: st.lists(inner, max_size=4)
                                  | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_float_free_values, st.dictionaries(st.sampled_from(["a", "messages", "tools", "z", "é"]), _values,
                                           max_size=4))
def test_float_free_values_and_texts_joined_in_key_order_are_dumps(value: Any, rest: dict[str, Any]) -> None:
    # orjson's bytes as they are for values without a float (integers beyond 64 bits included), and an
    # object written from parts (some members given as their canonical text) is the object's canonical text
    assert canonical.dumps_float_free(value) == canonical.dumps(value)
    given_as_text = {k: canonical.dumps(v) for k, v in rest.items() if k in ("messages", "tools")}
    others = {k: v for k, v in rest.items() if k not in given_as_text}
    assert canonical.dumps_finite_with(others, given_as_text) == canonical.dumps(rest)


@settings(max_examples=300, deadline=None)
@given(st.lists(_values, max_size=6))
def test_many_values_written_at_once_are_each_dumps(values: list[Any]) -> None:
    # a float alone (5.0, 1e-07) at the end of one text and the start of the next must still be seen
    assert canonical.dumps_finite_json_values_each(values) == [canonical.dumps(v) for v in values]
    edge = [5.0, [1], 1e-07, {"a": 0.00001}, 2.5, -0.0]
    assert canonical.dumps_finite_json_values_each(edge) == [canonical.dumps(v) for v in edge]


@given(st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=True), _values))
def test_canonical_text_is_the_stdlib_json_of_the_normalized_value(value: Any) -> None:
    # ``dumps`` writes the commonest scalars itself (no encoder built): the text json.dumps writes, surrogates,
    # control characters, quotes, huge integers and NaN included
    assert canonical.dumps(value) == json.dumps(canonical.normalize(value), sort_keys=True, separators=(",", ":"),
                                                ensure_ascii=False)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=12) | st.text(alphabet="AΣσςΟΔ ' -İẞ", max_size=12))
def test_lowered_is_cpythons_lower_final_sigma_included(text: str) -> None:
    # (mypyc compiles ``str.lower`` to a per-character mapping that writes every Σ as σ; make test's compiled
    # pass runs this against the compiled core)
    assert canonical.lowered(text) == str.lower(text)
    assert canonical.lowered("ΟΔΟΣ Α'Σ") == "οδος α'ς"


_any_floats = st.floats(allow_nan=True, allow_infinity=True)
_wide_values = st.recursive(_leaves | _any_floats, lambda inner: st.lists(inner, max_size=4)
                            | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
                            max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_wide_values, st.booleans())
def test_json_text_is_json_dumps_with_sorted_keys_for_any_value(value: Any, compact: bool) -> None:
    # the C encoder made once (no cycle check): NaN, ±Infinity, tuples, nesting and escapes as json.dumps
    separators = (",", ":") if compact else None
    assert canonical.json_text(value, compact) == json.dumps(value, sort_keys=True, ensure_ascii=False,
                                                             separators=separators)


@given(_wide_values)
def test_a_note_shows_any_value_as_its_sorted_json(value: Any) -> None:
    text = value if type(value) is str else None
    expected = json.dumps(canonical.normalize(value), ensure_ascii=False, sort_keys=True)
    if text is not None and text.isprintable() and "'" not in text:
        expected = f"'{text}'"
    assert show(value) == (expected if len(expected) <= 80 else expected[:79] + "…")


def test_json_text_refuses_what_json_dumps_refuses() -> None:
    for compact in (True, False):
        with pytest.raises(TypeError, match=r"^Object of type set is not JSON serializable$"):
            canonical.json_text({"a": [1, {2}]}, compact)


def _has_float(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return isinstance(value, float)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_holds_float_finds_any_float(value: Any) -> None:
    assert canonical.holds_float(value) is _has_float(value)
    assert canonical.holds_float((1, ["a", {"k": None}, True])) is False
    assert canonical.holds_float({"a": [{"b": [0.5]}]}) is True


# Tool descriptions from BFCL's functions: strings that read like floats, beside values that are floats or not.
FLOAT_LOOKING = [
    {"description": "rating on a scale from 1.0 to 5.0, with 5.0 being the best", "type": "number"},
    {"description": "Default is 8.854e-12 (vacuum permittivity).", "default": 8.854e-12},
    {"description": "approximated to be 0.000001256 H/m.", "minimum": 0, "maximum": 5.0},
    {"description": "such as 4.0, 4.5, etc.", "enum": [1, 2.5, 3.0], "n": [1e16, 1.5e-05]},
]


@pytest.mark.parametrize("value", FLOAT_LOOKING, ids=range(len(FLOAT_LOOKING)))
def test_strings_that_read_like_floats_are_written_as_dumps_writes_them(value: Any) -> None:
    assert canonical.dumps_finite_json_values(value) == canonical.dumps_json_values(value) == canonical.dumps(value)
    assert canonical.dumps_finite_json_values_each([value, value]) == [canonical.dumps(value)] * 2


@pure_core_only
def test_a_false_alarm_or_collapsed_floats_need_not_json_s_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """orjson's text of a BFCL tool list that holds a float-like string in a description, or integral floats,
    is the canonical text once those are known for what they are: json's encoder (twice, ~10x orjson; most of a
    BFCL gold case's conversion when it came) is left for floats orjson writes otherwise."""
    def refused(value: Any) -> str:
        raise AssertionError(f"json's encoder for {value!r}")

    monkeypatch.setattr(canonical, "_dumps_json_values_stdlib", refused)
    for value in (FLOAT_LOOKING[0], {"d": "from 1.0 to 5.0, with", "default": 5.0, "x": [2.0, 0.5]}):
        assert canonical.dumps_finite_json_values(value) == canonical.dumps(value)
        assert canonical.dumps_json_values(value) == canonical.dumps(value)
    # a float in exponent form still takes it: orjson writes some otherwise (1.5e-5 where json writes 1.5e-05)
    with pytest.raises(AssertionError, match="json's encoder"):
        canonical.dumps_finite_json_values(FLOAT_LOOKING[1])
