"""Shared test setup: offline model loading, no network but loopback, caches in a temp folder."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

pytest_plugins = ["gravity_engine.testing.pytest_plugin"]

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Tests must never read a developer's real endpoint or key.
# A developer's endpoint, key or local model file (GRAVITY_LLM_GGUF starts a server) must not reach a test.
for _var in [v for v in os.environ if v.startswith("GRAVITY_LLM_")] + ["OPENAI_API_KEY", "OPENAI_BASE_URL"]:
    os.environ.pop(_var, None)

from gravity_engine.threads import configure as _configure_threads  # noqa: E402

_configure_threads()  # as the CLI and the app do at start: thread limits set once, for the whole session

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
LOCOMO = SHARED_DATA / "locomo10.json"
LONGMEMEVAL = SHARED_DATA / "longmemeval" / "longmemeval_oracle.json"

_real_connect = socket.socket.connect
_LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _guarded_connect(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6) and host not in _LOOPBACK:
        raise RuntimeError(f"test tried to reach {address!r}: only loopback is allowed")
    return _real_connect(self, address)


socket.socket.connect = _guarded_connect


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path_factory, monkeypatch):
    """Point every cache and config of the engine at a temp folder."""
    home = tmp_path_factory.mktemp("gravity_home")
    monkeypatch.setenv("GRAVITY_HOME", str(home))
    yield


@pytest.fixture(autouse=True)
def _engine_settings_restored():
    """The engine's settings in the environment as they were before each test: the CLI's ``--llm-*`` options set
    them for the process, and a test that runs the CLI must not hand them to the next one (one leaked
    ``GRAVITY_LLM_JSON_MODE=json_object`` made the local model's build fail several files later)."""
    before = {k: v for k, v in os.environ.items() if k.startswith("GRAVITY_")}
    yield
    for key in [k for k in os.environ if k.startswith("GRAVITY_") and k not in before]:
        del os.environ[key]
    os.environ.update(before)


@pytest.fixture(scope="session")
def embedder():
    """The real default embedder, loaded once per test session."""
    from gravity_engine.embed import get_embedder

    return get_embedder()


@pytest.fixture
def fake_embedder():
    from gravity_engine.testing import FakeEmbedder

    return FakeEmbedder()


def requires_locomo():
    return pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/data/locomo10.json not present")


@pytest.fixture
def fresh_streamlit():
    """Streamlit's caches emptied around an AppTest, so no store, host or chart leaks between tests."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def store_dir(tmp_path):
    """The small hand-made demo store (``studio_stores.make_store``) in a temporary folder."""
    from studio_stores import make_store

    path = tmp_path / "demo_store"
    make_store(path)
    return path
