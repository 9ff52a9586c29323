"""``hygiene.schema_violations`` (what ``toolgold import`` warns of for each gold case) is exactly the
``schema_violation`` part of ``case_problems``, in its order, without the other checks' cost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorer.hygiene import case_problems, schema_violations
from scorer.model import ArgRule, GoldCase

REPO = Path(__file__).resolve().parents[2]


def _demo_gold() -> list[GoldCase]:
    cases = []
    for path in sorted((REPO / "data" / "demo").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("format") == "toolgold.gold/1":
                cases.append(GoldCase.model_validate(record))
    return cases


def _broken(case: GoldCase) -> GoldCase:
    """``case`` with every argument of the wrong type, an unknown argument and a wrong accepted value."""
    calls = []
    for call in case.expected.calls:
        wrong: dict[str, Any] = {key: [value] if not isinstance(value, list) else 7 for key, value in call.arguments.items()}
        wrong["no_such_parameter"] = 1
        rules = {key: ArgRule(match="one_of", accept=({"not": "this"},)) for key in call.arguments}
        calls.append(call.model_copy(update={"arguments": wrong, "arg_rules": rules}))
    return case.model_copy(update={"expected": case.expected.model_copy(update={"calls": tuple(calls)})})


def test_schema_violations_are_case_problems_schema_part() -> None:
    cases = _demo_gold()
    cases += [_broken(case) for case in cases]
    found = 0
    for case in cases:
        expected = [p for p in case_problems(case) if p.code == "schema_violation"]
        assert schema_violations(case) == expected
        found += len(expected)
    assert found > len(cases) // 2
