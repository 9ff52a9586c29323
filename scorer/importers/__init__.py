"""Importers: turn transcripts and gold labels in other people's formats into toolgold records.

Each importer is a module with ``NAME``, ``sniff(path, head) -> bool`` and ``convert(path, options)``
yielding ``Converted`` items (the record plus the 1-based line it came from, when the source has lines).
Malformed input raises ``InvalidRecord`` naming the file and line. Conversions are deterministic: the
same file always yields the same records with the same ids, so a re-import adds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from scorer.errors import UnrecognizedInput
from scorer.importers.base import Converted, Importer, ImportOptions, Item
from scorer.importers.registry import IMPORTERS, importer_named

SNIFF_BYTES = 64 * 1024


def detect(path: Path) -> Importer:
    """The importer whose format ``path`` is in; ``UnrecognizedInput`` when none claims it."""
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    for importer in IMPORTERS:
        if importer.sniff(path, head):
            return importer
    names = ", ".join(i.NAME for i in IMPORTERS)
    raise UnrecognizedInput(f"{_why_unrecognized(path, head)}; pass --from (one of: {names})")


def _why_unrecognized(path: Path, head: bytes) -> str:
    """``FILE:LINE: cannot tell which format this is: why`` for a file no importer claims, naming the line
    the formats are told by (the first that is not blank) and what it holds."""
    lines = head.split(b"\n")
    number = next((i for i, line in enumerate(lines, start=1) if line.strip()), None)
    if number is None:
        return f"{path}: cannot tell which format this is: the file is empty"
    where = f"{path}:{number}: cannot tell which format this is"
    if number == len(lines) and len(head) == SNIFF_BYTES:
        return f"{where}: line {number} is over {SNIFF_BYTES // 1024} KB and starts like no format's records"
    try:
        return f"{where}: line {number} is {_shown(json.loads(lines[number - 1]))}, not a record of any known format"
    except ValueError as error:
        if len(head) < SNIFF_BYTES:  # one JSON document over several lines (a .json file), all in the head
            try:
                return f"{where}: the file is one JSON document, {_shown(json.loads(head))}, not a file of any known format"
            except ValueError:
                pass
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "not UTF-8"
        return f"{where}: line {number} is not JSON ({reason})"


def _shown(value: object) -> str:
    if isinstance(value, dict):
        keys = sorted(value)
        more = f" and {len(keys) - 6} more" if len(keys) > 6 else ""
        return f"an object with keys {', '.join(json.dumps(k) for k in keys[:6])}{more}" if keys else "an empty object"
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


def convert(path: Path, fmt: str | None = None, options: ImportOptions | None = None) -> Iterator[Item]:
    """Convert one file, detecting its format unless ``fmt`` names it."""
    importer = importer_named(fmt) if fmt else detect(path)
    yield from importer.convert(path, options or ImportOptions())


__all__ = ["IMPORTERS", "Converted", "ImportOptions", "Importer", "Item", "convert", "detect", "importer_named"]
