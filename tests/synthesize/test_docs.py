"""docs/synthesize.md says what the code does: every transformation, option and prompt version."""

from __future__ import annotations

import re
from pathlib import Path

from labeler.cli.synthesize import synthesize_cmd
from labeler.synthesis_llm import PROMPT_VERSIONS
from scorer.synthesize import ALL_TRANSFORMS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "synthesize.md").read_text(encoding="utf-8")


def test_every_transformation_has_a_row() -> None:
    rows = {m for m in re.findall(r"^\| `(\w+)` \|", DOC, flags=re.MULTILINE) if not m.startswith("-")}
    assert rows == set(ALL_TRANSFORMS)


def test_the_options_table_is_the_commands_options() -> None:
    table = DOC.split("## Options", 1)[1]
    shown = set(re.findall(r"`(--?[a-z-]+)", table))
    assert shown == {o for p in synthesize_cmd.params for o in p.opts}


def test_the_prompt_versions_are_the_ones_in_the_code() -> None:
    assert set(re.findall(r"`(synthesize-[a-z-]+/\d+)`", DOC)) == set(PROMPT_VERSIONS.values())
