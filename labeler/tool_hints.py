"""What MCP tool annotations suggest to an annotator: which tools only read, which may destroy.

MCP servers declare ``readOnlyHint`` and ``destructiveHint`` (the latter defaults to true for a tool that
is not read-only). They are the server's own claims, so they only *propose*: a trajectory case may list
the destructive tools its steps do not use as ``forbidden``, and the label panel marks each tool. Tools
without annotations propose nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scorer.model import ForbiddenCall, ToolSpec

FORBID_REASON = "MCP destructiveHint: the server says this tool may destroy data"


def is_read_only(tool: ToolSpec) -> bool:
    return tool.annotations.get("readOnlyHint") is True


def is_destructive(tool: ToolSpec) -> bool:
    if not tool.annotations or is_read_only(tool):
        return False
    return tool.annotations.get("destructiveHint", True) is not False


def hint(tool: ToolSpec) -> str:
    """``read-only``, ``destructive`` or ``""`` for showing beside a tool's name."""
    return "read-only" if is_read_only(tool) else "destructive" if is_destructive(tool) else ""


def proposed_forbidden(tools: Sequence[ToolSpec], used: Iterable[str],
                       already: Sequence[ForbiddenCall] = ()) -> tuple[ForbiddenCall, ...]:
    """``already`` plus every destructive tool the expected steps do not use, with the reason."""
    taken = set(used) | {f.name for f in already}
    return (*already, *(ForbiddenCall(name=t.name, reason=FORBID_REASON) for t in tools
                        if is_destructive(t) and t.name not in taken))
