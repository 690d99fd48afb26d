"""Where the engine keeps its own files on this machine."""

from __future__ import annotations

import os
from pathlib import Path


def gravity_home() -> Path:
    """The engine's own folder for caches, settings and the app's workspace: ``$GRAVITY_HOME`` or ``~/.gravity``."""
    return Path(os.environ.get("GRAVITY_HOME") or Path.home() / ".gravity").expanduser()
