"""Adapter-specific tests for the real memory-system hosts, including the workarounds.

Each workaround test asserts that the upstream problem is STILL THERE: when a library fixes it,
the test fails and tells us to drop the workaround instead of letting it rot.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import json
import logging
import re
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.errors import ConfigError, GravityError, InputError
from gravity_engine.llm.config import LLMConfig
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.host_llm_routes import calls_by_route, host_router, minimal_instance
from gravity_engine.testing.openai_server import ScriptedOpenAIServer

ROOT = Path(__file__).resolve().parent.parent


def _conv() -> Conversation:
    """Two turns with the SAME words and different ids: mapping by text could not tell them apart."""
    turns = [("D1:1", "Ann", "See you in Berlin!"), ("D1:2", "Bob", "I booked the train to Munich for Friday."),
             ("D1:3", "Ann", "See you in Berlin!"), ("D1:4", "Bob", "My cousin Dario lives near the Spree river.")]
    ts = "2023-05-08T13:56:00"
    s = Session(id="s1", index=1, timestamp=ts,
                utterances=[Utterance(id=i, speaker=sp, text=t, session_id="s1", timestamp=ts) for i, sp, t in turns])
    return Conversation(id="real-1", speakers=["Ann", "Bob"], sessions=[s])


@pytest.fixture
def scripted(allow_local_llm):
    with ScriptedOpenAIServer(router=host_router) as server:
        yield server, LLMConfig(base_url=server.base_url, api_key="sk-test-local", model="scripted", timeout=20,
                                max_retries=0)


def _ids_for_duplicate_text(host) -> list[str]:
    hits = host.search("See you in Berlin!", k=4)
    return sorted(u for m in hits if "See you in Berlin" in m.text for u in m.utterance_ids)


# --- mem0 ------------------------------------------------------------------------------------------


def test_mem0_maps_ids_through_metadata_not_text():
    pytest.importorskip("mem0")
    from gravity_engine.hosts.mem0 import Mem0Host

    host = Mem0Host(embedder=FakeEmbedder())
    host.ingest(_conv())
    assert _ids_for_duplicate_text(host) == ["D1:1", "D1:3"]
    stored = host.memory.get_all(filters={"user_id": "real-1"})["results"]
    assert len(stored) == 4 and all(r["metadata"]["utterance_ids"] for r in stored)


def test_mem0_extraction_goes_through_the_configured_endpoint(scripted):
    pytest.importorskip("mem0")
    from gravity_engine.hosts.mem0 import Mem0Host

    server, llm = scripted
    host = Mem0Host(embedder=FakeEmbedder(), infer=True, llm=llm, extract_batch=2)
    host.ingest(_conv())
    requests = server.chat_requests()
    assert len(requests) == 2 == host.llm_calls  # 4 turns, 2 per add call
    assert all(r["model"] == "scripted" and r["response_format"] == {"type": "json_object"} for r in requests)
    hits = host.search("Munich train", k=4)
    assert any(m.utterance_ids == ["D1:1", "D1:2"] for m in hits)  # the batch's ids, from Mem0's metadata


def test_mem0_extraction_without_endpoint_is_a_config_error():
    pytest.importorskip("mem0")
    from gravity_engine.hosts.mem0 import Mem0Host

    with pytest.raises(ConfigError, match="no LLM endpoint configured"):
        Mem0Host(embedder=FakeEmbedder(), infer=True).ingest(_conv())


def test_mem0_config_error_names_the_problem_but_not_the_keys(scripted, caplog):
    pytest.importorskip("mem0")
    from gravity_engine.hosts.mem0 import Mem0Host

    caplog.set_level(logging.DEBUG)
    server, _ = scripted
    llm_key, store_key = "sk-fake-llm-5f3a9c", "qd-fake-store-8e21b7"
    llm = LLMConfig(base_url=server.base_url, api_key=llm_key, model="scripted", timeout=20, max_retries=0)
    # The key last in the store config: pydantic's truncated input_value repr keeps a dict's tail.
    store = {"provider": "qdrant", "config": {"collection_name": "c", "embedding_model_dims": 64, "path": ":memory:",
                                              "bogus_option": 1, "api_key": store_key}}
    host = Mem0Host(embedder=FakeEmbedder(), infer=True, llm=llm, vector_store=store)
    with pytest.raises(ConfigError) as err:
        host.ingest(_conv())
    texts = [str(err.value), repr(err.value), caplog.text, str(err.value.__cause__), str(err.value.__context__)]
    assert not any(key in text for text in texts for key in (llm_key, store_key))
    assert re.search(r"invalid configuration \(vector_store: .*bogus_option", str(err.value))


def test_mem0_workaround_spacy_downloader_still_runs_when_model_missing(monkeypatch):
    """Mem0 runs spaCy's network downloader for en_core_web_sm; we pre-empt it (_configure_spacy)."""
    pytest.importorskip("mem0")
    import spacy.cli
    from mem0.utils import spacy_models as sm

    if spacy.util.is_package("en_core_web_sm"):
        pytest.skip("en_core_web_sm is installed here: the downloader would not run anyway")
    calls = []
    monkeypatch.setattr(spacy.cli, "download", lambda *a, **k: calls.append(a) or (_ for _ in ()).throw(OSError()))
    for attr in ("_nlp_full", "_nlp_lemma", "_load_failed_full", "_load_failed_lemma"):
        monkeypatch.setattr(sm, attr, None if attr.startswith("_nlp") else False)
    assert sm.get_nlp_lemma() is None
    assert calls == [("en_core_web_sm",)], "mem0 no longer downloads spaCy models: drop _configure_spacy's guard"


# --- graphiti --------------------------------------------------------------------------------------

def test_graphiti_direct_maps_ids_through_episodes():
    pytest.importorskip("graphiti_core")
    from gravity_engine.hosts.graphiti import GraphitiHost, search_edges_raw

    host = GraphitiHost(embedder=FakeEmbedder())
    try:
        host.ingest(_conv())
        assert _ids_for_duplicate_text(host) == ["D1:1", "D1:3"]
        raw = search_edges_raw(host, "Munich train", 4)
        assert raw.edges and all(len(e.episodes) == 1 for e in raw.edges)
        mem = host.search("Munich train", 4)
        assert [m.utterance_ids[0] for m in mem] == [e.attributes["utterance_id"] for e in raw.edges]
    finally:
        host.close()


def test_graphiti_episodes_mode_runs_add_episode_through_the_endpoint(scripted):
    pytest.importorskip("graphiti_core")
    from gravity_engine.hosts.graphiti import GraphitiHost

    server, llm = scripted
    host = GraphitiHost(embedder=FakeEmbedder(), mode="episodes", llm=llm)
    try:
        host.ingest(_conv())
        routes = calls_by_route(server.chat_requests())
        assert routes["ExtractedEntities"] == 4 and routes["ExtractedEdges"] == 4, routes
        assert not server.errors
        assert all(r["response_format"]["type"] == "json_schema" for r in server.chat_requests())
        # Facts come from the (scripted) LLM; the ids still come from the episodes they cite.
        hits = host.search("Dario Spree river", 4)
        assert any(m.utterance_ids == ["D1:4"] for m in hits)
    finally:
        host.close()


def test_graphiti_retries_the_intermittent_fts_crash_once(monkeypatch):
    pytest.importorskip("graphiti_core")
    from gravity_engine.hosts.graphiti import FTS_CRASH, GraphitiHost

    host = GraphitiHost(embedder=FakeEmbedder())
    try:
        host.ingest(_conv())
        real = host.graphiti.search_
        failures = iter([RuntimeError(f"Runtime exception: {FTS_CRASH}")])

        async def flaky(*args, **kwargs):
            err = next(failures, None)
            if err:
                raise err
            return await real(*args, **kwargs)

        monkeypatch.setattr(host.graphiti, "search_", flaky)
        assert host.search("Munich", 2) and host.fts_retries == 1

        async def broken(*args, **kwargs):
            raise RuntimeError("Binder exception: something else")

        monkeypatch.setattr(host.graphiti, "search_", broken)
        with pytest.raises(GravityError, match="Binder exception"):
            host.search("Munich", 2)
    finally:
        host.close()


def test_graphiti_workaround_httpx_still_undeclared():
    pytest.importorskip("graphiti_core")
    declared = " ".join(importlib.metadata.requires("graphiti-core") or [])
    assert "httpx" not in declared.replace("httpx2", ""), "graphiti-core now declares httpx: unpin it"
    sources = Path(importlib.util.find_spec("graphiti_core").origin).parent
    assert any("import httpx" in p.read_text(errors="ignore") for p in sources.rglob("*.py"))


def test_graphiti_workaround_kuzu_has_no_fulltext_indexes_by_default():
    pytest.importorskip("graphiti_core")
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

    from gravity_engine.hosts._aio import LoopThread
    from gravity_engine.hosts.graphiti import GraphitiHost

    host = GraphitiHost(embedder=FakeEmbedder())
    loop = LoopThread("workaround-test")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            driver = KuzuDriver(db=":memory:")
        from graphiti_core import Graphiti
        from gravity_engine.hosts.graphiti import _clients

        emb, rerank = _clients(host.embedder)
        g = Graphiti(graph_driver=driver, embedder=emb, cross_encoder=rerank, llm_client=host._llm_client())
        loop.run(g.build_indices_and_constraints())  # upstream's own index step: a no-op on Kuzu
        import logging

        logging.getLogger("graphiti_core.driver.kuzu_driver").disabled = True
        try:
            with pytest.raises(RuntimeError, match="index"):
                loop.run(g.search_("anything", config=EDGE_HYBRID_SEARCH_RRF, group_ids=["g"]))
        finally:
            logging.getLogger("graphiti_core.driver.kuzu_driver").disabled = False
        assert not hasattr(driver, "_database"), "KuzuDriver now has _database: drop workaround 3"
    finally:
        loop.close()
        host.close()


def test_graphiti_workaround_default_cosine_cut_is_still_too_high():
    pytest.importorskip("graphiti_core")
    from graphiti_core.search.search_config import EdgeSearchConfig, EdgeSearchMethod

    assert EdgeSearchConfig(search_methods=[EdgeSearchMethod.cosine_similarity]).sim_min_score >= 0.5


def test_graphiti_kuzu_backend_still_deprecated_upstream():
    pytest.importorskip("graphiti_core")
    from graphiti_core.driver.kuzu_driver import KuzuDriver

    with pytest.warns(DeprecationWarning, match="Kuzu"):
        KuzuDriver(db=":memory:")


def test_graphiti_bad_mode_is_a_config_error():
    pytest.importorskip("graphiti_core")
    from gravity_engine.hosts.graphiti import GraphitiHost

    with pytest.raises(ConfigError, match="mode"):
        GraphitiHost(mode="magic")
    with pytest.raises(ConfigError, match="bm25"):
        GraphitiHost(search_methods=("grep",))


# --- a-mem -----------------------------------------------------------------------------------------

def test_amem_one_evolution_call_per_note_after_the_first(scripted):
    pytest.importorskip("agentic_memory")
    from gravity_engine.hosts.amem import AMemHost

    server, llm = scripted
    host = AMemHost(embedder=FakeEmbedder(), llm=llm)
    try:
        host.ingest(_conv())
        requests = server.chat_requests()
        assert len(requests) == 3 == host.llm_calls  # analyze_content skipped: keywords/context/tags supplied
        assert {r["response_format"]["json_schema"]["name"] for r in requests} == {"response"}
        assert _ids_for_duplicate_text(host) == ["D1:1", "D1:3"]
        note = host.notes("D1:4")
        assert note.tags == ["Bob"] and "dario" in note.keywords and "Session 1" in note.context
    finally:
        host.close()


def test_amem_without_evolution_makes_no_llm_call():
    pytest.importorskip("agentic_memory")
    from gravity_engine.hosts.amem import AMemHost

    host = AMemHost(embedder=FakeEmbedder(), evolve=False)
    try:
        host.ingest(_conv())
        assert host.llm_calls == 0 and host.search("Munich", 1)
    finally:
        host.close()


def test_amem_workaround_base_url_only_from_environment(monkeypatch):
    """A-Mem builds OpenAI(api_key=...) with no base_url; we replace the client instead of the env var."""
    pytest.importorskip("agentic_memory")
    from agentic_memory.llm_controller import OpenAIController

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = OpenAIController(model="m", api_key="sk-x").client
    assert "api.openai.com" in str(client.base_url), "A-Mem now takes a base URL: pass it instead"


# --- mcp -------------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_mcp_over_streamable_http(tmp_path):
    pytest.importorskip("mcp")
    from gravity_engine.hosts.mcp import McpHost

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gravity_engine.testing.mcp_memory_server", "--fake-embedder",
                             "--transport", "streamable-http", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        with McpHost(url=f"http://127.0.0.1:{port}/mcp") as host:
            host.ingest(_conv())
            assert _ids_for_duplicate_text(host) == ["D1:1", "D1:3"]
            host.ingest(_conv())  # unchanged: no tool call, nothing doubled
            assert len(host.search("See you in Berlin!", 10)) == 4
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_mcp_config_file_errors_name_the_file(tmp_path):
    pytest.importorskip("mcp")
    from gravity_engine.hosts.mcp import McpHost, McpHostConfig

    bad = tmp_path / "mcp.json"
    bad.write_text('{"url": "http://127.0.0.1:1/mcp", "timeout": -1}')
    with pytest.raises(InputError, match=r"mcp\.json \(timeout\)"):
        McpHostConfig.from_file(bad)
    bad.write_text("{not json")
    with pytest.raises(InputError, match="line 1"):
        McpHost(bad)
    with pytest.raises(ConfigError, match="exactly one of command"):
        McpHost()
    with pytest.raises(ConfigError, match="unknown mapped field"):
        McpHost(url="http://127.0.0.1:1/mcp", search_args={"q": "question"})


def test_mcp_unreachable_server_is_a_clear_error():
    pytest.importorskip("mcp")
    from gravity_engine.hosts.mcp import McpHost

    with McpHost(command=[sys.executable, "-c", "import sys; sys.exit(3)"], timeout=10) as host:
        with pytest.raises(GravityError, match="cannot connect to the MCP server"):
            host.ingest(_conv())


def test_mcp_results_key_mismatch_explains_itself():
    pytest.importorskip("mcp")
    from gravity_engine.hosts.mcp import McpHost

    cmd = [sys.executable, "-m", "gravity_engine.testing.mcp_memory_server", "--fake-embedder"]
    with McpHost(command=cmd, cwd=str(ROOT), results_key="memories") as host:
        host.ingest(_conv())
        with pytest.raises(GravityError, match="set results_key"):
            host.search("Berlin", 2)


# --- scripted routes -------------------------------------------------------------------------------

def test_minimal_instance_follows_refs_and_required_fields():
    schema = {"type": "object", "required": ["a", "b"], "properties": {
        "a": {"type": "array", "items": {"$ref": "#/$defs/X"}}, "b": {"$ref": "#/$defs/X"}, "c": {"type": "string"}},
        "$defs": {"X": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"},
                                                                            "t": {"anyOf": [{"type": "string"},
                                                                                            {"type": "null"}]}}}}}
    assert minimal_instance(schema) == {"a": [], "b": {"n": 0}}
    assert json.dumps(minimal_instance({"type": "object", "properties": {"x": {"enum": ["p", "q"]}}})) == '{"x": "p"}'


def test_loop_thread_runs_coroutines_from_many_threads():
    from concurrent.futures import ThreadPoolExecutor

    from gravity_engine.hosts._aio import LoopThread

    loop = LoopThread()

    async def double(x):
        await asyncio.sleep(0.001)
        return 2 * x

    try:
        with ThreadPoolExecutor(4) as pool:
            assert list(pool.map(lambda x: loop.run(double(x), 5), range(20))) == [2 * x for x in range(20)]
    finally:
        loop.close()
    with pytest.raises(RuntimeError, match="closed"):
        loop.run(double(1))
