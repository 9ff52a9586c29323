"""A gold value that fails its own tool schema: flagged by lint (and at import), never held against an
agent that matches it (issue 14)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from labeler.cli import cli
from scorer.api import score_case
from scorer.codes import ErrorCode
from scorer.formats import dumps_record
from scorer.hygiene import case_problems
from scorer.model import Answer, ArgRule, ToolSpec
from tests.scorer.kit import call, calls, case, run, user

TIER = ToolSpec(name="set_tier", parameters={
    "type": "object", "required": ["user_id", "tier", "reason"],
    "properties": {"user_id": {"type": "string"}, "tier": {"type": "string", "enum": ["Bronze", "Silver"]},
                   "reason": {"type": "string"}, "days": {"type": "integer"}}})


def tier_case(**fields: object) -> object:
    # "bronze" breaks the enum, days "30" the type, and the gold leaves out the required reason
    return case(calls(call("set_tier", user_id="U-1", tier="bronze", days="30")), tools=(TIER,),
                messages=(user("Put U-1 on bronze for 30 days (not U-2)."),), **fields)


def codes(gold: object, **args: object) -> list[ErrorCode]:
    return [e.code for e in score_case(gold, run(("set_tier", args))).errors]  # type: ignore[arg-type]


def test_matching_a_gold_value_that_breaks_the_schema_does_not_fail_the_agent() -> None:
    gold = tier_case()
    assert codes(gold, user_id="U-1", tier="bronze", days="30") == []  # identical to the gold call
    # Matched under its rule (ci), the enum the gold itself breaks is not held against the agent.
    loose = tier_case(arg_rules={"set_tier": {"tier": ArgRule(match="ci")}})
    assert codes(loose, user_id="U-1", tier="Bronze ", days="30") == []
    assert codes(loose, user_id="U-1", tier="BRONZE", days="30") == []
    # ...but every other error still counts: a wrong user with the gold's own breakages is one error.
    assert codes(gold, user_id="U-2", tier="bronze", days="30") == [ErrorCode.WRONG_ARG_VALUE]


def test_a_value_the_gold_does_not_vouch_for_still_meets_the_schema() -> None:
    gold = tier_case(alternatives=(Answer(behavior="call", calls=(call("set_tier", user_id="U-1", tier="Silver",
                                                                         reason="upgrade", days=30),)),))
    assert codes(gold, user_id="U-1", tier="Gold", days="30") == [ErrorCode.SCHEMA_TYPE_ERROR]
    assert codes(gold, user_id="U-1", tier="bronze", days="thirty") == [ErrorCode.SCHEMA_TYPE_ERROR]
    # leaving out the reason the gold left out is the gold's omission, not the agent's
    assert codes(gold, user_id="U-1", tier="bronze", days="30") == []


def test_lint_names_each_breakage_in_the_answers_and_the_accepted_values() -> None:
    gold = tier_case(arg_rules={"set_tier": {"tier": ArgRule(match="one_of", accept=("Silver", "gold"))}})
    found = [(p.code, p.arg, p.message) for p in case_problems(gold)]  # type: ignore[arg-type]
    assert found == [
        ("schema_violation", "days", "`set_tier.days`: '30' is not of type 'integer'"),
        ("schema_violation", "tier", "`set_tier.tier`: 'bronze' is not one of ['Bronze', 'Silver']"),
        ("missing_required_value", "reason", "required `set_tier.reason` has no value"),
        ("schema_violation", "tier", "`set_tier.tier` accepts 'gold': 'gold' is not one of ['Bronze', 'Silver']"),
    ]


def test_import_and_lint_flag_gold_that_fails_its_own_schema(tmp_path: Path) -> None:
    good = case(calls(call("set_tier", user_id="U-1", tier="Bronze", reason="asked")), id="good", tools=(TIER,),
                messages=(user("Put U-1 on Bronze, they asked."),))
    path = tmp_path / "gold.jsonl"
    path.write_text(dumps_record(tier_case(id="broken")) + "\n" + dumps_record(good) + "\n", encoding="utf-8")
    imported = CliRunner().invoke(cli, ["import", str(path), "--db", str(tmp_path / "t.db")])
    assert imported.exit_code == 0
    assert imported.stderr == (
        f"{path}:1: gold case broken: `set_tier.days`: '30' is not of type 'integer' (and 1 more); an agent "
        "matching these values is not failed for them, but fix the gold (toolgold lint)\n"
        "1 of 2 gold cases fail their own tool schema\n")
    linted = CliRunner().invoke(cli, ["lint", str(path)])
    assert linted.exit_code == 1
    assert f"{path}: broken: schema_violation: `set_tier.tier`: 'bronze' is not one of ['Bronze', 'Silver']" in (
        linted.stdout)
