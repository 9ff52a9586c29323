"""Long and heavy transcripts made up for tests and benchmarks: many decision points, or one huge message."""

from __future__ import annotations

from labeler.store import ImportItem, Store
from scorer.model import FunctionCall, Message, ToolCallRef, ToolSpec, Transcript

TOOL = ToolSpec(name="lookup", description="Look a record up", parameters={
    "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})


def many_turns(transcript_id: str, decision_points: int, *, long_message: str | None = None) -> Transcript:
    """A conversation of ``decision_points`` user/assistant exchanges (assistant message k at index 2k + 1);
    ``long_message``, when given, is the first user message."""
    messages = [Message(role="system", content="You answer questions about records.")]
    for n in range(decision_points):
        messages.append(Message(role="user", content=long_message if n == 0 and long_message else
                                f"question {n + 1}: what is in record R{n}?"))
        messages.append(Message(role="assistant", content=f"answer {n + 1}: record R{n} holds nothing unusual"))
    return Transcript(id=transcript_id, messages=tuple(messages), tools=(TOOL,),
                      metadata={"source": "synthetic", "timestamp": "2026-01-05T10:00:00Z"})


def add(store: Store, transcript: Transcript) -> str:
    store.import_items([ImportItem(transcript, "synthetic")])
    return transcript.id


def one_call(transcript_id: str, arguments: str) -> Transcript:
    """A user question and the agent's one ``lookup`` call with these (JSON) arguments."""
    call = ToolCallRef(id="c1", function=FunctionCall(name="lookup", arguments=arguments))
    return Transcript(id=transcript_id, tools=(TOOL,), metadata={"source": "synthetic"}, messages=(
        Message(role="user", content="look up my record"), Message(role="assistant", tool_calls=(call,))))
