"""Fixtures shared by the review tests."""

from __future__ import annotations

from typing import Any

import pytest

import scorer.hygiene


@pytest.fixture
def lints(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many cases each lint read, in order."""
    done: list[int] = []
    real = scorer.hygiene.lint

    def counted(cases: Any) -> Any:
        seen = [0]

        def counting() -> Any:
            for case in cases:
                seen[0] += 1
                yield case

        try:
            return real(counting())
        finally:
            done.append(seen[0])

    monkeypatch.setattr(scorer.hygiene, "lint", counted)
    return done
