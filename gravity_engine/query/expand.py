"""Step 2: expansion queries written from the selected anchors' lines, merged round-robin.

Each module offers the search texts of its lines (``lines.py``) in the order the packing step
ranked them, at most ``per_anchor_queries`` per anchor: entities pair the name with an attribute,
fact or relation ("Caroline works at Acme"), events join participants, the action and the time as
said, topics give key facts (and, in the method's literal reading, participant-topic pairs). With
``question_aware`` the lines are the ones closest to the question, and lines below ``line_sigma``
are skipped. A line's embedding is stored with the anchors, so a host that shares the embedder
searches by vector without encoding anything. The merge cycles topic -> entity -> event, one query
per module per round, until the budget (9) is filled or a module is exhausted;
``continue_after_exhausted`` keeps cycling the others instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .config import QueryConfig
from .pack import LineSelection
from ..text import truncate_words

_MAX_WORDS = 24


@dataclass(frozen=True, eq=False)
class Expansion:
    query: str
    module: str
    anchor_id: str
    vector: np.ndarray | None = field(default=None, repr=False)  # the stored embedding of ``query``, if known
    score: float = float("nan")  # its line's priority (cosine with the question; pinned events first)


def module_queries(module: str, sel: LineSelection, config: QueryConfig) -> Iterator[Expansion]:
    aware = config.lines.question_aware and config.selection.rerank
    floor = config.expansion.expansion_sigma
    floor = config.lines.line_sigma if floor is None else floor
    per_anchor: dict[str, int] = {}
    for s in sel.for_module(module):
        ln = s.line
        if aware and not s.pinned and s.score < floor:  # NaN (no score known) passes
            continue
        if module == "topics" and not aware and not ln.field.startswith("key_facts"):
            continue  # the method: a topic's key facts and participant-topic pairs
        n = per_anchor.get(ln.anchor_id, 0)
        if n >= config.expansion.per_anchor_queries:
            continue
        per_anchor[ln.anchor_id] = n + 1
        if s.vector is not None:
            yield Expansion(ln.search_text, module, ln.anchor_id, s.vector, s.priority)
        else:
            yield Expansion(truncate_words(ln.search_text, _MAX_WORDS), module, ln.anchor_id, score=s.priority)
    if module == "topics" and not aware:
        for topic in sel.anchors.get("topics", []):
            for p in topic.participants[: config.expansion.per_anchor_queries]:
                yield Expansion(f"{p} {topic.label}", module, topic.id)


def expand(sel: LineSelection, config: QueryConfig, original: str = "") -> list[Expansion]:
    """At most ``expansion_budget`` queries, round-robin over ``expansion_order``, duplicates skipped."""
    if not config.expansion.expand or config.expansion.expansion_budget == 0:
        return []
    if config.expansion.expansion_merge == "score":
        return _by_score(sel, config, original)
    # A module with nothing to offer (no anchor, or no line close enough to the question) takes no
    # part; it cannot "run dry" and stop the others before they start.
    gens = {}
    for m in config.expansion.expansion_order:
        queue = list(module_queries(m, sel, config)) if sel.anchors.get(m) else []
        if queue:
            gens[m] = iter(queue)
    seen = {" ".join(original.lower().split())}
    out: list[Expansion] = []
    active = [m for m in config.expansion.expansion_order if m in gens]
    while active and len(out) < config.expansion.expansion_budget:
        for module in list(active):
            if len(out) >= config.expansion.expansion_budget:
                break
            item = None
            for cand in gens[module]:
                key = " ".join(cand.query.lower().split())
                if key and key not in seen:
                    seen.add(key)
                    item = cand
                    break
            if item is None:
                if not config.expansion.continue_after_exhausted:
                    return out
                active.remove(module)
                continue
            out.append(item)
    return out


def _by_score(sel: LineSelection, config: QueryConfig, original: str) -> list[Expansion]:
    """The best lines of all modules first (each module's own filters and per-anchor limits apply)."""
    pool = [e for m in config.expansion.expansion_order if sel.anchors.get(m) for e in module_queries(m, sel, config)]
    pool.sort(key=lambda e: -(e.score if e.score == e.score else -1.0))  # NaN (a pair, no line) last
    seen = {" ".join(original.lower().split())}
    out: list[Expansion] = []
    for e in pool:
        key = " ".join(e.query.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(e)
        if len(out) >= config.expansion.expansion_budget:
            break
    return out
