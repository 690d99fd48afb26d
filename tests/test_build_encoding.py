"""One encoding of the conversation per build: the host's "Speaker: words" vectors, reused with the speaker taken
out for topic clustering and verification."""

from __future__ import annotations

import numpy as np

from gravity_engine.build import build_store, speaker_neutral
from gravity_engine.embed import CachingEmbedder
from gravity_engine.store import embed_utterances
from gravity_engine.testing import FakeEmbedder
from test_build import make_conversation


class Recording:
    """Passes texts to an embedder and keeps every text it was asked to encode."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, []

    def encode(self, texts):
        self.texts += list(texts)
        return self.inner.encode(texts)


def test_speaker_neutral_vectors_drop_the_speaker_and_centre_each_speaker():
    conv = make_conversation(2, 6)
    emb = FakeEmbedder(dim=64)
    host = embed_utterances(conv, emb)
    texts, vectors = speaker_neutral(host, conv, emb)
    utts = {u.id: u for u in conv.utterances()}
    assert texts == [utts[i].display_text() for i in host.ids]
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    speakers = np.array([utts[i].speaker for i in host.ids])
    means = [vectors[speakers == s].mean(axis=0) for s in sorted(set(speakers))]
    assert len(means) == 2
    # Each speaker's cloud sits where the other's does (before the last normalization, exactly).
    assert float(means[0] @ means[1]) / (np.linalg.norm(means[0]) * np.linalg.norm(means[1])) > 0.95


def test_a_primed_text_is_never_encoded():
    inner = Recording(FakeEmbedder(dim=32))
    cache = CachingEmbedder(inner)
    cache.prime(["known"], np.ones((1, 32), dtype=np.float32))
    out = cache.encode(["known", "new"])
    assert inner.texts == ["new"]
    np.testing.assert_array_equal(out[0], np.ones(32, dtype=np.float32))


def test_a_classic_build_encodes_each_utterance_once(tmp_path):
    conv = make_conversation(2, 6)
    recording = Recording(FakeEmbedder(dim=64))
    store = build_store(conv, tmp_path / "s", backend="classic", embedder=recording)
    words = {u.display_text() for u in conv.utterances()}
    host = {f"{u.speaker}: {u.display_text()}" for u in conv.utterances()}
    assert host <= set(recording.texts)  # the dense host's memories, stored with the anchors
    assert not words & set(recording.texts)  # never the words alone: they reuse the host's vectors
    assert store.utterance_vectors is not None and len(store.utterance_vectors.ids) == len(words)
