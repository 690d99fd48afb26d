"""Cancelling an llm build: no new batch starts, the batches in flight are checkpointed, the rest never
reach the endpoint (the scripted server on 127.0.0.1 counts every request), and a rerun pays only for them."""

from __future__ import annotations

import threading

import pytest

from gravity_engine.build import CHECKPOINT_DIR, BuildCancelled, build_store
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.llm import OpenAIClient
from gravity_engine.testing.openai_server import Reply, echo_extraction_router
from gravity_engine.testing.pytest_plugin import local_llm_config

WORKERS = 2
BATCHES = 20


def _conversation() -> Conversation:
    sessions = []
    for s in range(1, 5):
        sid = f"session_{s}"
        utts = [Utterance(id=f"D{s}:{i}", speaker="Ann" if i % 2 else "Bob", session_id=sid,
                          text=f"Ann met Bob in Paris on day {s}, turn {i}.", timestamp=f"2024-0{s}-10T10:00")
                for i in range(1, 6)]
        sessions.append(Session(id=sid, index=s, timestamp=f"2024-0{s}-10T10:00", utterances=utts))
    return Conversation(id="cancel", sessions=sessions, speakers=["Ann", "Bob"])


def _slow_echo(request):
    # Slow enough that the build is still running when the cancel arrives, on a busy machine too.
    reply = echo_extraction_router(request)
    return Reply.slow(0.15, reply if isinstance(reply, (str, dict)) else reply.content)


def _client(server) -> OpenAIClient:
    # A long timeout: a retry would be a request the test did not ask for.
    return OpenAIClient(local_llm_config(server, concurrency=WORKERS, timeout=30.0, cache=False))


def test_cancelled_llm_build_stops_within_one_batch_per_worker(tmp_path, scripted_openai, fake_embedder):
    scripted_openai.router = _slow_echo
    cancel = threading.Event()

    def progress(p):
        if p.stage == "extract" and p.done >= 1:
            cancel.set()

    out = tmp_path / "s"
    with pytest.raises(BuildCancelled) as info:
        build_store(_conversation(), out, backend="llm", llm_client=_client(scripted_openai), embedder=fake_embedder,
                    batch_size=1, progress=progress, cancel=cancel)
    err = info.value
    sent = len(scripted_openai.chat_requests())
    # The first finished batch sets the cancel; at most the other worker's batch was still in flight.
    assert 1 <= sent <= WORKERS
    assert err.done == sent and err.failed == 0 and err.total == BATCHES and err.cancelled == BATCHES - sent
    assert f"{sent} of {BATCHES} batches done and checkpointed" in str(err)
    assert f"{BATCHES - sent} cancelled before they started" in str(err)
    assert len(list((out / CHECKPOINT_DIR).rglob("batch-*.json"))) == sent  # everything paid for is kept
    assert not (out / "anchors.json").exists()

    store = build_store(_conversation(), out, backend="llm", llm_client=_client(scripted_openai),
                        embedder=fake_embedder, batch_size=1)
    assert len(scripted_openai.chat_requests()) == BATCHES  # the rerun asked only for the cancelled batches
    assert store.report["batches"]["from_checkpoint"] == sent


def test_a_cancel_before_any_batch_finishes_still_keeps_the_batches_in_flight(tmp_path, scripted_openai,
                                                                              fake_embedder):
    cancel = threading.Event()

    def router(request):
        cancel.set()  # the cancel arrives while the first requests are being answered
        return _slow_echo(request)

    scripted_openai.router = router
    with pytest.raises(BuildCancelled) as info:
        build_store(_conversation(), tmp_path / "s", backend="llm", llm_client=_client(scripted_openai),
                    embedder=fake_embedder, batch_size=1, cancel=cancel)
    sent = len(scripted_openai.chat_requests())
    assert 1 <= sent <= WORKERS and info.value.done == sent and info.value.cancelled == BATCHES - sent
