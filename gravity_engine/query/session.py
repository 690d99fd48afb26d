"""The host side of the query path, shared by ``ask``, ``measure`` and ``evaluate``.

``HostSession`` ingests a conversation into a host once and searches it; when the host embeds with
the same model as the anchors (a ``VectorHost`` whose ``vector_model`` is the store's), it searches with
the question's embedding and the expansion queries' stored embeddings, so nothing is encoded twice.
``run_question`` is the one path every caller takes: the host's search for the question, Gravity's anchors
and expansion queries, the expansion searches, one fusion step, and one packing step that fills a context
under a budget (``QueryConfig.budget``, see ``config.Budget``), for the host alone and for the host with Gravity.
Callers read structured results (memories, anchor lines); nobody parses a rendered prompt back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from ..conversation import Conversation
from ..hosts.base import BatchHost, Host, Memory, VectorHost, ingest_with_vectors
from .config import Budget, Mode, QueryConfig
from .inject import InjectedContext, count_tokens
from .names import BLOCK as NAMES
from .names import render as render_names
from .pack import pack_lines


def memory_key(m: Memory) -> tuple:
    return tuple(m.utterance_ids) if m.utterance_ids else (m.text,)


def fuse(lists: list[list[Memory]], weights: list[float], k: int, c: float = 60.0,
         keep: int = 0) -> list[tuple[Memory, float, list[int]]]:
    """Weighted reciprocal-rank fusion: score = sum of w / (c + rank); duplicates merged; best k kept.
    ``keep``: the first list's first ``keep`` memories stay on top in their own order."""
    scores: dict[tuple, float] = {}
    first: dict[tuple, Memory] = {}
    origin: dict[tuple, list[int]] = {}
    for li, (memories, w) in enumerate(zip(lists, weights)):
        for rank, m in enumerate(memories, start=1):
            key = memory_key(m)
            scores[key] = scores.get(key, 0.0) + w / (c + rank)
            first.setdefault(key, m)
            origin.setdefault(key, []).append(li)
    pinned = list(dict.fromkeys(memory_key(m) for m in (lists[0][:keep] if lists else [])))
    held = set(pinned)
    rest = sorted((key for key in scores if key not in held), key=lambda key: -scores[key])  # stable
    order = pinned + rest
    return [(first[key], scores[key], origin[key]) for key in order[:k]]


def fuse_slots(lists: list[list[Memory]], k: int, keep: int) -> list[tuple[Memory, float, list[int]]]:
    """The first list's first ``keep`` memories, then each expansion list's best memory not yet taken, in
    turn (rank 1 of every list, then rank 2, ...), then the first list's remaining ones; k in all."""
    out: list[tuple[Memory, float, list[int]]] = []
    taken: dict[tuple, int] = {}

    def take(m: Memory, li: int) -> None:
        key = memory_key(m)
        if key in taken:
            if li not in out[taken[key]][2]:
                out[taken[key]][2].append(li)
            return
        taken[key] = len(out)
        out.append((m, 0.0, [li]))

    original = lists[0] if lists else []
    for m in original[:keep]:
        take(m, 0)
    depth = max((len(lst) for lst in lists[1:]), default=0)
    for rank in range(depth):
        for li, lst in enumerate(lists[1:], start=1):
            if len(taken) >= k:
                break
            if rank < len(lst):
                take(lst[rank], li)  # already taken: only notes that this list found it too
        if len(taken) >= k:
            break
    for m in original[keep:]:
        if len(taken) >= k:
            break
        take(m, 0)
    return out[:k]


def host_search_many(host: Host, queries: list[str], k: int) -> list[list[Memory]]:
    if isinstance(host, BatchHost):
        return host.search_many(queries, k)
    return [host.search(q, k) for q in queries]


class HostSession:
    """A host with one conversation ingested; searches by text, or by vector when it shares the embedder."""

    def __init__(self, host: Host, conversation: Conversation | None = None, embedder=None, vectors=None):
        self.host = host
        if conversation is not None:
            # ``vectors``: the store's utterance embeddings (store.UtteranceVectors), for a host that can take them.
            ingest_with_vectors(host, conversation, vectors)
        self.embedder = embedder
        # a VectorHost's model is known once it has ingested (or was given its embedder)
        self.by_vector = (isinstance(host, VectorHost) and embedder is not None and host.vector_model is not None
                          and host.vector_model == embedder.name)
        self.query_independent = bool(host.query_independent)

    @property
    def name(self) -> str:
        return self.host.name

    def search(self, question: str, k: int, qvec: np.ndarray | None = None) -> list[Memory]:
        if self.by_vector and qvec is not None:
            return self.host.search_vectors(np.asarray(qvec, dtype=np.float32)[None, :], k)[0]
        return self.host.search(question, k)

    def search_expansions(self, queries: list[str], vectors: list[np.ndarray | None], k: int) -> list[list[Memory]]:
        if not queries:
            return []
        if self.by_vector:
            missing = [i for i, v in enumerate(vectors) if v is None]
            vecs = list(vectors)
            if missing:
                for i, v in zip(missing, self.embedder.encode([queries[i] for i in missing])):
                    vecs[i] = v
            return self.host.search_vectors(np.stack(vecs).astype(np.float32, copy=False), k)
        return host_search_many(self.host, queries, k)

    def format_line(self, m: Memory) -> str:
        return self.host.format_memories([m]).removeprefix("- ")


@dataclass
class ContextPack:
    """What one answer prompt holds: memory lines (the host's rendering) and the anchor blocks."""

    memories: list[Memory] = field(default_factory=list)
    memory_lines: list[str] = field(default_factory=list)
    memory_tokens: int = 0
    anchors: InjectedContext = field(default_factory=InjectedContext)

    @property
    def tokens(self) -> int:
        return self.memory_tokens + self.anchors.total_tokens

    def lines(self) -> list[str]:
        """Every line of the context (memories, then anchor block lines), each a place an answer can sit."""
        return self.memory_lines + self.anchors.text.splitlines()


@dataclass
class QuestionRun:
    question: str
    gravity: object  # pipeline.GravityResult
    original: list[Memory]  # the host's own ranking (pool deep under a token budget)
    expanded: list[list[Memory]]  # one list per expansion query, at k
    fused: list[tuple[Memory, float, list[int]]]  # top k after fusion, with scores and list origins
    without: ContextPack
    with_: ContextPack
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def merged(self) -> list[Memory]:
        return [m for m, _, _ in self.fused]


def _fill(session: HostSession, memories: list[Memory], budget: int | None, cache: dict) -> ContextPack:
    pack = ContextPack()
    for m in memories:
        key = memory_key(m)
        if key not in cache:
            line = session.format_line(m)
            cache[key] = (line, count_tokens(line) + 1)
        line, n = cache[key]
        if budget is not None and pack.memory_tokens + n > budget:
            break
        pack.memories.append(m)
        pack.memory_lines.append(line)
        pack.memory_tokens += n
    return pack


def _add_full_names(gq, pack: ContextPack, budget: Budget) -> None:
    """The full names of the people the context calls by first name only (``names.py``); under an equal
    budget the last memories make room for them."""
    text = "\n".join(pack.memory_lines) + "\n" + pack.anchors.text
    block = render_names(gq.full_names.used_in(text))
    if not block:
        return
    anchors = replace(pack.anchors, blocks={**pack.anchors.blocks, NAMES: block},
                      tokens={**pack.anchors.tokens, NAMES: count_tokens(block)})
    pack.anchors = anchors
    if budget.total is not None and not budget.additive:
        while pack.memories and pack.tokens > budget.total:
            pack.memories.pop()
            pack.memory_tokens -= count_tokens(pack.memory_lines.pop()) + 1  # as _fill counts a line


def run_question(gq, session: HostSession, question: str, question_date=None, config: QueryConfig | None = None,
                 k: int | None = None, line_cache: dict | None = None, qvec: np.ndarray | None = None) -> QuestionRun:
    """One question through the host alone and through host + Gravity (see the module docstring).
    ``qvec``: the question's embedding when the caller has it (``measure`` embeds all questions at once)."""
    config = config or gq.config
    budget = config.budget
    k = k or config.fusion.host_k
    cache = line_cache if line_cache is not None else {}
    clock = time.perf_counter
    timings: dict[str, float] = {}
    depth = max(k, budget.pool) if budget.total is not None else k
    with_gravity = config.mode != Mode.none
    # Gravity first when the host searches by vector: the question is then embedded once, for both.
    g = None
    if session.by_vector and with_gravity and qvec is None:
        g = gq.run(question, question_date, config)
        qvec = g.qvec
    t0 = clock()
    original = session.search(question, depth, qvec)
    timings["host_search"] = (clock() - t0) * 1000
    if g is None:
        g = gq.run(question, question_date, config, qvec=qvec)
    fused = [(m, 0.0, [0]) for m in original[:k]]
    expanded: list[list[Memory]] = []
    t0 = clock()
    if with_gravity and g.expansions and not session.query_independent:
        expanded = session.search_expansions([e.query for e in g.expansions], [e.vector for e in g.expansions], k)
        lists = [original[:k]] + expanded
        if config.fusion.fusion_method == "slots":
            fused = fuse_slots(lists, k, config.fusion.fusion_keep)
        else:
            fused = fuse(lists, config.fusion.weights(len(expanded)), k, config.fusion.rrf_c, config.fusion.fusion_keep)
    timings["host_expanded_search"] = (clock() - t0) * 1000
    without = _fill(session, original if budget.total is not None else original[:k], budget.total, cache)
    if not with_gravity:
        with_ = without
    else:
        merged = [m for m, _, _ in fused]
        if budget.total is not None:
            seen = {memory_key(m) for m in merged}
            merged += [m for m in original if memory_key(m) not in seen]  # past k: the host's own ranking
        anchors = g.context
        room = budget.total
        if budget.total is not None and not budget.additive:
            room = budget.total - anchors.total_tokens
        with_ = _fill(session, merged, room, cache)
        with_.anchors = anchors
        scored = config.mode == Mode.anchors and config.lines.question_aware and config.selection.rerank
        if config.lines.memory_floor is not None and scored and room is not None and room != budget.total \
                and len(with_.memories) < len(merged):
            # the first memory the anchors push out: lines worth less than it give their room back
            host_score = {memory_key(m): m.score for m in original}
            pushed = merged[len(with_.memories)]
            floor = host_score.get(memory_key(pushed), pushed.score) + config.lines.memory_floor
            kept = pack_lines(g.lines, config, budget.anchor_cap(), gq.count, floor=floor)
            if kept.total_tokens < anchors.total_tokens:
                with_ = _fill(session, merged, budget.total - kept.total_tokens, cache)
                with_.anchors = kept
        if config.lines.full_names and config.mode == Mode.anchors:
            _add_full_names(gq, with_, budget)
    timings.update(g.timings_ms)
    return QuestionRun(question=question, gravity=g, original=original, expanded=expanded, fused=fused,
                       without=without, with_=with_, timings_ms=timings)
