"""Compiled checks (``arguments.CallPlan``, the lean one-call turn path) score exactly as the general path.

The reference is ``CaseFacts(case, compiled=False)``: every call checked by the general ``check_pair`` and
every answer scored through ``choose``. Both must give the same ``CaseResult`` (its JSON, errors, notes and
all) on the real BFCL items in tests/data, on the 2,311 BFCL call items of the shared data when it is
there, and on cases made to reach every rule kind, schema shape and kind of error; each with many outputs:
right, one value changed to each of a set of tricky values, a parameter added, a required one dropped,
values swapped, the wrong tool, extra and missing calls, unparseable arguments, no call. Trajectory steps
go through the same checks, so the same cases are also compared read as trajectories in every order mode.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scorer.api import score_case
from scorer.facts import CaseFacts
from scorer.importers import Converted, convert
from scorer.model import Answer, ArgRule, Call, GoldCase, Message, RunCall, RunRecord, ToolSpec
from tests.conftest import SHARED_DATA
from tests.scorer.kit import call, calls, case, tool, user
from tests.scorer.test_core_speed_parity import TRICKY, _perturbed
from tests.scorer.test_trusted_results import _cases

SHARED_BFCL = SHARED_DATA / "bfcl"
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple")


def _same_on_both_paths(gold: GoldCase, outputs: list[tuple[RunCall, ...]]) -> int:
    compiled, general = CaseFacts(gold), CaseFacts(gold, compiled=False)  # one each per case, as scoring does
    for made in outputs:
        run = RunRecord(case_id=gold.id, calls=made)
        fast, reference = score_case(gold, run, facts=compiled), score_case(gold, run, facts=general)
        assert fast.model_dump() == reference.model_dump(), (gold.id, made)
        assert fast.model_dump_json() == reference.model_dump_json(), (gold.id, made)
        # and a fresh scoring (no facts passed: the compiled path, as `toolgold score` runs it)
        assert score_case(gold, run).model_dump_json() == reference.model_dump_json(), (gold.id, made)
    return len(outputs)


def _more_outputs(gold: GoldCase) -> list[tuple[RunCall, ...]]:
    """Beyond ``_perturbed``: each argument of the first call dropped, replaced, and two values swapped."""
    found = _perturbed(gold)
    if not gold.expected.calls:
        return found
    want = gold.expected.calls[0]
    rest = [RunCall(name=c.name, arguments=dict(c.arguments)) for c in gold.expected.calls[1:]]
    keys = sorted(want.arguments)
    for key in keys:
        found.append((RunCall(name=want.name, arguments={k: v for k, v in want.arguments.items() if k != key}),
                      *rest))
        found.append((RunCall(name=want.name, arguments={**want.arguments, key: f"{want.arguments[key]} zz"}),
                      *rest))
    if len(keys) >= 2:
        a, b = keys[:2]
        found.append((RunCall(name=want.name, arguments={**want.arguments, a: want.arguments[b],
                                                         b: want.arguments[a]}), *rest))
    found.append((RunCall(name=want.name, arguments={**want.arguments, "zz_unknown": 1, "zz_other": "x"}), *rest))
    found.append((RunCall(name=want.name, arguments={}), *rest))
    return found


def test_compiled_checks_score_the_real_bfcl_items_in_tests_data_as_the_general_path() -> None:
    compared = sum(_same_on_both_paths(gold, _more_outputs(gold)) for gold in _cases())
    assert compared > 400


def _shared_items() -> list[GoldCase]:
    found = []
    for category in CATEGORIES:
        for item in convert(SHARED_BFCL / f"BFCL_v4_{category}.json", "bfcl"):
            if isinstance(item, Converted) and isinstance(item.record, GoldCase):
                found.append(item.record)
    return found


@pytest.mark.skipif(not (SHARED_BFCL / "BFCL_v4_parallel.json").is_file(),
                    reason="the shared BFCL data is not here (TOOLGOLD_SHARED_DATA)")
def test_compiled_checks_score_every_shared_bfcl_call_item_as_the_general_path() -> None:
    golds = _shared_items()
    assert len(golds) > 2000
    compared = 0
    for n, gold in enumerate(golds):
        outputs = _more_outputs(gold) if n % 4 == 0 else _perturbed(gold)[:12]
        compared += _same_on_both_paths(gold, outputs)
    assert compared > 25_000


def _rule_cases() -> list[GoldCase]:
    """Every rule kind and option, open and pattern schemas, a schema only jsonschema checks, required_args,
    a call's own rules, alternatives, defaults, messages a stale value can come from, parallel calls."""
    string, integer, number = {"type": "string"}, {"type": "integer"}, {"type": "number"}
    props: dict[str, dict[str, Any]] = {"a": string, "n": number, "i": integer, "d": string, "t": string, "p": string, "r": string,
             "s": string, "m": string, "c": string, "o": string, "x": {"type": "string", "default": "dflt"},
             "e": {"type": "string", "enum": ["red", "blue"]}, "lst": {"type": "array", "items": integer}}
    simple = tool("f", ("a", "n"), **props)
    open_schema = ToolSpec(name="f", parameters={"type": "object", "properties": props, "required": ["a"],
                                                 "additionalProperties": True})
    patterned = ToolSpec(name="f", parameters={"type": "object", "properties": props, "required": ["a"],
                                               "patternProperties": {"^zz_": {}}})
    hard = ToolSpec(name="f", parameters={"type": "object", "properties": {**props, "n": {"type": "number",
                                          "minimum": 0}}, "required": ["a"], "additionalProperties": False})
    rules = {"a": ArgRule(match="ci"), "n": ArgRule(match="number", tolerance=0.5),
             "d": ArgRule(match="date"), "t": ArgRule(match="datetime", tolerance=60),
             "p": ArgRule(match="phone", region="US"), "r": ArgRule(match="regex", pattern=r"R-\d+"),
             "s": ArgRule(match="semantic", intent="the same place"), "m": ArgRule(match="currency", currency="USD"),
             "c": ArgRule(match="one_of", accept=("copper", "aluminum")), "o": ArgRule(optional=True),
             "i": ArgRule(match="any"), "lst": ArgRule(match="normalized", accept=([1, 2],)),
             "zz_extra": ArgRule(match="one_of", accept=("ok",), optional=True)}
    gold_args: dict[str, Any] = {"a": "Boston", "n": 10, "d": "2026-03-10", "t": "2026-03-10T15:00:00Z",
                                 "p": "+1 415 555 0123", "r": "R-1", "s": "the park", "m": "$100",
                                 "c": "copper", "o": "x", "i": 3, "e": "red", "lst": [1]}
    messages = (Message(role="system", content="Today is 2026-03-09."),
                user("Book it for Boston, the park, R-1, copper, red. Call +1 415 555 0123."),
                user("Sorry, actually I meant Boston, not Bostn; switch to R-1 instead of R-9."))
    made: list[GoldCase] = []
    for n, schema in enumerate((simple, open_schema, patterned, hard)):
        made.append(case(calls(call("f", **gold_args)), id=f"rules{n}", tools=(schema,), arg_rules={"f": rules},
                         messages=messages, reference_time="2026-03-09T12:00:00Z", tz="America/New_York"))
    made.append(case(calls(call("f", a="Boston", n=1)), id="required", tools=(simple,),
                     required_args={"f": ("a", "n", "zz_needed", "zz_needed")}))
    own = Call(name="f", arguments={"a": "x", "c": "copper"},
               arg_rules={"c": ArgRule(match="normalized", accept=("Cu",)), "o": ArgRule(optional=True)})
    made.append(case(calls(own, call("f", a="y", c="tin"), call("g", q=1)), id="parallel",
                     tools=(simple, tool("g", ("q",), q=integer)), arg_rules={"f": {"a": ArgRule(match="normalized")}}))
    made.append(case(calls(call("f", a="x", n=1)), id="alternatives", tools=(simple,),
                     alternatives=(Answer(behavior="call", calls=(call("f", a="y", n=2),)),
                                   Answer(behavior="call", calls=(call("f"),), tool_only=True))))
    made.append(case(calls(call("unoffered", a=1)), id="unoffered", tools=(simple,)))
    made.append(case(calls(call("f", a="x", n=1)), id="no tools", tools=()))
    made.append(case(calls(call("search_orders", customer_id="C-1042", status="open")), id="grounded"))
    return made


def _rule_outputs(gold: GoldCase) -> list[tuple[RunCall, ...]]:
    found = _more_outputs(gold)
    want = gold.expected.calls[0]
    rest = tuple(RunCall(name=c.name, arguments=dict(c.arguments)) for c in gold.expected.calls[1:])
    variants: list[dict[str, Any]] = [
        {"a": "boston "}, {"a": "Bostn"}, {"n": "10.4"}, {"n": 11}, {"n": -1}, {"d": "March 10, 2026"},
        {"d": "tomorrow"}, {"t": "2026-03-10T10:00:30-05:00"}, {"p": "(415) 555-0123"}, {"p": "555"},
        {"r": "R-22"}, {"r": "R-9"}, {"s": "a park"}, {"m": "100 USD"}, {"m": "EUR 100"}, {"c": "aluminum"},
        {"c": "Cu"}, {"c": "tin"}, {"x": "dflt"}, {"x": "other"}, {"e": "green"}, {"lst": [1, 2]}, {"lst": ["1"]},
        {"zz_extra": "ok"}, {"zz_extra": "no"}, {"zz_": 1}, {"i": None}, {"customer_id": "C-9999"},
        {"status": "closed"}, {"q": 2}, *({"a": value} for value in TRICKY), *({"n": value} for value in TRICKY)]
    for change in variants:
        found.append((RunCall(name=want.name, arguments={**want.arguments, **change}), *rest))
        found.append((*rest, RunCall(name=want.name, arguments={**want.arguments, **change})))
    found.append((RunCall(name=want.name, arguments=json.dumps(want.arguments)[:-1]),))
    found.append((RunCall(name="g", arguments={"q": 1}), RunCall(name=want.name, arguments=dict(want.arguments))))
    return found


def test_compiled_checks_score_every_rule_kind_and_schema_shape_as_the_general_path() -> None:
    compared = sum(_same_on_both_paths(gold, _rule_outputs(gold)) for gold in _rule_cases())
    assert compared > 1000


def test_a_call_that_matches_under_its_rules_but_is_ungrounded_leaves_no_error_behind() -> None:
    """The clean check is one shared object: the grounding errors of one result must never be added to it
    (they would then appear in every later result whose arguments check clean)."""
    orders = (tool("get_order", ("order_id",), order_id={"type": "string"}),)
    ungrounded = case(calls(call("get_order", order_id="C-1")), id="u", tools=orders,
                      arg_rules={"get_order": {"order_id": ArgRule(match="normalized")}}, messages=(user("my order?"),))
    made = RunRecord(case_id="u", calls=(RunCall(name="get_order", arguments={"order_id": "C1"}),))
    first = score_case(ungrounded, made)
    assert [e.code for e in first.errors] == ["ungrounded_value"]
    clean = case(calls(call("get_order", order_id="O-7")), id="c", tools=orders,
                 arg_rules={"get_order": {"order_id": ArgRule(match="ci")}}, messages=(user("order O-7"),))
    later = score_case(clean, RunRecord(case_id="c", calls=(RunCall(name="get_order", arguments={"order_id": "o-7"}),)))
    assert later.status == "pass" and later.errors == ()
    assert score_case(ungrounded, made).model_dump() == first.model_dump()


def _as_trajectory(gold: GoldCase, order: str) -> GoldCase:
    return gold.model_copy(update={"kind": "trajectory", "order": order, "alternatives": ()})


def _trajectory_run(gold: GoldCase, made: tuple[RunCall, ...]) -> RunRecord:
    from scorer.model import FunctionCall, ToolCallRef

    messages: list[Message] = list(gold.messages)
    for i, got in enumerate(made):
        arguments = got.arguments if isinstance(got.arguments, str) else json.dumps(got.arguments)
        messages.append(Message(role="assistant", tool_calls=(
            ToolCallRef(id=f"call{i}", function=FunctionCall(name=got.name, arguments=arguments)),)))
        messages.append(Message(role="tool", tool_call_id=f"call{i}", content=json.dumps({"ok": i})))
    return RunRecord(case_id=gold.id, messages=tuple(messages))


def test_compiled_checks_score_trajectories_as_the_general_path() -> None:
    """Trajectory steps are checked by ``check_pair`` too: the real BFCL items and the rule cases, read as
    trajectories in each order mode, with the same outputs as above."""
    compared = 0
    for turn in [*_cases(), *_rule_cases()]:
        if turn.expected.behavior != "call":
            continue
        for order in ("strict", "unordered", "subset", "superset"):
            gold = GoldCase.model_validate(_as_trajectory(turn, order).model_dump())
            compiled, general = CaseFacts(gold), CaseFacts(gold, compiled=False)
            for made in _more_outputs(turn)[:25]:
                run = _trajectory_run(gold, made)
                fast, reference = score_case(gold, run, facts=compiled), score_case(gold, run, facts=general)
                assert fast.model_dump_json() == reference.model_dump_json(), (gold.id, order, made)
                compared += 1
    assert compared > 500
