"""The JSON report: the summary, then every case one per line, so it streams both ways.

Writing never holds the cases: they arrive as JSON lines (from the scoring spool). The layout is still one
valid JSON document::

    {
      "format": "toolgold.report/1",
      ...summary...,
      "cases": [
    {"case_id": ...},
    {"case_id": ...}
      ]
    }

and ``load_report`` reads it back in constant memory (for ``--baseline``), falling back to parsing the
whole document when another tool re-indented it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from pydantic import ValidationError

from scorer import strict_json
from scorer.errors import InvalidRecord, InvalidReport
from scorer.formats import describe_validation_error
from scorer.report import Report

_CASES_OPEN = '  "cases": ['


def write_json(report: Report, out: TextIO, case_lines: Iterable[str] | None = None) -> None:
    """Write the report; ``case_lines`` (compact JSON, one per result) default to ``report.cases``."""
    if case_lines is None:
        case_lines = (c.model_dump_json() for c in report.cases)
    summary = json.dumps(report.model_dump(mode="json", exclude={"cases"}), indent=2, ensure_ascii=False)
    out.write(summary[: -len("\n}")] + ",\n" + _CASES_OPEN)
    separator = "\n"
    for line in case_lines:
        out.write(separator)
        out.write(line.rstrip("\n"))
        separator = ",\n"
    out.write("\n  ]\n}\n")


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``toolgold.report/1`` (published as docs/schema/report-v1.schema.json); the error
    codes appear in it as an enum, so other tools can check the contract."""
    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://toolgold.dev/schema/toolgold.report-1.json"
    return schema


def _report(data: Any, source: str) -> Report:
    if not isinstance(data, dict) or data.get("format") != "toolgold.report/1":
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise InvalidReport(f"{source}: not a toolgold.report/1 report (format: {found!r})")
    try:
        return Report.model_validate({**data, "cases": []})
    except ValidationError as exc:
        raise InvalidReport(f"{source}: {describe_validation_error(exc)}") from None


def load_report(lines: Iterable[str], source: str = "report") -> tuple[Report, Iterator[dict[str, Any]]]:
    """The summary of a JSON report and an iterator over its cases (as JSON dicts)."""
    iterator = iter(lines)
    head: list[str] = []
    for line in iterator:
        if line.rstrip("\r\n") == _CASES_OPEN:
            try:
                data = strict_json.loads("".join(head).rstrip().rstrip(",") + "\n}")
            except InvalidRecord as exc:
                raise InvalidReport(f"{source}: not a toolgold.report/1 report: {exc}") from None
            return _report(data, source), _stream_cases(iterator, source)
        head.append(line)
    try:
        data = strict_json.loads("".join(head))
    except InvalidRecord as exc:
        raise InvalidReport(f"{source}: not a toolgold.report/1 report: {exc}") from None
    report = _report(data, source)
    cases = data.get("cases", [])
    return report, iter(cases if isinstance(cases, list) else [])


def _stream_cases(lines: Iterator[str], source: str) -> Iterator[dict[str, Any]]:
    for line in lines:
        text = line.strip().rstrip(",")
        if not text or text in ("]", "}"):
            continue
        try:
            value = strict_json.loads(text)
        except InvalidRecord as exc:
            raise InvalidReport(f"{source}: a case line is not valid JSON ({exc.message})") from None
        if isinstance(value, dict):
            yield value


__all__ = ["load_report", "report_json_schema", "write_json"]
