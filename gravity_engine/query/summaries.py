"""+Sum, the method's unstructured baseline: one free-form summary per batch of utterances.

Offline the summary is extractive: the batch's most central utterances (cosine to the batch
centroid, with a nudge for turns that carry names, numbers or dates, which the LLM summaries are
asked to keep), in conversation order, under the session date. At query time the summaries most
similar to the question fill the anchor slot up to the size the full variant would have injected,
with no expansion. Summaries and their embeddings are cached on the store object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..conversation import Conversation
from ..embed import Embedder
from ..extract.base import DEFAULT_BATCH_SIZE, make_batches
from ..store import AnchorStore
from .text import human_date, truncate_words

_SPECIFIC = re.compile(r"\b(\d+|[A-Z][a-z]{2,})\b")
_CACHE_ATTR = "_gravity_summaries"


@dataclass
class BatchSummary:
    id: str
    session_id: str
    text: str
    source_ids: list[str]


def summarize_batches(conversation: Conversation, embedder: Embedder, per_batch: int = 3,
                      batch_size: int = DEFAULT_BATCH_SIZE, max_words: int = 40) -> list[BatchSummary]:
    """An extractive summary of every batch of ``batch_size`` utterances (same batches as the build)."""
    batches = make_batches(conversation, batch_size)
    texts = [f"{u.speaker}: {u.display_text()}" for b in batches for u in b.utterances]
    vectors = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    out: list[BatchSummary] = []
    offset = 0
    for b in batches:
        n = len(b.utterances)
        vec = vectors[offset:offset + n]
        offset += n
        centroid = vec.mean(axis=0)
        score = vec @ centroid
        score = score + 0.05 * np.array([min(3, len(_SPECIFIC.findall(u.text))) for u in b.utterances])
        pick = sorted(np.argsort(-score)[:per_batch].tolist())
        when = human_date(b.session_time) if b.session_time else (b.session_time_text or b.session_id)
        body = " ".join(f"{b.utterances[i].speaker}: {truncate_words(b.utterances[i].display_text(), max_words)}"
                        for i in pick)
        out.append(BatchSummary(id=f"sum{b.index}", session_id=b.session_id, text=f"({when}) {body}",
                                source_ids=[b.utterances[i].id for i in pick]))
    return out


def store_summaries(store: AnchorStore, embedder: Embedder) -> tuple[list[BatchSummary], np.ndarray]:
    """The store's batch summaries and their embeddings, computed on first use."""
    cached = getattr(store, _CACHE_ATTR, None)
    if cached is not None and cached[0] == embedder.name:
        return cached[1], cached[2]
    if store.conversation is None:
        return [], np.zeros((0, embedder.dim), dtype=np.float32)
    summaries = summarize_batches(store.conversation, embedder, batch_size=store.anchors.built_with.batch_size or DEFAULT_BATCH_SIZE)
    matrix = embedder.encode([s.text for s in summaries]) if summaries else np.zeros((0, embedder.dim), dtype=np.float32)
    setattr(store, _CACHE_ATTR, (embedder.name, summaries, matrix))
    return summaries, matrix


def pick_summaries(summaries: list[BatchSummary], matrix: np.ndarray, qvec: np.ndarray, token_target: int,
                   count) -> list[BatchSummary]:
    """Best-matching summaries, in similarity order, while their total stays within ``token_target``."""
    if not summaries:
        return []
    order = np.argsort(-(matrix @ qvec))
    chosen: list[BatchSummary] = []
    used = 0
    for i in order:
        cost = count(summaries[i].text) + 6
        if chosen and used + cost > token_target:
            break
        chosen.append(summaries[i])
        used += cost
    return chosen
