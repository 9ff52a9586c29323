"""The ordered list of importers; detection asks each in turn, most specific first."""

from __future__ import annotations

from typing import cast

from scorer.errors import UnrecognizedInput
from scorer.importers import (
    adk,
    anthropic_messages,
    bfcl,
    gemini,
    inspect_ai,
    langfuse,
    mcp,
    native,
    openai_chat,
    openai_responses,
    otel,
    seed,
    tau2_bench,
    tau_bench,
    tooltalk,
    vercel_ai,
)
from scorer.importers.base import Importer

# Most specific first: the whole-file formats sniff for their own keys; anthropic needs a marker
# (tool_use, input_schema, system) before openai, which takes any {"messages": [...]} line.
IMPORTERS: tuple[Importer, ...] = cast(tuple[Importer, ...], (
    native, inspect_ai, tau_bench, tau2_bench, tooltalk, bfcl, seed, langfuse, mcp, otel, adk, vercel_ai, gemini, openai_responses, anthropic_messages, openai_chat,
))


def importer_named(name: str) -> Importer:
    for importer in IMPORTERS:
        if importer.NAME == name:
            return importer
    names = ", ".join(i.NAME for i in IMPORTERS)
    raise UnrecognizedInput(f"unknown input format {name!r}; choose one of: {names}")
