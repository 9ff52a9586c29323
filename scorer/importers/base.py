"""What every importer shares: the item it yields, its options, and its protocol."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scorer.errors import InvalidRecord
from scorer.model import GoldCase, Split, ToolSpec, Transcript


@dataclass(frozen=True)
class Converted:
    """One record converted from a source file, with the 1-based line it came from (None: no lines)."""

    record: Transcript | GoldCase
    line: int | None = None


@dataclass(frozen=True)
class ImportOptions:
    tools: tuple[ToolSpec, ...] | None = None
    """Tool schemas to attach when the source has none (tau-bench trajectories)."""
    split: Split = "regression"
    """Split given to gold cases the import creates."""


Item = Converted | InvalidRecord
"""What ``convert`` yields: a record, or the error of one bad record (reading goes on after it, so the
caller decides whether to refuse the whole file or set the bad lines aside)."""


class Importer(Protocol):
    NAME: str
    DESCRIPTION: str

    def sniff(self, path: Path, head: bytes) -> bool: ...

    def convert(self, path: Path, options: ImportOptions) -> Iterator[Item]: ...
