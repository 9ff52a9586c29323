"""``formats.read_records``: gold cases and transcripts read through ``fast_record`` where it is sure, the
same records and the same errors as the plain path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scorer.errors import InvalidRecord
from scorer.formats import BLANK, json_line, parse_record, read_records
from scorer.model import GoldCase, RunRecord, Transcript

REPO = Path(__file__).resolve().parents[2]
GOLD_FILES = sorted(p for p in [*REPO.glob("data/demo/*.jsonl"), *REPO.glob("tests/data/**/*.jsonl")]
                    if b'"toolgold.gold/1"' in p.read_bytes()[:4096])


def plain(path: Path, expect: type[Any]) -> list[tuple[int, Any]] | str:
    """What the plain path (``json_line`` then ``parse_record``, line by line) gives, or its first error."""
    found = []
    try:
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                value = json_line(number, raw, str(path))
                if value is BLANK:
                    continue
                if isinstance(value, InvalidRecord):
                    raise value
                found.append((number, parse_record(value, expect=expect, source=str(path), line=number)))
    except InvalidRecord as err:
        return str(err)
    return found


def read(path: Path, expect: type[Any]) -> list[tuple[int, Any]] | str:
    try:
        with path.open("rb") as fh:
            return list(read_records(fh, str(path), expect=expect))
    except InvalidRecord as err:
        return str(err)


def test_there_are_gold_files_to_compare() -> None:
    assert len(GOLD_FILES) >= 10


@pytest.mark.parametrize("path", GOLD_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_gold_files_read_as_the_plain_path_reads_them(path: Path) -> None:
    assert read(path, GoldCase) == plain(path, GoldCase)


@pytest.mark.parametrize("expect", [Transcript, RunRecord])
def test_a_gold_file_read_as_another_kind_is_the_plain_paths_error(expect: type[Any]) -> None:
    path = REPO / "data/demo/bfcl.jsonl"
    found = read(path, expect)
    assert isinstance(found, str) and found == plain(path, expect)


def test_cases_that_offer_the_same_tools_share_them(tmp_path: Path) -> None:
    # The plain path validates every case's tools again; the fast one (what an import reads with) shares
    # the validated tools of a list it has seen: lint and drift read a 20,000-case file 3× faster for it.
    line = next(raw for raw in (REPO / "data/demo/tau-bench-airline.jsonl").read_bytes().split(b"\n")
                if b'"toolgold.gold/1"' in raw)
    path = tmp_path / "gold.jsonl"
    path.write_bytes(line + b"\n" + line + b"\n\n" + line + b"\r\n")
    cases = read(path, GoldCase)
    assert isinstance(cases, list) and [n for n, _ in cases] == [1, 2, 4]
    first, second, third = (case.tools for _, case in cases)
    assert first and all(a is b is c for a, b, c in zip(first, second, third, strict=True))
    assert cases == plain(path, GoldCase)
