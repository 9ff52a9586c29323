"""A small support-desk toolkit and builders the scorer tests share."""

from __future__ import annotations

from typing import Any

from scorer.model import Answer, ArgRule, Call, GoldCase, Message, RunCall, RunRecord, ToolSpec


def tool(name: str, required: tuple[str, ...] = (), **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=f"{name} tool",
                    parameters={"type": "object", "properties": props, "required": list(required)})


STRING = {"type": "string"}
TOOLS = (
    tool("search_orders", ("customer_id",), customer_id=STRING,
         status={"type": "string", "enum": ["open", "shipped"]}, limit={"type": "integer", "default": 10}),
    tool("get_order", ("order_id",), order_id=STRING),
    tool("issue_refund", ("order_id", "amount"), order_id=STRING, amount={"type": "number"}),
    tool("update_user", ("user_id",), user_id=STRING, email=STRING),
    tool("update_user_profile", ("user_id",), user_id=STRING, display_name=STRING),
    tool("get_shipping_estimate", ("zip_code",), zip_code=STRING, weight_kg={"type": "number"}),
    tool("get_account_balance", ("account_id",), account_id=STRING),
    tool("check_inventory", ("sku",), sku=STRING),
    tool("place_order", ("sku", "quantity"), sku=STRING, quantity={"type": "integer"}),
    tool("book_table", ("date",), date=STRING, party_size={"type": "integer"}, phone=STRING,
         deposit=STRING, note=STRING),
)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def call(name: str, **arguments: Any) -> Call:
    return Call(name=name, arguments=arguments)


def calls(*items: Call) -> Answer:
    return Answer(behavior="call", calls=items)


NO_CALL = Answer(behavior="no_call")
CLARIFY = Answer(behavior="clarify")


def case(expected: Answer, *, id: str = "c1", messages: tuple[Message, ...] = (), **fields: Any) -> GoldCase:
    fields.setdefault("tools", TOOLS)
    return GoldCase(id=id, messages=messages or (user("Where is my order? I'm customer C-1042."),),
                    expected=expected, **fields)


def run(*made: RunCall | tuple[str, Any], case_id: str = "c1", trial: int = 0) -> RunRecord:
    """A turn run: ``("tool", {args})`` pairs, args as a dict or the raw JSON string."""
    items = [m if isinstance(m, RunCall) else RunCall(name=m[0], arguments=m[1]) for m in made]
    return RunRecord(case_id=case_id, trial=trial, calls=tuple(items))


def rules(**per_tool: dict[str, ArgRule]) -> dict[str, dict[str, ArgRule]]:
    return per_tool
