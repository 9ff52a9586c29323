"""docs/judge.md says what the code does: question versions, flagged codes, options, prices, thresholds."""

from __future__ import annotations

import re
from pathlib import Path

from labeler.cli.judge import judge_cmd, stats_cmd
from labeler.cli.score import score_cmd
from labeler.judge.calibration import DROP, MIN_ITEMS
from labeler.judge.pricing import price_of
from labeler.judge.prompts import ALL_PROMPTS
from labeler.judge.questions import MAX_CHARS, MAX_MESSAGES, MISMATCH_CODES
from labeler.judge.step import AUDIT_RATE

DOC = (Path(__file__).resolve().parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")
FLAT = " ".join(DOC.split())


def options(command: object) -> set[str]:
    return {o for p in command.params for o in p.opts}  # type: ignore[attr-defined]


def test_the_prompt_versions_are_the_ones_in_the_code() -> None:
    assert set(re.findall(r"`(\w+/\d+)`", DOC)) == set(ALL_PROMPTS)


def test_the_flagged_error_codes_are_the_ones_in_the_code() -> None:
    row = next(line for line in DOC.splitlines() if line.startswith("| **mismatch**"))
    assert set(re.findall(r"`(\w+)`", row)) - {"mismatch"} == {c.value for c in MISMATCH_CODES}


def test_every_option_shown_exists() -> None:
    usage = DOC.split("```bash", 1)[1].split("```", 1)[0]
    shown = set(re.findall(r"--[a-z-]+", usage))
    assert shown <= options(score_cmd) | options(judge_cmd) | options(stats_cmd)
    assert {"--judge", "--judge-model"} <= options(score_cmd)


def test_prices_limits_and_thresholds_match() -> None:
    for family, model in (("Sonnet", "claude-sonnet-4-6"), ("Haiku 4.5", "claude-haiku-4-5"),
                          ("Opus 4.5–4.6", "claude-opus-4-6"), ("Opus 4–4.1", "claude-opus-4-1")):
        price = price_of(model)
        assert price is not None
        assert f"{family} ${price[0]:g} / ${price[1]:g}" in FLAT, family
    assert f"latest {MAX_MESSAGES} messages and each text to {MAX_CHARS:,} characters" in FLAT
    assert f"A further {AUDIT_RATE:.0%} of the confident" in FLAT
    assert f"falls by {DROP * 100:.0f} points or more" in FLAT
    assert f"at least {MIN_ITEMS} decided items" in FLAT
