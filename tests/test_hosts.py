"""Built-in hosts: dense (with its disk cache), bm25, fullcontext; the registry and the declared capabilities."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from query_fixtures import make_conversation

from gravity_engine.errors import ConfigError
from gravity_engine.hosts import LLM_AT_INGEST, Host, VectorHost, available_hosts, get_host, resolve
from gravity_engine.hosts.base import BatchHost
from gravity_engine.hosts.dense import cache_dir
from gravity_engine.hosts.fullcontext import FullContextHost
from gravity_engine.hosts.registry import BUILTIN_ORDER, GROUP, registered
from gravity_engine.eval.measure_hosts import parse_hosts
from gravity_engine.testing import FakeEmbedder

ROOT = Path(__file__).resolve().parent.parent


def test_dense_finds_the_turn_and_caches_embeddings():
    emb = FakeEmbedder()
    host = get_host("dense", embedder=emb)
    assert isinstance(host, Host)
    host.ingest(make_conversation())
    top = host.search("adopted a dog named Oscar", k=3)
    assert top[0].utterance_ids == ["D2:1"] and len(top) == 3
    assert top[0].score >= top[1].score >= top[2].score
    assert top[0].timestamp == "2023-06-20T10:00" and top[0].session_id == "s2"
    assert len(list(cache_dir().glob("*.npy"))) == 1
    calls = emb.calls
    again = get_host("dense", embedder=emb)
    again.ingest(make_conversation())
    assert emb.calls == calls  # read from the disk cache
    host.ingest(make_conversation())
    assert emb.calls == calls  # idempotent ingest
    many = host.search_many(["adopted a dog named Oscar", "charity race"], k=2)
    assert many[0][0].utterance_ids == ["D2:1"] and many[1][0].utterance_ids == ["D2:4"]
    assert "[20 June 2023, 10:00] Caroline: I adopted a dog" in host.format_memories(top)


def test_dense_windows_stay_inside_sessions():
    host = get_host("dense", embedder=FakeEmbedder(), unit="window", window=3, use_cache=False)
    host.ingest(make_conversation())
    assert all(len({u.split(":")[0] for u in m.utterance_ids}) == 1 for m in host.memories)
    assert host.memories[0].utterance_ids == ["D1:1", "D1:2", "D1:3"]
    assert host.memories[1].utterance_ids == ["D1:3", "D1:4"]
    with pytest.raises(ConfigError):
        get_host("dense", unit="sentence")


def test_bm25_ranks_lexical_matches():
    host = get_host("bm25")
    host.ingest(make_conversation())
    top = host.search("charity race for mental health", k=3)
    assert top[0].utterance_ids == ["D2:4"] and all(m.score > 0 for m in top)
    assert host.search("zebra xylophone", k=3) == []
    assert host.search("", k=3) == []


def test_fullcontext_keeps_the_most_recent_turns_within_budget():
    host = get_host("fullcontext", token_budget=60, count=lambda t: len(t.split()))
    host.ingest(make_conversation())
    ids = [m.utterance_ids[0] for m in host.search("anything", k=1)]
    assert ids[-1] == "D3:4" and "D1:1" not in ids and host.truncated > 0
    assert host.query_independent


def test_registry_lists_the_built_in_hosts_from_their_entry_points():
    infos = {h.name: h for h in available_hosts()}
    assert list(infos)[:3] == ["dense", "bm25", "fullcontext"]  # the offline references first, as before
    assert all(infos[n].installed and infos[n].builtin and infos[n].package == "gravity-engine"
               for n in ("dense", "bm25", "fullcontext"))
    assert {"mem0", "graphiti", "amem", "mcp"} <= set(infos) and infos["mem0"].install_hint
    assert infos["amem"].llm_at_ingest and "amem" in LLM_AT_INGEST and "a-mem" in LLM_AT_INGEST
    assert "dense" not in LLM_AT_INGEST
    with pytest.raises(ConfigError, match="unknown host"):
        get_host("nope")
    with pytest.raises(ConfigError, match="no adapter"):
        get_host("lightmem")  # no adapter: it attaches through --host mcp
    with pytest.raises(ConfigError, match="bad option"):
        get_host("bm25", colour="red")


def test_aliases_resolve_in_one_place():
    assert isinstance(get_host("full", token_budget=10), FullContextHost)
    assert isinstance(get_host(" Full-Context "), FullContextHost)
    assert resolve("zep").name == "graphiti" and resolve("agentic-memory").name == "amem"
    assert [s.host for s in parse_hosts("full, Full-Context, bm25")[0]] == ["fullcontext", "bm25"]


def test_pyproject_declares_every_built_in_host_and_the_listing_order_names_them_all():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][GROUP]
    assert set(declared) == set(BUILTIN_ORDER)
    assert {n for n, h in registered().items() if h.builtin} == set(declared)  # the install is not stale


def test_capabilities_are_declared_not_probed():
    dense = get_host("dense", embedder=FakeEmbedder(), use_cache=False)
    assert isinstance(dense, VectorHost) and isinstance(dense, BatchHost) and not dense.query_independent
    assert dense.vector_model == FakeEmbedder().name
    assert get_host("dense").vector_model is None  # its model is known once it has loaded (at ingest)
    bm25 = get_host("bm25")
    assert isinstance(bm25, Host) and not isinstance(bm25, VectorHost) and not bm25.query_independent
    assert get_host("fullcontext").query_independent


class _NoFlag:
    """A host written before the flag existed: it must say whether its results depend on the query."""

    name = "noflag"

    def ingest(self, conversation):
        pass

    def search(self, query, k=10):
        return []

    def format_memories(self, memories):
        return ""


def test_a_host_without_the_flag_is_refused_with_what_it_lacks(monkeypatch):
    from gravity_engine.hosts import registry

    entry = registry.RegisteredHost(name="noflag", value="tests:_NoFlag", package="someone-else", factory=_NoFlag)
    monkeypatch.setattr(registry, "registered", lambda: {"noflag": entry})
    with pytest.raises(ConfigError, match="does not implement the Host protocol.*query_independent"):
        get_host("noflag")
