"""The first admin and every role change are serialized: there is always exactly the admins the rules allow.

Real threads against a real SQLite file and the real PostgreSQL (``any_store``). Before the fix, on
PostgreSQL 4–8 of 8 concurrent "first users" all became admin, and two admins demoting each other at the
same moment left no admin in 19 of 20 rounds.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from labeler.store import PermissionDenied, Store, StoreError
from tests.store_reads import audit_events

WRITERS = 8
ROUNDS = 10


def at_once(store_url: str, jobs: list[Callable[[Store], Any]]) -> list[Any]:
    """Run each job in its own thread with its own Store (as separate app sessions or servers would),
    released together; return each job's result or the exception it raised."""
    stores = [Store(store_url) for _ in jobs]
    gate = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def run(n: int) -> None:
        gate.wait()
        try:
            results[n] = jobs[n](stores[n])
        except Exception as exc:  # the outcome under test: refused or done
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(jobs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    for s in stores:
        s.close()
    return results


def test_of_eight_concurrent_first_users_exactly_one_becomes_admin(any_store: Store) -> None:
    url = any_store.url
    results = at_once(url, [lambda s, n=n: s.add_user(f"first-{n}", "admin") for n in range(WRITERS)])
    made = [r for r in results if not isinstance(r, Exception)]
    assert len(made) == 1, results
    assert all(isinstance(r, PermissionDenied) for r in results if isinstance(r, Exception)), results
    assert [(u.name, u.role) for u in any_store.users()] == [(made[0].name, "admin")]
    assert [e["action"] for e in audit_events(any_store)] == ["user.add"]


def test_two_admins_demoting_each_other_always_leave_one_admin(any_store: Store) -> None:
    any_store.add_user("root", "admin")
    boss = "root"
    for n in range(ROUNDS):
        a, b = f"a{n}", f"b{n}"
        any_store.add_user(a, "admin", actor=boss)
        any_store.add_user(b, "admin", actor=boss)
        any_store.set_user(boss, role="annotator", actor=a)  # now a and b are the only admins
        results = at_once(any_store.url, [lambda s, a=a, b=b: s.set_user(b, role="annotator", actor=a),
                                          lambda s, a=a, b=b: s.set_user(a, role="annotator", actor=b)])
        admins = [u.name for u in any_store.users() if u.role == "admin"]
        assert len(admins) == 1 and admins[0] in (a, b), (n, results, admins)
        assert sum(isinstance(r, PermissionDenied) for r in results) == 1, results
        boss = admins[0]


def test_the_last_active_admin_cannot_be_demoted_or_deactivated(any_store: Store) -> None:
    any_store.add_user("root", "admin")
    any_store.add_user("ada", "admin", actor="root")
    any_store.set_user("ada", active=False, actor="root")
    with pytest.raises(PermissionDenied, match="an admin cannot demote or disable themselves"):
        any_store.set_user("root", role="reviewer", actor="root")
    assert [(u.name, u.role, u.active) for u in any_store.users(include_inactive=True)] == [
        ("ada", "admin", False), ("root", "admin", True)]


def test_names_are_one_identity_whatever_their_case(any_store: Store) -> None:
    any_store.add_user("Ann@Example.com", "admin")
    with pytest.raises(StoreError, match=re.escape("there is already a user named 'Ann@Example.com'")):
        any_store.add_user("ann@example.com", "annotator", actor="Ann@Example.com")
