"""Trajectory gold cases from tau-bench and tau2-bench tasks (shared by both importers).

A tau task's gold is a list of actions (tool calls). Neither benchmark compares the agent's call
sequence with it: tau-bench replays the actions on a fresh database and compares the final state with
the agent's; tau2-bench does the same and also checks that each gold action occurs somewhere in the
run. So read-only calls (searches, ``think``, ``calculate``) in between are free, and so is the order of
independent steps. The case therefore uses:

- ``order: "superset"`` -- every gold action must occur (with its arguments), extra calls are allowed.
  ``strict`` would demand the exact sequence: of the 84 real gpt-4o airline runs tau-bench rewarded,
  only 13 would pass, against 59 with the mapping here (the rest skip a step that changes nothing,
  such as a lookup or the hand-off to a human, or attempt a write the environment refuses).
- ``forbidden`` -- the domain's database-changing tools that the gold never uses (an extra
  cancellation changes the final state, so tau-bench fails the run). With it, 113 of the 116 runs
  tau-bench failed also fail here; without it only 97 do. Only the airline and retail tools are
  known; other domains get no forbidden calls.
- ``arg_rules`` ``any`` for free text the benchmarks never compare (``transfer_to_human_agents``'s
  ``summary``) and for arguments a tau2 action leaves out of ``compare_args``.
- A task without actions (the agent should change nothing) gets ``behavior: no_call`` with the
  forbidden list, so reads stay allowed and writes are errors.
- ``tools`` carry MCP-style ``annotations`` (``readOnlyHint``) in the known domains, from the same
  read/write split, so reading an order again after a write to it is a confirmation, not a redundant call.
- ``rationale`` carries the user's goal (the instruction the user simulator followed) and the facts
  the agent must tell the user (tau-bench ``outputs``), so a reviewer sees what the task was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from scorer.errors import InvalidRecord
from scorer.importers.common import need_dict, need_list, need_str
from scorer.model import Answer, ArgRule, Call, ForbiddenCall, GoldCase, Provenance, Split, ToolSpec

WRITE_TOOLS: Mapping[str, frozenset[str]] = {
    "airline": frozenset({
        "book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
        "update_reservation_flights", "update_reservation_passengers",
    }),
    "retail": frozenset({
        "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
        "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address",
        "return_delivered_order_items",
    }),
}
"""Tools that change the database, per domain (from the benchmarks' tool definitions)."""

FREE_TEXT_ARGS: Mapping[str, frozenset[str]] = {"transfer_to_human_agents": frozenset({"summary"})}
"""Arguments the benchmarks never compare: the model writes its own words."""

_CURRENT_TIME = re.compile(r"current time is (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2})?) EST")


def policy_time(policy: str | None) -> str | None:
    """The in-world "now" a tau policy states (``The current time is 2024-05-15 15:00:00 EST``), as an
    ISO datetime with the fixed EST offset -05:00 the policy names."""
    match = _CURRENT_TIME.search(policy or "")
    if not match:
        return None
    clock = match.group(2) if match.group(2).count(":") == 2 else match.group(2) + ":00"
    return f"{match.group(1)}T{clock}-05:00"


def action_call(raw: Any, where: str, *, args_key: str) -> Call:
    """One gold action ``{"name", <args_key>: {...}}`` as a call."""
    action = need_dict(raw, where)
    arguments = action.get(args_key) or {}
    return Call(name=need_str(action.get("name"), f"{where}.name"),
                arguments=need_dict(arguments, f"{where}.{args_key}"))


def trajectory_case(*, case_id: str, benchmark: str, domain: str, calls: Sequence[Call],
                    tools: Sequence[ToolSpec], instruction: str | None, split: Split,
                    outputs: Sequence[str] = (), uncompared: Mapping[str, frozenset[str]] | None = None,
                    extra_tags: Sequence[str] = ()) -> GoldCase:
    """The trajectory case for one task (see the module docstring for each choice)."""
    used = {call.name for call in calls}
    loose: dict[str, set[str]] = {}
    for source in (FREE_TEXT_ARGS, uncompared or {}):
        for tool, args in source.items():
            if tool in used:
                loose.setdefault(tool, set()).update(args)
    arg_rules = {tool: {arg: ArgRule(match="any") for arg in sorted(args)} for tool, args in sorted(loose.items())}
    forbidden = tuple(
        ForbiddenCall(name=tool, reason=f"changes the {domain} database and the gold never calls it")
        for tool in sorted(WRITE_TOOLS.get(domain, frozenset()) - used))
    expected = Answer(behavior="call", calls=tuple(calls)) if calls else Answer(behavior="no_call")
    rationale = [f"{benchmark} {domain} task: the gold actions whose replay gives the expected final state."]
    if not calls:
        rationale[0] = f"{benchmark} {domain} task: the gold changes nothing; the agent must not change the database."
    if instruction:
        rationale.append(f"User goal: {instruction.strip()}")
    if outputs:
        rationale.append("The agent must tell the user: " + "; ".join(outputs))
    return GoldCase(
        id=case_id, conversation_id=None, split=split, kind="trajectory", tools=annotated(tools, domain),
        expected=expected, arg_rules=arg_rules, order="superset", forbidden=forbidden,
        tags=(benchmark, domain, *extra_tags) + (() if calls else ("no_action",)),
        rationale="\n".join(rationale), provenance=Provenance(source=benchmark),
    )


def annotated(tools: Sequence[ToolSpec], domain: str) -> tuple[ToolSpec, ...]:
    """The tools with ``readOnlyHint`` from the domain's write tools (tools already annotated, and the
    tools of unknown domains, as they are). The same objects for the same tools of a domain (every run of a
    file): what is learnt of a tool list by identity (its canonical text, its compiled schemas) holds for all."""
    writes = WRITE_TOOLS.get(domain)
    if writes is None:
        return tuple(tools)
    key = (domain, *map(id, tools))
    hit = _ANNOTATED.get(key)
    if hit is None:  # the entry holds the tools it was made from: no other object takes their ids meanwhile
        if len(_ANNOTATED) >= 64:
            _ANNOTATED.clear()
        hit = _ANNOTATED[key] = (tuple(tools), tuple(
            t if t.annotations else t.model_copy(update={"annotations": {"readOnlyHint": t.name not in writes}})
            for t in tools))
    return hit[1]


_ANNOTATED: dict[tuple[Any, ...], tuple[tuple[ToolSpec, ...], tuple[ToolSpec, ...]]] = {}


def string_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = need_list(value, where)
    if not all(isinstance(x, str) for x in items):
        raise InvalidRecord(f"{where} should be a list of strings")
    return tuple(items)
