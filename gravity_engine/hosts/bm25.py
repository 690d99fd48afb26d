"""The ``bm25`` host: lexical retrieval over utterances with the ``bm25s`` library."""

from __future__ import annotations

import numpy as np

from ..conversation import Conversation
from ..errors import ConfigError
from .base import Memory
from .memories import conversation_memories, format_memory_list, memories_fingerprint


class BM25Host:
    """Okapi BM25 (bm25s, Lucene variant, English stopwords) over one document per utterance or window."""

    name = "bm25"
    description = "Lexical BM25 retrieval over utterances (bm25s)"
    requires = ("bm25s",)
    install_hint = "pip install bm25s"
    query_independent = False

    def __init__(self, unit: str = "utterance", window: int = 3, k1: float = 1.5, b: float = 0.75):
        if unit not in ("utterance", "window"):
            raise ConfigError(f"bm25 host: unit must be 'utterance' or 'window', not {unit!r}")
        self.unit, self.window, self.k1, self.b = unit, window, k1, b
        self.memories: list[Memory] = []
        self._retriever = None
        self._fingerprint = ""

    def ingest(self, conversation: Conversation) -> None:
        import bm25s

        memories = conversation_memories(conversation, self.unit, self.window)
        fingerprint = memories_fingerprint(memories)
        if fingerprint == self._fingerprint:
            return
        self.memories = memories
        self._retriever = None
        if memories:
            retriever = bm25s.BM25(k1=self.k1, b=self.b)
            retriever.index(bm25s.tokenize([m.text for m in memories], stopwords="en", show_progress=False),
                            show_progress=False)
            self._retriever = retriever
        self._fingerprint = fingerprint

    def search(self, query: str, k: int = 10) -> list[Memory]:
        import bm25s

        if self._retriever is None or not query.strip():
            return []
        tokens = bm25s.tokenize([query], stopwords="en", return_ids=False, show_progress=False)
        vocab = self._retriever.vocab_dict
        tokens = [[t for t in tokens[0] if t in vocab]]
        if not tokens[0]:
            return []  # no query word occurs in the conversation: BM25 has nothing to rank
        k = min(k, len(self.memories))
        docs, scores = self._retriever.retrieve(tokens, k=k, show_progress=False)
        out = []
        for i, s in zip(np.asarray(docs[0]).tolist(), np.asarray(scores[0]).tolist()):
            if s > 0:
                out.append(self.memories[int(i)].model_copy(update={"score": float(s)}))
        return out

    def format_memories(self, memories: list[Memory]) -> str:
        return format_memory_list(memories)
