"""docs/review.md documents the contract: every command added for review has help and a line in the doc,
and every review kind, drift kind and hygiene code is in its table."""

from __future__ import annotations

from typing import get_args

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import REVIEW_KINDS
from scorer.drift import DriftKind
from scorer.hygiene import ProblemCode
from tests.conftest import REPO

DOC = (REPO / "docs" / "review.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["versions", "freeze", "diff", "drift", "lint"])
def test_every_command_has_help_and_is_documented(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and result.stdout.startswith(f"Usage: cli {command}")
    assert f"| `toolgold {command}" in DOC


@pytest.mark.parametrize("word", [*REVIEW_KINDS, *get_args(DriftKind), *get_args(ProblemCode)])
def test_every_kind_and_code_is_in_a_table(word: str) -> None:
    assert f"| `{word}` |" in DOC


def test_the_export_and_score_options_are_documented() -> None:
    export_help = CliRunner().invoke(cli, ["export", "--help"]).stdout
    score_help = CliRunner().invoke(cli, ["score", "--help"]).stdout
    for option in ("--version", "--hf", "--user"):
        assert option in export_help and f"{option} " in DOC
    for option in ("--tools", "--allow-stale"):
        assert option in score_help and option in DOC
