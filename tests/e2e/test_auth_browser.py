"""A shared app in a real browser: two users in two browser contexts never see each other's stores, by list or
by ``?store=``; a visitor without a session gets the sign-in page; the sample stays readable. Password mode, and
OIDC through ``st.login`` against an OpenID Connect provider (oidc-provider-mock) on 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request

import pytest

from app_services import auth
from gravity_engine.testing.app_server import CHROMIUM, AppServer, free_port, launch_chromium
from studio_stores import make_store

pytestmark = pytest.mark.e2e

if not CHROMIUM.exists():
    pytest.skip("/usr/bin/chromium is missing (apt-get install -y chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api")
PASSWORDS = {"alice": "alice's password", "bob": "bob's password"}
SIGN_IN = "Sign in to Gravity Studio"


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


def sidebar_stores(page) -> list[str]:
    """The names in the sidebar's store picker (opened, read, closed)."""
    box = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox")
    box.click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=30_000)
    names = [t.rsplit(" (", 1)[0] for t in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return names


def current_store(page) -> str:
    """The store the sidebar's picker shows (its label dropped), once it shows one."""
    box = page.get_by_role("combobox", name="Anchor store")
    box.wait_for(timeout=60_000)
    return box.input_value()


def password_sign_in(page, url: str, name: str) -> None:
    page.goto(url)
    page.get_by_text(SIGN_IN).wait_for(timeout=60_000)
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(PASSWORDS[name])
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text(f"Signed in as {name}").wait_for(timeout=60_000)


def test_password_mode_two_users(browser, tmp_path):
    home = tmp_path / "home"
    for name, pw in PASSWORDS.items():
        auth.set_password(name, pw, home / "users.json")
    users = home / "users"
    make_store(users / "alice" / "workspace" / "alice-notes")
    with AppServer(home, env={"GRAVITY_AUTH": "password"}) as server:
        # No session: the sign-in page, whatever page or store the URL names.
        anon = browser.new_page()
        for path in ("", "/playground?store=workspace/alice-notes", "/data"):
            anon.goto(server.url + path)
            anon.get_by_text(SIGN_IN).wait_for(timeout=60_000)
            assert anon.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").count() == 0
            assert "alice-notes" not in anon.content()
        anon.close()

        alice = browser.new_context().new_page()
        bob = browser.new_context().new_page()
        password_sign_in(alice, server.url + "/?store=workspace/alice-notes", "alice")
        assert "alice-notes" in current_store(alice)
        assert set(sidebar_stores(alice)) == {"medllm_project", "alice-notes"}

        password_sign_in(bob, server.url + "/?store=workspace/alice-notes", "bob")
        assert "medllm_project" in current_store(bob)  # the link to alice's store opens the sample instead
        assert sidebar_stores(bob) == ["medllm_project"]
        # A reload or a new tab is a new session: the remembered sign-in (a signed cookie) carries bob on, to
        # his own stores only.
        bob.goto(server.url + "/graph?store=workspace/alice-notes")
        bob.get_by_text("Signed in as bob").wait_for(timeout=60_000)
        assert "medllm_project" in current_store(bob)
        cookies = bob.context.cookies()
        assert [c["name"] for c in cookies if c["name"] == "gravity_session"]

        # Sign out: this browser forgets it, and the same cookie replayed elsewhere no longer works.
        bob.get_by_text("Signed in as bob").click()
        sign_out = bob.get_by_role("button", name="Sign out")
        sign_out.wait_for(timeout=30_000)
        sign_out.click()
        bob.get_by_text(SIGN_IN).wait_for(timeout=60_000)
        bob.wait_for_timeout(1500)  # the frame that clears the cookie
        bob.reload()
        bob.get_by_text(SIGN_IN).wait_for(timeout=60_000)
        replay = browser.new_context()
        replay.add_cookies(cookies)
        replayed = replay.new_page()
        replayed.goto(server.url)
        replayed.get_by_text(SIGN_IN).wait_for(timeout=60_000)
        assert replayed.get_by_text("Signed in as bob").count() == 0
    log = server.log()
    assert "Traceback" not in log, log[-3000:]


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(url)


@pytest.fixture
def oidc_provider(tmp_path):
    port = free_port()
    log = open(tmp_path / "oidc.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/.well-known/openid-configuration")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        log.close()


def oidc_sign_in(page, url: str, subject: str) -> None:
    page.goto(url)
    page.get_by_text(SIGN_IN).wait_for(timeout=60_000)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[name=sub]").fill(subject)  # the provider's own authorization form
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text(f"Signed in as {subject}").wait_for(timeout=60_000)


def test_oidc_two_users(browser, tmp_path, oidc_provider):
    home = tmp_path / "home"
    port = free_port()
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
        'client_id = "gravity-studio"\n'
        'client_secret = "test-client-secret"\n'
        f'server_metadata_url = "{oidc_provider}/.well-known/openid-configuration"\n')
    server = AppServer(home, env={"GRAVITY_AUTH": "oidc"}, args=("--secrets.files", str(secrets)))
    server.port, server.url = port, f"http://127.0.0.1:{port}"
    with server:
        alice = browser.new_context().new_page()
        oidc_sign_in(alice, server.url, "alice@example.org")
        folders = [p for p in (home / "users").iterdir() if re.fullmatch(r"oidc-[0-9a-f]{24}", p.name)]
        assert len(folders) == 1
        make_store(folders[0] / "workspace" / "alice-notes")
        alice.goto(server.url + "/?store=workspace/alice-notes")  # the identity cookie survives a reload
        alice.get_by_text("Signed in as alice@example.org").wait_for(timeout=60_000)
        assert "alice-notes" in current_store(alice)

        bob = browser.new_context().new_page()
        oidc_sign_in(bob, server.url, "bob@example.org")
        bob.goto(server.url + "/?store=workspace/alice-notes")
        bob.get_by_text("Signed in as bob@example.org").wait_for(timeout=60_000)
        assert "medllm_project" in current_store(bob)
        assert sidebar_stores(bob) == ["medllm_project"]
        assert len(list((home / "users").iterdir())) == 2

        # Sign out: the identity cookie is gone, the next visit gets the sign-in page.
        bob.get_by_text("Signed in as bob@example.org").click()
        sign_out = bob.get_by_role("button", name="Sign out")
        sign_out.wait_for(timeout=30_000)
        sign_out.click()
        bob.wait_for_url(re.compile(r"/oauth2/end_session"), timeout=60_000)  # the provider's own logout form
        bob.get_by_role("button", name="End session").click(timeout=60_000)
        bob.get_by_text(SIGN_IN).wait_for(timeout=60_000)
        bob.goto(server.url)
        bob.get_by_text(SIGN_IN).wait_for(timeout=60_000)
        alice.reload()  # alice, in her own browser, is still signed in
        alice.get_by_text("Signed in as alice@example.org").wait_for(timeout=60_000)
    log = server.log()
    assert "Traceback" not in log, log[-3000:]


def test_a_loopback_app_behind_a_reverse_proxy_refuses_without_a_sign_in_mode(browser, tmp_path):
    home = tmp_path / "home"
    make_store(home / "workspace" / "mine")
    with AppServer(home) as server:  # loopback, GRAVITY_AUTH unset: one person's app
        direct = browser.new_page()
        direct.goto(server.url)
        assert "mine" in current_store(direct) or "medllm_project" in current_store(direct)
        # the same app reached through a proxy (which adds X-Forwarded-For): shared after all, so nothing shown
        proxied = browser.new_context(extra_http_headers={"X-Forwarded-For": "203.0.113.7"}).new_page()
        proxied.goto(server.url)
        proxied.get_by_text("A reverse proxy forwards to this app").wait_for(timeout=60_000)
        assert proxied.get_by_role("combobox", name="Anchor store").count() == 0
        assert "mine" not in proxied.locator("[data-testid=stMain]").inner_text()
