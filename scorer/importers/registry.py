"""The ordered list of importers; detection asks each in turn, most specific first.

Each importer's module is imported the first time it is asked anything but its name and description (listed
here, so ``--from``'s choices and a toolgold file's detection, told by the first importer, load no other: ~50
ms of every import's start-up); tests/importers/test_detection.py checks them against the modules."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from scorer.errors import UnrecognizedInput
from scorer.importers.base import Importer, ImportOptions, Item


class LazyImporter:
    """An importer module, imported when first asked to sniff or convert."""

    __slots__ = ("DESCRIPTION", "NAME", "_loaded", "module_name")

    def __init__(self, module: str, name: str, description: str) -> None:
        self.module_name = f"scorer.importers.{module}"
        self.NAME = name
        self.DESCRIPTION = description
        self._loaded: Importer | None = None

    @property
    def module(self) -> Importer:
        if self._loaded is None:
            self._loaded = cast(Importer, importlib.import_module(self.module_name))
        return self._loaded

    def sniff(self, path: Path, head: bytes) -> bool:
        return self.module.sniff(path, head)

    def convert(self, path: Path, options: ImportOptions) -> Iterator[Item]:
        return self.module.convert(path, options)

    def __repr__(self) -> str:
        return f"<importer {self.NAME} ({self.module_name})>"


# Most specific first: the whole-file formats sniff for their own keys; anthropic needs a marker
# (tool_use, input_schema, system) before openai, which takes any {"messages": [...]} line.
IMPORTERS: tuple[Importer, ...] = (
    LazyImporter("native", "toolgold", "toolgold JSON Lines (toolgold.transcript/1, toolgold.gold/1)"),
    LazyImporter("inspect_ai", "inspect-ai", "inspect_ai eval logs (.json or .eval)"),
    LazyImporter("tau_bench", "tau-bench", "tau-bench historical trajectories or task files (JSON array)"),
    LazyImporter("tau2_bench", "tau2-bench",
                 "tau2-bench simulation results (JSON object with simulations) or task files"),
    LazyImporter("tooltalk", "tooltalk", "ToolTalk conversation files (one JSON object per file)"),
    LazyImporter("bfcl", "bfcl", "BFCL question files (BFCL_v4_<category>.json) with possible_answer/ beside them"),
    LazyImporter("seed", "seed",
                 'hand-written seed labels ({"turn_id", "conversation", "expected_tool", ...} per line)'),
    LazyImporter("langfuse", "langfuse", "Langfuse trace exports ({trace, observations})"),
    LazyImporter("mcp", "mcp", "MCP JSON-RPC logs (tools/call requests and their responses)"),
    LazyImporter("otel", "otel", "OpenTelemetry GenAI / OpenInference spans (OTLP/JSON, span objects or attribute maps)"),
    LazyImporter("adk", "adk", "Google ADK eval sets (.evalset.json / .test.json) and session dumps"),
    LazyImporter("vercel_ai", "vercel-ai", "Vercel AI SDK ModelMessage / UIMessage lists and UI message streams"),
    LazyImporter("gemini", "gemini", "Gemini / google-genai generateContent bodies (request, response or pairs)"),
    LazyImporter("openai_responses", "openai-responses",
                 "OpenAI Responses API bodies (request, response or pairs) and Agents SDK run states"),
    LazyImporter("anthropic_messages", "anthropic", "Anthropic Messages conversations (JSON Lines or a JSON array)"),
    LazyImporter("openai_chat", "openai", "OpenAI chat JSON Lines ({messages, tools} per line)"),
)


def importer_named(name: str) -> Importer:
    for importer in IMPORTERS:
        if importer.NAME == name:
            return importer
    names = ", ".join(i.NAME for i in IMPORTERS)
    raise UnrecognizedInput(f"unknown input format {name!r}; choose one of: {names}")
