"""``formats.record_json_text`` writes a record whose tool list it wrote before (shared ``ToolSpec`` objects, what
an import meets on every line after the first few) from its other fields' JSON values, built by pydantic
directly: never as text read back. The oracle is ``canonical.dumps`` of ``to_json``, the reference form."""

from __future__ import annotations

from typing import Any

import pytest

from scorer import canonical, formats
from scorer.model import GoldCase
from tests.conftest import pure_core_only

TOOLS = [{"name": "book", "description": "Book.", "parameters": {
    "type": "object", "properties": {"amount": {"type": "number", "default": 1.0}}}}]
ARGUMENTS = [
    {"amount": 1.0, "z": -0.0, "big": 1e16, "tiny": 5e-324, "small": 1.5e-05, "neg": -2.5e-300},
    {"huge": 2 ** 70, "neg": -(2 ** 64), "edge": 2 ** 64 - 1, "f": 12345678901234567890.5},
    {"s": "é😀\u2028 \x00\n\"\\/", "n": 73018452906113527, "t": "73018452906113528", "e": "1e+16 .0"},
    {"nest": [[[[{"a": [1.0, 2]}]]]], "empty": [{}, [], ""], "b": [True, False, None]},
]


def _case(n: int, tools: Any, arguments: dict[str, Any]) -> GoldCase:
    return GoldCase.model_validate({
        "id": f"g{n}", "tools": tools, "messages": [{"role": "user", "content": "book it"}],
        "expected": {"behavior": "call", "calls": [{"name": "book", "arguments": arguments}]},
        "arg_rules": {"book": {"amount": {"match": "number", "tolerance": 1}}},
        "reference_time": "2024-05-15T15:00:00-05:00", "tz": "America/Chicago", "tags": ["a", "b", "c", "d"]})


def _known_tools() -> GoldCase:
    first = _case(0, TOOLS, {"amount": 1.0})
    formats.record_json_text(first)  # files its tools' JSON: the next records sharing them are written apart
    return first


def test_a_record_with_known_tools_is_written_as_its_reference_form() -> None:
    first = _known_tools()
    for n, arguments in enumerate(ARGUMENTS, start=1):
        case = _case(n, first.tools, arguments)
        text, tools = formats.record_json_text(case)
        assert text == canonical.dumps(formats.to_json(case)) == formats.dumps_record(case)
        assert tools == formats.to_json(case)["tools"]


@pytest.mark.parametrize(("bad", "name"), [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                           (float("-inf"), "-Infinity")])
def test_a_record_with_known_tools_and_a_non_finite_number_is_refused_naming_where(bad: float, name: str) -> None:
    first = _known_tools()
    case = _case(1, first.tools, {"amount": [1.0, {"x": bad}]})
    with pytest.raises(canonical.NonFiniteNumber, match=rf"expected\.calls\[0\]\.arguments\.amount\[1\]\.x: {name} "):
        formats.record_json_text(case)


@pure_core_only
def test_the_rest_of_a_record_with_known_tools_is_not_written_as_text_and_read_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A gold case's fields but its tools are ~1 KB: pydantic building their JSON values directly costs less than
    # writing them as text for orjson to read back (9.6 against 15.8 us a bench_store gold case).
    first = _known_tools()
    cases = [_case(n, first.tools, arguments) for n, arguments in enumerate(ARGUMENTS, start=1)]
    expected = [canonical.dumps(formats.to_json(case)) for case in cases]

    def refused(*_: Any, **__: Any) -> Any:
        raise AssertionError("written as text and read back")

    monkeypatch.setattr(formats, "to_json", refused)
    assert [formats.record_json_text(case)[0] for case in cases] == expected
