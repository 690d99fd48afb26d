"""Each signed-in user's own folder, ``$GRAVITY_HOME/users/<id>/``: the stores they build, import or edit
(``workspace/``) and a small profile. The library finds the current one through ``studio.workspace_dir()``,
to which ``install()`` hands a resolver; the bundled samples stay read-only for all."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from . import studio

from .auth import USER_NAME, gravity_home

SESSION_KEY = "gravity_workspace"  # st.session_state key holding the signed-in user's workspace folder
_OIDC_ID = r"oidc-[0-9a-f]{24}"


def users_root() -> Path:
    return gravity_home() / "users"


def user_dir(user_id: str) -> Path:
    """``$GRAVITY_HOME/users/<user_id>``; ``ValueError`` for an id that could name another folder."""
    uid = user_id or ""
    if not (re.fullmatch(_OIDC_ID, uid) or (USER_NAME.match(uid) and not uid.startswith("oidc-"))):
        raise ValueError(f"{user_id!r} is not a user id")
    root = users_root().resolve()
    path = (root / user_id).resolve()
    if path.parent != root:
        raise ValueError(f"{user_id!r} is not a user id")
    return path


def user_workspace(user_id: str) -> Path:
    return user_dir(user_id) / "workspace"


def record_sign_in(user_id: str, display: str, mode: str) -> Path:
    """Make the user's folder on first sign-in and note who it belongs to (for whoever manages the server)."""
    folder = user_dir(user_id)
    (folder / "workspace").mkdir(parents=True, exist_ok=True)
    profile = folder / "profile.json"
    try:
        data = json.loads(profile.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        data = {"first_sign_in": int(time.time())}
    data.update(display=display, mode=mode, last_sign_in=int(time.time()))
    profile.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return folder / "workspace"


def delete_user_data(user_id: str) -> bool:
    """Remove everything the user has on the server (stores, edits, profile); False if there was nothing."""
    folder = user_dir(user_id)
    if not folder.exists():
        return False
    shutil.rmtree(folder)
    return True


def _session_workspace() -> Path | None:
    # Read per call from the running script's session, so a fragment's rerun (which skips app.py) still sees
    # its own user; a thread outside any session (a preload) gets None, the process's own workspace.
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    value = ctx.session_state[SESSION_KEY] if SESSION_KEY in ctx.session_state else None
    if value is None:
        # A shared app's page asked for a workspace with nobody signed in: app.py stops before pages then, so
        # this is a bug; fail instead of handing out the shared folder.
        raise PermissionError("no signed-in user in this session")
    return Path(value)


def install() -> None:
    """Make ``studio.workspace_dir()`` answer with the signed-in user's folder (shared modes only)."""
    studio.set_workspace_resolver(_session_workspace)
