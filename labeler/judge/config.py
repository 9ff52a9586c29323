"""Which model judges, and how the CLI gets a gateway.

The judge model comes from, in order: the ``--judge-model`` / ``--model`` flag, ``TOOLGOLD_JUDGE_MODEL``, the
setting an admin saved on the Judge calibration page, and the gateway's default (a current model).
"""

from __future__ import annotations

import os
from typing import Any, Final

from labeler.llm.anthropic_gateway import DEFAULT_MODEL, AnthropicGateway

JUDGE_MODEL_ENV: Final = "TOOLGOLD_JUDGE_MODEL"
DEFAULT_JUDGE_MODEL: Final = DEFAULT_MODEL


def judge_model(flag: str | None = None, saved: str | None = None) -> tuple[str, str]:
    """``(model, where it came from)``."""
    if flag:
        return flag, "flag"
    env = os.environ.get(JUDGE_MODEL_ENV)
    if env:
        return env, JUDGE_MODEL_ENV
    if saved:
        return saved, "settings"
    return DEFAULT_JUDGE_MODEL, "default"


def open_gateway(**kwargs: Any) -> AnthropicGateway:
    """The gateway the CLI judges through (raises ``MissingAPIKey`` without a key). One seam for tests to
    hand the real client a mock transport."""
    return AnthropicGateway(**kwargs)


__all__ = ["DEFAULT_JUDGE_MODEL", "JUDGE_MODEL_ENV", "judge_model", "open_gateway"]
