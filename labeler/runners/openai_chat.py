"""An agent behind any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama, LiteLLM, ...).

toolgold's messages are already in the chat-completions shape, so the context goes as it is; tool names are
made API-safe (``[a-zA-Z0-9_-]{1,64}``) and mapped back. 429, 5xx and transport errors are retried with
backoff; what still fails raises ``LLMUnavailable`` and the runner leaves the case for the next resume.
The key comes from ``OPENAI_API_KEY`` (local servers may need none) and is only ever sent as a header.
"""

from __future__ import annotations

import os
import time
from typing import Any

import httpx2

from labeler.llm.anthropic_gateway import LLMUnavailable, Usage
from labeler.runners.agents import AgentError, AgentTurn
from scorer import strict_json
from scorer.errors import InvalidRecord
from scorer.model import Message, RunCall, ToolSpec

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
KEY_ENV = "OPENAI_API_KEY"
RETRY_STATUS = (408, 409, 429)
CONNECT_TIMEOUT_S = 5.0


def _usage(raw: Any) -> Usage:
    """Token counts of a reply; anything but non-negative integers is refused, never a negative cost."""
    usage = raw if isinstance(raw, dict) else {}
    counts = [usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0]
    if not all(isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0 and float(n).is_integer()
               for n in counts):
        raise LLMUnavailable(f"the endpoint reported invalid token usage (prompt_tokens {counts[0]!r}, "
                             f"completion_tokens {counts[1]!r}): reply not used", retryable=False)
    return Usage(int(counts[0]), int(counts[1]))


def _reason(exc: Exception) -> str:
    text = str(exc)
    for known in ("Connection refused", "Name or service not known", "Temporary failure in name resolution"):
        if known in text:
            return known.lower()
    return type(exc).__name__


def safe_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64] or "tool"


def to_openai(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        # A tool result needs text; an assistant turn that only calls tools has none.
        item: dict[str, Any] = {"role": m.role, "content": m.content or ("" if m.role == "tool" else None)}
        if m.tool_calls:
            item["tool_calls"] = [{"id": c.id, "type": "function",
                                   "function": {"name": safe_name(c.function.name), "arguments": c.function.arguments}}
                                  for c in m.tool_calls]
        if m.tool_call_id:
            item["tool_call_id"] = m.tool_call_id
        out.append(item)
    return out


def tools_for_openai(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": safe_name(t.name), "description": t.description,
                                              "parameters": {"type": "object", **t.parameters}}} for t in tools]


class OpenAIChatAgent:
    """Replays a case's context through ``POST {base_url}/chat/completions`` and returns the tool calls."""

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 client: httpx2.Client | None = None, max_tokens: int = 1024, temperature: float | None = None,
                 retries: int = 4, backoff_s: float = 1.0, timeout_s: float = 120.0) -> None:
        self.model = model
        self.url = (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        key = api_key or os.environ.get(KEY_ENV)
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        # A server that does not answer the connection within seconds is not there; a slow model is normal.
        self.client = client or httpx2.Client(timeout=httpx2.Timeout(timeout_s, connect=CONNECT_TIMEOUT_S))
        self.max_tokens, self.temperature = max_tokens, temperature
        self.retries, self.backoff_s = retries, backoff_s

    def __call__(self, messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> AgentTurn:
        body: dict[str, Any] = {"model": self.model, "messages": to_openai(messages), "max_tokens": self.max_tokens}
        if tools:
            body["tools"] = tools_for_openai(tools)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        reply = self._post(body)
        try:
            message = reply["choices"][0]["message"]
            names = {safe_name(t.name): t.name for t in tools}
            calls = tuple(RunCall(name=names.get(c["function"]["name"], c["function"]["name"]),
                                  arguments=c["function"].get("arguments") or "{}")
                          for c in message.get("tool_calls") or ())
        except (KeyError, IndexError, TypeError) as exc:
            raise AgentError(f"the endpoint's reply is not a chat completion ({type(exc).__name__}: {exc})") from None
        return AgentTurn(calls=calls, text=message.get("content") or None, model=reply.get("model"),
                         usage=_usage(reply.get("usage")))

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self.client.post(self.url, json=body, headers=self.headers)
            except httpx2.ConnectError as exc:
                # Refused or unresolvable: nothing listens there, and waiting will not change that.
                raise LLMUnavailable(f"cannot connect to {self.url}: {_reason(exc)}", retryable=False) from None
            except httpx2.TransportError as exc:
                problem = f"connection failed: {type(exc).__name__}"
                continue
            if response.status_code == 200:
                try:
                    data = strict_json.loads(response.content, source="the endpoint's reply")
                except InvalidRecord as exc:
                    raise AgentError(f"the endpoint's reply is not usable JSON: {exc.message}") from None
                if not isinstance(data, dict):
                    raise AgentError("the endpoint's reply is not a JSON object")
                return data
            problem = f"HTTP {response.status_code} from {self.url}: {response.text[:200]}"
            if response.status_code not in RETRY_STATUS and response.status_code < 500:
                raise LLMUnavailable(problem, retryable=False)
        raise LLMUnavailable(f"{problem} (after {self.retries} retries)")
