"""Lookup structures built once per anchor store, so each query only does array work.

``AnchorIndex.for_store(store)`` builds (or returns the cached) index: inverted token postings per
module for native matching, name vocabularies bucketed by length for fuzzy matching, and event date
ranges as ordinal arrays for temporal preservation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from ..anchors import MODULES, AnchorSet
from ..store import AnchorStore
from ..text import STOPWORDS, content_tokens, tokens

_CACHE_ATTR = "_gravity_anchor_index"


@dataclass
class Postings:
    """token -> int32 row indices, with an idf per token so rare words count more than common ones."""

    n_rows: int
    rows: dict[str, np.ndarray] = field(default_factory=dict)
    idf: dict[str, float] = field(default_factory=dict)

    @classmethod
    def build(cls, n_rows: int, row_tokens: list[list[str]]) -> Postings:
        acc: dict[str, list[int]] = defaultdict(list)
        for i, toks in enumerate(row_tokens):
            for t in set(toks):
                acc[t].append(i)
        rows = {t: np.asarray(ix, dtype=np.int32) for t, ix in acc.items()}
        idf = {t: math.log(1.0 + n_rows / len(ix)) for t, ix in acc.items()}
        return cls(n_rows=n_rows, rows=rows, idf=idf)

    def score(self, query_tokens: list[str]) -> tuple[np.ndarray, list[str]]:
        """Sum of idf of the query tokens each row holds (0 = no match), and the tokens that matched."""
        hit = [t for t in query_tokens if t in self.rows]
        if not hit or self.n_rows == 0:
            return np.zeros(self.n_rows, dtype=np.float32), []
        idx = np.concatenate([self.rows[t] for t in hit])
        w = np.concatenate([np.full(len(self.rows[t]), self.idf[t], dtype=np.float32) for t in hit])
        return np.bincount(idx, weights=w, minlength=self.n_rows).astype(np.float32), hit

    def count(self, query_tokens: list[str]) -> np.ndarray:
        """How many distinct query tokens each row holds."""
        hit = [t for t in query_tokens if t in self.rows]
        if not hit or self.n_rows == 0:
            return np.zeros(self.n_rows, dtype=np.int32)
        return np.bincount(np.concatenate([self.rows[t] for t in hit]), minlength=self.n_rows).astype(np.int32)


@dataclass
class EntityIndex:
    """Every name and alias of every entity as an 'entry'; an entry matches when all its tokens are in the query."""

    entry_entity: np.ndarray  # entry -> entity row
    entry_ntok: np.ndarray  # tokens per entry
    entry_is_alias: np.ndarray
    entry_text: list[str]  # the name or alias as written, for the trace
    postings: Postings  # token -> entries
    vocab_by_len: dict[int, list[str]]  # name tokens for fuzzy matching, bucketed by length


@dataclass
class AnchorIndex:
    n: dict[str, int]
    entities: EntityIndex
    event_participants: Postings
    event_keywords: Postings
    topic_keywords: Postings
    event_start: np.ndarray  # date ordinals, -1 when unknown
    event_end: np.ndarray
    signature: tuple = ()

    @classmethod
    def for_store(cls, store: AnchorStore) -> AnchorIndex:
        """The store's index, built on first use and kept on the store object (rebuilt if the anchors changed)."""
        cached = getattr(store, _CACHE_ATTR, None)
        sig = store.anchors.signature()
        if cached is not None and cached.signature == sig:
            return cached
        index = cls.build(store.anchors)
        setattr(store, _CACHE_ATTR, index)
        return index

    @classmethod
    def build(cls, anchors: AnchorSet) -> AnchorIndex:
        entry_entity, entry_ntok, entry_alias, entry_tokens, entry_text = [], [], [], [], []
        vocab: set[str] = set()
        for i, e in enumerate(anchors.entities):
            for j, name in enumerate(dict.fromkeys([e.name, *e.aliases])):
                toks = [t for t in tokens(name) if t not in STOPWORDS] or tokens(name)
                if not toks:
                    continue
                entry_entity.append(i)
                entry_ntok.append(len(set(toks)))
                entry_alias.append(j > 0)
                entry_tokens.append(toks)
                entry_text.append(name)
                vocab.update(toks)
        by_len: dict[int, list[str]] = defaultdict(list)
        for t in sorted(vocab):
            by_len[len(t)].append(t)
        ents = EntityIndex(
            entry_entity=np.asarray(entry_entity, dtype=np.int32),
            entry_ntok=np.asarray(entry_ntok, dtype=np.int32),
            entry_is_alias=np.asarray(entry_alias, dtype=bool),
            entry_text=entry_text,
            postings=Postings.build(len(entry_tokens), entry_tokens),
            vocab_by_len=dict(by_len),
        )
        events = anchors.events
        part_tokens = [[t for p in v.participants for t in tokens(p) if t not in STOPWORDS] for v in events]
        kw_tokens = [content_tokens(f"{v.what} {v.where}") for v in events]
        topic_tokens = [content_tokens(" ".join([t.label, *t.keywords])) for t in anchors.topics]
        start = np.full(len(events), -1, dtype=np.int64)
        end = np.full(len(events), -1, dtype=np.int64)
        for i, v in enumerate(events):
            s = _ordinal(v.date_start)
            if s is None or v.granularity in ("before", "after"):
                continue  # a bound (the session day, from the tense alone) dates nothing a question can match
            e = _ordinal(v.date_end)
            start[i] = s
            end[i] = e if e is not None and e >= s else s
        return cls(
            n={m: len(anchors.module(m)) for m in MODULES},
            entities=ents,
            event_participants=Postings.build(len(events), part_tokens),
            event_keywords=Postings.build(len(events), kw_tokens),
            topic_keywords=Postings.build(len(anchors.topics), topic_tokens),
            event_start=start,
            event_end=end,
            signature=anchors.signature(),
        )


def _ordinal(iso_date: str | None) -> int | None:
    if not iso_date:
        return None
    try:
        return date.fromisoformat(iso_date[:10]).toordinal()
    except ValueError:
        return None
