"""Built-in hosts: dense (with its disk cache), bm25, fullcontext, and the registry."""

from __future__ import annotations

import pytest
from query_fixtures import make_conversation

from gravity_engine.errors import ConfigError
from gravity_engine.hosts import Host, available_hosts, get_host
from gravity_engine.hosts.dense import cache_dir
from gravity_engine.testing import FakeEmbedder


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


def test_registry_lists_builtin_and_external_hosts():
    infos = {h.name: h for h in available_hosts()}
    assert all(infos[n].installed and infos[n].builtin for n in ("dense", "bm25", "fullcontext"))
    assert "mem0" in infos and not infos["mem0"].builtin and infos["mem0"].install_hint
    with pytest.raises(ConfigError, match="unknown host"):
        get_host("nope")
    with pytest.raises(ConfigError, match="no adapter"):
        get_host("lightmem")  # no adapter: it attaches through --host mcp
    with pytest.raises(ConfigError, match="bad option"):
        get_host("bm25", colour="red")
