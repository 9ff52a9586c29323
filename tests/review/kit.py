"""Builders shared by the review tests: a small support-agent domain and users with each role."""

from __future__ import annotations

from typing import Any

from labeler.store import ImportItem, Store
from scorer.model import (
    Answer,
    ArgRule,
    Call,
    GoldCase,
    Message,
    Provenance,
    ToolCallRef,
    ToolSpec,
    Transcript,
)

LOOKUP = ToolSpec(name="search_orders", description="Find a customer's orders",
                  parameters={"type": "object", "properties": {"customer": {"type": "string"},
                                                               "status": {"type": "string",
                                                                          "enum": ["open", "shipped"]}},
                              "required": ["customer"]})
REFUND = ToolSpec(name="refund_order", description="Refund an order",
                  parameters={"type": "object", "properties": {"order_id": {"type": "string"},
                                                               "amount": {"type": "number"}},
                              "required": ["order_id"]})
TOOLS = (LOOKUP, REFUND)


def transcript(tid: str, user_text: str = "Where is my order? I'm C-1042.", *,
               observed: dict[str, Any] | None = None, tools: tuple[ToolSpec, ...] = TOOLS,
               source: str = "unit") -> Transcript:
    """A two-turn conversation: the agent's call at message 2 (``observed``), its answer at message 4."""
    args = observed if observed is not None else {"customer": "C-1042"}
    return Transcript(
        id=tid,
        messages=(
            Message(role="system", content="You are a support agent."),
            Message(role="user", content=user_text),
            Message(role="assistant", tool_calls=(ToolCallRef(
                id="c1", function={"name": "search_orders", "arguments": canonical_args(args)}),)),
            Message(role="tool", tool_call_id="c1", content='{"order_id": "O-7", "status": "shipped"}'),
            Message(role="assistant", content="Your order O-7 has shipped."),
        ),
        tools=tools,
        metadata={"source": source, "timestamp": "2026-01-05T10:00:00Z"},
    )


def canonical_args(args: dict[str, Any]) -> str:
    from scorer import canonical

    return canonical.dumps(args)


def gold(cid: str, *, customer: str = "C-1042", split: str = "regression", status: str = "approved",
         tags: tuple[str, ...] = ("happy_path",), rules: dict[str, dict[str, ArgRule]] | None = None,
         user_text: str | None = None, tools: tuple[ToolSpec, ...] = TOOLS,
         annotators: tuple[str, ...] = ("ann",), reviewer: str | None = "rita", **changes: Any) -> GoldCase:
    # The user names the customer the gold looks up: cases that expect different customers differ in context
    # too, as real gold does (freezing refuses the same context with two answers).
    tr = transcript(cid.split("#")[0], user_text or f"Where is my order? I'm {customer}.", tools=tools)
    fields: dict[str, Any] = {
        "id": cid, "conversation_id": tr.id, "turn": 2, "split": split, "tools": tr.tools, "messages": tr.messages[:2],
        "expected": Answer(behavior="call", calls=(Call(name="search_orders", arguments={"customer": customer}),)),
        "tags": tags, "arg_rules": rules or {},
        "provenance": Provenance(annotators=annotators, reviewer=reviewer, status=status, source="unit"),
    }
    fields.update(changes)
    return GoldCase(**fields)


def put(store: Store, *records: Transcript | GoldCase) -> None:
    result = store.import_items([ImportItem(r, "kit.jsonl", n) for n, r in enumerate(records, start=1)])
    assert not result.rejects


def people(store: Store) -> Store:
    """root (admin), rita (reviewer), ann, bob and cat (annotators)."""
    store.add_user("root", "admin")
    store.add_user("rita", "reviewer", actor="root")
    for name in ("ann", "bob", "cat"):
        store.add_user(name, "annotator", actor="root")
    return store
