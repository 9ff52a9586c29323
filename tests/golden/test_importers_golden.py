"""Golden files pin what each importer makes of a small input: ``tests/golden/importers/<case>/`` holds
one input file (companion files, such as BFCL's ``possible_answer/``, in subfolders) and ``expected.jsonl``, the records it converts into (canonical JSON, byte for byte) and,
for records that must be rejected, ``ERROR <file>:<line>: <message>`` lines. Detection is part of it:
the input is read without ``--from``.

After an intended change, rewrite them with ``TOOLGOLD_REGOLD=1 pytest tests/golden`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorer import importers
from scorer.errors import InvalidRecord
from scorer.formats import dumps_record

CASES = Path(__file__).resolve().parent / "importers"


def rendered(case: Path) -> str:
    source, = (p for p in case.iterdir() if p.is_file() and p.name != "expected.jsonl")  # companions in subfolders
    lines = []
    for item in importers.convert(source):
        if isinstance(item, InvalidRecord):
            lines.append("ERROR " + str(item).replace(f"{case}/", ""))  # paths relative to the case
        else:
            lines.append(dumps_record(item.record))
    return f"detected: {importers.detect(source).NAME}\n" + "".join(line + "\n" for line in lines)


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_each_importer_golden_case_converts_byte_for_byte(case: str) -> None:
    expected = CASES / case / "expected.jsonl"
    got = rendered(CASES / case)
    if os.environ.get("TOOLGOLD_REGOLD"):
        expected.write_text(got, encoding="utf-8")
    assert got == expected.read_text(encoding="utf-8")


def test_there_are_golden_cases_that_must_be_rejected() -> None:
    texts = [(p / "expected.jsonl").read_text(encoding="utf-8") for p in CASES.iterdir() if p.is_dir()]
    assert sum("\nERROR " in t for t in texts) >= 2
