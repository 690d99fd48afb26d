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


# Hosts whose default ingestion calls an LLM (A-Mem's per-note evolution step): they need an endpoint.
LLM_AT_INGEST = frozenset({"amem"})

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


# Adapters for real memory libraries (optional dependencies: requirements-hosts.txt); see docs/hosts.md.
_ADAPTERS = {
    "mem0": ("Mem0 (mem0ai) with an embedded qdrant store: verbatim memories, or Mem0's LLM fact extraction",
             "mem0", "Mem0Host"),
    "graphiti": ("Graphiti (Zep's temporal knowledge graph) on embedded Kuzu, hybrid BM25 + cosine edge search",
                 "graphiti", "GraphitiHost"),
    "amem": ("A-Mem (a-mem): agentic notes in ChromaDB; one LLM evolution call per note", "amem", "AMemHost"),
    "mcp": ("Any memory server with a search tool over the Model Context Protocol (LightMem, LiCoMemory, ...)",
            "mcp", "McpHost"),
}
_ALIASES = {"zep": "graphiti", "a-mem": "amem", "agentic-memory": "amem"}


def _adapter_info(name: str) -> HostInfo:
    from ._optional import install_hint, missing_modules

    description, module, _ = _ADAPTERS[name]
    return HostInfo(name=name, description=description, installed=not missing_modules(name), builtin=False,
                    install_hint=install_hint(name))


def available_hosts() -> list[HostInfo]:
    """Every host name this engine knows, built-in first, with whether it can be used here."""
    out = [HostInfo(name=n, description=d, installed=_installed(m), builtin=True, install_hint=h)
           for n, (d, m, h) in _BUILTIN.items()]
    out += [_adapter_info(n) for n in _ADAPTERS]
    out += [HostInfo(name=n, description=d + " (adapter not available yet)", installed=_installed(m), builtin=False,
                     install_hint=h) for n, (d, m, h) in _EXTERNAL.items()
            if n not in _ADAPTERS and _ALIASES.get(n) not in _ADAPTERS]
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
        key = _ALIASES.get(key, key)
        if key in _ADAPTERS:
            import importlib

            module = importlib.import_module(f".{_ADAPTERS[key][1]}", __name__)
            cls = getattr(module, _ADAPTERS[key][2])
            return cls(**options) if key == "mcp" else cls(embedder=embedder, **options)
    except TypeError as err:
        raise ConfigError(f"host {name!r}: bad option ({err})") from err
    if key in _EXTERNAL:
        hint = _EXTERNAL[key][2]
        raise ConfigError(f"host {name!r} has no adapter in this version ({hint}; or attach its MCP server with "
                          f"--host mcp); hosts: {', '.join([*_BUILTIN, *_ADAPTERS])}")
    raise ConfigError(f"unknown host {name!r}; choose one of {', '.join([*_BUILTIN, *_ADAPTERS])}")


__all__ = ["LLM_AT_INGEST", "Host", "HostInfo", "Memory", "available_hosts", "get_host"]
