"""Renderers of a ``toolgold.report/1``: terminal table, JSON, Markdown, self-contained HTML, JUnit XML.

Renderers take a finished ``Report``; the JSON and JUnit writers also take the per-case results as a
stream (JSON dicts), so a million cases never sit in memory. They write to a text stream they are given
and never open files.
"""

from __future__ import annotations

from scorer.render.html import render_html
from scorer.render.junit import write_junit
from scorer.render.markdown import render_markdown
from scorer.render.report_json import load_report, write_json
from scorer.render.table import render_table

FORMATS = ("table", "json", "markdown", "html", "junit")

__all__ = ["FORMATS", "load_report", "render_html", "render_markdown", "render_table", "write_json",
           "write_junit"]
