"""The ordered list of importers; detection asks each in turn, most specific first."""

from __future__ import annotations

from typing import cast

from scorer.errors import UnrecognizedInput
from scorer.importers import native
from scorer.importers.base import Importer

IMPORTERS: tuple[Importer, ...] = cast(tuple[Importer, ...], (native,))


def importer_named(name: str) -> Importer:
    for importer in IMPORTERS:
        if importer.NAME == name:
            return importer
    names = ", ".join(i.NAME for i in IMPORTERS)
    raise UnrecognizedInput(f"unknown input format {name!r}; choose one of: {names}")
