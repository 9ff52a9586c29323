"""toolgold's scorer: the pure library. Domain types, formats and scoring; no I/O, no SQL, no UI.

Everything but the exceptions loads on first use: the domain types (pydantic) when a record is read, the scoring
API (``evaluate``, ``score``, ``score_case``, the result types) when something is scored, so a command that
needs neither (``toolgold --help``, ``toolgold app``) does not pay for importing them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from scorer.errors import InvalidRecord, ScoringInputError, ToolgoldError, UnknownFormat, UnrecognizedInput
from scorer.native import search_path as _search_path

__path__ = _search_path(__path__)  # the compiled core first, when it matches the source (scorer/native.py)

if TYPE_CHECKING:
    from scorer.api import evaluate, score, score_case
    from scorer.codes import ErrorCode
    from scorer.judging import ArgumentQuestion, ArgumentVerdict, Judge
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
    from scorer.report import Report
    from scorer.results import CaseError, CaseResult

_LAZY = {
    **dict.fromkeys(("Answer", "ArgRule", "Call", "GoldCase", "Message", "RunCall", "RunRecord", "ToolSpec",
                     "Transcript"), "scorer.model"),
    "evaluate": "scorer.api", "score": "scorer.api", "score_case": "scorer.api", "ErrorCode": "scorer.codes",
    "ArgumentQuestion": "scorer.judging", "ArgumentVerdict": "scorer.judging", "Judge": "scorer.judging",
    "Report": "scorer.report", "CaseError": "scorer.results", "CaseResult": "scorer.results",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scorer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Answer",
    "ArgRule",
    "ArgumentQuestion",
    "ArgumentVerdict",
    "Call",
    "CaseError",
    "CaseResult",
    "ErrorCode",
    "GoldCase",
    "InvalidRecord",
    "Judge",
    "Message",
    "Report",
    "RunCall",
    "RunRecord",
    "ScoringInputError",
    "ToolSpec",
    "ToolgoldError",
    "Transcript",
    "UnknownFormat",
    "UnrecognizedInput",
    "evaluate",
    "score",
    "score_case",
]
