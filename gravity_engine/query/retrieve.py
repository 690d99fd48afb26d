"""Step 1 of the query path: native candidates per module, cosine rerank, top-K above sigma.

Native matching (the method's): entities by name/alias (exact tokens, then fuzzy with rapidfuzz),
events by participant and keyword, topics by keyword/label. Every candidate is then scored by the
cosine of the query embedding with the anchor's stored embedding (one matrix product per module).
When native matching finds fewer than ``widen_min_factor * K`` candidates, the pool is widened with
the best dense matches of the whole module (reason "dense"). Events matching the query's time
expression are added as candidates and may take up to R slots regardless of similarity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from rapidfuzz import fuzz, process

from ..store import AnchorStore
from .config import QueryConfig
from .index import AnchorIndex
from .temporal import QueryTime, matching_events

# Status of a candidate after selection; the trace shows these words.
KEPT, TEMPORAL_SLOT, BELOW_SIGMA, BEYOND_K, MODULE_OFF = "kept", "temporal slot", "below sigma", "beyond K", "module off"
STATUS_NAMES = (KEPT, TEMPORAL_SLOT, BELOW_SIGMA, BEYOND_K, MODULE_OFF)


# Reasons are kept as small integer codes so that 10,000s of candidates cost no Python loop.
REASON_NAMES = ("", "participant", "keyword", "participant+keyword", "label/keyword", "dense", "temporal match", "")
DENSE, TEMPORAL, ENTITY_TEXT = 5, 6, 7
FULL_NAME = 3.0  # native strength of an entity whose whole name or alias is in the question


@dataclass
class ModuleSelection:
    """Every candidate of one module in rank order, with why it came in and what became of it."""

    module: str
    rows: np.ndarray  # anchor row per candidate, rank order
    reason_codes: np.ndarray  # index into REASON_NAMES per candidate; ENTITY_TEXT = see reason_text
    reason_text: dict[int, str]  # anchor row -> the entity-specific reason ("name: Caroline", ...)
    native: np.ndarray  # native match strength (0 for dense/temporal-only candidates)
    cosine: np.ndarray  # NaN when reranking is off
    status_codes: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))  # into STATUS_NAMES
    kept: list[int] = field(default_factory=list)  # rows kept, rank order (temporal slots first)
    n_native: int = 0
    n_widened: int = 0
    n_temporal: int = 0
    matched_terms: list[str] = field(default_factory=list)

    def reason(self, pos: int) -> str:
        code = int(self.reason_codes[pos])
        return self.reason_text[int(self.rows[pos])] if code == ENTITY_TEXT else REASON_NAMES[code]

    @property
    def status(self) -> list[str]:
        return [STATUS_NAMES[c] for c in self.status_codes.tolist()]

    @property
    def reasons(self) -> list[str]:
        return [self.reason(i) for i in range(len(self.rows))]

    def rank_of(self) -> dict[int, int]:
        return {int(r): i + 1 for i, r in enumerate(self.rows)}


class _LazyEntityReasons(dict):
    """row -> reason text, written only when the trace asks: a common first name can hit 1,000s of entities."""

    def __init__(self, ent, best: dict[int, tuple[int, bool]]):
        super().__init__()
        self._ent = ent
        self._best = best  # row -> (entry, all of its tokens present)

    def set_text(self, row: int, text: str) -> None:
        self._best.pop(row, None)
        self[row] = text

    def __missing__(self, row: int) -> str:
        entry, full = self._best[row]
        kind = ("alias" if self._ent.entry_is_alias[entry] else "name") if full else "partial name"
        text = f"{kind}: {self._ent.entry_text[entry]}"
        self[row] = text
        return text


def _entity_native(index: AnchorIndex, qtokens: list[str], config: QueryConfig) -> tuple[np.ndarray, dict[int, str], list[str]]:
    ent = index.entities
    n = index.n["entities"]
    native = np.zeros(n, dtype=np.float32)
    reasons = _LazyEntityReasons(ent, {})
    if n == 0 or len(ent.entry_entity) == 0:
        return native, reasons, []
    counts = ent.postings.count(qtokens)
    hit_entries = np.flatnonzero(counts)
    matched = [t for t in qtokens if t in ent.postings.rows]
    if len(hit_entries):
        # A full name or alias scores 3; a partial one the share of its tokens present.
        ntok = ent.entry_ntok[hit_entries]
        hits = counts[hit_entries]
        strength = np.where(hits >= ntok, FULL_NAME, hits / ntok).astype(np.float32)
        rows = ent.entry_entity[hit_entries]
        np.maximum.at(native, rows, strength)
        best = strength >= native[rows]
        full = (hits >= ntok)[best].tolist()
        reasons = _LazyEntityReasons(ent, {r: (e, f) for r, e, f in zip(rows[best].tolist(), hit_entries[best].tolist(), full)})
    # Fuzzy only for words that found no exact name token: typos and spelling variants ("Carolin").
    for tok in qtokens:
        if tok in ent.postings.rows or len(tok) < config.selection.fuzzy_min_len:
            continue
        for length in range(len(tok) - 2, len(tok) + 3):
            choices = ent.vocab_by_len.get(length)
            if not choices:
                continue
            for cand, score, _ in process.extract(tok, choices, scorer=fuzz.ratio,
                                                  score_cutoff=config.selection.fuzzy_cutoff, limit=3):
                matched.append(cand)
                for e in ent.postings.rows[cand]:
                    row = int(ent.entry_entity[e])
                    strength = float(score) / 100.0 / float(ent.entry_ntok[e])
                    if strength > native[row]:
                        native[row] = strength
                        reasons.set_text(row, f"fuzzy name: {ent.entry_text[e]} ~ {tok} ({score:.0f})")
    return native, reasons, matched


def _event_native(index: AnchorIndex, qtokens: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    p, p_hit = index.event_participants.score(qtokens)
    k, k_hit = index.event_keywords.score(qtokens)
    return p + k, (p > 0).astype(np.int8) + 2 * (k > 0).astype(np.int8), p_hit + k_hit


def select_module(module: str, store: AnchorStore, index: AnchorIndex, qvec: np.ndarray | None, qtokens: list[str],
                  config: QueryConfig, qtime: QueryTime | None = None, matrix: np.ndarray | None = None,
                  source_cos: np.ndarray | None = None, lexical: np.ndarray | None = None) -> ModuleSelection:
    """Candidates, rerank and top-K selection for one module (see the module docstring); ``matrix``: the
    vectors to rerank by, one row per anchor (default: the stored anchor embeddings); ``source_cos`` (a
    cosine per row, -inf where none) is mixed into the rerank cosine by ``config.temporal.temporal_source_weight``
    and ``lexical`` (a score per row) added to it."""
    n = index.n[module]
    K = config.selection.k_for(module)
    reason_text: dict[int, str] = {}
    codes = np.zeros(n, dtype=np.int8)
    if module == "entities":
        native, reason_text, matched = _entity_native(index, qtokens, config)
        codes[native > 0] = ENTITY_TEXT
    elif module == "events":
        native, kind, matched = _event_native(index, qtokens)
        codes[:] = kind
    else:
        native, matched = index.topic_keywords.score(qtokens)
        codes[native > 0] = 4
    cand = np.flatnonzero(native > 0)
    n_native = len(cand)
    rerank = config.selection.rerank and qvec is not None and n > 0
    matrix = (store.matrix(module) if matrix is None else matrix) if rerank else None
    n_widened = 0
    cos_all = None
    if (rerank and config.selection.widen and config.selection.widen_k and K
            and n_native < config.selection.widen_min_factor * K and n_native < n):
        # Only widening needs every row's cosine; otherwise the candidates' rows are enough (100k anchors).
        cos_all = matrix @ qvec
        pool = cos_all.copy()
        pool[cand] = -np.inf
        take = min(config.selection.widen_k, n - n_native)
        extra = np.argpartition(-pool, take - 1)[:take] if take < n else np.arange(n)
        extra = extra[np.isfinite(pool[extra])]
        codes[extra] = DENSE
        cand = np.concatenate([cand, extra])
        n_widened = len(extra)
    temporal_rows = np.zeros(0, dtype=np.int64)
    if module == "events" and qtime is not None and config.temporal.temporal_preservation and K:
        if qtime.spans:
            temporal_rows = np.flatnonzero(matching_events(qtime.spans, index.event_start, index.event_end))
            new = np.setdiff1d(temporal_rows, cand, assume_unique=False)
            codes[new] = TEMPORAL
            cand = np.concatenate([cand, new])
    cand = cand.astype(np.int64)
    if rerank:
        cos = cos_all[cand] if cos_all is not None else (matrix[cand] @ qvec if len(cand) else np.zeros(0, np.float32))
        if source_cos is not None and len(cand):
            src, w = source_cos[cand], config.temporal.temporal_source_weight
            cos = np.where(np.isfinite(src), (1 - w) * cos + w * src, cos).astype(np.float32)
        if lexical is not None and len(cand):
            cos = (cos + lexical[cand]).astype(np.float32)
        # "Tom ... and Priya": both named, so both outrank "Chicago Marathon", matched by "marathon" alone
        named = np.zeros(len(cand), dtype=np.int8)
        if module == "entities" and config.selection.named_first:
            named = (native[cand] >= FULL_NAME).astype(np.int8)
        order = np.lexsort((cand, -cos, -named))
    else:
        cos = np.full(len(cand), np.nan, dtype=np.float32)
        order = np.lexsort((cand, -native[cand]))
    cand, cos = cand[order], cos[order]
    sel = ModuleSelection(module=module, rows=cand, reason_codes=codes[cand], reason_text=reason_text,
                          native=native[cand],
                          cosine=cos, n_native=n_native, n_widened=n_widened,
                          n_temporal=len(temporal_rows), matched_terms=list(dict.fromkeys(matched)))
    _assign(sel, K, config, temporal_rows, qtime, index)
    return sel


def _assign(sel: ModuleSelection, K: int, config: QueryConfig, temporal_rows: np.ndarray, qtime: QueryTime | None,
            index: AnchorIndex) -> None:
    """Mark each candidate kept / temporal slot / below sigma / beyond K, in rank order (vectorized)."""
    m = len(sel.rows)
    if K == 0:
        sel.status_codes = np.full(m, STATUS_NAMES.index(MODULE_OFF), dtype=np.int8)
        return
    above = ~(sel.cosine < config.selection.sigma) if config.selection.rerank else np.ones(m, dtype=bool)
    slots = np.zeros(0, dtype=np.int64)  # positions in rank order
    reserved = config.temporal.temporal_slots if config.temporal.temporal_preservation else 0
    if sel.module == "events" and qtime is not None and reserved:
        r = min(reserved, K)
        if qtime.spans:
            slots = np.flatnonzero(np.isin(sel.rows, temporal_rows))[:r]
        elif qtime.asks_when:
            # A "when" question names no date: its slots go to dated events that are relevant enough.
            slots = np.flatnonzero((index.event_start[sel.rows] >= 0) & above)[:r]
    in_slot = np.zeros(m, dtype=bool)
    in_slot[slots] = True
    fill = np.flatnonzero(~in_slot & above)[: K - len(slots)]
    codes = np.full(m, STATUS_NAMES.index(BEYOND_K), dtype=np.int8)
    codes[~above & ~in_slot] = STATUS_NAMES.index(BELOW_SIGMA)
    codes[fill] = STATUS_NAMES.index(KEPT)
    codes[slots] = STATUS_NAMES.index(TEMPORAL_SLOT)
    sel.status_codes = codes
    sel.kept = [int(sel.rows[p]) for p in (*slots.tolist(), *fill.tolist())]
