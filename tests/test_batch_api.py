"""Extraction through the batch API (/v1/files + /v1/batches) against the scripted server on 127.0.0.1:
answers land in the LLM cache under the online key, the build then makes 0 online calls and writes the
same anchors as an online build, and a run killed between submission and download resumes the batch by
its id without submitting anything twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gravity_engine.build import build_store
from gravity_engine.cli import app
from gravity_engine.extract.batch import ENDPOINT, BatchAPIRun, extraction_requests
from gravity_engine.llm.cache import ResponseCache
from gravity_engine.scale import BuildOptions, build_corpus, load_corpus
from gravity_engine.scale.run import BATCH_STATE_DIR
from gravity_engine.store import AnchorStore
from gravity_engine.testing.batch_routes import BatchRoutes
from gravity_engine.testing.openai_server import Reply
from gravity_engine.testing.pytest_plugin import local_llm_config

ROOT = Path(__file__).resolve().parent.parent


def write_corpus(folder: Path) -> Path:
    """Two small conversations (our own text), two sessions each: four extraction batches."""
    folder.mkdir(parents=True, exist_ok=True)
    talks = {
        "harbour": [("s1", "2024-03-12 19:30", "Ines", "Yesterday I sailed to the old harbour with Tomas."),
                    ("s1", "2024-03-12 19:31", "Tomas", "The lighthouse keeper, Mr Oduya, showed us the lamp."),
                    ("s2", "2024-04-02 10:00", "Ines", "Last week Tomas joined the Harbour Rowing Club."),
                    ("s2", "2024-04-02 10:01", "Tomas", "We race against Porto next month.")],
        "garden": [("s1", "2024-05-01 08:00", "Yuki", "I planted tomatoes with my neighbour Arjun on Sunday."),
                   ("s1", "2024-05-01 08:02", "Arjun", "Yuki wants to enter the Riverside Flower Show."),
                   ("s2", "2024-06-10 18:00", "Yuki", "Two days ago the first tomatoes turned red."),
                   ("s2", "2024-06-10 18:05", "Arjun", "Next week we give some to the school kitchen.")],
    }
    for name, turns in talks.items():
        lines = [{"session": s, "timestamp": t, "speaker": who, "text": text} for s, t, who, text in turns]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return folder


def _options(server, **config) -> BuildOptions:
    return BuildOptions(backend="llm", llm_config=local_llm_config(server, timeout=10.0, **config))


def _anchors(out: Path) -> dict:
    a = AnchorStore.load(out).anchors
    return {m: [x.model_dump(exclude={"checks"}) for x in getattr(a, m)] for m in ("entities", "events", "topics")}


def test_batch_lines_are_the_online_requests_keyed_as_the_cache_keys_them(tmp_path, scripted_openai):
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    config = local_llm_config(scripted_openai)
    items = extraction_requests(convs, config, batch_size=20)
    assert len(items) == 4 and len({i.key for i in items}) == 4
    line = json.loads(BatchAPIRun._line(items[0]))
    assert line["custom_id"] == items[0].key and line["method"] == "POST" and line["url"] == ENDPOINT
    body = line["body"]
    assert body["model"] == "gravity-echo" and body["temperature"] == 0.0 and body["max_tokens"] == config.max_tokens
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "extract_fused"
    assert "<conversation>" in body["messages"][-1]["content"]
    assert "sk-test" not in json.dumps([i.body for i in items])  # the key is a header, never in a request file


def test_batch_build_makes_no_online_call_and_writes_the_online_anchors(tmp_path, scripted_openai, monkeypatch):
    routes = BatchRoutes(scripted_openai)
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    summary = build_corpus(convs, tmp_path / "batch", _options(scripted_openai), batch_api=True, poll_s=0)
    assert [r.status for r in summary.rows] == ["built", "built"]
    assert len(routes.created()) == 1 and len(routes.uploads()) == 1
    assert scripted_openai.chat_requests() == []  # every extraction came from the batch
    assert summary.batch_api["stored"] == 4 and summary.batch_api["unanswered"] == 0
    assert all(r.llm_calls == 0 for r in summary.rows)
    report = AnchorStore.load(tmp_path / "batch" / "harbour").report
    assert report["llm"]["total"]["cache_hits"] == 2 and report["batches"]["extracted"] == 2  # checkpointed as usual

    # An online rebuild with the same cache: 0 calls.
    rebuilt = build_store(convs[0], tmp_path / "again", backend="llm", llm_config=local_llm_config(scripted_openai))
    assert rebuilt.report["llm"]["total"]["calls"] == 0 and scripted_openai.chat_requests() == []

    # The online path with an empty cache asks the same questions and gets the same anchors.
    fresh = local_llm_config(scripted_openai, cache_dir=tmp_path / "fresh-cache")
    for conv in convs:
        build_store(conv, tmp_path / "online" / conv.id, backend="llm", llm_config=fresh)
        assert _anchors(tmp_path / "online" / conv.id) == _anchors(tmp_path / "batch" / conv.id)
    assert len(scripted_openai.chat_requests()) == 4


def test_a_line_the_batch_could_not_answer_is_made_online(tmp_path, scripted_openai):
    routes = BatchRoutes(scripted_openai)
    scripted_openai.push(Reply.error(500, "scripted: this line failed"))  # the batch's first line
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    summary = build_corpus(convs, tmp_path / "out", _options(scripted_openai), batch_api=True, poll_s=0)
    assert summary.batch_api["stored"] == 3 and summary.batch_api["unanswered"] == 1
    assert routes.batches["batch_scripted_0"]["error_file_id"]
    assert len(scripted_openai.chat_requests()) == 1  # the build asked for it online, once
    assert sorted(r.llm_calls for r in summary.rows) == [0, 1]
    # A rerun submits nothing again: the failed line was already sent once from this state folder.
    build_corpus(convs, tmp_path / "out", _options(scripted_openai), batch_api=True, poll_s=0, force=True)
    assert len(routes.created()) == 1


def test_run_killed_between_submit_and_download_resumes_the_batch_by_id(tmp_path, scripted_openai):
    routes = BatchRoutes(scripted_openai)
    routes.hold()  # the provider takes its time: the batch stays in_progress
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "out"
    env = dict(os.environ, GRAVITY_LLM_BASE_URL=scripted_openai.base_url, GRAVITY_LLM_MODEL="gravity-echo",
               GRAVITY_LLM_API_KEY="sk-test-0123456789-DO-NOT-LEAK", GRAVITY_ALLOW_LOCAL_LLM="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    child = subprocess.Popen([sys.executable, "-m", "gravity_engine", "build-all", str(corpus), "--out", str(out),
                              "--backend", "llm", "--batch-api", "--poll-seconds", "0.05"],
                             cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    state_file = out / BATCH_STATE_DIR / "state.json"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and child.poll() is None:
            if state_file.is_file() and json.loads(state_file.read_text())["batches"][0].get("id"):
                break
            time.sleep(0.1)
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        time.sleep(0.3)  # polling the held batch
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        child.stderr.close()
    assert len(routes.created()) == 1 and not (out / "harbour" / "anchors.json").exists()
    state = json.loads(state_file.read_text())
    assert state["batches"][0]["status"] == "in_progress" and "sk-test" not in state_file.read_text()

    routes.release()
    summary = build_corpus(load_corpus(corpus).conversations, out, _options(scripted_openai), batch_api=True, poll_s=0)
    assert summary.batch_api["resumed"] == ["batch_scripted_0"] and summary.batch_api["submitted"] == 0
    assert len(routes.created()) == 1 and len(routes.uploads()) == 1  # 0 duplicate submissions
    assert scripted_openai.chat_requests() == []
    assert [r.status for r in summary.rows] == ["built", "built"]
    assert len(ResponseCache(local_llm_config(scripted_openai).cache_dir)) == 4


def test_an_endpoint_without_a_batch_api_gets_one_clear_line(tmp_path, scripted_openai, monkeypatch):
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", scripted_openai.base_url)
    monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
    result = CliRunner().invoke(app, ["build-all", str(write_corpus(tmp_path / "corpus")), "--out", str(tmp_path / "o"),
                                      "--backend", "llm", "--batch-api", "--poll-seconds", "0"])
    assert result.exit_code == 2, result.output
    assert "does this endpoint offer a batch API? if not, build without --batch-api" in result.output
    assert "Traceback" not in result.output
    assert scripted_openai.chat_requests() == []


def test_batch_api_needs_the_llm_backend(tmp_path):
    result = CliRunner().invoke(app, ["build-all", str(write_corpus(tmp_path / "corpus")), "--batch-api"])
    assert result.exit_code == 2 and "--backend llm" in result.output


def test_a_batch_created_but_not_recorded_is_found_by_its_input_file(tmp_path, scripted_openai):
    # A run killed after batches.create returned but before it saved the id: state.json knows the
    # uploaded file only. The next run finds the batch by that file instead of submitting again.
    import openai

    from gravity_engine.fileio import atomic_write_json

    routes = BatchRoutes(scripted_openai)
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    options = _options(scripted_openai)
    items = extraction_requests(convs, options.llm_config, batch_size=20)
    state_dir = tmp_path / "out" / BATCH_STATE_DIR
    state_dir.mkdir(parents=True)
    (state_dir / "requests-000.jsonl").write_text("".join(BatchAPIRun._line(i) + "\n" for i in items))
    client = openai.OpenAI(base_url=scripted_openai.base_url, api_key="sk-test")
    with (state_dir / "requests-000.jsonl").open("rb") as fh:
        uploaded = client.files.create(file=("requests-000.jsonl", fh), purpose="batch")
    client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
    atomic_write_json(state_dir / "state.json", {"batches": [
        {"n": len(items), "requests": "requests-000.jsonl", "keys": [i.key for i in items],
         "prompts": {i.key: i.prompt for i in items}, "status": "submitting", "input_file_id": uploaded.id}]})

    summary = build_corpus(convs, tmp_path / "out", options, batch_api=True, poll_s=0)
    assert summary.batch_api["resumed"] == ["batch_scripted_0"] and summary.batch_api["submitted"] == 0
    assert summary.batch_api["stored"] == 4 and len(routes.created()) == 1
    assert json.loads((state_dir / "state.json").read_text())["batches"][0]["id"] == "batch_scripted_0"
    assert scripted_openai.chat_requests() == []


@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "json_object"])
def test_a_batch_line_asks_what_the_online_client_asks(tmp_path, scripted_openai, mode):
    # Same messages, response_format, model and limits as the online request of the same batch, so that
    # an answer from either is the same answer (the cache key does not see the mode).
    from gravity_engine.extract.base import make_batches
    from gravity_engine.extract.llm import LLMExtractor
    from gravity_engine.llm import OpenAIClient

    conv = load_corpus(write_corpus(tmp_path / "corpus")).conversations[0]
    config = local_llm_config(scripted_openai, json_mode=mode, cache=False)
    LLMExtractor(OpenAIClient(config)).extract_batch(make_batches(conv, 20)[0])
    online = scripted_openai.chat_requests()[0]
    batch = extraction_requests([conv], config, batch_size=20)[0].body
    for field in ("model", "messages", "temperature", "max_tokens", "response_format"):
        assert batch.get(field) == online.get(field), field
