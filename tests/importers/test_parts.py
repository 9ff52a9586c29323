"""The parts adapter every message-shaped importer goes through."""

from __future__ import annotations

import pytest

from scorer.errors import InvalidRecord
from scorer.importers.parts import Call, Result, Text, Turn, messages_from_parts
from scorer.model import FunctionCall, Message, ToolCallRef


def call(call_id: str, name: str, arguments: str = "{}") -> ToolCallRef:
    return ToolCallRef(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def test_assistant_text_and_calls_in_a_row_are_one_message_and_results_pair_by_order_and_name() -> None:
    messages = messages_from_parts([
        Text("system", "Be brief."), Text("user", "Capitals of France and Spain?"),
        Text("assistant", "Looking up."), Call("capital", {"country": "France"}), Call("capital", '{"country":"Spain"}'),
        Call("time", None),
        Result("Madrid", name="capital", is_error=False), Result("Paris", name="capital"),
        Result({"error": "no clock"}, name="time", is_error=True),
        Text("assistant", "Done."), Turn(), Text("assistant", "Anything else?"),
    ])
    assert messages == (
        Message(role="system", content="Be brief."),
        Message(role="user", content="Capitals of France and Spain?"),
        Message(role="assistant", content="Looking up.", tool_calls=(
            call("call_0", "capital", '{"country":"France"}'), call("call_1", "capital", '{"country":"Spain"}'),
            call("call_2", "time"))),
        # id-less results answer the oldest unanswered call of their name, as Gemini and ADK pair them
        Message(role="tool", tool_call_id="call_0", content="Madrid"),
        Message(role="tool", tool_call_id="call_1", content="Paris"),
        Message(role="tool", tool_call_id="call_2", content='Error: {"error": "no clock"}'),
        Message(role="assistant", content="Done."),
        Message(role="assistant", content="Anything else?"),
    )


def test_repeated_ids_are_renamed_and_results_follow_the_latest_call() -> None:
    messages = messages_from_parts([Call("f", id="x"), Result("1", id="x"), Call("f", id="x"), Result("2", id="x")])
    assert [m.tool_calls[0].id for m in messages if m.tool_calls] == ["x", "x~2"]
    assert [m.tool_call_id for m in messages if m.role == "tool"] == ["x", "x~2"]


@pytest.mark.parametrize(("parts", "message"), [
    ([Result("r", id="nope")], "log: a tool result answers 'nope', which no earlier assistant message called"),
    ([Call("f"), Result("r", name="g")],
     "log: a tool result of 'g' without an id, and no unanswered call of that name before it"),
    ([Call("")], "log: a tool call without a name"),
])
def test_results_without_their_call_and_nameless_calls_are_refused(parts: list, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidRecord) as caught:
        messages_from_parts(parts, "log")
    assert str(caught.value) == message
