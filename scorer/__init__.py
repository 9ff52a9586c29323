"""toolgold's scorer: the pure library. Domain types, formats and scoring; no I/O, no SQL, no UI."""

from scorer.errors import InvalidRecord, ScoringInputError, ToolgoldError, UnknownFormat, UnrecognizedInput
from scorer.model import (
    Answer,
    ArgRule,
    Call,
    GoldCase,
    Message,
    RunCall,
    RunRecord,
    ToolSpec,
    Transcript,
)

__all__ = [
    "Answer",
    "ArgRule",
    "Call",
    "GoldCase",
    "InvalidRecord",
    "Message",
    "RunCall",
    "RunRecord",
    "ScoringInputError",
    "ToolSpec",
    "ToolgoldError",
    "Transcript",
    "UnknownFormat",
    "UnrecognizedInput",
]
