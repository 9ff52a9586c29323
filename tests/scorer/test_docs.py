"""docs/scoring.md documents the public contract: every error code, match kind, gate metric and format."""

from __future__ import annotations

import pytest

from scorer.codes import DIMENSION_OF, ErrorCode
from scorer.gates import HIGHER_IS_BETTER
from scorer.model import MATCH_KINDS
from scorer.render import FORMATS
from tests.conftest import REPO

DOC = (REPO / "docs" / "scoring.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_is_in_the_table_with_its_dimension(code: ErrorCode) -> None:
    assert f"| `{code.value}` | {DIMENSION_OF[code]} |" in DOC


@pytest.mark.parametrize("word", [f"`{k}`" for k in MATCH_KINDS] + [f"`{m}`" for m in HIGHER_IS_BETTER]
                         + [f"`{f}`" for f in FORMATS])
def test_every_match_kind_gate_metric_and_format_is_documented(word: str) -> None:
    assert word in DOC


def test_the_score_command_help_names_every_format() -> None:
    from click.testing import CliRunner

    from labeler.cli import cli

    help_text = CliRunner().invoke(cli, ["score", "--help"]).stdout
    for fmt in FORMATS:
        assert fmt in help_text


def test_the_published_report_schema_is_current_and_names_every_error_code() -> None:
    import json

    from scorer.render.report_json import report_json_schema

    published = json.loads((REPO / "docs" / "schema" / "report-v1.schema.json").read_text(encoding="utf-8"))
    assert published == report_json_schema(), "docs/schema/report-v1.schema.json is stale: run `make schema`"
    assert published["$defs"]["ErrorCode"]["enum"] == [c.value for c in ErrorCode]


def test_a_json_report_validates_against_the_published_schema() -> None:
    import json

    import jsonschema

    from tests.scorer.test_report import mixed_report

    schema = json.loads((REPO / "docs" / "schema" / "report-v1.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(mixed_report().model_dump(mode="json"))
