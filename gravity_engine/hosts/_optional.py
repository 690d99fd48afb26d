"""Optional host libraries: import them late, and when one is missing say how to install it.

Adapter modules import nothing optional at module level, so ``import gravity_engine.hosts.mem0``
always works and a missing library surfaces as a one-line ``HostUnavailable`` with an install hint.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from types import ModuleType

from ..errors import ConfigError

REQUIREMENTS_FILE = "requirements-hosts.txt"

# host name -> (importable modules, pip requirement lines); the pins match requirements-hosts.txt
LIBRARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "mem0": (("mem0", "qdrant_client"), ("mem0ai==2.2.1", "qdrant-client==1.20.0")),
    "graphiti": (("graphiti_core", "kuzu", "httpx"), ("graphiti-core==0.31.2", "kuzu==0.11.3", "httpx==0.28.1")),
    "amem": (("agentic_memory", "chromadb"), ("a-mem==0.2.6",)),
    "mcp": (("mcp",), ("mcp==2.3.0",)),
}


class HostUnavailable(ConfigError):
    """A host whose library is not installed; the message says what to install."""


def install_hint(host: str) -> str:
    pins = LIBRARIES.get(host, ((), ()))[1]
    return f"pip install -r {REQUIREMENTS_FILE} -c requirements.txt" + (f"  (or: pip install {' '.join(pins)})"
                                                                     if pins else "")


def missing_modules(host: str) -> list[str]:
    """The modules ``host`` needs that cannot be imported here (checked without importing them)."""
    modules = LIBRARIES.get(host, ((), ()))[0]
    out = []
    for name in modules:
        try:
            if importlib.util.find_spec(name) is None:
                out.append(name)
        except (ImportError, ValueError):
            out.append(name)
    return out


def require(host: str, module: str) -> ModuleType:
    """Import ``module`` for ``host`` or raise ``HostUnavailable`` naming the package to install."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise HostUnavailable(
            f"host {host!r} needs the Python module {module!r}, which is not installed ({err.name or err}); "
            f"install the host libraries with: {install_hint(host)}") from err


def host_dir(host: str, *parts: str) -> Path:
    """A folder for a host library's own files under ``$GRAVITY_HOME/hosts/<host>/``."""
    home = Path(os.environ.get("GRAVITY_HOME") or Path.home() / ".gravity").expanduser()
    path = home.joinpath("hosts", host, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
