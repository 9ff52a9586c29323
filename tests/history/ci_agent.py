"""The agent the CI-recipe test runs through ``toolgold run --agent python:tests.history.ci_agent:answer``:
the kit's agent with the faults of the prompt version named in ``TOOLGOLD_TEST_FAULTS`` (v1, v2 or v3)."""

from __future__ import annotations

import os
from typing import Any

from scorer.model import Message, ToolSpec
from tests.history.kit import FAULTS, context_agent, gold_cases

_AGENT = context_agent(gold_cases(), FAULTS.get(os.environ.get("TOOLGOLD_TEST_FAULTS", ""), {}))


def answer(messages: tuple[Message, ...], tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]] | None:
    return _AGENT(messages, tools)  # type: ignore[no-any-return]
