"""Step 3a: which anchor lines enter the prompt, scored against the question and packed under a budget.

The selected anchors (per-module top-K above sigma, temporal slots) are opened into lines
(``lines.py``). With ``question_aware`` each entity and topic line is scored by the cosine of its
stored embedding with the question, so "What does Caroline do?" brings Caroline's job, not her first
five stored facts; an event line carries its event's score, and events in temporal slots are
pinned. Lines below ``line_sigma`` are not worth their tokens. Under a token budget the lines are
taken best first across modules (an anchor's head and a block's title are paid with its first
line), so the lowest-value lines go first, never a whole block. ``packing="anchors"`` is the
method's literal form: whole anchors in rank order, the last ones dropped to fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..anchors import MODULES
from .config import QueryConfig
from .inject import BLOCK_ORDER, BLOCK_TITLES, InjectedContext, count_tokens
from ..lines import AnchorLine, anchor_head, event_line

PINNED = 10.0  # score added to temporal-slot events: they are kept before anything else


@dataclass
class ScoredLine:
    line: AnchorLine
    score: float  # cosine with the question (or its anchor's, for events); NaN when reranking is off
    anchor_rank: int  # rank of its anchor in its module's selection (0 = best)
    vector: np.ndarray | None = None  # the stored embedding of ``line.search_text`` (expansion reuses it)
    pinned: bool = False

    @property
    def priority(self) -> float:
        s = -1.0 if np.isnan(self.score) else self.score
        return s + (PINNED if self.pinned else 0.0)


@dataclass
class LineSelection:
    """Every candidate line of the selected anchors, best first, and the anchors' order per module."""

    lines: list[ScoredLine] = field(default_factory=list)
    anchors: dict[str, list] = field(default_factory=dict)  # module -> selected anchors in rank order

    def for_module(self, module: str) -> list[ScoredLine]:
        return [s for s in self.lines if s.line.module == module]


def score_lines(selected: dict[str, list], store, embedder, qvec: np.ndarray | None, config: QueryConfig,
                event_scores: dict[str, float], pinned: set[str], lexical: np.ndarray | None = None) -> LineSelection:
    """Open the selected anchors into lines and score each one (see the module docstring); ``lexical`` (one
    value per line-table row) is added to the cosine of profile and topic lines."""
    out = LineSelection(anchors={m: list(selected.get(m) or []) for m in MODULES})
    aware = config.lines.question_aware and config.selection.rerank and qvec is not None
    if not any(out.anchors.values()):
        return out
    table = store.line_table()
    matrix = store.line_matrix(embedder)
    for module in MODULES:
        for rank, anchor in enumerate(out.anchors[module]):
            rows = table.by_anchor.get(anchor.id)
            if module == "events":
                vec = matrix[rows[0]] if rows is not None and len(rows) else None
                score = event_scores.get(anchor.id, float("nan"))
                out.lines.append(ScoredLine(event_line(anchor), score, rank, vec, anchor.id in pinned))
                continue
            if rows is None or not len(rows):
                continue
            vecs = matrix[rows]
            if not aware:
                scores = np.full(len(rows), np.nan, dtype=np.float32)
            else:  # a question of several parts: a line's best cosine with the whole or one part
                scores = vecs @ qvec if qvec.ndim == 1 else (vecs @ qvec.T).max(axis=1)
            if aware and lexical is not None:
                scores = scores + lexical[rows]
            for line, vec, s in zip((table.lines[r] for r in rows), vecs, scores.tolist()):
                out.lines.append(ScoredLine(line, float(s), rank, vec))
    out.lines.sort(key=_order_key(config))
    return out


def _order_key(config: QueryConfig):
    if config.lines.question_aware and config.selection.rerank:
        return lambda s: (-s.priority, s.anchor_rank, s.line.order)
    # Stored order: anchors by rank, each anchor's lines as stored (the method's and -rrk's reading).
    module_pos = {m: i for i, m in enumerate(BLOCK_ORDER)}
    return lambda s: (not s.pinned, s.anchor_rank, module_pos[s.line.module], s.line.order)


def _eligible(sel: LineSelection, config: QueryConfig, floor: float | None = None) -> list[ScoredLine]:
    """Lines worth considering: above ``line_sigma`` (pinned events always) and ``floor`` (``memory_floor``: the
    memory a line would push out, when known), at most ``lines_per_anchor`` each."""
    per_anchor: dict[str, int] = {}
    out = []
    aware = config.lines.question_aware and config.selection.rerank
    for s in sorted(sel.lines, key=_order_key(config)):
        if aware and not s.pinned and s.line.module != "events" and not (s.score >= config.lines.line_sigma):
            continue
        if floor is not None and not s.pinned and s.priority < floor:
            continue
        n = per_anchor.get(s.line.anchor_id, 0)
        if s.line.module != "events" and n >= config.lines.lines_per_anchor:
            continue
        per_anchor[s.line.anchor_id] = n + 1
        out.append(s)
    return out


def pack_lines(sel: LineSelection, config: QueryConfig, budget: int | None,
               count: Callable[[str], int] = count_tokens, floor: float | None = None) -> InjectedContext:
    """The chosen lines rendered as blocks within ``budget`` tokens (None: the per-anchor limits only); lines
    scoring below ``floor`` are left out (temporal slots' events never)."""
    if config.lines.packing == "anchors":
        return _pack_whole_anchors(sel, config, budget, count)
    chosen: list[ScoredLine] = []
    packed = _Packed(config.lines.line_redundancy)
    used = 0
    opened: set[str] = set()
    blocks_open: set[str] = set()
    for s in _eligible(sel, config, floor):
        ln = s.line
        cost = count(_line_text(ln)) + 1
        if ln.anchor_id not in opened and ln.module != "events":
            cost += count(_head_text(sel, ln)) + 1
        if ln.module not in blocks_open:
            cost += count(_title(ln.module)) + 1
        if budget is not None and used + cost > budget:
            continue  # a smaller line further down may still fit
        if not packed.take(s):
            continue
        chosen.append(s)
        used += cost
        opened.add(ln.anchor_id)
        blocks_open.add(ln.module)
    return render_lines(sel, chosen, count)


class _Packed:
    """The stored vectors of the lines packed so far, to skip a line that says again what one of them says
    (cosine >= ``threshold``; a line pinned by a temporal slot is always taken)."""

    def __init__(self, threshold: float | None):
        self.threshold = threshold
        self.rows: np.ndarray | None = None
        self.n = 0

    def take(self, s: ScoredLine) -> bool:
        if self.threshold is None or s.vector is None:
            return True
        if self.n and not s.pinned and float(np.max(self.rows[:self.n] @ s.vector)) >= self.threshold:
            return False
        if self.rows is None or self.n == len(self.rows):
            grown = np.empty((max(32, 2 * self.n), len(s.vector)), dtype=np.float32)
            if self.n:
                grown[:self.n] = self.rows[:self.n]
            self.rows = grown
        self.rows[self.n] = s.vector
        self.n += 1
        return True


def _pack_whole_anchors(sel: LineSelection, config: QueryConfig, budget: int | None, count) -> InjectedContext:
    """Whole anchors (their first ``lines_per_anchor`` lines as stored); the lowest-ranked anchor of the
    largest block goes first until the blocks fit."""
    by_anchor: dict[str, list[ScoredLine]] = {}
    for s in sorted(sel.lines, key=lambda s: s.line.order):
        lst = by_anchor.setdefault(s.line.anchor_id, [])
        if s.line.module == "events" or len(lst) < config.lines.lines_per_anchor:
            lst.append(s)
    keep = {m: [a.id for a in sel.anchors.get(m, [])] for m in MODULES}

    def build() -> InjectedContext:
        chosen = [s for m in MODULES for aid in keep[m] for s in by_anchor.get(aid, [])]
        return render_lines(sel, chosen, count)

    ctx = build()
    while budget is not None and ctx.total_tokens > budget and any(keep.values()):
        biggest = max((m for m in MODULES if keep[m]), key=lambda m: ctx.tokens.get(m, 0))
        keep[biggest].pop()
        ctx = build()
    return ctx


def _title(module: str) -> str:
    return f"## {BLOCK_TITLES[module]}"


def _line_text(ln: AnchorLine) -> str:
    return f"- {ln.text}" if ln.module == "events" else f"  {ln.text}"


def _head_text(sel: LineSelection, ln: AnchorLine) -> str:
    anchor = next((a for a in sel.anchors.get(ln.module, []) if a.id == ln.anchor_id), None)
    return f"- {anchor_head(ln.module, anchor)}" if anchor is not None else f"- {ln.anchor_id}"


def _event_key(anchor) -> tuple:
    return (anchor.date_start is None and anchor.date_end is None, anchor.date_start or anchor.date_end or "", anchor.id)


def render_lines(sel: LineSelection, chosen: list[ScoredLine], count: Callable[[str], int] = count_tokens) -> InjectedContext:
    """Blocks in topic, entity, event order; anchors in rank order with their lines best first; events in
    time order so the model reads a timeline. Ids stay out of the prompt (the trace keeps them)."""
    ctx = InjectedContext()
    picked: dict[str, list[ScoredLine]] = {}
    for s in chosen:
        picked.setdefault(s.line.anchor_id, []).append(s)
    for module in BLOCK_ORDER:
        anchors = [a for a in sel.anchors.get(module, []) if a.id in picked]
        if not anchors:
            continue
        if module == "events":
            anchors.sort(key=_event_key)
        title = _title(module)
        parts: list[str] = []
        lines_out: list[ScoredLine] = []
        for a in anchors:
            if module != "events":
                parts.append(f"- {anchor_head(module, a)}")
            for s in picked[a.id]:
                parts.append(_line_text(s.line))
                lines_out.append(s)
        ctx.blocks[module] = title + "\n" + "\n".join(parts)
        ctx.tokens[module] = count(title) + sum(count(p) for p in parts) + len(parts)
        ctx.anchor_ids[module] = [a.id for a in anchors]
        ctx.lines[module] = lines_out
    return ctx

