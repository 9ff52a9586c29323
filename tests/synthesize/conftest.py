"""The AppTest fixture, shared with tests/app."""

from __future__ import annotations

from tests.app.conftest import app  # noqa: F401 (the AppTest fixture, shared)
