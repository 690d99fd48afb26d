"""Contextual token vectors of utterances from the sentence encoder the project already ships (MiniLM).

One forward pass per utterance gives every token's vector with its character offsets; a mention's vector is
the mean of the tokens it covers, an utterance's the mean of all its tokens. The vectors are those of a middle
layer (:data:`DEFAULT_LAYER`), not the last, which all-MiniLM's training pulls towards one mean-pooled sentence
vector: the heads measured better on a middle layer's (the comment on it). The heads in this package read only
these, so training and building see the same features; the layer the heads were trained on is saved with them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ...embed import DEFAULT_MODEL, resolve_model_path

MAX_TOKENS = 128  # MiniLM was trained on 128-token inputs
DIM = 384
# Held out by conversation on the training chats (benchmarks/heads_cv.py), the heads read from layer 4 of 6
# against the last: relation pairs at 0.9, recall 0.160 at precision 0.786 against 0.143 at 0.764; typing accuracy
# 0.789 against 0.758 (pets: recall 0.53 against 0.44). Layers 3 and 2+4+6 measured as 4. A third less to compute.
DEFAULT_LAYER = 4
LAST_LAYER = 6  # what heads saved without a layer were trained on


@dataclass
class TokenVectors:
    """One utterance: token vectors (n, DIM), their character spans (n, 2), and the pooled utterance vector."""

    vectors: np.ndarray
    offsets: np.ndarray
    pooled: np.ndarray

    def span(self, start: int, end: int) -> np.ndarray:
        """Mean vector of the tokens overlapping characters [start, end); the pooled vector if none do
        (a mention past the 128-token cut)."""
        hit = (self.offsets[:, 0] < end) & (self.offsets[:, 1] > start)
        return self.vectors[hit].mean(axis=0) if hit.any() else self.pooled

    def around(self, start: int, end: int, width: int = 3) -> np.ndarray:
        """Mean vector of the ``width`` tokens on each side of characters [start, end) (zeros if none)."""
        hit = np.flatnonzero((self.offsets[:, 0] < end) & (self.offsets[:, 1] > start))
        if not len(hit):
            return np.zeros(self.vectors.shape[1], np.float32)
        idx = [*range(max(0, hit[0] - width), hit[0]), *range(hit[-1] + 1, min(len(self.vectors), hit[-1] + 1 + width))]
        return self.vectors[idx].mean(axis=0) if idx else np.zeros(self.vectors.shape[1], np.float32)

    def between(self, a: int, b: int) -> np.ndarray:
        """Mean vector of the tokens strictly between character positions a < b (zeros if none)."""
        hit = (self.offsets[:, 0] >= a) & (self.offsets[:, 1] <= b)
        return self.vectors[hit].mean(axis=0) if hit.any() else np.zeros(self.vectors.shape[1], np.float32)


class TokenEncoder:
    """Encodes texts once each (cached by text) into :class:`TokenVectors`."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32, layer: int = DEFAULT_LAYER):
        # torch and transformers are heavy: loaded with the first encoder, never at import
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(resolve_model_path(model), device="cpu")
        self._bert = st[0].auto_model.eval()
        layers = self._bert.encoder.layer
        if not 1 <= layer <= len(layers):
            raise ValueError(f"layer {layer} is not one of the encoder's 1..{len(layers)}")
        # this model object is the encoder's own (not the embedder's): the layers above the one read are dropped
        self._bert.encoder.layer = layers[:layer]
        self.layer = layer
        self._tokenizer = st.tokenizer
        self.batch_size = batch_size
        self._cache: dict[str, TokenVectors] = {}
        self._lock = threading.Lock()
        # the whole words the encoder was trained on (lowercase, letters only): common English words and names
        self.vocabulary = frozenset(w for w in self._tokenizer.get_vocab() if w.isalpha() and w.islower())

    def encode(self, texts: list[str]) -> list[TokenVectors]:
        import torch

        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        # similar lengths together: less padding
        missing.sort(key=len)
        with self._lock, torch.inference_mode():
            for k in range(0, len(missing), self.batch_size):
                chunk = missing[k:k + self.batch_size]
                enc = self._tokenizer(chunk, padding=True, truncation=True, max_length=MAX_TOKENS,
                                      return_offsets_mapping=True, return_tensors="pt")
                offsets = enc.pop("offset_mapping").numpy()
                hidden = self._bert(**enc).last_hidden_state.float().numpy()
                mask = enc["attention_mask"].numpy().astype(bool)
                for i, text in enumerate(chunk):
                    vec = hidden[i][mask[i]]
                    off = offsets[i][mask[i]]
                    pooled = vec.mean(axis=0)
                    real = off[:, 1] > off[:, 0]  # [CLS] and [SEP] have empty spans
                    self._cache[text] = TokenVectors(vec[real].astype(np.float32), off[real].astype(np.int32),
                                                     pooled.astype(np.float32))
        return [self._cache[t] for t in texts]


_shared: dict[tuple[str, int], TokenEncoder] = {}
_shared_lock = threading.Lock()


def get_token_encoder(model: str = DEFAULT_MODEL, layer: int = DEFAULT_LAYER) -> TokenEncoder:
    """One encoder per model and layer per process (loading costs seconds)."""
    with _shared_lock:
        if (model, layer) not in _shared:
            _shared[(model, layer)] = TokenEncoder(model, layer=layer)
        return _shared[(model, layer)]
