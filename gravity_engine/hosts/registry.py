"""The host registry: every host comes in through the Python entry point group ``gravity_engine.hosts``.

An entry point names a host class (or any callable that returns a ``Host``); the built-ins are declared in
this package's ``pyproject.toml`` exactly as a third-party package declares its own::

    [project.entry-points."gravity_engine.hosts"]
    myhost = "my_package.host:MyHost"

What the registry shows about a host it reads from class attributes, each optional: ``description``
(default: the docstring's first line), ``requires`` (modules it needs, checked without importing them),
``install_hint``, ``aliases`` (other names it answers to) and ``llm_at_ingest`` (its ingestion calls an LLM).
A constructor that takes ``embedder`` gets the engine's embedder. See docs/hosts.md, "Add a host".
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Callable

from ..embed import Embedder
from ..errors import ConfigError
from .base import Host

GROUP = "gravity_engine.hosts"
DISTRIBUTION = "gravity-engine"  # the package whose entry points are the built-in hosts
# Entry points come unordered (setuptools sorts them by name); listings (the CLI, the app's pickers, measure's
# 'all') show the built-ins in this order, the offline references first, then a third party's hosts by name.
BUILTIN_ORDER = ("dense", "bm25", "fullcontext", "mem0", "graphiti", "amem", "mcp")

# Memory systems the method was evaluated on that have no adapter of their own: they attach through the `mcp`
# host when they serve a search tool over the Model Context Protocol.
WITHOUT_ADAPTER = {
    "lightmem": ("LightMem: compression-based memory", "see github.com/zjunlp/LightMem"),
    "licomemory": ("LiCoMemory: hierarchical memory", "see the LiCoMemory repository"),
}


@dataclass(frozen=True)
class RegisteredHost:
    """One entry point of the group, loaded: the factory and what it declares about itself."""

    name: str
    value: str  # "module:attribute", as the entry point says
    package: str  # the distribution that registered it
    factory: Callable[..., Host] | None = None
    description: str = ""
    requires: tuple[str, ...] = ()
    install_hint: str = ""
    aliases: tuple[str, ...] = ()
    llm_at_ingest: bool = False
    error: str = ""  # why the entry point could not be loaded (then ``factory`` is None)
    takes_embedder: bool = field(default=False, repr=False)

    @property
    def builtin(self) -> bool:
        return self.package == DISTRIBUTION

    def missing_modules(self) -> list[str]:
        out = []
        for module in self.requires:
            try:
                if importlib.util.find_spec(module) is None:
                    out.append(module)
            except (ImportError, ValueError):
                out.append(module)
        return out


def _describe(ep: EntryPoint) -> RegisteredHost:
    package = ep.dist.name if ep.dist is not None else "?"
    try:
        factory = ep.load()
    except Exception as err:  # a broken plugin is listed with its error; it must not take the others down
        return RegisteredHost(name=ep.name, value=ep.value, package=package,
                              error=f"cannot load {ep.value}: {type(err).__name__}: {err}")
    if not callable(factory):
        return RegisteredHost(name=ep.name, value=ep.value, package=package,
                              error=f"{ep.value} is not a class or a function that makes a host")
    doc = (inspect.getdoc(factory) or "").strip().splitlines()
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    embedder = params.get("embedder")
    return RegisteredHost(
        name=ep.name, value=ep.value, package=package, factory=factory,
        description=str(getattr(factory, "description", "") or (doc[0] if doc else "")),
        requires=tuple(getattr(factory, "requires", ())),
        install_hint=str(getattr(factory, "install_hint", "") or f"pip install {package}"),
        aliases=tuple(a.lower() for a in getattr(factory, "aliases", ())),
        llm_at_ingest=bool(getattr(factory, "llm_at_ingest", False)),
        takes_embedder=embedder is not None and embedder.kind is not inspect.Parameter.VAR_KEYWORD,
    )


@lru_cache(maxsize=1)
def registered() -> dict[str, RegisteredHost]:
    """Every host of the entry point group by name, the built-ins first; loaded once per process."""
    def order(ep: EntryPoint) -> tuple:
        builtin = ep.dist is not None and ep.dist.name == DISTRIBUTION
        rank = BUILTIN_ORDER.index(ep.name) if builtin and ep.name in BUILTIN_ORDER else len(BUILTIN_ORDER)
        return (not builtin, rank, ep.name)

    eps = sorted(entry_points(group=GROUP), key=order)
    if not any(ep.dist is not None and ep.dist.name == DISTRIBUTION for ep in eps):
        raise ConfigError(f"no built-in host is registered: the installed {DISTRIBUTION} predates its "
                          f"'{GROUP}' entry points; reinstall it with `make setup` (or: pip install -e .)")
    out: dict[str, RegisteredHost] = {}
    for ep in eps:
        name = ep.name.strip().lower()
        host = _describe(ep)
        if name in out:
            host = RegisteredHost(name=name, value=ep.value, package=host.package,
                                  error=f"the name {name!r} is already registered by {out[name].package}")
            name = f"{name} ({host.package})"
        out[name] = host
    return out


def reload() -> None:
    """Read the entry points again (after installing a package into a running process)."""
    registered.cache_clear()


def resolve(name: str) -> RegisteredHost | None:
    """The registered host called ``name`` or one of its aliases (any case), else None."""
    key = name.strip().lower()
    hosts = registered()
    if key in hosts:
        return hosts[key]
    return next((h for h in hosts.values() if key in h.aliases), None)


def create(name: str, embedder: Embedder | None = None, **options: Any) -> Host:
    """A new host by name or alias; ``options`` go to its constructor (unit, window, token_budget, ...)."""
    entry = resolve(name)
    if entry is None:
        key = name.strip().lower()
        names = ", ".join(h for h in registered() if registered()[h].factory is not None)
        if key in WITHOUT_ADAPTER:
            raise ConfigError(f"host {name!r} has no adapter in this version ({WITHOUT_ADAPTER[key][1]}; or attach "
                              f"its MCP server with --host mcp); hosts: {names}")
        raise ConfigError(f"unknown host {name!r}; choose one of {names}")
    if entry.factory is None:
        raise ConfigError(f"host {entry.name!r} ({entry.package}) is registered but unusable: {entry.error}")
    if entry.takes_embedder:
        options = {"embedder": embedder, **options}
    try:
        host = entry.factory(**options)
    except TypeError as err:
        raise ConfigError(f"host {name!r}: bad option ({err})") from err
    if not isinstance(host, Host):
        missing = [m for m in ("name", "query_independent", "ingest", "search", "format_memories")
                   if not hasattr(host, m)]
        raise ConfigError(f"host {name!r} ({entry.value}, from {entry.package}) does not implement the Host "
                          f"protocol (gravity_engine/hosts/base.py): missing {', '.join(missing)}")
    return host


class _LlmAtIngest(Set):
    """The names (and aliases) of registered hosts whose ingestion calls an LLM, read when first asked."""

    def _names(self) -> set[str]:
        return {n for h in registered().values() if h.llm_at_ingest for n in (h.name, *h.aliases)}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lower() in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names()))

    def __len__(self) -> int:
        return len(self._names())


LLM_AT_INGEST = _LlmAtIngest()
