"""Anchor retrieval: native matching per module, cosine rerank, sigma and K cuts, widening, variants."""

from __future__ import annotations

import pytest
from query_fixtures import make_store

from gravity_engine.errors import ConfigError
from gravity_engine.query import GravityQuery, QueryConfig, get_variant
from gravity_engine.query.config import VARIANTS
from gravity_engine.query.index import AnchorIndex
from gravity_engine.query.retrieve import select_module
from gravity_engine.text import content_tokens


@pytest.fixture
def store(fake_embedder):
    return make_store(fake_embedder)


def _select(store, emb, module, question, config=QueryConfig()):
    index = AnchorIndex.for_store(store)
    return select_module(module, store, index, emb.encode([question])[0], content_tokens(question), config, None)


def _reason(sel, store, anchor_id):
    rows = store.anchors.module(sel.module)
    for i, r in enumerate(sel.rows):
        if rows[r].id == anchor_id:
            return sel.reasons[i], sel.status[i]
    return None


def test_every_named_variant_is_selectable():
    assert set(VARIANTS) == {"full", "paper", "+E", "+V", "+T", "+EV", "+ET", "+VT", "-rrk", "-exp", "+Sum", "baseline"}
    assert get_variant("+EVT") is VARIANTS["full"]
    assert get_variant("+e").selection.modules == ("entities",)
    assert get_variant("-RRK").selection.rerank is False
    with pytest.raises(ConfigError, match="unknown variant"):
        get_variant("+Q")


def test_entities_match_by_name_alias_and_fuzzy(store, fake_embedder):
    sel = _select(store, fake_embedder, "entities", "What does Caroline like?")
    assert _reason(sel, store, "e1")[0] == "name: Caroline"
    sel = _select(store, fake_embedder, "entities", "What did Mel paint?")
    assert _reason(sel, store, "e2")[0] == "alias: Mel"
    sel = _select(store, fake_embedder, "entities", "What does Carolline study?")
    assert _reason(sel, store, "e1")[0].startswith("fuzzy name: Caroline ~ carolline")


def test_events_match_participants_and_keywords_topics_match_labels(store, fake_embedder):
    sel = _select(store, fake_embedder, "events", "Did Melanie paint a sunrise?")
    assert _reason(sel, store, "v2")[0] == "participant+keyword"
    assert _reason(sel, store, "v4")[0] == "participant"
    sel = _select(store, fake_embedder, "topics", "How is the adoption going?")
    assert _reason(sel, store, "t2")[0] == "label/keyword"


def test_rerank_orders_by_cosine_and_cuts_at_sigma_and_k(store, fake_embedder):
    sel = _select(store, fake_embedder, "events", "Did Melanie paint a sunrise over the lake?",
                  QueryConfig(K_V=1, widen=False))
    assert list(sel.cosine) == sorted(sel.cosine, reverse=True)
    assert store.anchors.events[sel.kept[0]].id == "v2"
    assert sel.status[0] == "kept" and set(sel.status[1:]) <= {"beyond K", "below sigma"}
    assert "beyond K" in sel.status
    strict = _select(store, fake_embedder, "events", "Did Melanie paint a sunrise over the lake?",
                     QueryConfig(sigma=0.99, widen=False))
    assert strict.kept == [] and set(strict.status) == {"below sigma"}


def test_no_rerank_keeps_native_order_without_sigma(store, fake_embedder):
    sel = _select(store, fake_embedder, "events", "Did Melanie paint a sunrise?", get_variant("-rrk").with_(sigma=0.99))
    assert all(c != c for c in sel.cosine)  # NaN: no cosine computed
    assert list(sel.native) == sorted(sel.native, reverse=True)
    assert store.anchors.events[sel.kept[0]].id == "v2" and len(sel.kept) == 4  # every native match, no sigma
    assert "dense" not in sel.reasons


def test_widening_adds_dense_matches_only_when_native_is_thin(store, fake_embedder):
    thin = _select(store, fake_embedder, "topics", "Which crafts do they enjoy together?", QueryConfig(widen=True))
    assert thin.n_native == 0 and thin.n_widened == 3 and set(thin.reasons) == {"dense"}
    off = _select(store, fake_embedder, "topics", "Which crafts do they enjoy together?")  # the default: off
    assert len(off.rows) == 0 and off.kept == []


def test_module_off_and_index_cached(store, fake_embedder):
    sel = _select(store, fake_embedder, "entities", "Caroline", get_variant("+V"))
    assert sel.kept == [] and set(sel.status) == {"module off"}
    assert AnchorIndex.for_store(store) is AnchorIndex.for_store(store)
    result = GravityQuery(store, fake_embedder, "+T", count=lambda t: len(t.split())).run("counseling career plans")
    assert set(result.selected) == {"topics"} and result.selected["topics"][0].id == "t1"


@pytest.mark.parametrize(("question", "expected"), [
    ("What does Will do on weekends?", ["will", "weekend"]),
    ("Will she come to the party?", ["come", "party"]),
    ("When did May call Tom?", ["may", "call", "tom"]),
], ids=["name-mid-sentence", "modal-at-start", "month-like-name"])
def test_a_stopword_written_as_a_name_is_kept(question, expected):
    assert content_tokens(question) == expected


def test_entities_named_in_full_outrank_partial_name_matches(store, fake_embedder):
    # "support group" is two of the three words of "LGBTQ support group", and its cosine is the higher one
    question = "Which support group did Caroline join?"
    by_cosine = _select(store, fake_embedder, "entities", question, QueryConfig(K_E=1, sigma=0.0, named_first=False))
    assert store.anchors.entities[by_cosine.kept[0]].name == "LGBTQ support group"
    named = _select(store, fake_embedder, "entities", question, QueryConfig(K_E=1, sigma=0.0))
    assert [store.anchors.entities[r].name for r in named.kept] == ["Caroline"]
    assert named.status[1] == "beyond K"
    strict = _select(store, fake_embedder, "entities", question, QueryConfig(K_E=1, sigma=0.5))
    assert strict.kept == []  # named first, yet sigma still applies
