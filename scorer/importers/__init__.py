"""Importers: turn transcripts and gold labels in other people's formats into toolgold records.

Each importer is a module with ``NAME``, ``sniff(path, head) -> bool`` and ``convert(path, options)``
yielding ``Converted`` items (the record plus the 1-based line it came from, when the source has lines).
Malformed input raises ``InvalidRecord`` naming the file and line. Conversions are deterministic: the
same file always yields the same records with the same ids, so a re-import adds nothing.
"""

from __future__ import annotations

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
    raise UnrecognizedInput(f"{path}: cannot tell which format this is; pass --from (one of: {names})")


def convert(path: Path, fmt: str | None = None, options: ImportOptions | None = None) -> Iterator[Item]:
    """Convert one file, detecting its format unless ``fmt`` names it."""
    importer = importer_named(fmt) if fmt else detect(path)
    yield from importer.convert(path, options or ImportOptions())


__all__ = ["IMPORTERS", "Converted", "ImportOptions", "Importer", "Item", "convert", "detect", "importer_named"]
