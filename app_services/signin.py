"""The sign-in gate ``app.py`` runs before any page: the address check, the sign-in page, the no-sign-in banner,
and the account box in the sidebar (sign out, delete my data). Decisions are ``auth``'s; this only draws."""

from __future__ import annotations

import json
import sys
import time

import streamlit as st

from . import studio

from . import auth, workspace

USER_KEY = "gravity_user"  # st.session_state: the SignedIn of this browser session
COOKIE_KEY = "signin_cookie"  # st.session_state: a remembered sign-in to hand the browser ("" to forget it)


def _hand_cookie() -> None:
    """Give the browser the remembered sign-in (password mode) or make it forget it: a script in a 1 px frame
    of this origin sets the cookie, since Streamlit has no call for that. SameSite=Strict; Secure under https."""
    if COOKIE_KEY not in st.session_state:
        return
    token = st.session_state.pop(COOKIE_KEY)
    max_age = int(auth.setting_seconds("GRAVITY_SESSION_MAX", 24 * 3600)) if token else 0
    cookie = json.dumps(f"{auth.SESSION_COOKIE}={token}; Path=/; Max-Age={max_age}; SameSite=Strict")
    st.iframe("<script>const w = window.parent; w.document.cookie = " + cookie
              + " + (w.location.protocol === 'https:' ? '; Secure' : '');</script>", height=1)


def _auth_secrets() -> dict | None:
    try:
        section = st.secrets.get("auth")
    except Exception:  # no secrets.toml at all, or one that does not parse: the mode check says what is missing
        return None
    return dict(section) if section else None


def _refuse(message: str) -> None:
    print(f"gravity: {message}", file=sys.stderr, flush=True)
    st.title("Gravity Studio is not available")
    st.error(message)
    st.stop()


def _start_session(user: auth.SignedIn) -> None:
    """A new identity in this browser session: nothing of the previous one's state (its store, its jobs) stays."""
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    # The URL stays: a link to a store (?store=) opens it after sign-in if it is this user's (or a sample).
    st.session_state[workspace.SESSION_KEY] = str(workspace.record_sign_in(user.user_id, user.display, user.mode))
    st.session_state[USER_KEY] = user


def _sign_out(user: auth.SignedIn | None, flash: str | None = None) -> None:
    if user is not None and user.mode == "password":
        auth.revoke_tokens(user.user_id)
    for key in list(st.session_state.keys()):
        del st.session_state[key]
    st.query_params.clear()
    if flash:
        st.session_state["signin_flash"] = flash
    st.session_state[COOKIE_KEY] = ""  # the browser forgets the remembered sign-in too
    if user is not None and user.mode == "oidc":
        st.logout()  # sends the browser to clear Streamlit's identity cookie and to the provider's logout
        st.stop()  # a rerun now would drop that redirect before it reaches the browser
    st.rerun()


def _password_page() -> None:
    st.title("Sign in to Gravity Studio")
    st.caption("Each account sees only its own stores; the bundled samples are there for everyone.")
    with st.form("signin"):
        name = st.text_input("User name", key="signin_name").strip().lower()
        password = st.text_input("Password", type="password", key="signin_password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        return
    keys = (f"user:{name}", f"ip:{st.context.ip_address or '?'}")
    wait = auth.THROTTLE.wait(*keys)
    if wait > 0:
        st.error(f"Too many failed sign-ins: try again in {int(wait // 60) + 1} min.")
        return
    if not name or not auth.verify(name, password):
        auth.THROTTLE.failed(*keys)
        st.error("Wrong user name or password.")
        return
    auth.THROTTLE.succeeded(keys[0])
    _start_session(auth.SignedIn(user_id=name, display=name, mode="password"))
    st.session_state[COOKIE_KEY] = auth.issue_token(name)  # a reload or a new tab stays signed in
    st.rerun()


def _oidc_user() -> auth.SignedIn | None:
    if not st.user.is_logged_in:
        st.title("Sign in to Gravity Studio")
        st.caption("Each account sees only its own stores; the bundled samples are there for everyone.")
        if st.button("Sign in", type="primary", key="signin_oidc"):
            st.login(auth.oidc_provider())
        return None
    claims = st.user.to_dict()
    try:
        uid = auth.oidc_user_id(str(claims.get("iss") or ""), str(claims.get("sub") or ""))
    except ValueError as err:
        _refuse(f"The sign-in provider's answer cannot be used: {err}")
    user = st.session_state.get(USER_KEY)
    if not isinstance(user, auth.SignedIn) or user.user_id != uid:
        display = str(claims.get("email") or claims.get("name") or claims.get("sub"))
        _start_session(auth.SignedIn(user_id=uid, display=display, mode="oidc"))
    return st.session_state[USER_KEY]


def gate() -> auth.SignedIn | None:
    """Who this browser session is, before anything reads a workspace: None for the one local user; in a shared
    app the signed-in user, else the sign-in page and a stop. A misconfigured shared app serves nothing."""
    address = st.get_option("server.address")
    try:
        mode = auth.resolve_mode(address, auth_secrets=_auth_secrets())
    except auth.AuthConfigError as err:
        _refuse(str(err))
    if mode == auth.LOCAL:
        # Loopback, but a reverse proxy may be handing it to a whole network: then it is shared after all.
        headers = st.context.headers
        if headers.get("X-Forwarded-For") or headers.get("Forwarded"):
            _refuse("A reverse proxy forwards to this app on loopback, so it is shared: set GRAVITY_AUTH "
                    "(oidc, password or none), see docs/sharing.md.")
        return None
    workspace.install()
    if mode == "none":
        st.session_state[workspace.SESSION_KEY] = str(studio.gravity_home() / "workspace")
        st.warning("**No sign-in** (GRAVITY_AUTH=none): everyone who can reach this address sees, changes and "
                   "deletes every store here. Use it only on a trusted network or in a container of your own.",
                   icon=":material/lock_open:")
        return None
    user = st.session_state.get(USER_KEY)
    if isinstance(user, auth.SignedIn) and user.expired():
        _sign_out(user, "Your session expired: sign in again.")
    if mode == "oidc":
        user = _oidc_user()
    elif not isinstance(user, auth.SignedIn):
        remembered = auth.read_token(st.context.cookies.get(auth.SESSION_COOKIE))
        if remembered:
            user_id, issued = remembered
            _start_session(auth.SignedIn(user_id=user_id, display=user_id, mode="password", signed_in=issued))
            user = st.session_state[USER_KEY]
        else:
            if flash := st.session_state.pop("signin_flash", None):
                st.info(flash)
            _password_page()
            user = None
    _hand_cookie()
    if user is None:
        st.session_state.pop(workspace.SESSION_KEY, None)
        st.stop()
    user.touch()
    st.session_state[workspace.SESSION_KEY] = str(workspace.user_workspace(user.user_id))
    return user


def account_sidebar(user: auth.SignedIn | None) -> None:
    """Who is signed in, sign out, and delete my data (shared modes with sign-in only)."""
    if user is None:
        return
    with st.sidebar.expander(f"Signed in as {user.display}", icon=":material/account_circle:"):
        if st.button("Sign out", key="account_sign_out", width="stretch"):
            _sign_out(user)
        sure = st.checkbox("I want to delete every store and edit of mine on this server", key="account_delete_ok")
        if st.button("Delete my data", key="account_delete", disabled=not sure, width="stretch"):
            workspace.delete_user_data(user.user_id)
            st.session_state[workspace.SESSION_KEY] = str(
                workspace.record_sign_in(user.user_id, user.display, user.mode))
            st.session_state.pop("store_path", None)
            st.query_params.clear()
            st.session_state["account_deleted_at"] = time.time()
            st.rerun()
