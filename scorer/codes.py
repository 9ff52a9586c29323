"""The error codes of a scored case: a public contract, defined here once and documented in docs/scoring.md.

Reports, JUnit files and other tools key on these strings, so a code is never renamed or reused; new
codes may be added. Each code belongs to one of the dimensions the report keeps apart.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, Literal

Dimension = Literal["selection", "arguments", "sequencing", "abstention", "grounding"]
DIMENSIONS: Final[tuple[Dimension, ...]] = ("selection", "arguments", "sequencing", "abstention", "grounding")


class ErrorCode(StrEnum):
    """What kind of tool-calling error a case shows."""

    # behavior and selection
    WRONG_TOOL = "wrong_tool"
    MISSING_CALL = "missing_call"
    UNEXPECTED_CALL = "unexpected_call"
    CALLED_INSTEAD_OF_ASKING = "called_instead_of_asking"
    WRONG_CALL_COUNT = "wrong_call_count"
    # arguments (scored only when the tool is right)
    MISSING_REQUIRED_ARG = "missing_required_arg"
    HALLUCINATED_PARAM = "hallucinated_param"
    SCHEMA_TYPE_ERROR = "schema_type_error"
    WRONG_ARG_VALUE = "wrong_arg_value"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    STALE_VALUE = "stale_value"
    SWAPPED_ARGS = "swapped_args"
    # grounding and fabrication
    UNGROUNDED_VALUE = "ungrounded_value"
    FABRICATED_VALUE = "fabricated_value"
    # trajectories
    MISSING_STEP = "missing_step"
    EXTRA_STEP = "extra_step"
    OUT_OF_ORDER = "out_of_order"
    DEPENDENCY_VIOLATION = "dependency_violation"
    FORBIDDEN_CALL = "forbidden_call"
    REDUNDANT_CALL = "redundant_call"


DIMENSION_OF: Final[dict[ErrorCode, Dimension]] = {
    ErrorCode.WRONG_TOOL: "selection",
    ErrorCode.WRONG_CALL_COUNT: "selection",
    ErrorCode.MISSING_CALL: "abstention",
    ErrorCode.UNEXPECTED_CALL: "abstention",
    ErrorCode.CALLED_INSTEAD_OF_ASKING: "abstention",
    ErrorCode.FABRICATED_VALUE: "abstention",
    ErrorCode.MISSING_REQUIRED_ARG: "arguments",
    ErrorCode.HALLUCINATED_PARAM: "arguments",
    ErrorCode.SCHEMA_TYPE_ERROR: "arguments",
    ErrorCode.WRONG_ARG_VALUE: "arguments",
    ErrorCode.MALFORMED_ARGUMENTS: "arguments",
    ErrorCode.STALE_VALUE: "arguments",
    ErrorCode.SWAPPED_ARGS: "arguments",
    ErrorCode.UNGROUNDED_VALUE: "grounding",
    ErrorCode.MISSING_STEP: "sequencing",
    ErrorCode.EXTRA_STEP: "sequencing",
    ErrorCode.OUT_OF_ORDER: "sequencing",
    ErrorCode.DEPENDENCY_VIOLATION: "sequencing",
    ErrorCode.FORBIDDEN_CALL: "sequencing",
    ErrorCode.REDUNDANT_CALL: "sequencing",
}

DESCRIPTION: Final[dict[ErrorCode, str]] = {
    ErrorCode.WRONG_TOOL: "called a different tool than the gold expects (the confused pair is in expected/actual)",
    ErrorCode.MISSING_CALL: "made no call where the gold expects one",
    ErrorCode.UNEXPECTED_CALL: "called a tool where no call was needed",
    ErrorCode.CALLED_INSTEAD_OF_ASKING: "called a tool where the gold says to ask the user first",
    ErrorCode.WRONG_CALL_COUNT: "made a different number of parallel calls than the gold expects",
    ErrorCode.MISSING_REQUIRED_ARG: "left out an argument the schema or the gold requires",
    ErrorCode.HALLUCINATED_PARAM: "passed a parameter the tool's schema does not have",
    ErrorCode.SCHEMA_TYPE_ERROR: "an argument does not validate against the tool's JSON Schema",
    ErrorCode.WRONG_ARG_VALUE: "an argument's value does not match the gold under its match rule",
    ErrorCode.MALFORMED_ARGUMENTS: "the arguments are not a JSON object (unparseable string)",
    ErrorCode.STALE_VALUE: "an argument uses a value a later user message explicitly replaced with the gold value",
    ErrorCode.SWAPPED_ARGS: "two arguments carry each other's gold values (the pair is in expected/actual)",
    ErrorCode.UNGROUNDED_VALUE: "an identifier-like value appears nowhere in the context the agent had",
    ErrorCode.FABRICATED_VALUE: "called with invented values where the gold says to ask the user",
    ErrorCode.MISSING_STEP: "an expected step of the trajectory never happened",
    ErrorCode.EXTRA_STEP: "a call the trajectory does not expect (mode strict, unordered or subset)",
    ErrorCode.OUT_OF_ORDER: "a step happened out of the expected order (mode strict)",
    ErrorCode.DEPENDENCY_VIOLATION: "a step ran before, or without, a step it depends on, or without its result",
    ErrorCode.FORBIDDEN_CALL: "a call the gold forbids",
    ErrorCode.REDUNDANT_CALL: "the same tool with the same canonical arguments repeated within the trajectory",
}

NO_CALL: Final = "NO_CALL"
"""The selection class of "made no call" (and of gold ``no_call``/``clarify``) in confusion matrices."""

__all__ = ["DESCRIPTION", "DIMENSIONS", "DIMENSION_OF", "NO_CALL", "Dimension", "ErrorCode"]
