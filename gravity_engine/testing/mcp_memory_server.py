"""A memory server over the Model Context Protocol that serves our ``dense`` host: the `mcp` host's test target.

    python -m gravity_engine.testing.mcp_memory_server                       # stdio
    python -m gravity_engine.testing.mcp_memory_server --transport streamable-http --port 8765

Tools (shaped like a typical memory server: Mem0-style results with metadata):

* ``add_memories(items)``: items ``{id, text, speaker, session_id, timestamp}``; ids already held are
  replaced, so adding the same conversation twice changes nothing;
* ``search_memory(query, limit)``: ``{"results": [{"memory", "score", "metadata": {"utterance_ids",
  "timestamp", "session_id"}}]}``, best first;
* ``clear()``: forget everything.

``--fake-embedder`` uses the deterministic ``FakeEmbedder`` (no torch import: starts in about a second).
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

from ..conversation import Conversation, Session, Utterance
from ..hosts.dense import DenseHost
from . import FakeEmbedder


class DenseMemoryStore:
    """Utterances added one batch at a time, searched with the dense host (re-ingested lazily after adds)."""

    def __init__(self, embedder=None):
        self.items: dict[str, dict[str, Any]] = {}
        self.host = DenseHost(embedder=embedder, use_cache=False)
        self._dirty = False
        self._lock = threading.Lock()

    def add(self, items: list[dict[str, Any]]) -> dict[str, int]:
        with self._lock:
            for item in items:
                uid = str(item["id"])
                self.items[uid] = {"id": uid, "text": str(item.get("text", "")),
                                   "speaker": str(item.get("speaker") or "unknown"),
                                   "session_id": str(item.get("session_id") or "session"),
                                   "timestamp": item.get("timestamp")}
            self._dirty = True
            return {"added": len(items), "total": len(self.items)}

    def clear(self) -> dict[str, int]:
        with self._lock:
            self.items.clear()
            self._dirty = True
            return {"total": 0}

    def _conversation(self) -> Conversation:
        sessions: dict[str, Session] = {}
        for item in self.items.values():
            sid = item["session_id"]
            session = sessions.setdefault(sid, Session(id=sid, index=len(sessions) + 1, timestamp=item["timestamp"]))
            session.utterances.append(Utterance(id=item["id"], speaker=item["speaker"], text=item["text"],
                                                session_id=sid, timestamp=item["timestamp"]))
        return Conversation(id="mcp-memory", sessions=list(sessions.values()))

    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        with self._lock:
            if self._dirty:
                self.host.ingest(self._conversation())
                self._dirty = False
            memories = self.host.search(query, limit) if query.strip() else []
        return {"results": [{"memory": m.text, "score": m.score,
                             "metadata": {"utterance_ids": m.utterance_ids, "timestamp": m.timestamp,
                                          "session_id": m.session_id}} for m in memories]}


def build_server(store: DenseMemoryStore):
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("gravity-dense-memory", instructions="Conversation memory: add utterances, search them.")

    @server.tool(description="Add conversation utterances as memories (same id = replaced).")
    def add_memories(items: list[dict[str, Any]]) -> dict[str, int]:
        return store.add(items)

    @server.tool(description="Search memories; results best first with their utterance ids.")
    def search_memory(query: str, limit: int = 10) -> dict[str, Any]:
        return store.search(query, limit)

    @server.tool(description="Forget every memory.")
    def clear() -> dict[str, int]:
        return store.clear()

    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--fake-embedder", action="store_true", help="deterministic test embedder (no model)")
    args = parser.parse_args(argv)
    embedder = None
    if args.fake_embedder:
        embedder = FakeEmbedder()
    server = build_server(DenseMemoryStore(embedder))
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
