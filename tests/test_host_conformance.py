"""Host conformance: every registered host, built-in or a third party's, honours the Host protocol the same way
and does what its declared capabilities (``query_independent``, ``VectorHost``, ``BatchHost``) promise.

Each host ingests one small two-session conversation (hosts whose ingestion calls an LLM talk to the
scripted server on 127.0.0.1; the MCP host talks to a local MCP server that serves the dense host). The
built-ins and their measure presets have their own factories below; any other host in the entry point group
``gravity_engine.hosts`` is made with ``get_host(name, embedder=...)``, so a package that registers a host can
run this suite on it (``tests/test_host_plugins.py`` does, with a throwaway package).
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.hosts import get_host
from gravity_engine.hosts.base import BatchHost, Host, Memory, VectorHost
from gravity_engine.hosts.registry import registered

ROOT = Path(__file__).resolve().parent.parent

TURNS = [
    ("s1", "2023-05-08T13:56:00", [
        ("D1:1", "Ann", "I adopted a golden retriever puppy named Biscuit from the Portland shelter."),
        ("D1:2", "Bob", "Congratulations! I started training for the Berlin marathon in September."),
        ("D1:3", "Ann", "My sister Clara is teaching me to bake sourdough bread on weekends."),
        ("D1:4", "Bob", "I just finished reading a novel about a lighthouse keeper in Norway."),
        ("D1:5", "Ann", "We should visit the botanical garden when the cherry trees bloom."),
    ]),
    ("s2", "2023-06-20T09:10:00", [
        ("D2:1", "Bob", "My knee hurt after a twenty mile run, so the physiotherapist told me to rest."),
        ("D2:2", "Ann", "Biscuit chewed my favourite violin case yesterday."),
        ("D2:3", "Bob", "I got a promotion to senior architect at the design studio."),
        ("D2:4", "Ann", "Clara and I entered our sourdough in the county fair and won second prize."),
        ("D2:5", "Bob", "Let's celebrate with dinner at the Thai restaurant downtown."),
    ]),
]
QUERY, EXPECTED = "training for the Berlin marathon", "D1:2"


def small_conversation() -> Conversation:
    sessions = [Session(id=sid, index=i + 1, timestamp=ts,
                        utterances=[Utterance(id=uid, speaker=spk, text=text, session_id=sid, timestamp=ts)
                                    for uid, spk, text in turns])
                for i, (sid, ts, turns) in enumerate(TURNS)]
    return Conversation(id="conformance", speakers=["Ann", "Bob"], sessions=sessions)


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# name -> (module that must exist, factory(embedder, llm_config) -> host)
def _dense(e, llm):
    from gravity_engine.hosts.dense import DenseHost
    return DenseHost(embedder=e, use_cache=False)


def _bm25(e, llm):
    from gravity_engine.hosts.bm25 import BM25Host
    return BM25Host()


def _fullcontext(e, llm):
    from gravity_engine.hosts.fullcontext import FullContextHost
    return FullContextHost()


def _mem0(e, llm):
    from gravity_engine.hosts.mem0 import Mem0Host
    return Mem0Host(embedder=e)


def _mem0_infer(e, llm):
    from gravity_engine.hosts.mem0 import Mem0Host
    return Mem0Host(embedder=e, infer=True, llm=llm)


def _graphiti(e, llm):
    from gravity_engine.hosts.graphiti import GraphitiHost
    return GraphitiHost(embedder=e)


def _graphiti_episodes(e, llm):
    from gravity_engine.hosts.graphiti import GraphitiHost
    return GraphitiHost(embedder=e, mode="episodes", llm=llm)


def _amem(e, llm):
    from gravity_engine.hosts.amem import AMemHost
    return AMemHost(embedder=e, llm=llm)


def _mcp(e, llm):
    from gravity_engine.hosts.mcp import McpHost
    return McpHost(command=[sys.executable, "-m", "gravity_engine.testing.mcp_memory_server", "--fake-embedder"],
                   cwd=str(ROOT), env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


HOSTS = {
    "dense": ("gravity_engine.hosts.dense", _dense),
    "bm25": ("gravity_engine.hosts.bm25", _bm25),
    "fullcontext": ("gravity_engine.hosts.fullcontext", _fullcontext),
    "mem0": ("mem0", _mem0),
    "mem0-extract": ("mem0", _mem0_infer),
    "graphiti": ("graphiti_core", _graphiti),
    "graphiti-episodes": ("graphiti_core", _graphiti_episodes),
    "amem": ("agentic_memory", _amem),
    "mcp": ("mcp", _mcp),
}


def _registered(name: str):
    def make(e, llm):
        return get_host(name, embedder=e)
    return make


# Every other registered host (a third party's), made the way the CLI makes it.
for _name, _entry in registered().items():
    if _name not in HOSTS:
        _missing = _entry.missing_modules()
        HOSTS[_name] = (_missing[0] if _missing else "gravity_engine", _registered(_name))

PARAMS = [pytest.param(name, marks=pytest.mark.skipif(not _have(mod), reason=f"{mod} not installed"), id=name)
          for name, (mod, _) in HOSTS.items()]


def test_every_registered_host_is_in_the_suite():
    assert set(registered()) <= set(HOSTS)


@pytest.fixture(scope="module")
def scripted_llm():
    from gravity_engine.llm.config import LLMConfig
    from gravity_engine.llm.guard import allow_local_model_requests
    from gravity_engine.testing.host_llm_routes import host_router
    from gravity_engine.testing.openai_server import ScriptedOpenAIServer

    with allow_local_model_requests(), ScriptedOpenAIServer(router=host_router) as server:
        yield server, LLMConfig(base_url=server.base_url, api_key="sk-test-local", model="scripted", timeout=20,
                                max_retries=0)


@pytest.fixture(scope="module")
def ingested(embedder, scripted_llm, tmp_path_factory):
    """One ingested host per name for this module (ingest is the slow part)."""
    server, llm = scripted_llm
    made: dict[str, Host] = {}
    home = tmp_path_factory.mktemp("hosts_home")
    old = os.environ.get("GRAVITY_HOME")

    def get(name: str) -> Host:
        if name not in made:
            os.environ["GRAVITY_HOME"] = str(home)
            host = HOSTS[name][1](embedder, llm)
            host.ingest(small_conversation())
            made[name] = host
            assert not server.errors, server.errors
        return made[name]

    yield get
    for host in made.values():
        close = getattr(host, "close", None)
        if callable(close):
            close()
    if old is not None:
        os.environ["GRAVITY_HOME"] = old


def _query_independent(host: Host) -> bool:
    return host.query_independent


@pytest.mark.parametrize("name", PARAMS)
def test_search_returns_mapped_memories(name, ingested):
    host = ingested(name)
    assert isinstance(host, Host) and host.name
    assert isinstance(host.query_independent, bool), "query_independent must be declared True or False"
    ids = set(small_conversation().utterance_index())
    results = host.search(QUERY, k=3)
    assert results, f"{name}: no result for a query that matches one turn word for word"
    if not _query_independent(host):
        assert len(results) <= 3
        assert EXPECTED in {u for m in results for u in m.utterance_ids}, [m.utterance_ids for m in results]
    for m in results:
        assert isinstance(m, Memory) and m.text.strip()
        assert m.utterance_ids and set(m.utterance_ids) <= ids, m.utterance_ids
        assert isinstance(m.score, float)
        assert m.timestamp and m.timestamp.startswith("2023-"), m.timestamp
    scores = [m.score for m in results]
    assert scores == sorted(scores, reverse=True)


# The dense host answers an empty query with its nearest neighbours of "" (reported, hosts/dense.py).


@pytest.mark.parametrize("name", PARAMS)
def test_empty_and_unknown_queries(name, ingested):
    host = ingested(name)
    for query in ("", "   "):
        got = host.search(query, k=5)
        assert got == [] or _query_independent(host)
    unknown = host.search("qzxv wplk", k=5)  # no such words anywhere
    assert isinstance(unknown, list)
    assert all(isinstance(m, Memory) for m in unknown)
    if not _query_independent(host):
        assert len(unknown) <= 5
        assert host.search(QUERY, k=1) and len(host.search(QUERY, k=1)) == 1


@pytest.mark.parametrize("name", PARAMS)
def test_reingest_is_idempotent(name, ingested):
    host = ingested(name)
    before = [(m.text, m.utterance_ids) for m in host.search(QUERY, k=20)]
    host.ingest(small_conversation())  # an equal conversation, a new object
    after = [(m.text, m.utterance_ids) for m in host.search(QUERY, k=20)]
    assert after == before
    assert len({(text, tuple(ids)) for text, ids in after}) == len(after), "a memory came back twice"


@pytest.mark.parametrize("name", PARAMS)
def test_format_memories_keeps_one_line_per_memory(name, ingested):
    host = ingested(name)
    results = host.search(QUERY, k=3)
    text = host.format_memories(results)
    assert len(text.splitlines()) == len(results)
    for m in results:
        assert m.text in text
        # The query path asks for single lines this way (pipeline.ask, measure._fill).
        assert "\n" not in host.format_memories([m])


_MISSING = textwrap.dedent("""
    import importlib.abc, sys
    blocked = set(sys.argv[1].split(","))

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in blocked:
                raise ImportError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Block())
    import importlib
    module = importlib.import_module(sys.argv[2])      # the adapter module itself imports fine
    from gravity_engine.hosts._optional import HostUnavailable, missing_modules
    assert missing_modules(sys.argv[4]), "find_spec should see the blocked library as missing"
    try:
        getattr(module, sys.argv[3])()
    except HostUnavailable as err:
        print("HINT:", err)
    else:
        print("NO ERROR")
""")


@pytest.mark.parametrize("host, module, cls, blocked", [
    ("mem0", "gravity_engine.hosts.mem0", "Mem0Host", "mem0"),
    ("graphiti", "gravity_engine.hosts.graphiti", "GraphitiHost", "graphiti_core"),
    ("amem", "gravity_engine.hosts.amem", "AMemHost", "agentic_memory"),
    ("mcp", "gravity_engine.hosts.mcp", "McpHost", "mcp"),
], ids=["mem0", "graphiti", "amem", "mcp"])
def test_missing_library_gives_install_hint(host, module, cls, blocked):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _MISSING, blocked, module, cls, host], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HINT:" in out.stdout, out.stdout
    assert "pip install" in out.stdout and "requirements-hosts.txt" in out.stdout
    assert blocked in out.stdout


def _ids(memories: list[Memory]) -> list[tuple[str, ...]]:
    return [tuple(m.utterance_ids) for m in memories]


@pytest.mark.parametrize("name", PARAMS)
def test_declared_capabilities_hold(name, ingested, embedder):
    """What a host declares is what the query path relies on: a query-independent host returns the same
    memories for any query; a VectorHost's vector search is its text search on that model's embeddings and its
    ingest takes the store's vectors; a BatchHost's search_many is one search per query."""
    host = ingested(name)
    if host.query_independent:
        assert _ids(host.search(QUERY, k=3)) == _ids(host.search("something else entirely", k=3))
    if isinstance(host, VectorHost):
        assert "vectors" in inspect.signature(host.ingest).parameters, "a VectorHost ingests the store's vectors"
        assert host.vector_model == embedder.name
        by_vector = host.search_vectors(embedder.encode([QUERY, "sourdough bread"]), 3)
        assert [_ids(found) for found in by_vector] == [_ids(host.search(QUERY, 3)),
                                                        _ids(host.search("sourdough bread", 3))]
    if isinstance(host, BatchHost):
        many = host.search_many([QUERY, "sourdough bread"], 3)
        assert [_ids(found) for found in many] == [_ids(host.search(QUERY, 3)), _ids(host.search("sourdough bread", 3))]
