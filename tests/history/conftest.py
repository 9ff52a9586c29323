"""Run-history fixtures: the app under AppTest (shared with tests/app) and a store holding three saved runs."""

from __future__ import annotations

import pytest

from labeler.store import RunInfo, Store
from tests.app.conftest import app  # noqa: F401 (the AppTest fixture, shared)
from tests.history.kit import seed_three_runs


@pytest.fixture
def three_runs(store: Store) -> list[RunInfo]:
    return seed_three_runs(store)
