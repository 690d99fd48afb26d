"""+Sum, the method's unstructured baseline: one free-form summary per batch of utterances.

The method's summaries are model-written (``prompts/summarize_batch.py``). With an endpoint,
``write_model_summaries(store, client)`` asks the model once per batch (each reply is kept in the LLM
cache) and stores the result beside the store as ``summaries.json``, so no question pays for it
again. Without them the summaries are *extractive*, and say so wherever +Sum is shown
(``summaries_kind``, ``variant_label``): each batch's most central utterances (cosine to the batch
centroid, with a nudge for turns that carry names, numbers or dates, which the model is asked to
keep), in conversation order, under the session date.

At query time the summaries most similar to the question fill the anchor slot up to the size the
full variant would have injected, with no expansion. Summaries and their embeddings are cached on
the store object.
"""

from __future__ import annotations

import hashlib
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..conversation import Conversation
from ..embed import Embedder
from ..errors import LLMError
from ..extract.base import DEFAULT_BATCH_SIZE, Batch, make_batches
from ..extract.llm import batch_context
from ..fileio import atomic_write_json
from ..prompts.summarize_batch import PROMPT
from ..store import AnchorStore
from ..timeparse import human_date
from ..text import truncate_words

SUMMARIES_FILE = "summaries.json"
EXTRACTIVE = "extractive"
MODEL_WRITTEN = "model-written"
_SPECIFIC = re.compile(r"\b(\d+|[A-Z][a-z]{2,})\b")
_CACHE_ATTR = "_gravity_summaries"


@dataclass
class BatchSummary:
    id: str
    session_id: str
    text: str
    source_ids: list[str]


@dataclass
class SummarySet:
    """The summaries of one conversation and what wrote them."""

    kind: str  # EXTRACTIVE | MODEL_WRITTEN
    summaries: list[BatchSummary]
    model: str | None = None
    prompt: str | None = None  # name@version of the summarize prompt

    @property
    def label(self) -> str:
        """'extractive', or 'model-written by gpt-4o-mini': how every report and view names them."""
        return f"{MODEL_WRITTEN} by {self.model}" if self.kind == MODEL_WRITTEN else EXTRACTIVE


def _when(b: Batch) -> str:
    return human_date(b.session_time) if b.session_time else (b.session_time_text or b.session_id)


def _batches(store: AnchorStore) -> list[Batch]:
    if store.conversation is None:
        return []
    return make_batches(store.conversation, store.anchors.built_with.batch_size or DEFAULT_BATCH_SIZE)


def _batches_key(batches: list[Batch]) -> str:
    """Summaries on file are valid while every batch's text (and so the conversation) is unchanged."""
    h = hashlib.sha256()
    for b in batches:
        h.update(b.key().encode())
    return h.hexdigest()[:24]


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
        pick = sorted(np.argsort(-score, kind="stable")[:per_batch].tolist())
        body = " ".join(f"{b.utterances[i].speaker}: {truncate_words(b.utterances[i].display_text(), max_words)}"
                        for i in pick)
        out.append(BatchSummary(id=f"sum{b.index}", session_id=b.session_id, text=f"({_when(b)}) {body}",
                                source_ids=[b.utterances[i].id for i in pick]))
    return out


# --- model-written summaries, stored beside the store -------------------------------------------------

def read_model_summaries(store: AnchorStore, model: str | None = None) -> SummarySet | None:
    """The model-written summaries on file for this store (of ``model``, when given), or None when there are
    none, they are damaged, or they were written for other batches or an older prompt."""
    if store.path is None or not (Path(store.path) / SUMMARIES_FILE).is_file():
        return None
    try:
        data = json.loads((Path(store.path) / SUMMARIES_FILE).read_text(encoding="utf-8"))
        found = SummarySet(kind=MODEL_WRITTEN, model=data["model"], prompt=data["prompt"],
                           summaries=[BatchSummary(**s) for s in data["summaries"]])
        key = data["batches_key"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a damaged file is written again by the next run with an endpoint
    if found.prompt != PROMPT.id or key != _batches_key(_batches(store)) or (model and found.model != model):
        return None
    return found


def write_model_summaries(store: AnchorStore, client, progress=None) -> SummarySet:
    """The model's summary of every batch: read from ``summaries.json`` when it holds this model's summaries
    of these batches, else asked for (concurrently, each reply cached by the client) and written there
    atomically. Raises ``LLMError`` naming the batches that failed; finished ones stay in the LLM cache."""
    model = getattr(getattr(client, "config", None), "model", None) or "unknown model"
    found = read_model_summaries(store, model)
    if found is not None:
        return _attach(store, found)
    batches = _batches(store)

    def one(b: Batch) -> BatchSummary:
        text = " ".join(client.complete_text(PROMPT, batch_context(b)).split())
        if not text:
            raise LLMError(f"{PROMPT.name}: the model returned an empty summary")
        return BatchSummary(id=f"sum{b.index}", session_id=b.session_id, text=f"({_when(b)}) {text}",
                            source_ids=[u.id for u in b.utterances])

    workers = max(1, min(len(batches), getattr(getattr(client, "config", None), "concurrency", 4) or 4))
    results: list[BatchSummary | Exception] = []
    with ThreadPoolExecutor(workers, thread_name_prefix="summarize") as pool:
        futures = [pool.submit(one, b) for b in batches]
        for i, fut in enumerate(futures):
            try:
                results.append(fut.result())
            except LLMError as err:
                results.append(err)
            if progress:
                progress(i + 1, len(futures))
    failed = [(b, r) for b, r in zip(batches, results) if isinstance(r, Exception)]
    if failed:
        raise LLMError(f"+Sum: {len(failed)} of {len(batches)} batch summaries failed (first: batch "
                       f"{failed[0][0].index + 1}, {failed[0][1]}); finished ones are cached, run again to retry")
    made = SummarySet(kind=MODEL_WRITTEN, model=model, prompt=PROMPT.id, summaries=list(results))
    if store.path is not None:
        atomic_write_json(Path(store.path) / SUMMARIES_FILE, {
            "model": made.model, "prompt": made.prompt, "batches_key": _batches_key(batches),
            "conversation_id": store.anchors.conversation_id, "summaries": [asdict(s) for s in made.summaries]})
    return _attach(store, made)


def _attach(store: AnchorStore, made: SummarySet) -> SummarySet:
    """Held on the store object too (a store that lives only in memory has no folder to keep them in);
    the embeddings cached for the previous summaries are dropped."""
    if hasattr(store, _CACHE_ATTR):
        delattr(store, _CACHE_ATTR)
    setattr(store, _CACHE_ATTR + "_model", made)
    return made


def summary_set(store: AnchorStore, embedder: Embedder | None = None) -> SummarySet:
    """What +Sum injects for this store: its model-written summaries when there are any, else extractive ones
    (computed with ``embedder``; without one only the kind is known)."""
    made = getattr(store, _CACHE_ATTR + "_model", None) or read_model_summaries(store)
    if made is not None:
        return made
    if embedder is None or store.conversation is None:
        return SummarySet(kind=EXTRACTIVE, summaries=[])
    return SummarySet(kind=EXTRACTIVE, summaries=summarize_batches(
        store.conversation, embedder, batch_size=store.anchors.built_with.batch_size or DEFAULT_BATCH_SIZE))


def _source(store: AnchorStore) -> tuple | None:
    """What the cached summaries were made from: model summaries held in memory, the file beside the store
    (by modification time: another session or process may write it), or neither."""
    made = getattr(store, _CACHE_ATTR + "_model", None)
    if made is not None:
        return ("memory", id(made))
    if store.path is not None:
        try:
            return ("file", (Path(store.path) / SUMMARIES_FILE).stat().st_mtime_ns)
        except OSError:
            pass
    return None


def summaries_kind(store: AnchorStore) -> str:
    """The label of the summaries +Sum uses for this store: 'extractive' or 'model-written by <model>'."""
    cached = getattr(store, _CACHE_ATTR, None)
    if cached is not None and cached[1] == _source(store):
        return cached[2].label
    return summary_set(store).label


def variant_label(variant: str, store: AnchorStore | None = None, kind: str | None = None) -> str:
    """A variant's name as shown to people: '+Sum (extractive)' or '+Sum (model-written by ...)'; others as is."""
    if variant != "+Sum":
        return variant
    return f"+Sum ({kind or (summaries_kind(store) if store is not None else EXTRACTIVE)})"


def store_summaries(store: AnchorStore, embedder: Embedder) -> tuple[list[BatchSummary], np.ndarray]:
    """The store's batch summaries (``summary_set``) and their embeddings, computed on first use and again
    when model-written summaries appear."""
    source = _source(store)
    cached = getattr(store, _CACHE_ATTR, None)
    if cached is not None and cached[0] == embedder.name and cached[1] == source:
        return cached[2].summaries, cached[3]
    found = summary_set(store, embedder)
    texts = [s.text for s in found.summaries]
    matrix = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    setattr(store, _CACHE_ATTR, (embedder.name, source, found, matrix))
    return found.summaries, matrix


def pick_summaries(summaries: list[BatchSummary], matrix: np.ndarray, qvec: np.ndarray, token_target: int,
                   count) -> list[BatchSummary]:
    """Best-matching summaries, in similarity order, while their total stays within ``token_target``."""
    if not summaries:
        return []
    order = np.argsort(-(matrix @ qvec), kind="stable")  # ties in the same order on every CPU
    chosen: list[BatchSummary] = []
    used = 0
    for i in order:
        cost = count(summaries[i].text) + 6
        if chosen and used + cost > token_target:
            break
        chosen.append(summaries[i])
        used += cost
    return chosen
