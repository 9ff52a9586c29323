"""JUnit XML for CI systems: one testcase per scored result; ``needs_review`` results are skipped."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO
from xml.sax.saxutils import escape, quoteattr

from scorer.render.common import unscored_lines
from scorer.report import PARTIAL_METRICS, Report

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("?", text)


def _attr(text: str) -> str:
    return quoteattr(_clean(text))


def write_junit(report: Report, out: TextIO, cases: Iterable[dict[str, Any]], *, name: str = "toolgold") -> None:
    """Write the results in ``cases`` (CaseResult JSON dicts) as one test suite."""
    t = report.totals
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(f"<testsuites name={_attr(name)} tests=\"{t.results}\" failures=\"{t.failed}\" "
              f"skipped=\"{t.needs_review}\" errors=\"0\">\n")
    out.write(f"  <testsuite name={_attr(name)} tests=\"{t.results}\" failures=\"{t.failed}\" "
              f"skipped=\"{t.needs_review}\" errors=\"0\">\n")
    unscored = unscored_lines(report)
    partial = [(f"partial.{metric}", f"{mean.value:.4f}") for metric in PARTIAL_METRICS
               if (mean := getattr(report.partial, metric)).value is not None]
    if unscored or partial:
        out.write("    <properties>\n")
        for line in unscored:
            out.write(f"      <property name=\"unscored\" value={_attr(line)}/>\n")
        for key, value in partial:
            out.write(f"      <property name={_attr(key)} value={_attr(value)}/>\n")
        out.write("    </properties>\n")
    for case in cases:
        trial = case.get("trial") or 0
        test = str(case.get("case_id")) + (f" [trial {trial}]" if trial else "")
        classname = f"{name}.{case.get('kind', 'turn')}"
        status = case.get("status")
        out.write(f"    <testcase classname={_attr(classname)} name={_attr(test)}")
        if status == "pass":
            out.write("/>\n")
            continue
        out.write(">\n")
        if status == "fail":
            errors = case.get("errors") or []
            first = errors[0] if errors else {"code": "fail", "note": ""}
            body = "\n".join(f"{e.get('code')}: {e.get('note')}" for e in errors)
            out.write(f"      <failure type={_attr(str(first.get('code')))} message={_attr(str(first.get('note')))}>"
                      f"{escape(_clean(body))}</failure>\n")
        else:
            reviews = case.get("reviews") or []
            what = ", ".join(f"{r.get('tool')}.{r.get('arg')}" for r in reviews) or "judgement"
            out.write(f"      <skipped message={_attr('needs review: ' + what)}/>\n")
        out.write("    </testcase>\n")
    out.write("  </testsuite>\n</testsuites>\n")


__all__ = ["write_junit"]
