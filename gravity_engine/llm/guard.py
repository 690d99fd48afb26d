"""A switch that forbids real model requests under tests.

Every method that would send a request calls ``check_model_request(base_url)`` first. Under pytest
(or when ``ALLOW_MODEL_REQUESTS`` is set to False) requests are refused, except to a loopback
address while ``allow_local_model_requests()`` is active: the scripted server's case.
"""

from __future__ import annotations

import ipaddress
import os
import threading
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import urlsplit

from ..errors import GravityError

# None = automatic: forbidden while pytest runs a test, allowed otherwise. Tests may set it outright.
ALLOW_MODEL_REQUESTS: bool | None = None

_lock = threading.Lock()
_local_lifts = 0  # a counter, not a thread-local: extraction sends from worker threads
LOCAL_ENV = "GRAVITY_ALLOW_LOCAL_LLM"  # lets a subprocess (the app under Playwright) reach the scripted server


class ModelRequestsForbidden(GravityError):
    """A model request was attempted where none may be sent (under tests, to a non-loopback address)."""


def _requests_allowed() -> bool:
    if ALLOW_MODEL_REQUESTS is not None:
        return ALLOW_MODEL_REQUESTS
    return "PYTEST_CURRENT_TEST" not in os.environ


def is_loopback_url(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _local_lift_active() -> bool:
    return _local_lifts > 0 or os.environ.get(LOCAL_ENV) == "1"


def check_model_request(base_url: str) -> None:
    """Raise ``ModelRequestsForbidden`` unless a request to ``base_url`` may be sent now."""
    if _requests_allowed():
        return
    if _local_lift_active() and is_loopback_url(base_url):
        return
    hint = ("only a loopback base_url is allowed inside allow_local_model_requests()" if _local_lift_active()
            else "use the scripted server and the `allow_local_llm` fixture "
                 "(gravity_engine.testing.pytest_plugin) or allow_local_model_requests()")
    raise ModelRequestsForbidden(f"model requests are forbidden under tests (to {urlsplit(base_url).hostname}): {hint}")


@contextmanager
def allow_local_model_requests() -> Iterator[None]:
    """Lift the test switch for requests to 127.0.0.1/localhost only, for the duration of the block."""
    global _local_lifts
    with _lock:
        _local_lifts += 1
    try:
        yield
    finally:
        with _lock:
            _local_lifts -= 1
