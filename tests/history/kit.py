"""A support-desk gold set and agents that make chosen mistakes, for run-history tests.

Runs are generated the way a real agent's are: an agent function answers each case's context and tools,
``scorer.api.run_record`` turns the answer into a run record, and the records are scored with the Python
API and saved (``score_and_save``). Nothing is inserted as a ready-made aggregate.

Each agent answers correctly except where its ``faults`` say otherwise (case id -> fault):

- ``wrong_tool:NAME``: calls NAME with the right arguments
- ``drop_arg``: calls the right tool without its required argument
- ``wrong_value``: calls the right tool with another identifier (not in the conversation)
- ``no_call``: answers in text, no call
- ``call``: (on a no-call case) calls get_order anyway
- ``fabricate``: (on an ask-the-user case) books a table with an invented date and phone
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from labeler.store import RunInfo, Store, score_and_save
from labeler.store.history import RunMeta
from scorer.api import run_record
from scorer.model import Answer, Call, GoldCase, Message, Provenance, RunRecord, ToolSpec
from tests.scorer.kit import TOOLS

TOOL = {t.name: t for t in TOOLS}
PER_TOOL = 12

# tool -> (argument, value pattern, user message pattern)
REQUESTS: dict[str, tuple[str, str, str]] = {
    "search_orders": ("customer_id", "C-1{n:03d}", "Show me the orders of customer {v}."),
    "get_order": ("order_id", "O-2{n:03d}", "Where is my order {v}?"),
    "update_user_profile": ("user_id", "U-3{n:03d}", "Please change the display name on account {v} to Sam."),
    "get_shipping_estimate": ("zip_code", "9{n:04d}", "How long does shipping to {v} take?"),
    "check_inventory": ("sku", "SKU-4{n:03d}", "Is {v} in stock?"),
}
CONFUSABLE = {"update_user_profile": "update_user", "search_orders": "get_order", "get_order": "search_orders",
              "get_shipping_estimate": "check_inventory", "check_inventory": "get_shipping_estimate"}


def _toolkit(tool: str, n: int) -> tuple[ToolSpec, ...]:
    """Three toolkit sizes: 2, 5 and all 10 tools (always the right one and its look-alike)."""
    pair = [TOOL[tool], TOOL[CONFUSABLE[tool]]]
    rest = [t for t in TOOLS if t.name not in (tool, CONFUSABLE[tool])]
    size = (2, 5, len(TOOLS))[n % 3]
    return tuple(pair + rest[: size - 2])


def gold_cases(*, version: str | None = None, changed: str | None = None) -> list[GoldCase]:
    """60 call cases (12 per tool), 8 no-call cases and 6 ask-the-user cases. ``changed`` names a case
    whose expected value is altered (another gold version); ``version`` stamps a frozen version."""
    provenance = Provenance(gold_version=version)
    cases = []
    for tool, (arg, pattern, text) in REQUESTS.items():
        for n in range(PER_TOOL):
            value = pattern.format(n=n)
            case_id = f"{tool}-{n:02d}"
            expected = value + "-X" if case_id == changed else value
            tags = ("happy_path",) if n < 4 else ("near_duplicate_tools",) if n < 8 else ("distractor_values",)
            cases.append(GoldCase(
                id=case_id, messages=(Message(role="user", content=text.format(v=value)),),
                tools=_toolkit(tool, n), expected=Answer(behavior="call", calls=(Call(name=tool, arguments={arg: expected}),)),
                tags=tags, provenance=provenance))
    for n in range(8):
        cases.append(GoldCase(id=f"thanks-{n:02d}", messages=(Message(role="user", content=f"Thanks, that is all for ticket T-{n}."),),
                              tools=_toolkit("get_order", n), expected=Answer(behavior="no_call"),
                              tags=("tool_shaped_language",), provenance=provenance))
    for n in range(6):
        cases.append(GoldCase(id=f"book-{n:02d}", messages=(Message(role="user", content=f"Book me a table for {n + 2}."),),
                              tools=(TOOL["book_table"], TOOL["get_order"]), expected=Answer(behavior="clarify"),
                              tags=("underspecified",), provenance=provenance))
    return cases


def _answer(case: GoldCase, fault: str | None) -> list[dict[str, Any]] | None:
    expected = case.expected.calls[0] if case.expected.calls else None
    if fault is None:
        return [{"name": expected.name, "arguments": expected.arguments}] if expected else None
    if fault == "no_call":
        return None
    if fault == "call":
        return [{"name": "get_order", "arguments": {"order_id": "O-9999"}}]
    if fault == "fabricate":
        return [{"name": "book_table", "arguments": {"date": "2024-01-01", "phone": "000-0000"}}]
    assert expected is not None, f"{fault} needs a call case"
    if fault.startswith("wrong_tool:"):
        return [{"name": fault.partition(":")[2], "arguments": expected.arguments}]
    if fault == "drop_arg":
        return [{"name": expected.name, "arguments": {}}]
    if fault == "wrong_value":
        return [{"name": expected.name, "arguments": {k: f"{v}-7" for k, v in expected.arguments.items()}}]
    raise ValueError(f"unknown fault {fault!r}")


def context_agent(cases: Sequence[GoldCase], faults: Mapping[str, str]) -> Callable[..., Any]:
    """An agent function (``fn(messages, tools)``, the contract of ``toolgold run --agent python:...``) that
    recognizes each case by its last message and answers with the case's fault, if any."""
    by_text = {case.messages[-1].content: case for case in cases}
    assert len(by_text) == len(cases), "every case needs its own last message"

    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[dict[str, Any]] | None:
        case = by_text[messages[-1].content]
        return _answer(case, faults.get(case.id))

    return answer


def agent_runs(cases: Sequence[GoldCase], faults: Mapping[str, str], *, run_id: str, model: str,
               trials: int = 1) -> list[RunRecord]:
    """What an agent with these faults does on every case: its answers as run records."""
    runs = []
    for case in cases:
        for trial in range(trials):
            record = run_record(case, _answer(case, faults.get(case.id)), trial=trial)
            runs.append(record.model_copy(update={"run_id": run_id, "model": model}))
    return runs


# Three prompt versions on one gold set. v2 fixes a confusion and breaks search_orders once; v3 breaks
# search_orders further (91.7% -> 66.7%) while other tools improve, so the average barely moves.
FAULTS: dict[str, dict[str, str]] = {
    "v1": {"update_user_profile-00": "wrong_tool:update_user", "update_user_profile-01": "wrong_tool:update_user",
           "get_order-00": "wrong_value", "book-00": "fabricate", "thanks-00": "call"},
    "v2": {"update_user_profile-01": "wrong_tool:update_user", "get_order-00": "wrong_value",
           "search_orders-00": "drop_arg", "book-00": "fabricate"},
    "v3": {"search_orders-00": "drop_arg", "search_orders-01": "drop_arg", "search_orders-02": "no_call",
           "search_orders-03": "wrong_tool:get_order"},
}


def save_agent_run(store: Store, cases: Sequence[GoldCase], version: str, *, created_at: str,
                   faults: Mapping[str, str] | None = None, **meta: Any) -> RunInfo:
    run_id = f"run-{version}"
    runs = agent_runs(cases, FAULTS[version] if faults is None else faults, run_id=run_id, model="model-a")
    _, info = score_and_save(store, cases, runs, RunMeta(prompt_version=version, label=f"prompt {version}",
                                                         created_at=created_at, **meta))
    return info


def seed_three_runs(store: Store) -> list[RunInfo]:
    """The three prompt versions, saved an hour apart, oldest first."""
    cases = gold_cases()
    return [save_agent_run(store, cases, version, created_at=f"2025-06-0{n + 1}T10:00:00.000Z",
                           git_commit=f"abc{n}")
            for n, version in enumerate(("v1", "v2", "v3"))]
