"""Who may use a shared app: the sign-in mode from the address and the environment, password accounts hashed in
a file, throttled attempts, and sessions that expire. No Streamlit here (``app.py`` draws with these).

Modes (``GRAVITY_AUTH``):

* unset, on a loopback address: ``local``, one person, no sign-in (the app as it always was);
* ``oidc``: Streamlit's ``st.login`` with the provider in ``.streamlit/secrets.toml`` ``[auth]``;
* ``password``: accounts in ``$GRAVITY_HOME/users.json`` (``python -m app_services.users add NAME``),
  each password hashed with scrypt; a team without per-person accounts makes one account and shares it;
* ``none``: no sign-in on purpose (a container, a trusted network); every page says so in a banner.

Unset on any other address, the app refuses to serve: a chat log is private data.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from gravity_engine.paths import gravity_home

MODES = ("oidc", "password", "none")
LOCAL = "local"
USER_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,39}$")
# scrypt at n=2**14, r=8: ~50 ms and 16 MB per check here, cheap for one sign-in, costly for a guessing loop.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
OIDC_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")


class AuthConfigError(Exception):
    """The app cannot serve as configured; the message says what to set, and where."""


def users_file() -> Path:
    """The password accounts: ``$GRAVITY_USERS_FILE`` or ``$GRAVITY_HOME/users.json``."""
    return Path(os.environ.get("GRAVITY_USERS_FILE") or gravity_home() / "users.json").expanduser()


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost. An empty address is *not* loopback: Streamlit then listens on
    every interface."""
    if not address:
        return False
    if address.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def resolve_mode(address: str | None, env: dict[str, str] | None = None,
                 auth_secrets: dict | None = None) -> str:
    """The sign-in mode the app runs in, or ``AuthConfigError`` saying why it must not serve.
    ``auth_secrets``: the ``[auth]`` section of Streamlit's secrets (for ``oidc``)."""
    env = os.environ if env is None else env
    mode = (env.get("GRAVITY_AUTH") or "").strip().lower()
    if not mode:
        if is_loopback(address):
            return LOCAL
        where = address or "every interface (no server.address set)"
        raise AuthConfigError(
            f"Gravity Studio will not serve on {where} without sign-in: anyone who reaches it would read every "
            "conversation. Set GRAVITY_AUTH=oidc (a provider in .streamlit/secrets.toml), GRAVITY_AUTH=password "
            "(accounts made with `python -m app_services.users add NAME`) or, for a trusted network only, "
            "GRAVITY_AUTH=none. See docs/sharing.md.")
    if mode not in MODES:
        raise AuthConfigError(f"GRAVITY_AUTH={mode!r} is not a sign-in mode: use one of {', '.join(MODES)}")
    if mode == "oidc":
        section = dict(auth_secrets or {})
        provider = oidc_provider(env)
        where = "[auth]"
        if provider:  # [auth] holds redirect_uri and cookie_secret, [auth.NAME] the provider's three keys
            where = f"[auth] and [auth.{provider}]"
            named = section.get(provider)
            section |= dict(named) if isinstance(named, dict) or hasattr(named, "items") else {}
        missing = [k for k in OIDC_KEYS if not section.get(k)]
        if missing:
            raise AuthConfigError(f"GRAVITY_AUTH=oidc needs {where} in .streamlit/secrets.toml with "
                                  + ", ".join(missing) + " (docs/sharing.md)")
        try:
            import authlib  # noqa: F401  # st.login needs it; say so before a user clicks "Sign in"
        except ImportError as err:
            raise AuthConfigError("GRAVITY_AUTH=oidc needs Authlib: pip install -r requirements.txt") from err
    if mode == "password" and not load_users():
        raise AuthConfigError(f"GRAVITY_AUTH=password but {users_file()} has no account: make one with "
                              "`python -m app_services.users add NAME`")
    return mode


def oidc_provider(env: dict[str, str] | None = None) -> str | None:
    """``GRAVITY_OIDC_PROVIDER``: the name of an ``[auth.NAME]`` section when secrets.toml holds several
    providers; None for the one provider written in ``[auth]`` itself."""
    env = os.environ if env is None else env
    return (env.get("GRAVITY_OIDC_PROVIDER") or "").strip() or None


# ---- password accounts --------------------------------------------------------------------------------------

def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(bytes.fromhex(digest)))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, bytes.fromhex(digest))


# A password check that finds no account costs what a real one does: timing does not tell which names exist.
_DUMMY_HASH = hash_password(secrets.token_hex(8))


def valid_user_name(name: str) -> str:
    """The name, or ``ValueError`` saying what a name may hold (it names the user's folder)."""
    if not USER_NAME.match(name or "") or name.startswith("oidc-"):
        raise ValueError(f"{name!r} is not a user name: 1-40 lowercase letters, digits, '.', '-' or '_', "
                         "starting with a letter or digit, not starting with 'oidc-'")
    return name


def load_users(path: Path | None = None) -> dict[str, dict]:
    path = path or users_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as err:
        raise AuthConfigError(f"{path}: cannot read the accounts file ({err})") from err
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, dict):
        raise AuthConfigError(f"{path}: expected {{\"users\": {{NAME: {{\"hash\": ...}}}}}}")
    return users


def save_users(users: dict[str, dict], path: Path | None = None) -> None:
    """Written whole through a temp file, readable by its owner only (the hashes are guessable offline)."""
    path = path or users_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump({"users": users}, fh, indent=2, sort_keys=True)
    os.replace(tmp, path)


def set_password(name: str, password: str, path: Path | None = None) -> None:
    valid_user_name(name)
    if len(password) < 8:
        raise ValueError("a password needs at least 8 characters")
    users = load_users(path)
    entry = users.get(name, {"created": int(time.time())})
    entry["hash"] = hash_password(password)
    users[name] = entry
    save_users(users, path)


def remove_user(name: str, path: Path | None = None) -> bool:
    users = load_users(path)
    if users.pop(name, None) is None:
        return False
    save_users(users, path)
    return True


def verify(name: str, password: str, path: Path | None = None) -> bool:
    entry = load_users(path).get(name or "")
    stored = entry.get("hash", "") if isinstance(entry, dict) else ""
    ok = check_password(password, stored or _DUMMY_HASH)
    return ok and bool(stored)


# ---- remembered sign-in (password mode) -----------------------------------------------------------------------
# Streamlit gives an app no way to set an HTTP cookie, so the page sets this one from script; its value is the
# user, when it was issued and an HMAC over both with a key only the server has. It stops working when it is
# older than GRAVITY_SESSION_MAX, when the account is removed, or when the user signs out anywhere.

SESSION_COOKIE = "gravity_session"


def _session_key() -> bytes:
    path = gravity_home() / ".session_key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".session_key.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
        try:
            os.link(tmp, path)  # the first process to get here wins; the others read its key
        except FileExistsError:
            pass
        os.unlink(tmp)
        return bytes.fromhex(path.read_text().strip())


def _sign(payload: str) -> str:
    return hmac.new(_session_key(), payload.encode(), hashlib.sha256).hexdigest()


def issue_token(user_id: str, now: float | None = None) -> str:
    payload = f"{valid_user_name(user_id)}~{int(time.time() if now is None else now)}"
    return f"{payload}~{_sign(payload)}"


def read_token(token: str | None, now: float | None = None, path: Path | None = None) -> tuple[str, float] | None:
    """(user, issued) for a valid, unexpired, unrevoked token of an existing account; else None."""
    try:
        user_id, issued_text, sig = (token or "").split("~")
        issued = float(int(issued_text))
    except ValueError:
        return None
    if not hmac.compare_digest(sig, _sign(f"{user_id}~{issued_text}")):
        return None
    now = time.time() if now is None else now
    if now - issued > setting_seconds("GRAVITY_SESSION_MAX", 24 * 3600) or issued > now + 60:
        return None
    entry = load_users(path).get(user_id)
    if not isinstance(entry, dict) or issued < entry.get("signed_out_at", 0):
        return None
    return user_id, issued


def revoke_tokens(user_id: str, now: float | None = None, path: Path | None = None) -> None:
    """Sign the user out everywhere: tokens issued until now stop working."""
    users = load_users(path)
    if user_id in users:
        users[user_id]["signed_out_at"] = int(time.time() if now is None else now) + 1
        save_users(users, path)


# ---- throttling ---------------------------------------------------------------------------------------------

@dataclass
class Throttle:
    """At most ``max_failures`` failed sign-ins per key (a user name, a client address) in ``window`` seconds;
    past that, the key waits until the oldest failure leaves the window. One per server process."""

    max_failures: int = 5
    window: float = 900.0
    _failures: dict[str, deque] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def wait(self, *keys: str, now: float | None = None) -> float:
        """Seconds before any of ``keys`` may try again (0: now)."""
        now = time.time() if now is None else now
        with self._lock:
            waits = [0.0]
            for key in keys:
                q = self._failures.get(key)
                while q and q[0] <= now - self.window:
                    q.popleft()
                if q and len(q) >= self.max_failures:
                    waits.append(q[0] + self.window - now)
            return max(waits)

    def failed(self, *keys: str, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._lock:
            for key in keys:
                self._failures.setdefault(key, deque(maxlen=self.max_failures * 4)).append(now)

    def succeeded(self, name_key: str) -> None:
        with self._lock:
            self._failures.pop(name_key, None)


THROTTLE = Throttle()


# ---- sessions -----------------------------------------------------------------------------------------------

def setting_seconds(var: str, default: float) -> float:
    """A duration in seconds from the environment (``GRAVITY_SESSION_IDLE``, ``GRAVITY_SESSION_MAX``)."""
    try:
        return float(os.environ.get(var) or default)
    except ValueError:
        return default


@dataclass
class SignedIn:
    """A signed-in browser session: the user's folder id, the name shown, and when it expires."""

    user_id: str
    display: str
    mode: str
    signed_in: float = field(default_factory=time.time)
    last_seen: float = field(default_factory=time.time)

    def expired(self, now: float | None = None) -> bool:
        """Idle longer than ``GRAVITY_SESSION_IDLE`` (s, default 8 h) or older than ``GRAVITY_SESSION_MAX``
        (s, default 24 h)."""
        now = time.time() if now is None else now
        return (now - self.last_seen > setting_seconds("GRAVITY_SESSION_IDLE", 8 * 3600)
                or now - self.signed_in > setting_seconds("GRAVITY_SESSION_MAX", 24 * 3600))

    def touch(self, now: float | None = None) -> None:
        self.last_seen = time.time() if now is None else now


def oidc_user_id(issuer: str, subject: str) -> str:
    """A folder id for an OIDC identity: stable for the provider's (iss, sub), never the e-mail (it can change
    hands) and never anything a user types."""
    if not subject:
        raise ValueError("the provider's token has no 'sub' claim")
    return "oidc-" + hashlib.sha256(f"{issuer}\n{subject}".encode()).hexdigest()[:24]


def main(argv: list[str] | None = None) -> int:
    """``python -m app_services.auth ADDRESS``: exit 1 with the reason if the app must not serve there (``make
    app`` runs it first, so a misconfigured shared app never starts)."""
    argv = sys.argv[1:] if argv is None else argv
    address = argv[0] if argv else ""
    auth_secrets = None
    secrets_path = Path(".streamlit/secrets.toml")
    if secrets_path.is_file():
        import tomllib

        try:
            auth_secrets = tomllib.loads(secrets_path.read_text(encoding="utf-8")).get("auth")
        except tomllib.TOMLDecodeError as err:
            print(f"{secrets_path}: {err}", file=sys.stderr)
            return 1
    try:
        mode = resolve_mode(address, auth_secrets=auth_secrets)
    except AuthConfigError as err:
        print(err, file=sys.stderr)
        return 1
    print(f"sign-in: {mode} (serving on {address or 'every interface'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
