"""The build stores the dense host's utterance embeddings; a dense host on the same model takes them at ingest."""

from __future__ import annotations

import numpy as np
from test_build import WordExtractor, make_conversation

from gravity_engine.build import build_store
from gravity_engine.hosts import get_host
from gravity_engine.hosts.memories import conversation_memories
from gravity_engine.query.pipeline import ask
from gravity_engine.query.session import HostSession
from gravity_engine.store import EMBEDDINGS_FILE, AnchorStore
from gravity_engine.testing import FakeEmbedder


class RecordingEmbedder(FakeEmbedder):
    """FakeEmbedder that remembers every text it was asked to encode."""

    def __init__(self, name: str = "fake-embedder"):
        super().__init__(name=name)
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.texts += list(texts)
        return super().encode(texts)


def _build(tmp_path, embedder=None):
    conv = make_conversation()
    store = build_store(conv, tmp_path / "s", extractor=WordExtractor(), embedder=embedder or FakeEmbedder())
    return conv, store


def test_build_stores_the_dense_hosts_utterance_embeddings(tmp_path):
    conv, _ = _build(tmp_path)
    loaded = AnchorStore.load(tmp_path / "s")
    vectors = loaded.utterance_vectors
    assert vectors is not None and vectors.model == "fake-embedder"
    assert list(vectors.ids) == [u.id for u in conv.utterances()]
    texts = [m.text for m in conversation_memories(conv, "utterance")]
    assert texts[0].startswith("Bob: ") or texts[0].startswith("Ann: ")  # what the host embeds, speaker included
    assert np.allclose(vectors.matrix, FakeEmbedder().encode(texts), atol=1e-6)
    with np.load(tmp_path / "s" / EMBEDDINGS_FILE, allow_pickle=False) as npz:
        assert str(npz["utterances_model"]) == "fake-embedder" and npz["utterances"].shape == (len(texts), 64)


def test_dense_host_takes_stored_vectors_instead_of_encoding(tmp_path):
    conv, _ = _build(tmp_path)
    store = AnchorStore.load(tmp_path / "s")
    emb = RecordingEmbedder()
    host = get_host("dense", embedder=emb, use_cache=False)
    session = HostSession(host, store.conversation, emb, store.utterance_vectors)
    assert host.reused_vectors and emb.texts == []
    # The same ranking as a host that encodes the conversation itself.
    own = get_host("dense", embedder=FakeEmbedder(), use_cache=False)
    own.ingest(store.conversation)
    assert not own.reused_vectors
    q = "Bob likes chess in session 2"
    assert [m.utterance_ids for m in session.search(q, 5)] == [m.utterance_ids for m in own.search(q, 5)]


def test_playground_question_on_a_new_store_encodes_no_utterance(tmp_path):
    conv, _ = _build(tmp_path)
    store = AnchorStore.load(tmp_path / "s")
    emb = RecordingEmbedder()
    host = get_host("dense", embedder=emb, use_cache=False)
    result = ask(store, host, "What does Bob like?", embedder=emb)
    memory_texts = {m.text for m in conversation_memories(conv, "utterance")}
    assert host.reused_vectors and not memory_texts & set(emb.texts)
    assert result is not None


def test_another_model_or_an_edited_conversation_is_not_served_stale_vectors(tmp_path):
    conv, _ = _build(tmp_path)
    store = AnchorStore.load(tmp_path / "s")
    other = RecordingEmbedder(name="another-model")
    host = get_host("dense", embedder=other, use_cache=False)
    HostSession(host, store.conversation, other, store.utterance_vectors)
    assert not host.reused_vectors and len(other.texts) == conv.n_utterances()

    edited = store.conversation.model_copy(deep=True)
    edited.sessions[0].utterances[0].text = "Something else entirely."
    emb = RecordingEmbedder()
    host = get_host("dense", embedder=emb, use_cache=False)
    HostSession(host, edited, emb, store.utterance_vectors)
    assert not host.reused_vectors and "Something else entirely." in " ".join(emb.texts)

    window = get_host("dense", embedder=emb, unit="window", use_cache=False)
    HostSession(window, store.conversation, emb, store.utterance_vectors)
    assert not window.reused_vectors  # windows are other texts than the stored utterances


def test_a_store_without_utterance_vectors_still_loads_and_answers(tmp_path):
    _build(tmp_path)
    path = tmp_path / "s" / EMBEDDINGS_FILE
    with np.load(path, allow_pickle=False) as npz:
        kept = {k: npz[k] for k in npz.files if not k.startswith("utterances")}
    np.savez(path, **kept)  # a store written before the matrix was kept
    store = AnchorStore.load(tmp_path / "s")
    assert store.utterance_vectors is None
    emb = RecordingEmbedder()
    host = get_host("dense", embedder=emb, use_cache=False)
    ask(store, host, "What does Bob like?", embedder=emb)
    assert not host.reused_vectors and len(emb.texts) >= store.conversation.n_utterances()
    store.save(tmp_path / "s")  # saving it again writes no utterance matrix and breaks nothing
    assert AnchorStore.load(tmp_path / "s").utterance_vectors is None


def test_measure_hands_the_stores_utterance_vectors_to_the_host(tmp_path):
    from test_measure import _locomo_file, _store_for

    from gravity_engine.loaders import load_conversations
    from gravity_engine.eval.measure import MeasureSettings, measure_conversation
    from gravity_engine.query.config import Budget, get_variant
    from gravity_engine.store import embed_utterances

    conv = load_conversations(_locomo_file(tmp_path))[0]
    store = _store_for(conv, FakeEmbedder())
    store.utterance_vectors = embed_utterances(conv, FakeEmbedder())
    emb = RecordingEmbedder()
    host = get_host("dense", embedder=emb, use_cache=False)
    settings = MeasureSettings(k=3, config=get_variant("full").with_(host_k=3),
                               budget=Budget(total=200, anchor_share=0.5))
    rows = measure_conversation(store, host, conv.questions, "locomo", settings, emb)
    memory_texts = {m.text for m in conversation_memories(conv, "utterance")}
    assert rows and host.reused_vectors and not memory_texts & set(emb.texts)
