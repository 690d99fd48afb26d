"""Memory systems Gravity can sit beside: the built-in offline hosts and the registry that names them.

``get_host("dense")`` returns a ready host; ``available_hosts()`` lists every known name with whether
it can run here and how to install what it needs. Adapters for external memory libraries plug in
behind the same ``Host`` protocol (``hosts/base.py``).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from pydantic import BaseModel

from ..embed import Embedder
from ..errors import ConfigError
from .base import Host, Memory


class HostInfo(BaseModel):
    name: str
    description: str
    installed: bool
    builtin: bool
    install_hint: str = ""


_BUILTIN = {
    "dense": ("Embedding retrieval over utterances (or turn windows) with the anchors' sentence-transformers model",
              "sentence_transformers", "pip install -r requirements.txt"),
    "bm25": ("Lexical BM25 retrieval over utterances (bm25s)", "bm25s", "pip install bm25s"),
    "fullcontext": ("The whole history in the prompt, truncated to a token budget (ceiling reference)", None, ""),
}
# Real memory systems the method was evaluated on; their adapters are not written yet.
_EXTERNAL = {
    "mem0": ("Mem0: LLM-extracted memories in a vector store (+ optional graph)", "mem0", "pip install mem0ai"),
    "zep": ("Zep / Graphiti: temporal knowledge graph", "graphiti_core", "pip install graphiti-core"),
    "a-mem": ("A-Mem: agentic atomic notes with links", "agentic_memory", "pip install agentic-memory"),
    "lightmem": ("LightMem: compression-based memory", "lightmem", "see github.com/zjunlp/LightMem"),
    "licomemory": ("LiCoMemory: hierarchical memory", "licomemory", "see the LiCoMemory repository"),
}


def _installed(module: str | None) -> bool:
    return module is None or importlib.util.find_spec(module) is not None


def available_hosts() -> list[HostInfo]:
    """Every host name this engine knows, built-in first, with whether it can be used here."""
    out = [HostInfo(name=n, description=d, installed=_installed(m), builtin=True, install_hint=h)
           for n, (d, m, h) in _BUILTIN.items()]
    out += [HostInfo(name=n, description=d + " (adapter not available yet)", installed=_installed(m), builtin=False,
                     install_hint=h) for n, (d, m, h) in _EXTERNAL.items()]
    return out


def get_host(name: str, embedder: Embedder | None = None, **options: Any) -> Host:
    """A new host by name; ``options`` go to its constructor (unit, window, token_budget, ...)."""
    key = name.strip().lower()
    try:
        if key == "dense":
            from .dense import DenseHost

            return DenseHost(embedder=embedder, **options)
        if key == "bm25":
            from .bm25 import BM25Host

            return BM25Host(**options)
        if key in ("fullcontext", "full-context", "full"):
            from .fullcontext import FullContextHost

            return FullContextHost(**options)
    except TypeError as err:
        raise ConfigError(f"host {name!r}: bad option ({err})") from err
    if key in _EXTERNAL:
        hint = _EXTERNAL[key][2]
        raise ConfigError(f"host {name!r} has no adapter in this version ({hint}); built-in hosts: {', '.join(_BUILTIN)}")
    raise ConfigError(f"unknown host {name!r}; choose one of {', '.join(_BUILTIN)}")


__all__ = ["Host", "HostInfo", "Memory", "available_hosts", "get_host"]
