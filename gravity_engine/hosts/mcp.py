"""The ``mcp`` host: any memory system that exposes a search tool over the Model Context Protocol.

This is how systems without an adapter of their own attach (LightMem ships an MCP server, its PyPI
package is a placeholder; LiCoMemory; A-Mem's own MCP server; Mem0's OpenMemory). Configure:

* where: ``command`` (launched, spoken to over stdio) or ``url`` (Streamable HTTP);
* search: ``search_tool`` and ``search_args`` (tool argument -> ``query`` | ``k`` | ``conversation_id``),
  constant ``extra_args``, and where results sit (``results_key``) and which fields hold the text,
  utterance ids, score, timestamp and session (dotted paths such as ``metadata.utterance_ids``);
* ingest (optional): ``add_tool`` with ``add_fields`` (item field -> ``utterance_id`` | ``text`` |
  ``words`` | ``speaker`` | ``session_id`` | ``timestamp`` | ``conversation_id``), either one call
  with the whole list under ``add_items_arg`` or one call per utterance; ``clear_tool`` runs before a
  changed conversation is re-ingested. Without ``add_tool`` the server is assumed to hold the memory.

Utterance ids come back through the server's own result fields, never by matching text.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import threading
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field, ValidationError

from ..conversation import Conversation
from ..errors import ConfigError, GravityError, InputError
from ._aio import LoopThread
from ._optional import LIBRARIES, require
from ._optional import install_hint as _hint
from .base import Memory
from .memories import conversation_memories, format_memory_list, memories_fingerprint

_SEARCH_SOURCES = {"query", "k", "conversation_id"}
_ITEM_SOURCES = {"utterance_id", "text", "words", "speaker", "session_id", "timestamp", "conversation_id"}


class McpHostConfig(BaseModel):
    """How to reach an MCP memory server and how its tools map onto the Host protocol."""

    command: str | list[str] | None = Field(None, description="server command, launched and spoken to over stdio")
    url: str | None = Field(None, description="Streamable HTTP endpoint, e.g. http://127.0.0.1:8765/mcp")
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict, description="extra environment for a launched server")
    mode: str = Field("legacy", description="MCP connect mode: 'legacy' handshake (any server) or 'auto'")
    timeout: float = Field(60.0, gt=0, description="seconds per tool call")
    search_tool: str = "search_memory"
    search_args: dict[str, str] = Field(default_factory=lambda: {"query": "query", "limit": "k"})
    extra_args: dict[str, Any] = Field(default_factory=dict)
    results_key: str = "results"
    text_field: str = "memory"
    ids_field: str = "metadata.utterance_ids"
    score_field: str = "score"
    timestamp_field: str = "metadata.timestamp"
    session_field: str = "metadata.session_id"
    add_tool: str | None = "add_memories"
    add_items_arg: str | None = "items"
    add_fields: dict[str, str] = Field(default_factory=lambda: {
        "id": "utterance_id", "text": "words", "speaker": "speaker", "session_id": "session_id",
        "timestamp": "timestamp"})
    add_batch: int = Field(200, ge=1)
    clear_tool: str | None = "clear"

    def check(self) -> "McpHostConfig":
        if bool(self.command) == bool(self.url):
            raise ConfigError("mcp host: give exactly one of command (stdio server) or url (Streamable HTTP server)")
        bad = {v for v in self.search_args.values() if v not in _SEARCH_SOURCES}
        bad |= {v for v in self.add_fields.values() if v not in _ITEM_SOURCES}
        if bad:
            raise ConfigError(f"mcp host: unknown mapped field(s) {sorted(bad)}; search args take "
                              f"{sorted(_SEARCH_SOURCES)}, add fields take {sorted(_ITEM_SOURCES)}")
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> "McpHostConfig":
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise InputError(f"cannot read the MCP host config ({err.strerror})", source=str(path)) from None
        except json.JSONDecodeError as err:
            raise InputError(f"not JSON: {err.msg}", source=str(path), where=f"line {err.lineno}") from None
        try:
            return cls(**raw).check()
        except ValidationError as err:
            first = err.errors()[0]
            raise InputError(first["msg"], source=str(path), where=".".join(str(p) for p in first["loc"])) from None
        except TypeError:
            raise InputError("expected a JSON object of settings", source=str(path)) from None


def field_at(obj: Any, path: str) -> Any:
    """``obj["a"]["b"]`` for the path ``a.b``; None when any step is missing."""
    for part in path.split(".") if path else []:
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


class _Session:
    """One MCP client session owned by a task on the host's loop (anyio scopes must exit in their own task)."""

    def __init__(self, target: Any, mode: str, timeout: float):
        self.target, self.mode, self.timeout = target, mode, timeout
        self.queue: asyncio.Queue | None = None
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        self.queue = asyncio.Queue()
        ready = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._serve(ready))
        await ready

    async def _serve(self, ready: asyncio.Future) -> None:
        from mcp import Client

        try:
            async with Client(self.target, mode=self.mode, read_timeout_seconds=self.timeout) as client:
                ready.set_result(None)
                while True:
                    item = await self.queue.get()
                    if item is None:
                        return
                    fn, fut = item
                    try:
                        fut.set_result(await fn(client))
                    except Exception as err:  # handed back to the caller, the session stays up
                        fut.set_exception(err)
        except BaseException as err:  # noqa: BLE001 - a failed connect must reach start(), not vanish in a task
            if not ready.done():
                ready.set_exception(err if isinstance(err, Exception) else RuntimeError(repr(err)))
            else:
                raise

    async def call(self, fn: Callable[[Any], Any]) -> Any:
        if self.task is None or self.task.done():
            raise GravityError("mcp host: the server connection is closed")
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put((fn, fut))
        return await asyncio.wait_for(fut, self.timeout * 2)

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            await self.queue.put(None)
            try:
                await asyncio.wait_for(self.task, 10)
            except (asyncio.TimeoutError, Exception):
                self.task.cancel()


class McpHost:
    """A memory server over MCP behind the Host protocol (``config`` = settings object, dict or JSON file)."""

    name = "mcp"
    description = "Any memory server with a search tool over the Model Context Protocol (LightMem, LiCoMemory, ...)"
    requires = LIBRARIES["mcp"][0]
    install_hint = _hint("mcp")
    query_independent = False

    def __init__(self, config: McpHostConfig | dict | str | Path | None = None, **settings: Any):
        require("mcp", "mcp")
        if isinstance(config, (str, Path)):
            cfg = McpHostConfig.from_file(config)
        else:
            base = config.model_dump() if isinstance(config, McpHostConfig) else dict(config or {})
            try:
                cfg = McpHostConfig(**(base | settings))
            except ValidationError as err:
                first = err.errors()[0]
                raise ConfigError(f"mcp host: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
        self.config = cfg.check()
        self.conversation_id = ""
        self._fingerprint = ""
        self._loop: LoopThread | None = None
        self._session: _Session | None = None
        self._lock = threading.Lock()

    # --- connection ---------------------------------------------------------------------------------
    def _target(self):
        from mcp import StdioServerParameters

        cfg = self.config
        if cfg.url:
            return cfg.url
        argv = shlex.split(cfg.command) if isinstance(cfg.command, str) else list(cfg.command)
        if not argv:
            raise ConfigError("mcp host: empty command")
        return StdioServerParameters(command=argv[0], args=argv[1:], env=cfg.env or None, cwd=cfg.cwd)

    def _call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        with self._lock:
            if self._session is None:
                self._loop = self._loop or LoopThread("mcp-host")
                session = _Session(self._target(), self.config.mode, self.config.timeout)
                try:
                    self._loop.run(session.start(), self.config.timeout)
                except Exception as err:
                    where = self.config.url or self.config.command
                    raise GravityError(f"mcp host: cannot connect to the MCP server {where!r}: {err}") from err
                self._session = session
            session = self._session
        try:
            result = self._loop.run(session.call(lambda c: c.call_tool(tool, arguments)), self.config.timeout * 3)
        except GravityError:
            raise
        except Exception as err:  # transport errors, MCPError, timeouts
            raise GravityError(f"mcp host: tool {tool!r} failed: {err}") from err
        return _payload(tool, result)

    def close(self) -> None:
        with self._lock:
            if self._session is not None and self._loop is not None:
                try:
                    self._loop.run(self._session.stop(), 15)
                except Exception:
                    pass
            self._session = None
            if self._loop is not None:
                self._loop.close()
                self._loop = None

    def __enter__(self) -> "McpHost":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- Host protocol ------------------------------------------------------------------------------
    def ingest(self, conversation: Conversation) -> None:
        cfg = self.config
        memories = conversation_memories(conversation, "utterance")
        fingerprint = memories_fingerprint(memories)
        if fingerprint == self._fingerprint:
            return
        self.conversation_id = conversation.id
        if cfg.add_tool is None:
            self._fingerprint = fingerprint  # the server already holds its memory
            return
        if self._fingerprint and cfg.clear_tool:
            self._call_tool(cfg.clear_tool, {})
        items = []
        for u, m in zip(conversation.utterances(), memories):
            source = {"utterance_id": u.id, "text": m.text, "words": u.display_text(), "speaker": u.speaker,
                      "session_id": u.session_id, "timestamp": m.timestamp, "conversation_id": conversation.id}
            items.append({name: source[src] for name, src in cfg.add_fields.items()})
        if cfg.add_items_arg:
            for i in range(0, len(items), cfg.add_batch):
                self._call_tool(cfg.add_tool, {cfg.add_items_arg: items[i:i + cfg.add_batch]} | cfg.extra_args)
        else:
            for item in items:
                self._call_tool(cfg.add_tool, item | cfg.extra_args)
        self._fingerprint = fingerprint

    def search(self, query: str, k: int = 10) -> list[Memory]:
        if not query.strip() or k <= 0:
            return []
        cfg = self.config
        source = {"query": query, "k": k, "conversation_id": self.conversation_id}
        payload = self._call_tool(cfg.search_tool, {n: source[s] for n, s in cfg.search_args.items()} | cfg.extra_args)
        rows = field_at(payload, cfg.results_key) if cfg.results_key else payload
        if not isinstance(rows, list):
            raise GravityError(f"mcp host: tool {cfg.search_tool!r} returned no list at {cfg.results_key!r} "
                               f"(got {type(rows).__name__}); set results_key to where its results are")
        return [self._memory(row) for row in rows[:k] if isinstance(row, dict)]

    def _memory(self, row: dict[str, Any]) -> Memory:
        cfg = self.config
        ids = field_at(row, cfg.ids_field)
        ids = [ids] if isinstance(ids, (str, int)) else list(ids or [])
        score = field_at(row, cfg.score_field)
        ts = field_at(row, cfg.timestamp_field)
        session = field_at(row, cfg.session_field)
        return Memory(text=str(field_at(row, cfg.text_field) or ""), utterance_ids=[str(i) for i in ids],
                      score=float(score) if isinstance(score, (int, float)) else 0.0,
                      timestamp=str(ts) if ts else None, session_id=str(session) if session else None)

    def format_memories(self, memories: list[Memory]) -> str:
        return format_memory_list(memories)


def _payload(tool: str, result: Any) -> Any:
    """A tool result's structured content, or its text content read as JSON."""
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        text = " ".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])
        raise GravityError(f"mcp host: tool {tool!r} reported an error: {text[:300]}")
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if structured is not None:
        # A tool returning a list has it wrapped as {"result": [...]} by the SDK.
        return structured
    texts = [getattr(c, "text", None) for c in getattr(result, "content", []) or []]
    texts = [t for t in texts if t]
    if not texts:
        return None
    try:
        return json.loads(texts[0]) if len(texts) == 1 else [json.loads(t) for t in texts]
    except json.JSONDecodeError:
        raise GravityError(f"mcp host: tool {tool!r} returned text that is not JSON: {texts[0][:120]!r}") from None
