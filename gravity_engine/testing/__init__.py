"""Fakes that ship with the library, so engine, app and adapter tests share them.

``FakeEmbedder`` is deterministic and fast (no torch): texts sharing words get similar vectors.
The scripted OpenAI-compatible server lives in ``gravity_engine.testing.openai_server``.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from ..embed import normalize, register_embedder

_WORD = re.compile(r"[a-z0-9]+")


class FakeEmbedder:
    """Bag-of-hashed-words vectors: cosine similarity tracks word overlap, like a crude real model."""

    def __init__(self, dim: int = 64, name: str = "fake-embedder"):
        self.dim = dim
        self.name = name
        self.calls = 0

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        if not v.any():
            v[0] = 1.0
        return v

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize(np.stack([self._vector(t) for t in texts]))


# Stores written by tests record the model name "fake-embedder": whatever loads one (a query, a replay of its edits,
# the app started by a browser test through ``testing.serve_app``) gets this fake back from ``embed.embedder_for``.
register_embedder("fake-embedder", lambda name, dim: FakeEmbedder(dim=dim or 64, name=name))
