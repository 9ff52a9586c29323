"""``strict_json._too_deep`` (the fast path's depth check) gives the verdict of ``_problem(...,
check_leaves=False)`` at and around ``MAX_DEPTH``, whatever the innermost level holds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.strict_json import MAX_DEPTH, _problem, _too_deep


def _nested(levels: int, inner: Any, *, dicts: bool) -> Any:
    value = inner
    for i in range(levels):
        value = {"k": value, "leaf": i} if dicts and i % 2 else [value, "leaf"]
    return value


@pytest.mark.parametrize("levels", [0, 1, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 3])
@pytest.mark.parametrize("inner", [1, "s", [], {}, [1], {"a": None}, [[]]])
@pytest.mark.parametrize("dicts", [False, True])
def test_the_same_verdict_as_the_full_walk(levels: int, inner: Any, dicts: bool) -> None:
    value = _nested(levels, inner, dicts=dicts)
    assert _too_deep(value) == (_problem(value, check_leaves=False) is not None)


@pytest.mark.parametrize("value", [1, "x", None, 2.5, [], {}])
def test_scalars_and_empty_containers_are_not_deep(value: Any) -> None:
    assert _too_deep(value) is False


def test_a_record_one_level_too_deep_is_refused_through_the_fast_path() -> None:
    ok = json.dumps(_nested(MAX_DEPTH - 1, 1, dicts=True)).encode()
    assert strict_json.loads(ok) == json.loads(ok)
    with pytest.raises(InvalidRecord):
        strict_json.loads(json.dumps(_nested(MAX_DEPTH + 1, 1, dicts=True)).encode(), source="f.jsonl", line=3)
