"""An in-process fake LLM client: a queue of scripted replies and a history of requests, no HTTP.

It subclasses ``LLMClient``, so validation, repair, fallback and usage counting are the real ones;
only sending is faked. Use the scripted server instead to test the ``openai`` package path.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, Callable

from ..llm import endpoints
from ..llm.client import LLMClient
from ..llm.config import LLMConfig
from ..llm.transport import ChatRequest, ChatResponse, SendError
from .openai_server import approx_tokens


class FakeLLMClient(LLMClient):
    """Replies: str (content), dict (JSON content), a ``SendError`` instance (raised), or a router result."""

    def __init__(self, replies: list[Any] | None = None, router: Callable[[dict], Any] | None = None,
                 config: LLMConfig | None = None, cache: bool = False):
        config = config or LLMConfig(base_url="http://127.0.0.1:9/v1", model="fake-llm", cache=cache,
                                     backoff_base=0.0, max_retries=1)
        endpoints.forget(config.base_url)  # each fake is a new endpoint: nothing learned about another applies
        super().__init__(config, cache=cache, sleep=lambda _s: None)
        self.replies = deque(replies or [])
        self.router = router
        self.history: list[ChatRequest] = []

    def _send(self, request: ChatRequest) -> ChatResponse:
        self.history.append(request)
        if self.replies:
            item = self.replies.popleft()
        elif self.router is not None:
            item = self.router({"model": request.model, "messages": request.messages,
                                "response_format": request.response_format})
        else:
            raise AssertionError("FakeLLMClient: no scripted reply left")
        if isinstance(item, SendError):
            raise item
        content = item if isinstance(item, str) else json.dumps(item)
        prompt = "\n".join(str(m.get("content", "")) for m in request.messages)
        return ChatResponse(content=content, prompt_tokens=approx_tokens(prompt), completion_tokens=approx_tokens(content))

    def _list_models(self) -> list[str]:
        return [self.config.model]
