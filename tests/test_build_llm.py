"""The llm backend end to end: the CLI build against the scripted OpenAI-compatible server on 127.0.0.1,
with the real openai client, the disk cache and the store; a rebuild with an unchanged cache makes no call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from gravity_engine.cli import app
from gravity_engine.store import AnchorStore
from gravity_engine.testing.pytest_plugin import TEST_API_KEY

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "medllm_project.jsonl"


def _small_conversation(tmp_path: Path) -> Path:
    """The first two sessions of the sample conversation (keeps the test quick)."""
    lines = [ln for ln in SAMPLE.read_text(encoding="utf-8").splitlines()
             if json.loads(ln)["session"] in ("session_1", "session_2")]
    path = tmp_path / "two_sessions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_cli_llm_build_then_cached_rebuild_makes_no_call(tmp_path, scripted_openai, monkeypatch, fake_embedder):
    monkeypatch.setenv("GRAVITY_LLM_BASE_URL", scripted_openai.base_url)
    monkeypatch.setenv("GRAVITY_LLM_API_KEY", TEST_API_KEY)
    monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
    monkeypatch.setattr("gravity_engine.build.pipeline.get_embedder", lambda name="": fake_embedder)
    conversation = _small_conversation(tmp_path)
    out = tmp_path / "store"

    result = CliRunner().invoke(app, ["build", str(conversation), "--backend", "llm", "--out", str(out),
                                      "--batch-size", "10"])
    assert result.exit_code == 0, result.output
    assert "plan: 6 batches, 6 calls" in result.output and "llm: 6 requests for 6 calls (6 answered)" in result.output
    first_calls = len(scripted_openai.chat_requests())
    assert first_calls == 6  # 22 utterances per session in batches of 10
    store = AnchorStore.load(out)
    assert store.anchors.built_with.backend == "llm" and store.anchors.built_with.llm_model == "gravity-echo"
    assert store.anchors.built_with.prompt_versions and store.anchors.entities and store.anchors.events
    known = set(store.conversation.utterance_index())
    assert store.anchors.all_source_ids() <= known
    for name in ("anchors.json", "build_report.json", "conversation.json"):
        assert TEST_API_KEY not in (out / name).read_text(encoding="utf-8")

    shutil.rmtree(out)  # no checkpoints left: only the LLM cache can spare the calls
    result = CliRunner().invoke(app, ["build", str(conversation), "--backend", "llm", "--out", str(out),
                                      "--batch-size", "10"])
    assert result.exit_code == 0, result.output
    assert len(scripted_openai.chat_requests()) == first_calls
    assert "6 cache hits" in result.output


def test_cli_llm_build_without_endpoint_says_what_to_set(tmp_path):
    result = CliRunner().invoke(app, ["build", str(_small_conversation(tmp_path)), "--backend", "llm",
                                      "--out", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "no LLM endpoint configured" in result.output and "Traceback" not in result.output
