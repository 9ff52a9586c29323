"""AppTest fixtures: the real app script against a real store seeded from tests/data/app."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.cli.data import convert_files
from labeler.store import Store
from scorer.importers import ImportOptions

REPO = Path(__file__).resolve().parents[2]
APP_MAIN = REPO / "labeler" / "app" / "main.py"
FIXTURES = REPO / "tests" / "data" / "app"


def seed(store: Store) -> None:
    items, rejects = convert_files(sorted(FIXTURES.glob("*.jsonl")), None, ImportOptions())
    assert not rejects
    store.import_items(items)


@pytest.fixture
def seeded(store: Store) -> Store:
    seed(store)
    return store


@pytest.fixture
def app() -> AppTest:
    return AppTest.from_file(str(APP_MAIN), default_timeout=30)
