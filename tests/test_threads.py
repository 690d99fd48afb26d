"""Thread limits are set once at start (gravity_engine.threads); queries and builds running at the same time
never change them. The gates below force the interleaving that used to leave the process on one thread:
the second caller saves the first one's temporary "1" and restores it last."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from gravity_engine import threads
from gravity_engine.build import build_store
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.errors import ConfigError
from gravity_engine.hosts.base import Memory
from gravity_engine.query.session import HostSession
from gravity_engine.testing import FakeEmbedder
from test_build import WordExtractor

ROOT = Path(__file__).resolve().parent.parent
WAIT = 20  # seconds: only reached when the code under test deadlocks, never in a passing run


def _fresh_thread_torch_threads() -> int:
    """What a newly started thread (a Streamlit script run, a worker) gets from torch."""
    import torch

    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    t.start()
    t.join()
    return seen[0]


def _blas_threads() -> set[int]:
    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def _conversation(cid: str) -> Conversation:
    utts = [Utterance(id=f"{cid}:{i}", speaker="Ann" if i % 2 else "Bob", text=f"{cid} turn {i} about Paris.",
                      session_id="s1", timestamp="2024-01-10T10:00") for i in range(1, 5)]
    return Conversation(id=cid, sessions=[Session(id="s1", index=1, timestamp="2024-01-10T10:00", utterances=utts)],
                        speakers=["Ann", "Bob"])


class GateEmbedder(FakeEmbedder):
    """Runs ``gate`` on its first call: the build's background prefetch of every utterance."""

    def __init__(self, gate):
        super().__init__()
        self._gate = gate
        self._first = True

    def encode(self, texts):
        if self._first:
            self._first = False
            self._gate()
        return super().encode(texts)


@pytest.fixture
def two_torch_threads():
    """A process that gave torch two threads at start (the test session itself runs on one)."""
    import torch

    torch.set_num_threads(2)
    yield
    torch.set_num_threads(threads.current().torch if threads.current() else 1)


def test_two_concurrent_builds_leave_torch_threads_as_set_at_start(tmp_path, two_torch_threads):
    before = _fresh_thread_torch_threads()
    assert before == 2
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()

    def gate_a():
        a_inside.set()
        assert b_inside.wait(WAIT)

    def gate_b():
        b_inside.set()
        assert a_done.wait(WAIT)  # build A finishes (and restores what it saved) while B is still inside

    errors: list[BaseException] = []

    def build(name, gate, done=None):
        try:
            build_store(_conversation(name), tmp_path / name, extractor=WordExtractor(), embedder=GateEmbedder(gate),
                        verify=False)
        except BaseException as err:  # noqa: BLE001 - reported by the main thread
            errors.append(err)
        finally:
            if done is not None:
                done.set()

    ta = threading.Thread(target=build, args=("a", gate_a, a_done))
    tb = threading.Thread(target=build, args=("b", gate_b))
    ta.start()
    assert a_inside.wait(WAIT)
    tb.start()
    ta.join(WAIT)
    tb.join(WAIT)
    assert not errors and not ta.is_alive() and not tb.is_alive()
    assert _fresh_thread_torch_threads() == before


class GateHost:
    """A host on the fake embedder that searches by vector and runs a gate inside each search."""

    name = "gate"
    query_independent = False

    def __init__(self, gates):
        self._embedder = FakeEmbedder()
        self._gates = list(gates)
        self._lock = threading.Lock()

    @property
    def vector_model(self):
        return self._embedder.name

    def ingest(self, conversation, vectors=None) -> None:
        pass

    def search(self, query, k=10):
        return []

    def search_vectors(self, vectors, k=10):
        with self._lock:
            gate = self._gates.pop(0)
        gate()
        return [[Memory(text="m", utterance_ids=["u1"])] for _ in range(len(vectors))]

    def format_memories(self, memories):
        return "\n".join(f"- {m.text}" for m in memories)


def _set_blas_from_a_thread_that_ends(n: int) -> None:
    """As the app does: its entry script runs in a Streamlit thread that ends after the run, so afterwards no
    thread holds threadpoolctl's control of OpenBLAS and any thread may change it."""
    with threadpool_limits(limits=n, user_api="blas"):
        pass  # the with block hands back the main thread's control (held since conftest's configure)
    t = threading.Thread(target=lambda: threadpool_limits(limits=n, user_api="blas"))
    t.start()
    t.join()


def test_two_concurrent_queries_leave_blas_threads_as_set():
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()
    host = GateHost([lambda: (a_inside.set(), b_inside.wait(WAIT)), lambda: (b_inside.set(), a_done.wait(WAIT))])
    session = HostSession(host, None, FakeEmbedder())
    assert session.by_vector
    qvec = np.ones(64, dtype=np.float32) / 8

    def query_a():
        try:
            session.search("When did Ann go to Paris?", 5, qvec)
        finally:
            a_done.set()

    _set_blas_from_a_thread_that_ends(2)
    try:
        assert _blas_threads() == {2}
        ta = threading.Thread(target=query_a)
        tb = threading.Thread(target=lambda: session.search("Who is Bob?", 5, qvec))
        ta.start()
        assert a_inside.wait(WAIT)
        tb.start()
        ta.join(WAIT)
        tb.join(WAIT)
        assert not ta.is_alive() and not tb.is_alive()
        assert _blas_threads() == {2}
    finally:
        _set_blas_from_a_thread_that_ends(threads.current().blas if threads.current() else 1)


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=os.environ | {"HF_HUB_OFFLINE": "1"} | env)


def test_configure_sets_limits_once_from_the_environment():
    # A fresh process: torch is imported after configure (as in most CLI commands) and still gets the limit.
    code = """
import threading
from threadpoolctl import threadpool_info
from gravity_engine import threads
first = threads.configure()
again = threads.configure(torch_threads=2, blas_threads=2)
import torch
seen = []
t = threading.Thread(target=lambda: seen.append(torch.get_num_threads())); t.start(); t.join()
blas = sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
print(first.torch, first.blas, again == first, seen[0], blas)
"""
    out = _run(code, GRAVITY_TORCH_THREADS="1", GRAVITY_BLAS_THREADS="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "True", "1", "[1]"]


def test_cli_start_reports_a_bad_thread_setting_clearly():
    out = _run("import sys; sys.argv = ['gravity', 'hosts']; from gravity_engine.cli import app; app()",
               GRAVITY_BLAS_THREADS="many")
    assert out.returncode != 0
    assert "GRAVITY_BLAS_THREADS='many' is not a whole number of threads" in out.stderr
    assert "Traceback" not in out.stderr


def test_default_limits_are_one_thread_each_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv(threads.TORCH_ENV, raising=False)
    monkeypatch.delenv(threads.BLAS_ENV, raising=False)
    assert threads.default_limits() == threads.ThreadLimits(torch=1, blas=1)
    monkeypatch.setenv(threads.TORCH_ENV, "4")
    assert threads.default_limits().torch == 4
    monkeypatch.setenv(threads.TORCH_ENV, "0")
    with pytest.raises(ConfigError, match="give at least 1 thread"):
        threads.default_limits()
