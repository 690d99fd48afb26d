"""What the clients of one process have learned about each endpoint, shared by all of them.

* The structured-output mode an endpoint accepts, per base URL and model: once a server has rejected
  ``json_schema``, no later client (the next batch, the judge, the next playground question) pays for
  that rejection again.
* Whether an endpoint takes ``stream: true``: a server that rejected it is asked without it from then on.
* An adaptive limit on requests in flight, per base URL: local servers (llama.cpp, Ollama, LM Studio)
  serve one or a few requests at a time and queue the rest, so a request that waits past the timeout,
  or a stream that stalls or is dropped before its reply is complete, halves the limit; successes raise
  it again (see ``AdaptiveLimit``), never above the configured concurrency. With concurrency left at
  auto the limit starts at the server's own slot count (llama.cpp's ``/props``), else at 2.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from contextlib import contextmanager
from typing import Callable, Iterator

# Strongest first. ``json_object_schema`` is llama.cpp's grammar-constrained extension
# ({"type": "json_object", "schema": ...}); servers that ignore the extra key treat it as json_object.
JSON_MODES = ("json_schema", "json_object_schema", "json_object", "prompt")
# Where concurrency is left at auto and the server does not say how many slots it has: two in flight
# find a one-slot server out at the first overlap (one retried request) and climb on a bigger one.
AUTO_START = 2


class AdaptiveLimit:
    """A counting gate whose size moves between 1 and ``maximum``.

    Overload (a timeout, a 429, a stream stalled or dropped before its reply was complete) halves it and
    sets a ceiling just below the number of requests that were in flight then; below the ceiling it
    climbs one step per full round of successes, at the ceiling it probes one step higher only after
    ``PROBE_ROUNDS`` rounds. A single-slot server thus settles at one request in flight instead of
    failing every other request.

    It also keeps the first-token times of the endpoint's recent streams: a stream with no first token
    within ``stall_deadline`` while older requests are in flight is taken for one queued behind them (see
    ``OpenAIClient``).
    """

    PROBE_ROUNDS = 16
    STALL_FACTOR = 3.0  # a first token this many times slower than the median is a queued request

    def __init__(self, maximum: int, start: int | None = None):
        self.maximum = max(1, int(maximum))
        self.limit = max(1, min(int(start or self.maximum), self.maximum))
        self.ceiling = self.maximum
        self.in_flight = 0
        self.peak_in_flight = 0
        self.decreases = 0
        self.started = start is not None  # the start was chosen (configured, or found by ``start_once``)
        self.server_slots: int | None = None
        self._successes = 0
        self._first_tokens: deque[float] = deque(maxlen=64)
        self._seq = 0  # slot tickets, in the order requests took their slots
        self._tickets: set[int] = set()
        self._local = threading.local()
        self._cond = threading.Condition()
        self._start_lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self._cond:
            while self.in_flight >= self.limit:
                self._cond.wait()
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self._seq += 1
            ticket = self._seq
            self._tickets.add(ticket)
        previous, self._local.ticket = getattr(self._local, "ticket", None), ticket
        try:
            yield
        finally:
            self._local.ticket = previous
            with self._cond:
                self.in_flight -= 1
                self._tickets.discard(ticket)
                self._cond.notify_all()

    def current_ticket(self) -> int | None:
        """The ticket of the slot the calling thread holds (tickets number slots in the order taken)."""
        return getattr(self._local, "ticket", None)

    def older_in_flight(self, ticket: int | None) -> int:
        """Requests in flight that took their slot before ``ticket``'s: the ones a server serving in order
        works on first. The oldest request in flight is never counted as queued."""
        with self._cond:
            return sum(1 for t in self._tickets if ticket is None or t < ticket)

    def start_once(self, find_slots: Callable[[], int | None]) -> None:
        """Concurrency left at auto: start at the slots ``find_slots`` reports (once per endpoint, the other
        clients wait for the answer), else at ``AUTO_START``. A reported slot count is also the ceiling."""
        if self.started:
            return
        with self._start_lock:
            if self.started:
                return
            slots = find_slots()
            with self._cond:
                self.server_slots = slots
                self.limit = max(1, min(slots or AUTO_START, self.maximum))
                if slots:
                    self.ceiling = self.limit
                self.started = True
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
        """A request still holding its slot timed out, was rate-limited, or its stream stalled or was dropped:
        fewer in flight from now on. Called inside the slot, so no waiting request takes the freed place
        before the limit has come down."""
        with self._cond:
            self._successes = 0
            self.ceiling = max(1, min(self.ceiling, self.in_flight - 1))  # the others in flight, not this one
            new = max(1, min(self.limit // 2, self.ceiling))
            if new < self.limit:
                self.limit = new
                self.decreases += 1

    def record_first_token(self, seconds: float) -> None:
        with self._cond:
            self._first_tokens.append(max(0.0, seconds))

    def stall_deadline(self, floor: float) -> float:
        """Seconds a stream may wait for its first token before it counts as queued: max(floor, 3x the
        median first-token time of this endpoint's streams so far)."""
        with self._cond:
            median = statistics.median(self._first_tokens) if self._first_tokens else 0.0
        return max(floor, self.STALL_FACTOR * median)

    def resize(self, maximum: int) -> None:
        with self._cond:
            self.maximum = max(1, int(maximum))
            self.limit = min(self.limit, self.maximum)
            self.ceiling = min(self.ceiling, self.maximum)
            self._cond.notify_all()


_lock = threading.Lock()
_modes: dict[tuple[str, str], str] = {}
_limits: dict[str, AdaptiveLimit] = {}
_no_stream: set[str] = set()


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


def streams(base_url: str) -> bool:
    """False once ``base_url`` has rejected ``stream: true``."""
    with _lock:
        return _url(base_url) not in _no_stream


def remember_no_stream(base_url: str) -> None:
    with _lock:
        _no_stream.add(_url(base_url))


def limit_for(base_url: str, maximum: int, auto: bool = False) -> AdaptiveLimit:
    """The shared limit of ``base_url``; a client configured with another concurrency resizes it. With
    ``auto`` the start is left to ``AdaptiveLimit.start_once`` (the server's slots, else 2); otherwise the
    limit starts at ``maximum``."""
    with _lock:
        limit = _limits.get(_url(base_url))
        if limit is None:
            limit = _limits[_url(base_url)] = AdaptiveLimit(maximum, None if auto else maximum)
        elif limit.maximum != maximum:
            limit.resize(maximum)
        return limit


def forget(base_url: str) -> None:
    """Drop what was learned about ``base_url`` (a new server now listens there)."""
    url = _url(base_url)
    with _lock:
        _limits.pop(url, None)
        _no_stream.discard(url)
        for key in [k for k in _modes if k[0] == url]:
            del _modes[key]
