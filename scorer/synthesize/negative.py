"""Negative branch of an ordered task: the check before an action comes back negative; the action is forbidden.

A *check* is a call whose name starts with a reading verb (``check_inventory``, ``get_order_details``,
``QueryCalendar``); an *action* one whose name has a writing verb (``place_order``, ``CreateEvent``). The
pattern is a check followed by an action about the same thing: they share an argument value, or the action
uses a value from the check's result.

- In a turn case the check already ran in the context: its result is replaced by a negative one, and the
  text of the assistant's messages from the check on is dropped (it was written for the real result).
- In a trajectory case the check is a step of the gold: the context gets that call with a negative result.

The candidate is a trajectory case: nothing is required (``no_call`` with order ``superset``, so the agent
may look further or explain), and the action is ``forbidden``. The negative result follows the convention
the tool's real result used: ToolTalk's ``{"response": null, "exception": ...}``, a JSON object whose
availability flags turn false, ``{"error": ...}`` for other JSON, and ``Error: ...`` text otherwise (as
tau-bench tools answer), so the scorer's own notion of a failed result agrees.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from scorer import canonical
from scorer.grounding import scalar_texts
from scorer.model import (
    Answer,
    Call,
    ForbiddenCall,
    FunctionCall,
    GoldCase,
    Message,
    ToolCallRef,
)
from scorer.synthesize.common import derive, rng_for, words
from scorer.synthesize.model import Candidate, NotApplicable

READ_VERBS = frozenset({"check", "get", "search", "find", "list", "lookup", "query", "fetch", "verify", "validate",
                        "read", "retrieve", "show", "view", "is", "has", "can", "count", "describe", "calculate"})
WRITE_VERBS = frozenset({
    "place", "book", "create", "add", "update", "modify", "delete", "remove", "cancel", "send", "issue", "transfer",
    "pay", "refund", "register", "change", "set", "reset", "submit", "exchange", "return", "order", "buy",
    "purchase", "schedule", "post", "approve", "reserve", "upgrade", "apply", "charge", "grant", "revoke",
    "assign", "edit", "write", "insert", "enable", "disable", "toggle", "share", "invite", "close", "open"})
_FLAG_WORDS = frozenset({"available", "availability", "in_stock", "instock", "exists", "found", "valid", "eligible",
                         "ok", "allowed", "possible", "free", "open", "success", "succeeded", "approved"})
_CREDENTIAL = re.compile(r"token|session|auth|api_?key|password|secret|credential", re.IGNORECASE)
SYNTHETIC_CALL_ID = "synthetic-check"


def is_check(name: str) -> bool:
    found = words(name)
    return bool(found) and found[0] in READ_VERBS


def is_action(name: str) -> bool:
    found = words(name)
    return bool(found) and found[0] not in READ_VERBS and any(w in WRITE_VERBS for w in found)


def negative_result(original: str | None, check: str) -> str:
    """A negative result for ``check`` in the shape of ``original`` (see the module docstring)."""
    sentence = f"{check} found no matching record"
    try:
        value = json.loads(original) if original else None
    except ValueError:
        value = None
    if isinstance(value, dict):
        if "response" in value and "exception" in value:
            return canonical.dumps({"response": None, "exception": sentence})
        flags = [k for k, v in value.items() if v is True and (k.casefold() in _FLAG_WORDS
                                                                or k.casefold().startswith(("is_", "has_", "can_")))]
        if flags:
            return canonical.dumps({**value, **dict.fromkeys(flags, False)})
        return canonical.dumps({"error": sentence})
    return f"Error: {sentence}"


@dataclass(frozen=True)
class _Pattern:
    check: Call
    action: Call
    shared: dict[str, Any]
    """The action's arguments whose values the check also used."""
    result_at: int | None = None
    """In a turn case: the index of the check's result message."""


def _texts(args: dict[str, Any]) -> set[str]:
    return {t.casefold() for v in args.values() for t in scalar_texts(v)}


def _shared(check: Call, action: Call) -> dict[str, Any]:
    """The action's arguments whose values the check used too (credentials aside: every call shares them)."""
    seen = _texts(_without_credentials(check.arguments))
    return {k: v for k, v in _without_credentials(action.arguments).items()
            if (texts := {t.casefold() for t in scalar_texts(v)}) and texts <= seen}


def _without_credentials(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if not _CREDENTIAL.search(k)}


def _turn_patterns(case: GoldCase) -> Iterator[_Pattern]:
    actions = [c for c in case.expected.calls if is_action(c.name)]
    results = {m.tool_call_id: i for i, m in enumerate(case.messages) if m.role == "tool"}
    for message in case.messages:
        for ref in message.tool_calls:
            if not is_check(ref.function.name) or ref.id not in results:
                continue
            args = ref.parsed_arguments()
            check = Call(name=ref.function.name, arguments=args if isinstance(args, dict) else {})
            result = (case.messages[results[ref.id]].content or "").casefold()
            for action in actions:
                shared = _shared(check, action)
                from_result = any(t in result for t in _texts(_without_credentials(action.arguments)) if len(t) >= 4)
                if shared or from_result:
                    yield _Pattern(check, action, shared, results[ref.id])


def _trajectory_patterns(case: GoldCase) -> Iterator[_Pattern]:
    calls = case.expected.calls
    for j, action in enumerate(calls):
        if not is_action(action.name):
            continue
        for i in range(j):
            if is_check(calls[i].name) and (shared := _shared(calls[i], action)):
                yield _Pattern(calls[i], action, shared)


def _pick(patterns: list[_Pattern], rng: random.Random) -> _Pattern:
    return patterns[rng.randrange(len(patterns))]


def negative_branch(case: GoldCase, *, seed: int) -> Candidate:
    """The case with its check's result negative and the action forbidden; raises ``NotApplicable``."""
    if case.expected.behavior != "call":
        raise NotApplicable(f"{case.id}: no check-before-action pattern (the gold expects no action)")
    patterns = list(_turn_patterns(case) if case.kind == "turn" else _trajectory_patterns(case))
    if not patterns:
        tools = ", ".join(c.name for c in case.expected.calls)
        raise NotApplicable(f"{case.id}: no check-before-action pattern (no reading call such as check_* or get_* "
                            f"before an action on the same thing among: {tools})")
    rng = rng_for(seed, "negative_branch", case.id)
    found = _pick(patterns, rng)
    check, action = found.check.name, found.action.name
    if found.result_at is not None:
        at = found.result_at
        start = next(i for i, m in enumerate(case.messages)
                     if any(r.id == case.messages[at].tool_call_id for r in m.tool_calls))
        messages = tuple(
            m.model_copy(update={"content": negative_result(m.content, check)}) if i == at
            else m.model_copy(update={"content": None}) if i >= start and m.role == "assistant"
            else m
            for i, m in enumerate(case.messages))
    else:
        ref = ToolCallRef(id=SYNTHETIC_CALL_ID,
                          function=FunctionCall(name=check, arguments=canonical.dumps(found.check.arguments)))
        messages = (*case.messages, Message(role="assistant", tool_calls=(ref,)),
                    Message(role="tool", tool_call_id=SYNTHETIC_CALL_ID, content=negative_result(None, check)))
    reason = f"the check {check} came back negative"
    forbidden = ForbiddenCall(name=action, arguments=found.shared or None, reason=reason)
    return derive(case, "negative_branch", seed=seed, kind="trajectory", turn=None, messages=messages,
                  expected=Answer(behavior="no_call"), alternatives=(), arg_rules={}, required_args=None,
                  order="superset", after=(), forbidden=(*case.forbidden, forbidden),
                  change=f"{check} now answers negatively, so {action} must not be called")


__all__ = ["READ_VERBS", "WRITE_VERBS", "is_action", "is_check", "negative_branch", "negative_result"]
