"""The shipped encoder: the direct path for a few texts gives the library's own vectors."""

import numpy as np
import pytest

from gravity_engine.embed import _FEW, get_embedder


@pytest.fixture(scope="module")
def embedder():
    return get_embedder()


def test_few_texts_match_the_library_encode(embedder):
    texts = ["When did Caroline go to the LGBTQ support group?", "Hi!", "", "a much longer sentence " * 40]
    assert len(texts) <= _FEW
    direct = embedder.encode(texts)
    library = embedder._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
    assert direct.shape == (4, embedder.dim) and direct.dtype == np.float32
    np.testing.assert_allclose(direct, library, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(direct, axis=1), 1.0, atol=1e-5)


def test_many_texts_take_the_batched_path_with_the_same_vectors(embedder):
    texts = [f"turn {i}: we talked about painting and the lake" for i in range(_FEW + 3)]
    many = embedder.encode(texts)
    few = np.vstack([embedder.encode([t]) for t in texts])
    np.testing.assert_allclose(many, few, atol=1e-5)
