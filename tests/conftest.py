"""Shared fixtures. Tests never touch data/: every test gets its own database file through TOOLGOLD_DB."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"
ARTIFACTS = REPO / "test-artifacts"
SHARED_DATA = Path(os.environ.get("TOOLGOLD_SHARED_DATA") or REPO.parent / "shared" / "data")
"""The full public datasets: CI keeps shared/ beside the clone; a git worktree points here by the variable."""


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


POSTGRES_URL_ENV = "TOOLGOLD_TEST_POSTGRES_URL"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test (the server is started by .ci/run)."""
    base = os.environ.get(POSTGRES_URL_ENV)
    if not base:
        pytest.skip(f"{POSTGRES_URL_ENV} is not set (.ci/run starts a throwaway PostgreSQL and sets it)")
    from sqlalchemy import create_engine, text

    name = f"toolgold_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield base.rsplit("/", 1)[0] + "/" + name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, isolated_db: Path):  # type: ignore[no-untyped-def]
    """The store on each supported backend: a real SQLite file, and a real PostgreSQL database."""
    from labeler.store import Store

    url = str(isolated_db) if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    s = Store(url)
    yield s
    s.close()


def _core_is_compiled() -> bool:
    from scorer import native

    return native.status().compiled


# A test that patches or subclasses the core's internals sees nothing of compiled code (its calls are direct);
# `make test` runs tests/scorer and tests/golden a second time with TOOLGOLD_PURE=1, where these run.
pure_core_only = pytest.mark.skipif(_core_is_compiled(), reason="patches the core's internals: runs in make "
                                    "test's pure-Python pass (TOOLGOLD_PURE=1)")
