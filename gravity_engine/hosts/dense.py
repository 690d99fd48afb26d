"""The ``dense`` host: utterance- or turn-window-level embedding retrieval, the typical vector memory.

It uses the same sentence-transformers embedder as the anchors. Memory embeddings are cached on
disk under ``$GRAVITY_HOME/cache/dense/`` keyed by a hash of the memory texts and the model name,
so a conversation is embedded once per machine. A store built with the same model carries its utterance
memories' embeddings (``store.UtteranceVectors``); ``ingest(conversation, vectors=...)`` takes those instead of
encoding, so the first question on a new store does not wait for the conversation to be embedded.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np

from ..conversation import Conversation
from ..embed import Embedder
from ..errors import ConfigError
from ..fileio import atomic_write_bytes
from ..store import UtteranceVectors
from .base import Memory, UsesEmbedder, ingest_with_vectors  # noqa: F401  (callers import it from here too)
from .memories import conversation_memories, format_memory_list, memories_fingerprint


def cache_dir() -> Path:
    return Path(os.environ.get("GRAVITY_HOME") or Path.home() / ".gravity").expanduser() / "cache" / "dense"


class DenseHost(UsesEmbedder):
    """Cosine search over one embedding per utterance (``unit="utterance"``) or per window of turns."""

    name = "dense"
    description = "Embedding retrieval over utterances (or turn windows) with the anchors' sentence-transformers model"
    requires = ("sentence_transformers",)
    install_hint = "pip install -r requirements.txt"
    query_independent = False

    def __init__(self, embedder: Embedder | None = None, unit: str = "utterance", window: int = 3,
                 use_cache: bool = True):
        if unit not in ("utterance", "window"):
            raise ConfigError(f"dense host: unit must be 'utterance' or 'window', not {unit!r}")
        self._embedder = embedder
        self.unit = unit
        self.window = window
        self.use_cache = use_cache
        self.memories: list[Memory] = []
        self.matrix = np.zeros((0, 1), dtype=np.float32)
        self._fingerprint = ""
        self.reused_vectors = False  # whether the last ingest took the store's vectors

    @property
    def vector_model(self) -> str | None:
        """The embedder's name once one is set (given, or loaded by the first ingest): a ``VectorHost``."""
        return self._embedder.name if self._embedder is not None else None

    def ingest(self, conversation: Conversation, vectors: UtteranceVectors | None = None) -> None:
        """Index the conversation; ``vectors`` (the store's utterance embeddings) are used when they are these
        very memories embedded by this host's model, else the host encodes (or reads its cache) as usual."""
        memories = conversation_memories(conversation, self.unit, self.window)
        fingerprint = memories_fingerprint(memories)
        if fingerprint == self._fingerprint:
            return
        self.memories = memories
        stored = self.stored_matrix(vectors, memories, fingerprint)
        self.reused_vectors = stored is not None
        self.matrix = stored if stored is not None else self._embed(memories, fingerprint)
        self._fingerprint = fingerprint

    def stored_matrix(self, vectors: UtteranceVectors | None, memories: list[Memory],
                      fingerprint: str) -> np.ndarray | None:
        """``vectors.matrix`` if it holds exactly ``memories`` embedded by this host's model, else None."""
        if vectors is None or self.unit != "utterance" or vectors.fingerprint != fingerprint:
            return None
        if vectors.model != self.embedder.name or vectors.matrix.shape != (len(memories), self.embedder.dim):
            return None  # another model's vectors would not compare with this model's question vectors
        return np.asarray(vectors.matrix, dtype=np.float32)

    def _embed(self, memories: list[Memory], fingerprint: str) -> np.ndarray:
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.embedder.name)[-60:]
        path = cache_dir() / f"{fingerprint}-{slug}-{self.unit}{self.window if self.unit == 'window' else ''}.npy"
        if self.use_cache and path.is_file():
            try:
                cached = np.load(path, allow_pickle=False)
                if cached.shape == (len(memories), self.embedder.dim):
                    return cached.astype(np.float32, copy=False)
            except (OSError, ValueError):
                pass  # a damaged cache file is rebuilt below
        matrix = self.embedder.encode([m.text for m in memories]) if memories else np.zeros(
            (0, self.embedder.dim), dtype=np.float32)
        if self.use_cache:
            buf = io.BytesIO()
            np.save(buf, matrix)
            atomic_write_bytes(path, buf.getvalue())
        return matrix

    def _top(self, scores: np.ndarray, k: int) -> list[Memory]:
        k = min(k, len(scores))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((top, -scores[top]))]
        return [self.memories[i].model_copy(update={"score": float(scores[i])}) for i in top]

    def search(self, query: str, k: int = 10) -> list[Memory]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int = 10) -> list[list[Memory]]:
        """Several searches with one encoder call (the expansion queries of one question)."""
        if not queries:
            return []
        if not self.memories:
            return [[] for _ in queries]
        # An empty query has no meaning to match; its embedding would still rank every memory.
        asked = [i for i, q in enumerate(queries) if q.strip()]
        results: list[list[Memory]] = [[] for _ in queries]
        if asked:
            found = self.search_vectors(self.embedder.encode([queries[i] for i in asked]), k)
            for i, mems in zip(asked, found):
                results[i] = mems
        return results

    def search_vectors(self, vectors: np.ndarray, k: int = 10) -> list[list[Memory]]:
        """Searches with query embeddings from the same model (``self.embedder.name``): Gravity passes the
        question's and the expansion queries' stored embeddings, so nothing is encoded again."""
        if not self.memories:
            return [[] for _ in range(len(vectors))]
        return [self._top(row, k) for row in np.asarray(vectors, dtype=np.float32) @ self.matrix.T]

    def format_memories(self, memories: list[Memory]) -> str:
        return format_memory_list(memories)
