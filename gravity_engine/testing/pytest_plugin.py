"""Pytest fixtures for code that talks to an LLM: the scripted server, with the test switch lifted
for loopback only. Use with ``pytest_plugins = ["gravity_engine.testing.pytest_plugin"]`` in the
root conftest, or import the fixtures into a test module."""

from __future__ import annotations

from typing import Iterator

import pytest

from ..llm.config import LLMConfig
from ..llm.guard import allow_local_model_requests
from .openai_server import ScriptedOpenAIServer, echo_extraction_router

TEST_API_KEY = "sk-test-0123456789-DO-NOT-LEAK"


def local_llm_config(server: ScriptedOpenAIServer, **overrides) -> LLMConfig:
    """A config for ``server`` with short timeouts and tiny backoffs, so failure tests finish in a blink. The
    timeout leaves a loaded 2-core CI machine room: at 0.5 s a repair request once waited longer than that for
    its first token and a test that times nothing out failed; tests of timeouts script 2 s stalls."""
    values = dict(base_url=server.base_url, api_key=TEST_API_KEY, model="gravity-echo", timeout=1.5,
                  max_retries=2, backoff_base=0.01, backoff_max=0.5, concurrency=2)
    values.update(overrides)
    if values["concurrency"] == "auto":  # left unset, as a user who never chose one
        del values["concurrency"]
    return LLMConfig(**values)


@pytest.fixture
def allow_local_llm() -> Iterator[None]:
    """Model requests allowed to 127.0.0.1 only, for this test."""
    with allow_local_model_requests():
        yield


@pytest.fixture
def scripted_openai(allow_local_llm) -> Iterator[ScriptedOpenAIServer]:
    """A running scripted server (echo-extraction router unless the test pushes replies)."""
    with ScriptedOpenAIServer(router=echo_extraction_router) as server:
        yield server
