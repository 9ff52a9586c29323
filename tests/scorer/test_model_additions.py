"""Optional fields added after a format version was published are left out when unset, in every way a record
is written (JSON text, JSON values, Python values), nested or not; set, they are written; the fields that
were always there are written even when empty. Declared with ``exclude_if`` (scorer/model.py ``unset``),
which replaced the Python wrap serializers: content hashes of records that do not use an addition stay the
same (tests/labeler/test_import_parity.py checks the real data digest for digest)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from scorer.model import Answer, ArgRule, Call, GoldCase, Message, ToolSpec

TOOL = {"name": "lookup", "description": "", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}


def _written(model: BaseModel) -> list[dict[str, Any]]:
    return [json.loads(model.model_dump_json()), model.model_dump(mode="json"), model.model_dump()]


def _case(**fields: Any) -> GoldCase:
    base: dict[str, Any] = {"tools": (ToolSpec(**TOOL),),
                            "expected": Answer(behavior="call", calls=(Call(name="lookup"),))}
    return GoldCase(id="g", conversation_id="c", turn=1, messages=(Message(role="user", content="hi"),),
                    **{**base, **fields})


ADDITIONS = [
    (ToolSpec, TOOL, "annotations", [{}], {"readOnlyHint": True}),
    (ToolSpec, TOOL, "output_schema", [None], {"type": "object"}),
    (ArgRule, {"match": "date"}, "tz", [None], "Europe/Paris"),
    (Call, {"name": "lookup", "arguments": {"q": "x"}}, "arg_rules", [{}], {"q": ArgRule(match="ci")}),
]


@pytest.mark.parametrize(("model", "base", "field", "unset_values", "value"), ADDITIONS,
                         ids=[f"{m.__name__}.{f}" for m, _, f, _, _ in ADDITIONS])
def test_an_unset_addition_is_left_out_and_a_set_one_written(model: type[BaseModel], base: dict[str, Any],
                                                              field: str, unset_values: list[Any],
                                                              value: Any) -> None:
    for unset in [*unset_values, "default"]:
        record = model(**base) if unset == "default" else model(**base, **{field: unset})
        assert [field in out for out in _written(record)] == [False, False, False]
        additions = {f for m, _, f, _, _ in ADDITIONS if m is model}  # the others are unset here too
        assert [set(out) for out in _written(record)] == [set(model.model_fields) - additions] * 3
    record = model(**base, **{field: value})
    expected = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    written = _written(record)
    assert [field in out for out in written] == [True, True, True]
    assert json.loads(json.dumps(written[1][field])) == (
        {k: v.model_dump(mode="json") for k, v in value.items()} if field == "arg_rules" else expected)


def test_additions_are_left_out_inside_a_gold_case_and_set_ones_kept() -> None:
    plain = _case()
    for out in _written(plain):
        assert "tz" not in out
        assert "annotations" not in out["tools"][0] and "output_schema" not in out["tools"][0]
        assert "arg_rules" not in out["expected"]["calls"][0]
        assert out["arg_rules"] == {}  # always part of the format: written even when empty
        assert out["tools"][0]["description"] == ""
    rich = _case(tz="America/New_York", tools=(ToolSpec(**TOOL, annotations={"readOnlyHint": True},
                                                         output_schema={"type": "object"}),),
                 expected=Answer(behavior="call", calls=(Call(name="lookup", arguments={"q": "x"}, arg_rules={
                     "q": ArgRule(match="date", tz="Asia/Tokyo")}),)))
    for out in _written(rich):
        assert out["tz"] == "America/New_York"
        assert out["tools"][0]["annotations"] == {"readOnlyHint": True}
        assert out["tools"][0]["output_schema"] == {"type": "object"}
        assert out["expected"]["calls"][0]["arg_rules"]["q"]["tz"] == "Asia/Tokyo"
    assert GoldCase.model_validate_json(rich.model_dump_json()) == rich
    assert GoldCase.model_validate_json(plain.model_dump_json()) == plain
