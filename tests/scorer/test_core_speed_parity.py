"""The scoring core's shortcuts decide exactly what the plain computation decides, on the real BFCL items.

- ``CaseFacts.match`` and ``CaseFacts.problem`` remember verdicts and schema problems per rule (or schema)
  and scalar value, in cases with several expected calls or answers; a remembered answer is never served for a value a matcher or schema treats
  differently (``1``, ``1.0`` and ``True``; ``0.0`` and ``-0.0``; NaN).
- ``CaseFacts.spec``, ``required`` and ``has_from_call`` answer as ``GoldCase.tool``, ``required_for`` and
  a scan of the rules.
- ``score_turn`` orders calls by name until an exact answer is ruled out; ``canonical_order`` skips the
  JSON tie-break when names are distinct. Neither may change a result.
- ``scorer.matchers`` imports phonenumbers only when a phone is compared.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from typing import Any

from scorer import canonical
from scorer.api import score_case
from scorer.facts import CaseFacts
from scorer.matchers import ABSENT, Verdict, match_value
from scorer.model import ArgRule, GoldCase, RunCall, RunRecord
from scorer.schemas import ArgumentSchema, SchemaProblem
from scorer.turn import canonical_order
from tests.conftest import REPO, pure_core_only
from tests.scorer.kit import call, calls, case, tool
from tests.scorer.test_trusted_results import _cases, _outputs

TRICKY: tuple[Any, ...] = (1, 1.0, True, 0, 0.0, -0.0, False, None, math.nan, math.inf, "1", "1.0", "", " 1 ",
                           "New York", "new york", [1], {"a": 1})


class Unmemoized(CaseFacts):
    """The reference: every verdict and schema problem computed afresh."""

    __slots__ = ()

    def match(self, rule: ArgRule, gold: Any, actual: Any) -> Verdict:
        return match_value(rule, gold, actual, self.case.reference_time)

    def problem(self, schema: ArgumentSchema, arg: str, value: Any) -> SchemaProblem | None:
        return schema.problem(arg, value)


def _perturbed(gold: GoldCase) -> list[tuple[RunCall, ...]]:
    """The usual outputs, and each expected call's first argument set to each tricky value in turn (the
    other calls left right), so that one case asks about many values of one key."""
    found = _outputs(gold)
    for index, want in enumerate(gold.expected.calls):
        if not want.arguments:
            continue
        key = sorted(want.arguments)[0]
        for value in TRICKY:
            made = [RunCall(name=c.name, arguments=dict(c.arguments)) for c in gold.expected.calls]
            made[index] = RunCall(name=want.name, arguments={**want.arguments, key: value})
            found.append(tuple(made))
    return found


def _result_json(gold: GoldCase, made: tuple[RunCall, ...], facts: CaseFacts) -> str:
    return score_case(gold, RunRecord(case_id=gold.id, calls=made), facts=facts).model_dump_json()


@pure_core_only
def test_remembered_checks_score_every_real_item_as_checking_afresh() -> None:
    compared = 0
    for gold in _cases():
        facts, reference = CaseFacts(gold), Unmemoized(gold)  # one each per case: the memo fills up
        for made in _perturbed(gold):
            assert _result_json(gold, made, facts) == _result_json(gold, made, reference), gold.id
            compared += 1
    assert compared > 300


def test_a_remembered_verdict_is_never_served_for_a_value_read_differently() -> None:
    gold = case(calls(call("f", x=1), call("f", x=2)), tools=(tool("f", x={"type": "integer"}),))  # memoized
    rules = [*(ArgRule(match=m) for m in ("exact", "normalized", "ci", "number")),
             ArgRule(match="semantic", intent="the same count"), ArgRule(match="regex", pattern=r"-?\d+(\.0)?"),
             ArgRule(match="one_of", accept=[1.0, "1"]), ArgRule(match="number", tolerance=0.5)]
    rng = random.Random(15)
    for rule in rules:
        facts = CaseFacts(gold)
        asked = [(g, a) for g in (ABSENT, *TRICKY) for a in TRICKY]
        for g, a in asked + rng.sample(asked, len(asked)):  # again, in another order, from a warm memo
            assert facts.match(rule, g, a) == match_value(rule, g, a, None), (rule.match, g, a)
    schema_facts = CaseFacts(gold)
    schema = schema_facts.schema("f")
    assert schema is not None
    for value in [*TRICKY, *TRICKY[::-1]]:
        assert schema_facts.problem(schema, "x", value) == schema.problem("x", value), value


def test_case_lookups_answer_as_the_gold_case_methods() -> None:
    cases = _cases()
    with_rules = case(calls(call("find", q="a"), call("refund", order_id="O-1")),
                      arg_rules={"refund": {"order_id": ArgRule(match="from_call", from_call=0)}},
                      required_args={"refund": ["order_id", "order_id", "reason"]},
                      tools=(tool("find", ("q",), q={"type": "string"}),
                             tool("refund", ("order_id",), order_id={"type": "string"})))
    own = case(calls(call("find", q="a"), call("find", q="b").model_copy(
        update={"arg_rules": {"q": ArgRule(match="from_call", from_call=0)}})),
        tools=(tool("find", ("q",), q={"type": "string"}),))
    checked = 0
    for gold in [*cases, with_rules, own]:
        facts = CaseFacts(gold)
        names = {t.name for t in gold.tools} | {c.name for c in gold.expected.calls} | {"zz_not_offered"}
        for name in sorted(names):
            assert facts.spec(name) is gold.tool(name)
            assert facts.required(name) == gold.required_for(name)
            assert facts.from_call_rules(name) == tuple(
                (k, r.from_call) for k, r in sorted(gold.arg_rules.get(name, {}).items())
                if r.match == "from_call" and r.from_call is not None)
        for want in gold.expected.calls:
            scanned = any(r.match == "from_call" for r in {**gold.arg_rules.get(want.name, {}),
                                                           **want.arg_rules}.values())
            assert facts.has_from_call(want) is scanned
            checked += scanned
    assert checked == 2  # both kinds of from_call rule were seen


def test_the_order_of_the_agents_calls_never_changes_a_result() -> None:
    rng = random.Random(20)
    compared = 0
    for gold in _cases():
        if len(gold.expected.calls) < 2:
            continue
        for made in _perturbed(gold)[:6]:
            shown = {_result_json(gold, tuple(rng.sample(made, len(made))), CaseFacts(gold)) for _ in range(3)}
            assert len(shown) == 1, gold.id
            reference = tuple(sorted(made, key=lambda c: (c.name, canonical.dumps(c.arguments))))
            assert canonical_order(made) == reference
            compared += 1
    assert compared > 20


def test_scoring_without_a_phone_rule_does_not_import_phonenumbers() -> None:
    probe = ("import json, sys\n"
             "from scorer.api import score_case\n"
             "from scorer.model import GoldCase, RunRecord\n"
             "gold = GoldCase.model_validate(json.loads(sys.argv[1]))\n"
             "run = RunRecord(case_id=gold.id, calls=[{'name': 'f', 'arguments': {'x': 4}}])\n"
             "assert score_case(gold, run).status == 'fail'\n"
             "print('phonenumbers' in sys.modules)\n")
    gold = case(calls(call("f", x=3)), tools=(tool("f", x={"type": "integer"}),))
    done = subprocess.run([sys.executable, "-c", probe, gold.model_dump_json()], capture_output=True, text=True,
                          cwd=REPO, timeout=120, check=True)
    assert done.stdout.strip() == "False"
    phone = case(calls(call("f", x="+1 415 555 0123")), arg_rules={"f": {"x": ArgRule(match="phone", region="US")}})
    made = RunRecord(case_id=phone.id, calls=(RunCall(name="f", arguments={"x": "(415) 555-0123"}),))
    assert score_case(phone, made).status == "pass"  # imported where a phone is compared


def test_a_note_shows_a_scalar_as_its_canonical_json() -> None:
    from scorer.matchers import show

    for value in (0, -7, 10**30, True, False, None, 5.0, -0.0, 2.5, 1e16, math.inf):
        assert show(value) == json.dumps(canonical.normalize(value), ensure_ascii=False)
    assert show(10**100) == str(10**100)[:79] + "…"


def test_a_call_whose_errors_no_checker_could_find_needs_no_look_at_the_schemas_properties() -> None:
    """A made-up parameter or a dropped required one is an error of a key, and a wrong value of the right
    type under a property the fast checker reads has no problem in any checker: whether the schema takes the
    fast checker (a walk of every property; jsonschema imported when one needs it) decides only how a problem
    is found and worded. A schema whose own keywords say nothing of the arguments as a whole is not walked
    then."""
    probe = ("import json, sys\n"
             "from scorer.api import score_case\n"
             "from scorer.model import GoldCase, RunRecord\n"
             "gold = GoldCase.model_validate(json.loads(sys.argv[1]))\n"
             "notes = []\n"
             "for args in json.loads(sys.argv[2]):\n"
             "    result = score_case(gold, RunRecord(case_id=gold.id, calls=[{'name': 'f', 'arguments': args}]))\n"
             "    notes.append([e.note for e in result.errors])\n"
             "print(json.dumps(['jsonschema' in sys.modules, notes]))\n")
    # (``minimum`` is beyond the fast checker, yet a schema surely valid without jsonschema: reading the gold
    # imports none)
    rich = tool("f", ("code",), code={"type": "string"}, n={"type": "integer", "minimum": 0})
    gold = case(calls(call("f", code="AB", n=1)), tools=(rich,))
    made_up, dropped = [{"code": "AB", "n": 1, "mood": "calm"}], [{"n": 1}]
    # and a wrong value the fast checker reads and finds nothing in: no checker could find a problem with it
    wrong_but_valid = [{"code": "CD", "n": 1}]

    def run(outputs: list[dict[str, Any]]) -> list[Any]:
        done = subprocess.run([sys.executable, "-c", probe, gold.model_dump_json(), json.dumps(outputs)],
                              capture_output=True, text=True, cwd=REPO, timeout=120, check=True)
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    assert run(made_up + dropped + wrong_but_valid) == [False, [
        ["called f with mood 'calm', which is not a parameter of f"],
        ["called f without required code; expected 'AB' (exact)"],
        ["called f with code 'CD'; expected 'AB' (exact)"]]]
    # a value in question is checked by the schema, through jsonschema where the fast checker cannot
    imported, notes = run([{"code": "AB", "n": -1}])
    assert imported and notes[0][0].endswith("-1 is less than the minimum of 0"), notes
