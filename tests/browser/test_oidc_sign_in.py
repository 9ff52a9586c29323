"""Sign-in with a real OpenID provider on 127.0.0.1 (oidc-provider-mock, its own process, started here) and
the app's ``st.login``, in real Chromium. Nothing of the protocol is mocked: Streamlit's Authlib client talks
to the provider, the browser follows the redirects and fills the provider's form.

The identity is the verified email (or the subject), case-insensitively, never the display name; an unknown
identity is refused with one line; ``?user=`` in the URL changes nothing; sign out ends the session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from labeler.store import Store
from tests.app.conftest import seed
from tests.browser.conftest import Server, free_port, serve

pytestmark = pytest.mark.browser

ADMIN = "root@example.com"
# (sub, claims): the provider's users. mallory claims the admin's address, unverified, and the admin's name;
# gina is a reviewer in the users table but only in the annotators' group at the provider; hal is in no group.
PEOPLE = [
    ("root-sub", {"email": ADMIN, "email_verified": True, "name": "Root", "groups": ["toolgold-admins"]}),
    ("ann-sub", {"email": "Ann@Example.com", "email_verified": True, "name": "Ann",
                 "groups": ["toolgold-annotators"]}),
    ("rita-sub", {"email": "rita@example.com", "email_verified": True, "name": "Rita",
                  "groups": ["staff", "toolgold-reviewers"]}),
    ("mallory", {"email": ADMIN, "email_verified": False, "name": ADMIN, "groups": ["toolgold-admins"]}),
    ("zed-sub", {"email": "zed@example.com", "email_verified": True, "name": "Zed"}),
    ("gina-sub", {"email": "gina@example.com", "email_verified": True, "groups": ["toolgold-annotators"]}),
    ("hal-sub", {"email": "hal@example.com", "email_verified": True, "groups": ["staff"]}),
]
GROUPS = ('[toolgold]\ngroups_claim = "groups"\n[toolgold.roles_by_group]\n"toolgold-annotators" = "annotator"\n'
          '"toolgold-reviewers" = "reviewer"\n"toolgold-admins" = "admin"\n')


@dataclass(frozen=True)
class Provider:
    url: str


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    port = free_port()
    log = tmp_path_factory.mktemp("oidc") / "provider.log"
    cmd = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    for sub, claims in PEOPLE:
        cmd += ["--user-claims", json.dumps({"sub": sub, **claims})]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy_provider(url, proc, log)
        yield Provider(url)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_healthy_provider(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import time
    import urllib.request

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the OIDC provider exited:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/.well-known/openid-configuration", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the OIDC provider did not start:\n{log.read_text()}")


@pytest.fixture(scope="module")
def app(provider: Provider, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The app with an [auth] section pointing at the provider, on an empty database (no users yet)."""
    home = tmp_path_factory.mktemp("oidc-app")
    db = home / "toolgold.db"
    store = Store(db)
    seed(store)
    store.close()
    port = free_port()
    (home / ".streamlit").mkdir()
    (home / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-that-is-long-enough"\n'
        'client_id = "toolgold"\nclient_secret = "toolgold-secret"\n'
        f'server_metadata_url = "{provider.url}/.well-known/openid-configuration"\n' + GROUPS, encoding="utf-8")
    with serve(db, home, cwd=home, port=port, env={"HOME": str(home), "AUTHLIB_INSECURE_TRANSPORT": "1"}) as server:
        yield server


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(20_000)
    expect.set_options(timeout=20_000)
    page = context.new_page()
    yield page
    context.close()


def sign_in(page: Page, app: Server, provider: Provider, sub: str, path: str = "/") -> None:
    page.goto(app.url + path)
    page.get_by_test_id("stSidebar").get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{provider.url}/**")
    page.locator("input[name=sub]").fill(sub)
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{app.url}/**")
    expect(page.get_by_test_id("stSidebar").get_by_role("button", name="Log out")).to_be_visible()


def main_text(page: Page) -> str:
    page.wait_for_function("() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState"
                           " === 'notRunning'")
    return page.get_by_test_id("stMain").inner_text()


def nav(page: Page) -> list[str]:
    """The pages listed in the sidebar (all of them: Streamlit folds a long list behind "View N more")."""
    main_text(page)
    more = page.get_by_test_id("stSidebarNav").get_by_role("button", name="View")
    if more.count():
        more.click()
    links = page.get_by_test_id("stSidebarNav").get_by_role("link").all_inner_texts()
    return [text.split("\n")[-1] for text in links]  # the title, after the icon's ligature


def test_an_empty_database_says_the_bootstrap_command_and_it_works(tab: Page, app: Server,
                                                                 provider: Provider) -> None:
    assert Store(app.db).users() == []
    sign_in(tab, app, provider, "root-sub")
    expect(tab.locator(".st-key-sign-in")).to_have_text(
        f"No users yet. On the server, run: toolgold users add {ADMIN} --role admin")
    command = tab.locator(".st-key-sign-in").inner_text().split("run: ")[1].split()
    done = subprocess.run([sys.executable, "-m", "labeler.cli", *command[1:]], env={
        **os.environ, "TOOLGOLD_DB": str(app.db)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tab.reload()
    expect(tab.get_by_test_id("stSidebar")).to_contain_text(f"{ADMIN} · admin")
    assert nav(tab)[-1] == "Team setup: users, tags, overlap"


@pytest.fixture
def team(app: Server) -> Server:
    store = Store(app.db)
    if store.get_user(ADMIN) is None:
        store.add_user(ADMIN, "admin")
    for name, role in (("ann@example.com", "annotator"), ("rita@example.com", "reviewer"),
                       ("gina@example.com", "reviewer"), ("hal@example.com", "annotator")):
        if store.get_user(name) is None:
            store.add_user(name, role, actor=ADMIN)
    store.close()
    return app


def test_an_annotator_signs_in_by_verified_email_in_any_case_and_sees_only_her_pages(
        tab: Page, team: Server, provider: Provider, artifacts: Path) -> None:
    sign_in(tab, team, provider, "ann-sub")
    expect(tab.get_by_test_id("stSidebar")).to_contain_text("ann@example.com · annotator")
    assert nav(tab) == ["Transcripts", "Label", "Gold set", "Review"]
    tab.screenshot(path=artifacts / "oidc-annotator.png", full_page=True)
    # ?user= is nobody's identity; the run page stays closed to her.
    tab.goto(f"{team.url}/run?user={ADMIN}")
    assert main_text(tab).strip() == "Run is for reviewers and admins; you are signed in as ann@example.com (annotator)."
    tab.goto(f"{team.url}/admin?user={ADMIN}")
    assert "Team setup: users, tags, overlap is for admins" in main_text(tab)
    # Sign out: the session ends, every page is the sign-in screen again.
    tab.get_by_test_id("stSidebar").get_by_role("button", name="Log out").click()
    tab.wait_for_url(f"{provider.url}/**")  # the provider's end-session step (RP-initiated logout)
    tab.get_by_role("button", name="End session").click()
    tab.wait_for_url(f"{team.url}/**")
    expect(tab.get_by_test_id("stSidebar").get_by_role("button", name="Log in")).to_be_visible()
    tab.goto(f"{team.url}/label")
    expect(tab.locator(".st-key-sign-in")).to_have_text("Log in to use toolgold.")


def test_a_reviewer_sees_the_reviewer_pages(tab: Page, team: Server, provider: Provider) -> None:
    sign_in(tab, team, provider, "rita-sub")
    assert nav(tab) == ["Transcripts", "Label", "Gold set", "Run history", "Run", "Compare runs", "Review",
                        "Agreement", "Gold versions", "Gold hygiene", "Adjudication", "Judge calibration"]
    tab.goto(f"{team.url}/admin")
    assert main_text(tab).strip() == ("Team setup: users, tags, overlap is for admins; you are signed in as rita@example.com "
                                      "(reviewer).")


@pytest.mark.parametrize(("sub", "line"), [
    ("zed-sub", f"zed@example.com is not a toolgold user; ask an admin ({ADMIN}) to add it."),
    # an unverified email (here the admin's) and the display name never count: the subject does
    ("mallory", f"mallory is not a toolgold user; ask an admin ({ADMIN}) to add it."),
])
def test_an_unknown_identity_is_refused_with_one_line(tab: Page, team: Server, provider: Provider, sub: str,
                                                      line: str) -> None:
    sign_in(tab, team, provider, sub, path=f"/admin?user={ADMIN}")
    expect(tab.locator(".st-key-sign-in")).to_have_text(line)
    assert main_text(tab).strip() == line
    assert nav(tab) == []


def test_identity_provider_groups_can_lower_a_role_but_never_grant_one(tab: Page, team: Server,
                                                                      provider: Provider) -> None:
    sign_in(tab, team, provider, "gina-sub")  # reviewer in the table, annotator by her groups
    expect(tab.get_by_test_id("stSidebar")).to_contain_text("gina@example.com · annotator")
    assert nav(tab) == ["Transcripts", "Label", "Gold set", "Review"]


def test_no_mapped_group_means_no_access(tab: Page, team: Server, provider: Provider) -> None:
    sign_in(tab, team, provider, "hal-sub")
    expect(tab.locator(".st-key-sign-in")).to_have_text(
        f"hal@example.com: none of your identity provider groups gives a toolgold role; ask an admin ({ADMIN}).")
    assert nav(tab) == []
