"""Shared fixtures. Tests never touch data/: every test gets its own database file through TOOLGOLD_DB."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(autouse=True)
def isolated_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    db = tmp_path / "toolgold.db"
    monkeypatch.setenv("TOOLGOLD_DB", str(db))
    return db


@pytest.fixture
def store(isolated_db: Path):  # type: ignore[no-untyped-def]
    from labeler.store import Store

    s = Store(isolated_db)
    yield s
    s.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
