"""Memory systems Gravity can sit beside: the registry that names them and the protocols they follow.

``get_host("dense")`` returns a ready host; ``available_hosts()`` lists every registered host with whether
it can run here and how to install what it needs. Every host, built-in or a third party's, is registered
through the ``gravity_engine.hosts`` entry point group (``hosts/registry.py``) and follows the ``Host``
protocol, ``VectorHost`` when it searches by vector (``hosts/base.py``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..embed import Embedder
from .base import Host, Memory, VectorHost
from .registry import LLM_AT_INGEST, WITHOUT_ADAPTER, create, registered, resolve


class HostInfo(BaseModel):
    name: str
    description: str
    installed: bool
    builtin: bool
    install_hint: str = ""
    package: str = ""  # the distribution that registered it
    aliases: list[str] = []
    llm_at_ingest: bool = False
    error: str = ""  # why a registered host cannot be loaded


def available_hosts() -> list[HostInfo]:
    """Every registered host, built-in first, with whether it can be used here."""
    out = []
    for h in registered().values():
        installed = h.factory is not None and not h.missing_modules()
        out.append(HostInfo(name=h.name, description=h.description or h.error, installed=installed,
                            builtin=h.builtin, install_hint=h.install_hint, package=h.package,
                            aliases=list(h.aliases), llm_at_ingest=h.llm_at_ingest, error=h.error))
    return out


def get_host(name: str, embedder: Embedder | None = None, **options: Any) -> Host:
    """A new host by name; ``options`` go to its constructor (unit, window, token_budget, ...)."""
    return create(name, embedder, **options)


__all__ = ["LLM_AT_INGEST", "WITHOUT_ADAPTER", "Host", "HostInfo", "Memory", "VectorHost", "available_hosts",
           "get_host", "resolve"]
