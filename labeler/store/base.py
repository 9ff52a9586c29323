"""What every module of the store shares and no SQL library is needed for: the store's error, the busy timeout
of its SQLite connections, and how many values one statement binds at most.

Kept apart from ``engine`` (SQLAlchemy) so that ``staging``, which an import's worker processes run, loads no
SQL library: the workers are forked before the importing process loads SQLAlchemy (``toolgold import``)."""

from __future__ import annotations

from scorer.errors import ToolgoldError

BUSY_TIMEOUT_MS = 10_000
"""How long a SQLite connection of the store waits for another's write lock."""
CHUNK = 500
"""Values bound per statement at most, where a list of keys is looked up or written in parts."""


class StoreError(ToolgoldError):
    """A store action could not be done (the message says why)."""


__all__ = ["BUSY_TIMEOUT_MS", "CHUNK", "StoreError"]
