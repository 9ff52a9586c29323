"""toolgold's own JSON Lines (transcripts and gold cases, ``format`` tag on every line)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from scorer.errors import InvalidRecord
from scorer.formats import BLANK, fast_record, json_line, parse_record
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
        for number, raw in enumerate(fh, start=1):
            item = convert_line(number, raw, source, options)
            if item is not None:
                yield item


def convert_line(number: int, raw: bytes, source: str, options: ImportOptions) -> Item | None:
    """Line ``number`` of a toolgold JSON Lines file as its item (None for a blank line): every line is a
    record on its own, so an import can convert the lines of one file in several processes."""
    fast = fast_record(number, raw) if type(raw) is bytes else None  # what the lines below make of it, sooner
    if fast is not None:
        return Converted(fast, number)
    value = json_line(number, raw, source)
    if value is BLANK:
        return None
    if isinstance(value, InvalidRecord):
        return value
    try:
        record = parse_record(value, source=source, line=number)
    except InvalidRecord as err:
        return err
    if isinstance(record, (Transcript, GoldCase)):
        return Converted(record, number)
    return InvalidRecord(f"{record.format} records are scored, not imported (use toolgold score)",
                         source=source, line=number)
