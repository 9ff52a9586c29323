"""``canonical.dumps_json_values`` is ``canonical.dumps`` for JSON-mode values (string keys), only faster:
the stored bodies and content hashes of imported records must not change."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scorer import canonical
from scorer.formats import dumps_record, to_json
from tests.labeler.test_store import gold

_leaves = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text() | st.sampled_from([".0,", "5.0]", "1e+16", "x.0}", ".0"]))
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
