"""`toolgold users`, the protected CLI actions and `toolgold app` binding, through the real CLI on temp databases.

``--user`` is attribution, not authentication: the store checks that user's role and writes the audit log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from labeler.cli import cli
from labeler.store import ImportItem, Store
from tests.labeler.test_store import gold
from tests.store_reads import audit_events


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_bootstrapping_users_from_a_shell(store: Store) -> None:
    assert run("users", "list") == (0, "", "no users yet: toolgold users add NAME --role admin\n")
    assert run("users", "add", "alice@example.com", "--role", "admin")[:2] == (0, "added alice@example.com (admin)\n")
    assert run("users", "add", "bob@example.com", "--role", "annotator") == (
        2, "", "error: adding a user needs --user NAME (an admin), or TOOLGOLD_USER\n")
    assert run("users", "add", "bob@example.com", "--role", "annotator", "--user", "alice@example.com")[0] == 0
    assert run("users", "add", "BOB@example.com", "--role", "reviewer", "--user", "alice@example.com") == (
        2, "", "error: there is already a user named 'bob@example.com'\n")
    assert run("users", "set-role", "bob@example.com", "reviewer", "--user", "bob@example.com") == (
        2, "", "error: only an admin can change users ('bob@example.com' is annotator)\n")
    assert run("users", "set-role", "bob@example.com", "reviewer", "--user", "alice@example.com")[:2] == (
        0, "bob@example.com is now reviewer\n")
    assert run("users", "set-role", "alice@example.com", "annotator", "--user", "alice@example.com")[0] == 2
    assert run("users", "deactivate", "bob@example.com", "--user", "alice@example.com")[:2] == (
        0, "deactivated bob@example.com\n")
    assert run("users", "list")[1] == "alice@example.com\tadmin\tactive\nbob@example.com\treviewer\tdeactivated\n"
    assert [(e["actor"], e["action"], e["entity_id"]) for e in audit_events(store)] == [
        ("alice@example.com", "user.add", "alice@example.com"),
        ("alice@example.com", "user.add", "bob@example.com"),
        ("alice@example.com", "user.change", "bob@example.com"),
        ("alice@example.com", "user.change", "bob@example.com")]


def test_roles_are_the_three_the_app_knows(store: Store) -> None:
    code, _, err = run("users", "add", "x", "--role", "owner")
    assert code == 2 and "'owner' is not one of 'annotator', 'reviewer', 'admin'" in err


@pytest.fixture
def held_out(store: Store) -> Store:
    store.add_user("root", "admin")
    store.add_user("ann", "annotator", actor="root")
    store.import_items([ImportItem(gold("g1"), "g.jsonl", 1),
                        ImportItem(gold("r1").model_copy(update={"split": "rolling"}), "g.jsonl", 2)])
    return store


def test_exporting_approved_regression_cases_needs_a_reviewer_and_is_audited(held_out: Store, tmp_path: Path) -> None:
    out = tmp_path / "gold.jsonl"
    code, _, err = run("export", "-o", str(out))
    assert (code, err) == (2, "error: the selection holds 1 approved regression cases (the held-out set): exporting "
                              "them needs --user NAME (a reviewer or admin), or TOOLGOLD_USER\n")
    assert run("export", "-o", str(out), "--user", "ann")[::2] == (
        2, "error: only a reviewer or admin can export approved regression cases ('ann' is annotator)\n")
    assert not out.exists()
    assert [json.loads(x)["id"] for x in run("export", "--split", "rolling")[1].splitlines()] == ["r1"]
    assert run("export", "-o", str(out), "--user", "root")[0] == 0
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["g1", "r1"]
    [event] = [e for e in audit_events(held_out) if e["action"] == "gold.export"]
    assert (event["actor"], json.loads(event["after"])) == ("root", {
        "split": None, "status": None, "tag": None, "cases": 2, "held_out": 1, "target": str(out)})


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::", ""])
def test_the_app_refuses_a_non_loopback_address_without_sign_in(host: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml here
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = run("app", "--host", host, "--port", "1")
    assert (code, out) == (2, "")
    assert err == (f"error: toolgold will not serve the name picker on {host or 'every interface'}: anyone who "
                   "can reach it could pick any name. Bind 127.0.0.1, or configure sign-in with an [auth] section "
                   "in .streamlit/secrets.toml (docs/deployment.md).\n")


def test_loopback_addresses_are_this_machine_only() -> None:
    from labeler.binding import is_loopback

    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "127.0.0.2", "0.0.0.0", "10.0.0.1")] == [
        True, True, True, True, False, False]


def test_an_import_is_recorded_under_the_user_who_ran_it(store: Store, tmp_path: Path) -> None:
    from scorer.formats import dumps_record
    from tests.labeler.test_store import transcript

    src = tmp_path / "t.jsonl"
    src.write_text(dumps_record(transcript()) + "\n", encoding="utf-8")
    assert run("import", str(src), "--user", "nobody") == (
        2, "", "error: --user 'nobody' is not an active user (toolgold users list)\n")
    store.add_user("ann", "annotator")
    assert run("import", str(src), "--user", "ann")[0] == 0
    assert {e["actor"] for e in audit_events(store) if e["action"] != "user.add"} == {"ann"}
