"""A shared app (AppTest, password mode): nothing before sign-in, each user's own stores only (by list and by
``?store=``), the sample for everyone, sign-out, expiry, throttling; the no-sign-in banner; the refusal on a
shared address without a setting; and the library's workspace hook."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from app_services import auth, workspace
from app_services import studio
from studio_stores import make_store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
PASSWORDS = {"alice": "alice's password", "bob": "bob's password"}

pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


@pytest.fixture(autouse=True)
def _clean_auth_state():
    """The resolver and the throttle live in the process, as they do in a server: none may leak to another test."""
    address = st_config.get_option("server.address")
    auth.THROTTLE._failures.clear()
    yield
    studio.set_workspace_resolver(None)
    auth.THROTTLE._failures.clear()
    st_config.set_option("server.address", address)


@pytest.fixture
def shared(monkeypatch):
    """Password mode with two accounts; alice has a store of her own."""
    monkeypatch.setenv("GRAVITY_AUTH", "password")
    for name, pw in PASSWORDS.items():
        auth.set_password(name, pw)
    make_store(workspace.user_workspace("alice") / "alice-notes")
    return workspace.user_workspace("alice") / "alice-notes"


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.title] + [e.value for e in at.error] + [e.value for e in at.info]
    parts += [e.value for e in at.warning] + [e.value for e in at.markdown]
    return "\n".join(str(p) for p in parts)


def store_choices(at: AppTest) -> list[str]:
    boxes = [s for s in at.sidebar.selectbox if s.label == "Anchor store"]
    return [o.rsplit(" (", 1)[0] for o in boxes[0].options] if boxes else []  # labels: "name (kind)"


def sign_in(at: AppTest, name: str, password: str) -> AppTest:
    at.text_input(key="signin_name").input(name)
    at.text_input(key="signin_password").input(password)
    next(b for b in at.button if b.label == "Sign in").click()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def new_session(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_nothing_but_the_sign_in_page_before_sign_in(shared):
    at = new_session({"store": "workspace/alice-notes"})
    assert "Sign in to Gravity Studio" in texts(at)
    assert store_choices(at) == []  # no store list, no page
    assert "store_path" not in at.session_state
    assert "alice-notes" not in texts(at)


def test_two_users_never_see_each_others_stores(shared):
    alice = sign_in(new_session(), "alice", PASSWORDS["alice"])
    assert "alice-notes" in store_choices(alice) and "medllm_project" in store_choices(alice)

    bob = sign_in(new_session(), "bob", PASSWORDS["bob"])
    assert "medllm_project" in store_choices(bob)  # the sample is everyone's
    assert "alice-notes" not in store_choices(bob)

    # A link to alice's store, opened by bob (signed in after the link was followed): not alice's store.
    bob_link = new_session({"store": "workspace/alice-notes"})
    sign_in(bob_link, "bob", PASSWORDS["bob"])
    assert Path(bob_link.session_state["store_path"]).name != "alice-notes"
    assert "alice-notes" not in store_choices(bob_link)
    # ... and signed in first, then the link
    bob.query_params["store"] = "workspace/alice-notes"
    del bob.session_state["store_path"]  # as in a new tab: the store comes from the URL
    bob.run()
    assert Path(bob.session_state["store_path"]).name != "alice-notes"


def test_wrong_password_is_refused_and_repeated_failures_are_throttled(shared):
    at = new_session()
    sign_in(at, "alice", "not her password")
    assert "Wrong user name or password" in texts(at)
    for _ in range(auth.THROTTLE.max_failures):
        sign_in(at, "alice", "not her password")
    sign_in(at, "alice", PASSWORDS["alice"])  # right, but too late
    assert "Too many failed sign-ins" in texts(at)
    assert store_choices(at) == []


def test_sign_out_and_expiry_go_back_to_the_sign_in_page(shared, monkeypatch):
    at = sign_in(new_session(), "alice", PASSWORDS["alice"])
    assert "Signed in as alice" in [e.label for e in at.sidebar.expander]
    next(b for b in at.sidebar.button if b.label == "Sign out").click()
    at.run()
    assert "Sign in to Gravity Studio" in texts(at) and store_choices(at) == []

    monkeypatch.setenv("GRAVITY_SESSION_IDLE", "1")
    sign_in(at, "alice", PASSWORDS["alice"])
    assert "alice-notes" in store_choices(at)
    time.sleep(1.3)
    at.run()
    assert "Your session expired" in texts(at) and store_choices(at) == []


def test_a_user_deletes_their_data(shared):
    at = sign_in(new_session(), "alice", PASSWORDS["alice"])
    at.sidebar.checkbox(key="account_delete_ok").check()
    at.run()
    next(b for b in at.sidebar.button if b.label == "Delete my data").click()
    at.run()
    assert not shared.exists()
    assert "alice-notes" not in store_choices(at) and "medllm_project" in store_choices(at)


def test_no_sign_in_mode_names_itself_on_every_page(monkeypatch):
    monkeypatch.setenv("GRAVITY_AUTH", "none")
    at = new_session()
    assert "No sign-in" in texts(at)
    at.switch_page("app_pages/settings.py")
    at.run()
    assert "No sign-in" in texts(at) and "Settings" in texts(at)


def test_a_shared_address_without_a_setting_serves_nothing(monkeypatch, store_dir):
    monkeypatch.delenv("GRAVITY_AUTH", raising=False)
    make_store(studio.workspace_dir() / "mine")
    st_config.set_option("server.address", "0.0.0.0")
    at = new_session()
    assert "will not serve on 0.0.0.0" in texts(at)
    assert store_choices(at) == [] and "mine" not in texts(at)


def test_loopback_stays_one_person_without_sign_in(monkeypatch):
    monkeypatch.delenv("GRAVITY_AUTH", raising=False)
    make_store(studio.workspace_dir() / "mine")
    at = new_session()
    assert "Sign in" not in texts(at)
    assert "mine" in store_choices(at)


def test_the_library_writes_a_sample_edit_into_the_resolved_workspace(tmp_path):
    sample = studio.sample_stores()[0]
    studio.set_workspace_resolver(lambda: tmp_path / "alice-ws")
    target = studio.writable_store_dir(sample)
    assert target.parent == tmp_path / "alice-ws" and studio.is_store(target)
    assert studio.store_ref(target) == f"workspace/{target.name}"
    studio.set_workspace_resolver(None)
    assert studio.store_from_ref(f"workspace/{target.name}") is None  # another workspace does not hold it


def test_the_session_resolver_fails_closed_without_a_user():
    workspace.install()
    # outside any browser session (a preload thread): the process's own workspace
    assert studio.workspace_dir() == studio.gravity_home() / "workspace"
    # in a session where nobody signed in: an error, never the shared folder
    at = AppTest.from_string("from app_services import studio\nstudio.workspace_dir()", default_timeout=30)
    at.run()
    assert at.exception and "no signed-in user" in at.exception[0].message
