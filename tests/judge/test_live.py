"""One real question to the real API, when a key is set (skipped otherwise: the suite runs offline)."""

from __future__ import annotations

import os

import pytest

from labeler.judge.anthropic_judge import AnthropicJudge
from labeler.judge.config import judge_model
from labeler.llm.anthropic_gateway import AnthropicGateway
from scorer.api import score
from tests.judge.kit import shoes_case, shoes_run

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason="ANTHROPIC_API_KEY is not set"),
]


def test_the_real_judge_answers_a_semantic_question_with_a_structured_verdict() -> None:
    asker = AnthropicJudge(AnthropicGateway(), judge_model()[0])
    [result] = score([shoes_case()], [shoes_run("running shoes waterproof")], judge=asker).cases
    assert result.status == "pass", result.reviews
    [dropped] = score([shoes_case()], [shoes_run("running shoes")], judge=asker).cases
    assert dropped.status in ("fail", "needs_review")  # "waterproof" is gone: never a pass
