"""What the importer tests share: where the real data is, and converting a file into its parts."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from scorer import importers
from scorer.errors import InvalidRecord
from scorer.importers import Converted, ImportOptions
from scorer.model import GoldCase, Transcript
from tests.conftest import SHARED_DATA, TEST_DATA

REAL = TEST_DATA / "real"
SHARED = SHARED_DATA
"""The complete datasets: CI clones the repository with a copy of shared/ beside it."""

needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"the full benchmark data is not at {SHARED} (CI keeps shared/ beside the clone)")


@dataclass
class Result:
    transcripts: list[Transcript] = field(default_factory=list)
    gold: list[GoldCase] = field(default_factory=list)
    errors: list[InvalidRecord] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)

    def transcript(self, record_id: str) -> Transcript:
        return next(t for t in self.transcripts if t.id == record_id)

    def case(self, case_id: str) -> GoldCase:
        return next(c for c in self.gold if c.id == case_id)

    @property
    def decision_points(self) -> int:
        return sum(len(t.decision_points()) for t in self.transcripts)

    @property
    def tool_calls(self) -> int:
        return sum(len(m.tool_calls) for t in self.transcripts for m in t.messages)

    @property
    def error_lines(self) -> list[str]:
        return [str(e) for e in self.errors]


def convert(path: Path, fmt: str | None = None, options: ImportOptions | None = None) -> Result:
    result = Result()
    for item in importers.convert(path, fmt, options):
        if isinstance(item, Converted):
            result.lines.append(item.line)
            if isinstance(item.record, Transcript):
                result.transcripts.append(item.record)
            else:
                result.gold.append(item.record)
        else:
            result.errors.append(item)
    return result


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
