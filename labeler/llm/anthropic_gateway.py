"""The one module that imports ``anthropic``: client construction, one Messages call, errors mapped.

Everything else (the runner, the judge) talks to ``AnthropicGateway`` and gets plain frozen values back,
so tests inject an ``httpx2.MockTransport`` through ``http_client`` and no code path touches the network.
The API key comes from the environment (``ANTHROPIC_API_KEY``) or Streamlit secrets; it is never stored,
logged or written into a report.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from scorer import strict_json
from scorer.errors import InvalidRecord, ToolgoldError

DEFAULT_MODEL = "claude-sonnet-4-6"
MODEL_ENV = "TOOLGOLD_MODEL"
KEY_ENV = "ANTHROPIC_API_KEY"


class LLMUnavailable(ToolgoldError):
    """The model could not be reached or kept failing after retries; the work stays pending."""

    def __init__(self, reason: str, *, retryable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class MissingAPIKey(ToolgoldError):
    """No API key: set ANTHROPIC_API_KEY (or anthropic_api_key in Streamlit secrets)."""


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens)


@dataclass(frozen=True)
class Reply:
    """A Messages API reply reduced to what toolgold uses."""

    text: str
    tool_uses: tuple[ToolUse, ...]
    stop_reason: str | None
    model: str
    usage: Usage
    latency_s: float
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


def api_key_from_environment() -> str | None:
    """``ANTHROPIC_API_KEY`` from the environment, else from Streamlit secrets when running in the app."""
    key = os.environ.get(KEY_ENV)
    if key:
        return key
    try:  # Streamlit is only there on the app side; the CLI works without it.
        import streamlit as st

        value = st.secrets.get("anthropic_api_key") or st.secrets.get(KEY_ENV)
        return str(value) if value else None
    except Exception:
        return None


def default_model() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_MODEL


class AnthropicGateway:
    """Thin, typed access to ``messages.create`` with the SDK's retries (429/529/5xx/timeouts)."""

    def __init__(self, *, api_key: str | None = None, http_client: httpx2.Client | None = None,
                 max_retries: int = 4, timeout_s: float = 120.0) -> None:
        key = api_key or api_key_from_environment()
        if not key:
            raise MissingAPIKey(f"no Anthropic API key: set {KEY_ENV} (or anthropic_api_key in Streamlit secrets)")
        self._key = key
        self._client = anthropic.Anthropic(api_key=key, http_client=http_client, max_retries=max_retries,
                                           timeout=timeout_s)

    def create(self, *, model: str, messages: list[dict[str, Any]], system: str | None = None,
               tools: list[dict[str, Any]] | None = None, tool_choice: dict[str, Any] | None = None,
               max_tokens: int = 1024, temperature: float | None = None) -> Reply:
        kwargs: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = tools
        if tool_choice:
            kwargs["tool_choice"] = tool_choice
        if temperature is not None:
            kwargs["temperature"] = temperature
        started = time.perf_counter()
        try:
            raw = self._client.messages.with_raw_response.create(**kwargs)
        except anthropic.APITimeoutError:
            raise LLMUnavailable("timed out after retries") from None
        except anthropic.APIConnectionError as exc:
            raise LLMUnavailable(f"connection failed after retries: {type(exc).__name__}") from None
        except anthropic.APIStatusError as exc:
            retryable = exc.status_code in (408, 409, 429) or exc.status_code >= 500
            raise LLMUnavailable(f"HTTP {exc.status_code} from the API: "
                                 f"{_short(scrub_secrets(_error_message(exc), self._key))}",
                                 retryable=retryable) from None
        latency = time.perf_counter() - started
        message = _message_of(raw, self._key)
        text_parts, uses = [], []
        for block in message.content:
            if block.type == "text":
                text_parts.append(block.text)
            elif block.type == "tool_use":
                uses.append(ToolUse(block.id, block.name, dict(block.input) if isinstance(block.input, dict) else {
                    "_raw": block.input}))
        usage = Usage(message.usage.input_tokens or 0, message.usage.output_tokens or 0)
        if usage.input_tokens < 0 or usage.output_tokens < 0:
            raise LLMUnavailable(f"the API reported negative token usage ({usage.input_tokens} in, "
                                 f"{usage.output_tokens} out): reply not used", retryable=False)
        return Reply(
            text="".join(text_parts), tool_uses=tuple(uses), stop_reason=message.stop_reason,
            model=message.model, latency_s=latency, usage=usage, raw=message.model_dump(mode="json"),
        )


def _message_of(raw: Any, key: str) -> anthropic.types.Message:
    """The reply, checked strictly first (no NaN, no lone surrogates, bounded depth), then parsed by the SDK.

    A 200 whose body is something else (a proxy's HTML login page) raises ``LLMUnavailable``: the
    question stays pending, and the answers that did arrive are kept."""
    response: httpx2.Response = raw.http_response
    kind = response.headers.get("content-type", "unknown").split(";")[0].strip() or "unknown"
    try:
        strict_json.loads(response.content, source="the API's reply")
    except InvalidRecord as exc:
        raise LLMUnavailable(f"HTTP {response.status_code} from the API but the body is not usable JSON "
                             f"({kind}): {_short(scrub_secrets(exc.message, key))}") from None
    message = raw.parse()
    if not isinstance(message, anthropic.types.Message) or not isinstance(message.content, list):
        raise LLMUnavailable(f"HTTP {response.status_code} from the API but the body is not a message ({kind})")
    return message


# Anything shaped like a credential: Anthropic and OpenAI-style keys, bearer tokens.
_SECRET = re.compile(r"sk-[A-Za-z0-9_\-]{8,}|(?i:bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*")


def scrub_secrets(text: str, key: str | None = None) -> str:
    """``text`` with the API key and anything shaped like one replaced by ``[redacted]``: error bodies
    (a proxy echoing the request) are stored and shown."""
    if key:
        text = text.replace(key, "[redacted]")
    return _SECRET.sub("[redacted]", text)


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message") or body["error"].get("type") or exc.message)
    return str(exc.message)


# Anything shaped like a credential: provider keys (sk-ant-…, sk-proj-…, sk-…), bearer tokens, JWTs, and long
# opaque runs of key characters. An HTTP error can echo the key it was sent; its text is stored and shown.
_SECRET = re.compile(r"(?i)\bbearer\s+\S+|\bsk-[a-z0-9_-]{8,}|\beyJ[\w-]+\.[\w-]+\.[\w-]+|\b[A-Za-z0-9_-]{32,}")


def scrub(text: str) -> str:
    return _SECRET.sub("[redacted]", text)


def _short(text: str, limit: int = 200) -> str:
    text = scrub(" ".join(str(text).split()))
    return text if len(text) <= limit else text[:limit] + "…"
