"""A private asyncio event loop on its own thread, for async host libraries behind the sync Host protocol.

Graphiti and the MCP client are async. Calling ``asyncio.run`` per search would fail inside an
already running loop (Streamlit, Jupyter) and would lose connections bound to a loop; one loop
per host, on a daemon thread, serves calls from any thread.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")


class LoopThread:
    """Runs coroutines on one event loop that lives on a daemon thread."""

    def __init__(self, name: str = "gravity-host-loop"):
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        self.closed = False

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(self._ready.set)
        self._loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (thread-safe; re-raises its exception)."""
        if self.closed:
            coro.close()
            raise RuntimeError("the host's event loop is closed")
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop: it would wait on itself")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._loop.is_running():
            self._loop.close()
