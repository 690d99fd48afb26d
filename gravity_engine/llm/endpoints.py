"""What the clients of one process have learned about each endpoint, shared by all of them.

* The structured-output mode an endpoint accepts, per base URL and model: once a server has rejected
  ``json_schema``, no later client (the next batch, the judge, the next playground question) pays for
  that rejection again.
* An adaptive limit on requests in flight, per base URL: local servers (llama.cpp, Ollama, LM Studio)
  serve one or a few requests at a time and queue the rest, so a request that waits past the timeout
  halves the limit; successes raise it again (see ``AdaptiveLimit``), never above the configured
  concurrency.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

# Strongest first. ``json_object_schema`` is llama.cpp's grammar-constrained extension
# ({"type": "json_object", "schema": ...}); servers that ignore the extra key treat it as json_object.
JSON_MODES = ("json_schema", "json_object_schema", "json_object", "prompt")


class AdaptiveLimit:
    """A counting gate whose size moves between 1 and ``maximum``.

    Overload (a timeout, a 429) halves it and sets a ceiling just below the number of requests that
    were in flight then; below the ceiling it climbs one step per full round of successes, at the
    ceiling it probes one step higher only after ``PROBE_ROUNDS`` rounds. A single-slot server thus
    settles at one request in flight instead of timing out every other request.
    """

    PROBE_ROUNDS = 16

    def __init__(self, maximum: int):
        self.maximum = max(1, int(maximum))
        self.limit = self.maximum
        self.ceiling = self.maximum
        self.in_flight = 0
        self.peak_in_flight = 0
        self.decreases = 0
        self._successes = 0
        self._cond = threading.Condition()

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self._successes += 1
            rounds = 1 if self.limit < self.ceiling else self.PROBE_ROUNDS
            if self.limit < self.maximum and self._successes >= rounds * self.limit:
                self.limit += 1
                self.ceiling = max(self.ceiling, self.limit)
                self._successes = 0
                self._cond.notify_all()

    def overloaded(self) -> None:
        """A request (just out of its slot) timed out or was rate-limited: fewer in flight from now on."""
        with self._cond:
            self._successes = 0
            self.ceiling = max(1, min(self.ceiling, self.in_flight))  # in_flight + 1 (this one) - 1
            new = max(1, min(self.limit // 2, self.ceiling))
            if new < self.limit:
                self.limit = new
                self.decreases += 1

    def resize(self, maximum: int) -> None:
        with self._cond:
            self.maximum = max(1, int(maximum))
            self.limit = min(self.limit, self.maximum)
            self.ceiling = min(self.ceiling, self.maximum)
            self._cond.notify_all()


_lock = threading.Lock()
_modes: dict[tuple[str, str], str] = {}
_limits: dict[str, AdaptiveLimit] = {}


def _url(base_url: str) -> str:
    return base_url.rstrip("/")


def remembered_mode(base_url: str, model: str) -> str | None:
    with _lock:
        return _modes.get((_url(base_url), model))


def remember_mode(base_url: str, model: str, mode: str) -> None:
    if mode not in JSON_MODES:
        raise ValueError(f"unknown JSON mode {mode!r}")
    with _lock:
        _modes[(_url(base_url), model)] = mode


def limit_for(base_url: str, maximum: int) -> AdaptiveLimit:
    """The shared limit of ``base_url``; a client configured with another concurrency resizes it."""
    with _lock:
        limit = _limits.get(_url(base_url))
        if limit is None:
            limit = _limits[_url(base_url)] = AdaptiveLimit(maximum)
        elif limit.maximum != maximum:
            limit.resize(maximum)
        return limit


def forget(base_url: str) -> None:
    """Drop what was learned about ``base_url`` (a new server now listens there)."""
    url = _url(base_url)
    with _lock:
        _limits.pop(url, None)
        for key in [k for k in _modes if k[0] == url]:
            del _modes[key]
