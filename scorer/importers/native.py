"""toolgold's own JSON Lines (transcripts and gold cases, ``format`` tag on every line)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from scorer.errors import InvalidRecord
from scorer.formats import iter_json_lines_tolerant, parse_record
from scorer.importers.base import Converted, ImportOptions, Item
from scorer.model import GoldCase, Transcript

NAME = "toolgold"
DESCRIPTION = "toolgold JSON Lines (toolgold.transcript/1, toolgold.gold/1)"


def sniff(path: Path, head: bytes) -> bool:
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    return first_line.startswith(b"{") and b'"format"' in first_line and b'"toolgold.' in first_line


def convert(path: Path, options: ImportOptions) -> Iterator[Item]:
    source = str(path)
    with path.open("rb") as fh:
        for line, value in iter_json_lines_tolerant(fh, source):
            if isinstance(value, InvalidRecord):
                yield value
                continue
            try:
                record = parse_record(value, source=source, line=line)
            except InvalidRecord as err:
                yield err
                continue
            if isinstance(record, (Transcript, GoldCase)):
                yield Converted(record, line)
            else:
                yield InvalidRecord(f"{record.format} records are scored, not imported (use toolgold score)",
                                    source=source, line=line)
