"""Conformance on the real BFCL data (../shared/data/bfcl, imported with scorer.importers.bfcl).

Outputs built from BFCL's first acceptable values all pass (and, through the slow path with schema
validation, so do outputs built from the last acceptable values); each systematic perturbation gives
exactly one expected error code. Deliberate differences from BFCL's checker are listed in
docs/scoring.md ("Differences from BFCL's checker").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

import jsonschema
import pytest

from scorer import importers
from scorer.api import score_case
from scorer.grounding import is_identifier_key
from scorer.hygiene import case_problems
from scorer.importers import Converted
from scorer.model import GoldCase, RunCall, RunRecord
from scorer.results import CaseResult
from tests.conftest import SHARED_DATA

BFCL = SHARED_DATA / "bfcl"
pytestmark = pytest.mark.skipif(not BFCL.is_dir(), reason=f"the BFCL data is not at {BFCL} "
                                                          "(CI keeps shared/ beside the clone)")
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
              "live_parallel", "live_parallel_multiple", "irrelevance", "live_irrelevance", "live_relevance")


@cache
def gold_cases() -> tuple[GoldCase, ...]:
    cases = []
    for category in CATEGORIES:
        for item in importers.convert(BFCL / f"BFCL_v4_{category}.json", "bfcl"):
            assert isinstance(item, Converted), str(item)
            if isinstance(item.record, GoldCase):
                cases.append(item.record)
    return tuple(cases)


def category(case: GoldCase) -> str:
    return case.tags[1]


def as_model_output(calls: list[tuple[str, dict[str, Any]]], case: GoldCase) -> RunRecord:
    """Calls as a model returns them: arguments as a JSON string."""
    return RunRecord(case_id=case.id, calls=tuple(RunCall(name=n, arguments=json.dumps(a)) for n, a in calls))


def first_values(case: GoldCase) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in case.expected.calls]


def last_values(case: GoldCase) -> list[tuple[str, dict[str, Any]]]:
    """Each argument at the last value BFCL accepts; those it lets be omitted left out, unless the schema
    requires them (BFCL's checker, too, refuses a call without a required parameter)."""
    out = []
    for c in case.expected.calls:
        args = {}
        required = case.required_for(c.name)
        for key, value in c.arguments.items():
            rule = case.rule_for(c.name, key)
            if rule.optional and key not in required:
                continue
            args[key] = rule.accept[-1] if rule.accept else value
        out.append((c.name, args))
    return out


def codes(result: CaseResult) -> list[str]:
    return sorted(e.code.value for e in result.errors)


def call_cases() -> list[GoldCase]:
    return [c for c in gold_cases() if c.expected.behavior == "call" and not c.expected.tool_only]


def schema_consistent(case: GoldCase) -> bool:
    """Whether BFCL's expected calls satisfy the tools' own schemas (required keys present, values valid)."""
    for c in case.expected.calls:
        spec = case.tool(c.name)
        if spec is None or not jsonschema.Draft202012Validator(spec.parameters).is_valid(c.arguments):
            return False
        if any(key not in spec.properties for key in c.arguments):
            return False
    return True


def test_the_data_is_all_there() -> None:
    counts = Counter(category(c) for c in gold_cases())
    assert counts == {"simple_python": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200,
                      "live_simple": 258, "live_multiple": 1053, "live_parallel": 16, "live_parallel_multiple": 24,
                      "irrelevance": 240, "live_irrelevance": 884, "live_relevance": 16}


def test_outputs_built_from_the_first_acceptable_values_all_pass() -> None:
    failures = []
    for case in gold_cases():
        result = score_case(case, as_model_output(first_values(case), case))
        if result.status != "pass" or result.matched != "expected":
            failures.append((case.id, [e.note for e in result.errors]))
    assert failures == []


def schema_breaks(case: GoldCase, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Where calls built from BFCL's acceptable values break the tool's own schema ("bronze" for enum
    "Bronze", 1 for a string): the gold vouches for them, so toolgold does not fail the agent, and lint
    flags the gold."""
    found = []
    for (name, args), gold in zip(calls, case.expected.calls, strict=True):
        if args == gold.arguments:
            continue
        for key, value in args.items():
            prop = _schema(case, name, key)
            if prop and not jsonschema.Draft202012Validator(prop).is_valid(value):
                found.append(f"{name}.{key}")
    return sorted(found)


def test_outputs_built_from_the_last_acceptable_values_pass_through_full_checking() -> None:
    """The slow path, schema validation included; where BFCL's answer and its schema disagree the gold's
    value is not held against the agent, and lint names the gold value."""
    failures, unflagged, conflicting = [], [], 0
    for case in call_cases():
        calls = last_values(case)
        breaks = schema_breaks(case, calls)
        conflicting += bool(breaks)
        result = score_case(case, as_model_output(calls, case))
        if codes(result):
            failures.append((case.id, [e.note for e in result.errors]))
        flagged = {f"{p.tool}.{p.arg}" for p in case_problems(case) if p.code == "schema_violation"}
        if not set(breaks) <= flagged:
            unflagged.append((case.id, breaks, sorted(flagged)))
    assert failures == []
    assert unflagged == []
    assert 0 < conflicting < 30


Perturb = Callable[[GoldCase], list[tuple[str, dict[str, Any]]] | None]


def wrong_tool(case: GoldCase) -> list[tuple[str, dict[str, Any]]] | None:
    calls = first_values(case)
    expected = {c.name for c in case.expected.calls}
    others = [t.name for t in case.tools if t.name not in expected]
    if len(case.expected.calls) > 1:
        return None  # a renamed parallel call may still pair with another expected call
    calls[0] = (others[0] if others else "zz_not_offered", calls[0][1])
    return calls


def drop_required(case: GoldCase) -> list[tuple[str, dict[str, Any]]] | None:
    calls = first_values(case)
    name, args = calls[0]
    required = [k for k in case.required_for(name) if k in args]
    if not required or len(case.expected.calls) > 1:
        return None
    del args[required[0]]
    return calls


def unknown_param(case: GoldCase) -> list[tuple[str, dict[str, Any]]] | None:
    calls = first_values(case)
    calls[0][1]["zz_unknown_param"] = 1
    return calls


def _schema(case: GoldCase, tool: str, key: str) -> dict[str, Any]:
    spec = case.tool(tool)
    prop = spec.properties.get(key) if spec else None
    return prop if isinstance(prop, dict) else {}


def wrong_value(case: GoldCase) -> list[tuple[str, dict[str, Any]]] | None:
    """A plain value changed to one no rule accepts, keeping its type (identifier-like keys aside: a made-up
    identifier is also, rightly, ungrounded)."""
    if len(case.expected.calls) > 1:
        return None
    calls = first_values(case)
    name, args = calls[0]
    for key, value in sorted(args.items()):
        rule = case.rule_for(name, key)
        if rule.match not in ("exact", "one_of", "normalized") or is_identifier_key(key) or "enum" in _schema(case, name, key):
            continue
        if isinstance(value, bool):
            new: Any = not value
        elif isinstance(value, int):
            new = value + 7919
        elif isinstance(value, float):
            new = value + 7919.5
        elif isinstance(value, str):
            new = value + " zz"
        else:
            continue
        if new in rule.accept:
            continue
        args[key] = new
        return calls
    return None


def wrong_type(case: GoldCase) -> list[tuple[str, dict[str, Any]]] | None:
    """A value turned into another JSON type with the same text (so it stays grounded)."""
    if len(case.expected.calls) > 1:
        return None
    calls = first_values(case)
    name, args = calls[0]
    for key, value in sorted(args.items()):
        declared = _schema(case, name, key).get("type")
        types = {declared} if isinstance(declared, str) else set(declared or ())
        if not types:
            continue
        if isinstance(value, str) and "array" not in types:
            args[key] = [value]
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and "string" not in types:
            args[key] = str(value)
        else:
            continue
        return calls
    return None


PERTURBATIONS: dict[str, tuple[Perturb, str, int]] = {
    # name: (perturbation, the one code it must give, the least number of cases it must apply to)
    "wrong tool": (wrong_tool, "wrong_tool", 1500),
    "drop a required arg": (drop_required, "missing_required_arg", 1500),
    "add an unknown param": (unknown_param, "hallucinated_param", 2000),
    "wrong value": (wrong_value, "wrong_arg_value", 1500),
    "wrong type": (wrong_type, "schema_type_error", 1500),
}


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_each_perturbation_gives_exactly_its_error_code(name: str) -> None:
    perturb, code, at_least = PERTURBATIONS[name]
    applied, failures = 0, []
    for case in filter(schema_consistent, call_cases()):
        calls = perturb(case)
        if calls is None:
            continue
        applied += 1
        result = score_case(case, as_model_output(calls, case))
        if result.status != "fail" or codes(result) != [code]:
            failures.append((case.id, [e.note for e in result.errors]))
    assert failures == []
    assert applied >= at_least


def test_only_a_few_bfcl_answers_contradict_their_own_schema() -> None:
    """Perturbations are applied where BFCL's answer satisfies its schema; elsewhere a perturbed call also
    shows the answer's own schema conflict (see docs/scoring.md)."""
    inconsistent = [c.id for c in call_cases() if not schema_consistent(c)]
    assert len(inconsistent) == 86, inconsistent


def test_reordered_parallel_calls_give_the_identical_result() -> None:
    parallel = [c for c in call_cases() if len(c.expected.calls) > 1]
    assert len(parallel) > 400
    for case in parallel:
        calls = first_values(case)
        forward = score_case(case, as_model_output(calls, case))
        backward = score_case(case, as_model_output(calls[::-1], case))
        rotated = score_case(case, as_model_output(calls[1:] + calls[:1], case))
        assert forward == backward == rotated and forward.status == "pass", case.id
        # A wrong value in one parallel call is blamed on the same call whatever the order.
        broken = [(calls[0][0], {**calls[0][1], "zz_unknown_param": 1}), *calls[1:]]
        results = {score_case(case, as_model_output(order, case)).model_dump_json()
                   for order in (broken, broken[::-1], broken[1:] + broken[:1])}
        assert len(results) == 1, case.id


def test_any_call_on_an_irrelevance_case_is_an_unexpected_call() -> None:
    irrelevant = [c for c in gold_cases() if category(c) in ("irrelevance", "live_irrelevance")]
    assert len(irrelevant) == 1124
    failures = []
    for case in irrelevant:
        if not case.tools:
            continue
        result = score_case(case, as_model_output([(case.tools[0].name, {})], case))
        if codes(result) != ["unexpected_call"]:
            failures.append((case.id, codes(result)))
        if score_case(case, as_model_output([], case)).status != "pass":
            failures.append((case.id, "no call did not pass"))
    assert failures == []


def test_relevance_cases_accept_a_call_to_any_offered_tool_with_any_arguments() -> None:
    relevance = [c for c in gold_cases() if category(c) == "live_relevance"]
    for case in relevance:
        for tool in case.tools:
            result = score_case(case, as_model_output([(tool.name, {"anything": "goes"})], case))
            assert result.status == "pass", (case.id, tool.name)
        assert codes(score_case(case, as_model_output([], case))) == ["missing_call"]
