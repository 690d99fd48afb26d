"""Sign-in for a shared app without Streamlit: the mode from address and settings, password accounts, throttling,
session expiry, the accounts command line and the address check ``make app`` runs first."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from app_services import auth, users, workspace

ROOT = Path(__file__).resolve().parent.parent
OIDC = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "gravity",
        "client_secret": "s3cret", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


@pytest.mark.parametrize("address,loopback", [
    ("127.0.0.1", True), ("127.8.9.1", True), ("localhost", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("192.168.1.5", False), ("", False), (None, False), ("::", False), ("example.org", False),
], ids=lambda v: repr(v))
def test_loopback_addresses(address, loopback):
    assert auth.is_loopback(address) is loopback


def test_loopback_without_setting_is_local_and_a_shared_address_is_refused():
    assert auth.resolve_mode("127.0.0.1", env={}) == auth.LOCAL
    for address in ("0.0.0.0", "", None, "10.0.0.2"):
        with pytest.raises(auth.AuthConfigError, match="GRAVITY_AUTH=oidc.*GRAVITY_AUTH=password.*GRAVITY_AUTH=none"):
            auth.resolve_mode(address, env={})


def test_explicit_modes_are_checked_whatever_the_address():
    assert auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "none"}) == "none"
    with pytest.raises(auth.AuthConfigError, match="'nobody' is not a sign-in mode"):
        auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "nobody"})
    with pytest.raises(auth.AuthConfigError, match="has no account"):
        auth.resolve_mode("127.0.0.1", env={"GRAVITY_AUTH": "password"})
    auth.set_password("alice", "correct horse")
    assert auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "password"}) == "password"


def test_oidc_needs_every_secret():
    with pytest.raises(auth.AuthConfigError, match="redirect_uri, cookie_secret, client_id, client_secret"):
        auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "oidc"}, auth_secrets=None)
    partial = {k: v for k, v in OIDC.items() if k != "client_secret"}
    with pytest.raises(auth.AuthConfigError, match=r"with client_secret \("):
        auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "oidc"}, auth_secrets=partial)
    assert auth.resolve_mode("0.0.0.0", env={"GRAVITY_AUTH": "oidc"}, auth_secrets=OIDC) == "oidc"
    # several providers: the chosen one's keys in [auth.NAME], the shared two in [auth]
    shared = {k: OIDC[k] for k in ("redirect_uri", "cookie_secret")}
    named = shared | {"corp": {k: OIDC[k] for k in ("client_id", "client_secret", "server_metadata_url")}}
    env = {"GRAVITY_AUTH": "oidc", "GRAVITY_OIDC_PROVIDER": "corp"}
    assert auth.resolve_mode("0.0.0.0", env=env, auth_secrets=named) == "oidc"
    with pytest.raises(auth.AuthConfigError, match=r"\[auth\] and \[auth.other\].*client_id"):
        auth.resolve_mode("0.0.0.0", env=env | {"GRAVITY_OIDC_PROVIDER": "other"}, auth_secrets=named)


def test_passwords_are_hashed_salted_and_checked(tmp_path):
    path = tmp_path / "users.json"
    auth.set_password("alice", "correct horse", path)
    auth.set_password("bob", "correct horse", path)
    text = path.read_text()
    assert "correct horse" not in text
    stored = json.loads(text)["users"]
    assert stored["alice"]["hash"] != stored["bob"]["hash"]  # salted: one password, two hashes
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert auth.verify("alice", "correct horse", path)
    assert not auth.verify("alice", "correct horsE", path)
    assert not auth.verify("carol", "correct horse", path)
    assert not auth.verify("", "", path)
    assert auth.remove_user("bob", path) and not auth.verify("bob", "correct horse", path)


@pytest.mark.parametrize("name", ["Alice", "../alice", "a/b", "", "oidc-0123", "x" * 41, ".hidden"])
def test_user_names_that_could_name_another_folder_are_refused(name):
    with pytest.raises(ValueError):
        auth.valid_user_name(name)
    with pytest.raises(ValueError):
        workspace.user_dir(name)


def test_short_password_refused(tmp_path):
    with pytest.raises(ValueError, match="at least 8"):
        auth.set_password("alice", "short", tmp_path / "u.json")


def test_broken_accounts_file_names_itself(tmp_path):
    path = tmp_path / "users.json"
    path.write_text("{not json")
    with pytest.raises(auth.AuthConfigError, match="users.json: cannot read"):
        auth.load_users(path)


def test_throttle_locks_a_key_after_repeated_failures_and_frees_it_later():
    t = auth.Throttle(max_failures=3, window=60)
    for i in range(3):
        assert t.wait("user:alice", "ip:1", now=100 + i) == 0
        t.failed("user:alice", "ip:1", now=100 + i)
    assert t.wait("user:alice", now=103) == pytest.approx(57)
    assert t.wait("user:bob", "ip:1", now=103) > 0  # the same address guessing another name waits too
    assert t.wait("user:bob", "ip:2", now=103) == 0
    assert t.wait("user:alice", now=161) == 0  # the oldest failure left the window
    t.failed("user:carol", now=200)
    t.succeeded("user:carol")
    assert t.wait("user:carol", now=200) == 0


def test_sessions_expire_when_idle_or_old(monkeypatch):
    monkeypatch.setenv("GRAVITY_SESSION_IDLE", "60")
    monkeypatch.setenv("GRAVITY_SESSION_MAX", "600")
    s = auth.SignedIn(user_id="alice", display="alice", mode="password", signed_in=1000, last_seen=1000)
    assert not s.expired(now=1059)
    assert s.expired(now=1061)
    for t in range(1050, 1600, 50):
        s.touch(now=t)
    assert not s.expired(now=1590)
    assert s.expired(now=1601)


def test_oidc_ids_are_stable_per_issuer_and_subject_and_valid_folders():
    a = auth.oidc_user_id("http://idp", "alice")
    assert a == auth.oidc_user_id("http://idp", "alice")
    assert a != auth.oidc_user_id("http://other-idp", "alice")
    assert workspace.user_dir(a).name == a
    with pytest.raises(ValueError, match="no 'sub'"):
        auth.oidc_user_id("http://idp", "")


def test_users_command_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("a long password\n"))
    assert users.main(["add", "alice", "--password-stdin"]) == 0
    assert auth.verify("alice", "a long password")
    workspace.record_sign_in("alice", "alice", "password")
    (workspace.user_workspace("alice") / "s").mkdir()
    assert users.main(["list"]) == 0
    assert "alice\taccount\tdata" in capsys.readouterr().out
    assert users.main(["remove", "alice", "--data"]) == 0
    assert not workspace.user_dir("alice").exists() and not auth.verify("alice", "a long password")
    assert users.main(["delete-data", "../etc"]) == 1
    assert "not a user id" in capsys.readouterr().err


@pytest.mark.parametrize("address,env,rc,said", [
    ("127.0.0.1", {}, 0, "sign-in: local"),
    ("0.0.0.0", {}, 1, "will not serve on 0.0.0.0"),
    ("0.0.0.0", {"GRAVITY_AUTH": "none"}, 0, "sign-in: none"),
    ("0.0.0.0", {"GRAVITY_AUTH": "password"}, 1, "has no account"),
], ids=["loopback", "shared-unset", "shared-none", "password-no-accounts"])
def test_make_app_address_check(address, env, rc, said, tmp_path):
    run_env = {k: v for k, v in os.environ.items() if k != "GRAVITY_AUTH"} | env | {"GRAVITY_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "app_services.auth", address], cwd=ROOT, env=run_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == rc
    assert said in done.stdout + done.stderr


def test_a_remembered_sign_in_is_signed_expires_and_is_revoked(monkeypatch):
    monkeypatch.setenv("GRAVITY_SESSION_MAX", "600")
    auth.set_password("alice", "correct horse")
    token = auth.issue_token("alice", now=1000)
    assert auth.read_token(token, now=1100) == ("alice", 1000)
    assert auth.read_token(token, now=1601) is None  # older than GRAVITY_SESSION_MAX
    user, issued, sig = token.split("~")
    assert auth.read_token(f"bob~{issued}~{sig}", now=1100) is None  # another name under alice's signature
    assert auth.read_token(f"alice~{int(issued) + 500}~{sig}", now=1600) is None  # a later date, same signature
    assert auth.read_token("", now=1100) is None and auth.read_token("a~b", now=1100) is None
    auth.revoke_tokens("alice", now=1200)  # signed out (anywhere)
    assert auth.read_token(token, now=1300) is None
    assert auth.read_token(auth.issue_token("alice", now=1300), now=1300) == ("alice", 1300)
    auth.remove_user("alice")
    assert auth.read_token(auth.issue_token("alice", now=1300), now=1300) is None  # no account, no sign-in
    key = auth.gravity_home() / ".session_key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
