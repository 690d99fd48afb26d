"""Cancelling an llm build: no new batch starts, the batches in flight are checkpointed, the rest never
reach the endpoint (the scripted server on 127.0.0.1 counts every request), and a rerun pays only for them."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import threading
import time

import pytest

from gravity_engine.build import CHECKPOINT_DIR, BuildCancelled, build_store
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.llm import OpenAIClient
from gravity_engine.llm.tokens import count_tokens
from gravity_engine.testing.openai_server import Reply, echo_extraction_router
from gravity_engine.testing.pytest_plugin import TEST_API_KEY, local_llm_config

WORKERS = 2
BATCHES = 8
FORK = multiprocessing.get_context("fork")


def _conversation() -> Conversation:
    sessions = []
    for s in range(1, 3):
        sid = f"session_{s}"
        utts = [Utterance(id=f"D{s}:{i}", speaker="Ann" if i % 2 else "Bob", session_id=sid,
                          text=f"Ann met Bob in Paris on day {s}, turn {i}.", timestamp=f"2024-0{s}-10T10:00")
                for i in range(1, 5)]
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


def _cli_build(args: list[str], results) -> None:
    from typer.testing import CliRunner

    from gravity_engine.cli import app

    result = CliRunner().invoke(app, args)
    results.send((result.exit_code, result.output))


def test_ctrl_c_cancels_a_cli_build_like_the_apps_cancel(tmp_path, scripted_openai, fake_embedder, monkeypatch):
    conv = tmp_path / "chat.jsonl"
    conv.write_text("".join(json.dumps({"session": u.session_id, "speaker": u.speaker, "text": u.text,
                                        "timestamp": u.timestamp}) + "\n"
                            for u in _conversation().utterances()), encoding="utf-8")
    scripted_openai.router = _slow_echo
    for name, value in (("GRAVITY_LLM_BASE_URL", scripted_openai.base_url), ("GRAVITY_LLM_API_KEY", TEST_API_KEY),
                        ("GRAVITY_LLM_MODEL", "gravity-echo"), ("GRAVITY_LLM_CONCURRENCY", str(WORKERS)),
                        ("GRAVITY_LLM_TIMEOUT", "30")):
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("gravity_engine.build.pipeline.get_embedder", lambda name="": fake_embedder)
    # Imported before the fork, so the child starts at once: the tokenizer (the CLI's cost plan) and openai.
    count_tokens("warm up")
    _client(scripted_openai)
    receive, send = FORK.Pipe(duplex=False)
    # A forked child: it has the fake embedder already, and Ctrl-C (SIGINT) goes to its main thread.
    child = FORK.Process(target=_cli_build, args=(["build", str(conv), "--backend", "llm", "--batch-size", "1",
                                                   "--out", str(tmp_path / "s")], send))
    child.start()
    for _ in range(3000):
        if scripted_openai.chat_requests() or not child.is_alive():
            break
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGINT)
    assert receive.poll(60), "the build did not stop after Ctrl-C"
    code, output = receive.recv()
    child.join(30)
    sent = len(scripted_openai.chat_requests())
    assert code == 130, output
    assert 1 <= sent <= 2 * WORKERS and "cancelled before they started" in output and "Traceback" not in output
    assert len(list((tmp_path / "s" / CHECKPOINT_DIR).rglob("batch-*.json"))) == sent
