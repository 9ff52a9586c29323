"""The kept lint's saved format (``kept_lints.body``, labeler/store/hygiene.py), pinned: version-1 documents read
back and are written again byte for byte; documents that must be refused are, each with its own reason (the store
then lints the gold again, never a traceback). A change to the format has to change these files."""

from __future__ import annotations

from pathlib import Path

import pytest

from labeler.store.hygiene import dump_kept_lint, parse_kept_lint

HERE = Path(__file__).parent / "kept_lint"
VALID = sorted((HERE / "valid").glob("*.json"))
INVALID = sorted((HERE / "invalid").glob("*.json"))

REFUSED = {
    "a-list.json": "not a toolgold.kept-lint document",
    "no-format.json": "not a toolgold.kept-lint document",
    "version-as-text.json": "not a toolgold.kept-lint document",
    "version-2.json": "toolgold.kept-lint version 2; this toolgold reads version 1",
    "extra-field.json": "wrong fields",
    "cases-negative.json": "wrong fields",
    "unknown-code.json": "problems do not validate (1 error(s))",
    "torn.json": "Unterminated string",
    "nan-cases.json": "NaN",
    "not-utf8.json": "not valid UTF-8",
}


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_a_version_1_document_reads_back_and_is_written_again_byte_for_byte(path: Path) -> None:
    found = parse_kept_lint(path.read_bytes())
    assert found.cases >= 0 and all(p.case_id for p in found.problems)
    assert dump_kept_lint(found) == path.read_bytes()


def test_every_refused_document_has_its_expected_reason() -> None:
    assert sorted(p.name for p in INVALID) == sorted(REFUSED)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_a_refused_document_says_why_in_one_line(path: Path) -> None:
    with pytest.raises(ValueError) as refused:
        parse_kept_lint(path.read_bytes())
    assert REFUSED[path.name] in str(refused.value) and "\n" not in str(refused.value)
