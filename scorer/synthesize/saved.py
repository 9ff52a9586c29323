"""Reading and writing candidates (``toolgold.candidate/1`` JSON Lines), with ``FILE:LINE`` errors.

Candidates are their own format, not one of the three that ``toolgold import`` and ``toolgold score`` read:
a candidate is a proposal, and must not reach scoring or the gold set without an annotator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from scorer.errors import InvalidRecord, UnknownFormat
from scorer.formats import describe_validation_error, dumps_record, iter_json_lines
from scorer.synthesize.model import CANDIDATE_FORMAT, Candidate


def parse_candidate(value: Any, *, source: str | None = None, line: int | None = None) -> Candidate:
    """Validate one decoded JSON value as a candidate; ``UnknownFormat`` for another format or version."""
    if not isinstance(value, dict):
        raise InvalidRecord("expected a JSON object", source=source, line=line)
    tag = value.get("format")
    if tag is None:
        raise InvalidRecord(f"missing 'format' ({CANDIDATE_FORMAT})", source=source, line=line)
    if tag != CANDIDATE_FORMAT:
        family, _, version = str(tag).rpartition("/")
        newer = (family == CANDIDATE_FORMAT.rpartition("/")[0] and version.isdigit() and int(version) > 1)
        hint = " (a newer version than this toolgold reads: upgrade toolgold)" if newer else ""
        raise UnknownFormat(f"unknown format {tag!r}{hint}; candidates are {CANDIDATE_FORMAT}", source=source,
                            line=line)
    try:
        return Candidate.model_validate(value)
    except ValidationError as exc:
        raise InvalidRecord(describe_validation_error(exc), source=source, line=line) from None


def read_candidates(lines: Iterable[str | bytes], source: str) -> Iterator[Candidate]:
    for number, value in iter_json_lines(lines, source):
        yield parse_candidate(value, source=source, line=number)


def candidate_json_schema() -> dict[str, Any]:
    """The published JSON Schema of ``toolgold.candidate/1`` (``toolgold schema``)."""
    schema = Candidate.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://toolgold.dev/schema/{CANDIDATE_FORMAT.replace('/', '-')}.json"
    return schema


def dumps_candidate(candidate: Candidate) -> str:
    """One canonical JSON line (without the newline)."""
    return dumps_record(candidate)


__all__ = ["candidate_json_schema", "dumps_candidate", "parse_candidate", "read_candidates"]
