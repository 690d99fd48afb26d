"""What a concrete client sends and gets back, and the three ways a send can fail.

Concrete clients translate their library's exceptions into these, so retry and fallback policy
lives once, in ``LLMClient``, whatever library does the sending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: dict[str, Any] | None = None


@dataclass
class ChatResponse:
    content: str
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict)


class SendError(Exception):
    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.status = status


class TransientError(SendError):
    """Worth retrying after a pause: 429, 5xx, timeouts, dropped connections.

    ``overload`` marks the failures that say "too many requests at once" (a timeout while queued or
    generating, a 429, a stream that stalled before its first token or was closed before its reply was
    complete): the client lowers its concurrency for the endpoint after them.
    """

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None,
                 timeout: bool = False, overload: bool = False, busy: bool = False):
        super().__init__(message, status=status)
        self.retry_after = retry_after
        self.timeout = timeout
        self.busy = busy  # the server was busy with other requests: a stalled or cut-short stream
        self.overload = overload or timeout or busy


class BadRequestError(SendError):
    """The endpoint rejected the request itself (400/422): maybe an unsupported ``response_format``."""


class FormatRejected(BadRequestError):
    """The endpoint refused the request's ``response_format``, whatever status code it used to say so
    (llama-cpp-python answers ``json_schema`` with HTTP 500): use the next JSON mode, never retry."""


class StreamRejected(BadRequestError):
    """The endpoint refused ``stream: true`` (or its ``stream_options``): ask again without streaming, and
    remember that for the endpoint."""


class FatalError(SendError):
    """Retrying cannot help: bad key, unknown model, endpoint not found."""
