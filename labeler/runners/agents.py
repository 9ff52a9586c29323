"""Agents under test: what produces a run record for one gold case.

An agent is any callable ``agent(messages, tools) -> output`` (the same contract as ``evaluate``), where
output is ``None`` (no call), a list of calls (``{"name", "arguments"}`` dicts, ``Call`` or ``RunCall``), or
``{"calls": [...], "text": "..."}``. ``AnthropicAgent`` asks the Messages API; ``load_python_agent`` imports
``module:function``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labeler.llm.anthropic_gateway import AnthropicGateway, Usage
from labeler.runners.anthropic_messages import to_anthropic, tool_name_map, tools_for_anthropic
from scorer.errors import ToolgoldError
from scorer.model import Call, Message, RunCall, ToolSpec

AgentFn = Callable[[tuple[Message, ...], tuple[ToolSpec, ...]], Any]


class AgentError(ToolgoldError):
    """An agent could not be loaded or returned something that is not a tool-call answer."""


@dataclass(frozen=True)
class AgentTurn:
    """What the agent did at one decision point."""

    calls: tuple[RunCall, ...]
    text: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str | None = None


def coerce_output(value: Any) -> AgentTurn:
    """Accept the shapes an agent function may return and normalize them."""
    if isinstance(value, AgentTurn):
        return value
    if value is None:
        return AgentTurn(calls=())
    text = None
    if isinstance(value, dict) and ("calls" in value or "text" in value):
        text = value.get("text")
        value = value.get("calls") or []
    if isinstance(value, (Call, RunCall, dict)):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise AgentError(f"agent returned {type(value).__name__}; expected None, a list of calls, "
                         "or {'calls': [...], 'text': ...}")
    calls = []
    for item in value:
        if isinstance(item, RunCall):
            calls.append(item)
        elif isinstance(item, Call):
            calls.append(RunCall(name=item.name, arguments=item.arguments))
        elif isinstance(item, dict) and "name" in item:
            calls.append(RunCall(name=item["name"], arguments=item.get("arguments", {})))
        else:
            raise AgentError(f"agent returned a call without a name: {item!r:.200}")
    return AgentTurn(calls=tuple(calls), text=text)


def load_python_agent(spec: str) -> AgentFn:
    """``python:package.module:function`` (the ``python:`` prefix is optional)."""
    target = spec.removeprefix("python:")
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise AgentError(f"agent {spec!r}: write it as python:module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentError(f"agent {spec!r}: cannot import {module_name}: {exc}") from None
    fn: AgentFn | None = getattr(module, attr, None)
    if not callable(fn):
        raise AgentError(f"agent {spec!r}: {module_name} has no callable {attr!r}")
    return fn


class AnthropicAgent:
    """Replays a case's context through the Messages API and returns the model's tool calls and text."""

    def __init__(self, gateway: AnthropicGateway, model: str, *, max_tokens: int = 1024,
                 temperature: float | None = None) -> None:
        self.gateway = gateway
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature

    def __call__(self, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> AgentTurn:
        system, turns = to_anthropic(messages)
        names = tool_name_map(tools)
        reply = self.gateway.create(model=self.model, system=system, messages=turns,
                                    tools=tools_for_anthropic(tools) or None, max_tokens=self.max_tokens,
                                    temperature=self.temperature)
        calls = tuple(RunCall(name=names.get(u.name, u.name), arguments=u.input) for u in reply.tool_uses)
        return AgentTurn(calls=calls, text=reply.text or None, usage=reply.usage, model=reply.model)
