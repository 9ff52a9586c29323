"""Renderers of a ``toolgold.report/1``: terminal table, JSON, Markdown, self-contained HTML, JUnit XML.

Renderers take a finished ``Report``; the JSON and JUnit writers also take the per-case results as a
stream (JSON dicts), so a million cases never sit in memory. They write to a text stream they are given
and never open files. Each renderer loads on first use: a command renders one format.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scorer.render.html import render_html
    from scorer.render.junit import write_junit
    from scorer.render.markdown import render_markdown
    from scorer.render.report_json import load_report, write_json
    from scorer.render.table import render_table

FORMATS = ("table", "json", "markdown", "html", "junit")

_LAZY = {"render_html": "scorer.render.html", "write_junit": "scorer.render.junit",
         "render_markdown": "scorer.render.markdown", "load_report": "scorer.render.report_json",
         "write_json": "scorer.render.report_json", "render_table": "scorer.render.table"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'scorer.render' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = ["FORMATS", "load_report", "render_html", "render_markdown", "render_table", "write_json",
           "write_junit"]
