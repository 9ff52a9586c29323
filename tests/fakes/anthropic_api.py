"""Messages API responses in the real wire shape, served by ``httpx2.MockTransport``.

The real ``anthropic`` client talks to these; nothing leaves the process. Shapes follow the API's
documented JSON (message objects with content blocks and usage; error objects with a type).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx2

_ids = itertools.count(1)


def message(content: list[dict[str, Any]], *, model: str = "claude-test", stop_reason: str | None = None,
            input_tokens: int = 120, output_tokens: int = 30) -> dict[str, Any]:
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
    return {
        "id": f"msg_{next(_ids):024d}", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def tool_use(name: str, input: dict[str, Any] | Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):024d}", "name": name, "input": input}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def error(status: int, kind: str, msg: str) -> httpx2.Response:
    headers = {"retry-after-ms": "1"} if status in (429, 529) or status >= 500 else {}
    return httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": msg}},
                           headers=headers)


RATE_LIMITED = (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
OVERLOADED = (529, "overloaded_error", "Overloaded")


@dataclass
class FakeMessagesAPI:
    """A scripted Messages endpoint: each request takes the next reply (or a function of the request)."""

    replies: list[Any] = field(default_factory=list)
    default: Callable[[dict[str, Any]], Any] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        reply = self.replies.pop(0) if self.replies else (self.default(body) if self.default else None)
        if reply is None:
            raise AssertionError("the fake API got more requests than the test scripted")
        if callable(reply) and not isinstance(reply, httpx2.Response):
            reply = reply(body)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, httpx2.Response):
            return reply
        return httpx2.Response(200, json=reply)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self))

    def extend(self, replies: Iterable[Any]) -> None:
        self.replies.extend(replies)
