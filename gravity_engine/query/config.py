"""Query-time options and the named variants of the method's ablations.

The method's text gives no numbers for K, sigma or the temporal slots; the defaults below are our
own choice, picked on LoCoMo with the classic anchors and the dense host (see ``measure``), and every
one of them can be overridden.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, Field

from ..errors import ConfigError


class Mode(str, Enum):
    """What goes into the anchor slot of the prompt."""

    anchors = "anchors"  # Gravity's structured anchors (the method)
    summaries = "summaries"  # +Sum: free-form batch summaries, same slot, no expansion
    none = "none"  # the host alone


class QueryConfig(BaseModel):
    """Every knob of the query path; ``VARIANTS`` holds the named presets."""

    variant: str = "full"
    mode: Mode = Mode.anchors
    modules: tuple[str, ...] = ("entities", "events", "topics")
    # Top-K per module, kept only when cosine >= sigma.
    K_E: int = Field(3, ge=0, description="entity profiles kept")
    K_V: int = Field(6, ge=0, description="event records kept")
    K_T: int = Field(2, ge=0, description="topic arcs kept")
    sigma: float = Field(0.25, ge=-1.0, le=1.0, description="minimum cosine similarity to keep an anchor")
    named_first: bool = Field(True, description="entities the question names in full (name or alias) rank before "
                                                "those matched by part of a name, whatever their cosine")
    rerank: bool = Field(True, description="False is the -rrk ablation: native-match order, no sigma cut")
    # Temporal preservation: up to R of the K_V event slots go to events whose dates match the query's (a
    # "when" question: to dated events above sigma). All of them by default: on LoCoMo (all ten, classic, equal
    # budget) R 6 against 3 raised temporal grounding 73.3 -> 76.7% and coverage +13.2 -> +13.6, no category lower.
    temporal_slots: int = Field(6, ge=0, alias="R")
    temporal: bool = True
    # Measured on LoCoMo (benchmarks/measure_locomo.py --diagnose): a question about time is matched far better
    # against an event's line (who, what, the time as said) than against its compact text, whose ISO dates and
    # labels blur the cosine; other questions keep the compact text, which serves them better.
    temporal_event_lines: bool = Field(True, description="rank the events of a question about time by their "
                                                         "line's embedding instead of the compact text's")
    # Measured on LoCoMo (all ten, classic, equal budget; tuned on conv-26..43, checked on conv-44..50): the
    # cited utterance's cosine (weight 0.5) and the question's word stems in the event (0.2) raised temporal
    # grounding 77.5 -> 79.5% (tuning half 86.1 -> 87.6, other half 67.8 -> 70.2) and coverage +14.3 -> +14.8.
    temporal_source_weight: float = Field(0.5, ge=0, le=1, description="for a question about time, mix into each "
                                          "event's cosine the best cosine of the utterances it cites (the store's "
                                          "host vectors; stores without them skip it); 0 = off")
    temporal_lexical: float = Field(0.2, ge=0, description="for a question about time, add this times the share "
                                    "(idf-weighted) of the question's word stems found in the event's text")
    recent_days: int = Field(60, ge=1, description="'recently' = this many days before the reference time")
    # Fuzzy name matching (rapidfuzz ratio, 0..100) for query words of at least fuzzy_min_len letters.
    fuzzy_cutoff: float = Field(88.0, ge=0, le=100)
    fuzzy_min_len: int = Field(4, ge=1)
    # Widening: when native matching yields fewer than widen_min(module) candidates, add the best
    # dense matches over the whole module, up to this many per module (0 turns widening off).
    # Off by default: on LoCoMo (dense host, equal budget) dense candidates for questions whose names match
    # no anchor brought lines and expansion queries that cost more than they gave (benchmarks/measure_locomo.py --choices).
    widen: bool = False
    widen_k: int = Field(20, ge=0)
    widen_min_factor: float = Field(2.0, ge=0, description="widen when candidates < factor * K")
    # Which lines of the selected anchors enter the prompt (query/pack.py).
    question_aware: bool = Field(True, description="rank each profile's and topic's lines against the question "
                                                   "(False: stored order, the method's literal reading)")
    packing: Literal["lines", "anchors"] = Field("lines", description="spend the anchor budget line by line, best "
                                                                      "first across modules, or on whole anchors")
    anchor_budget: int | None = Field(400, ge=0, description="most tokens the anchor blocks take (None: K limits only)")
    question_parts: bool = Field(True, description="a question asking two things ('..., and in which state does "
                                 "Priya live?'): each line scores its best cosine with the question or one part")
    line_sigma: float = Field(0.25, ge=-1.0, le=1.0, description="minimum cosine of a line with the question")
    # A speaker's profile holds 100-200 lines whose cosines with a question lie close together; the covering
    # line ranked 14th-160th in 21 single-hop misses. Measured on LoCoMo (all ten, classic, equal budget; 0.1-1.5
    # tried on conv-26..43, 0.7 first of the best there (+16.3 -> +17.3), checked on conv-44..50 (+14.0 -> +14.7)):
    # single-hop +5.2 -> +6.3, multi-hop +8.9 -> +9.9, temporal +50.5 -> +51.1, open-domain +2.1 -> +1.0.
    line_lexical: float = Field(0.7, ge=0, description="add this times the share (idf-weighted) of the question's "
                                "word stems found in a profile or topic line to the line's cosine")
    lines_per_anchor: int = Field(12, ge=1, description="most lines one entity profile or topic arc shows")
    # One fact is often a profile line, a topic line and an event at once ("Nate won their first tournament");
    # packed best first, the copies filled the anchor budget and pushed out the next fact. Measured on LoCoMo
    # (all ten, classic, equal budget; 0.95-0.7 tried on conv-26..43, 0.8 best there, checked on conv-44..50):
    # single-hop +4.4 -> +5.2, multi-hop +8.5 -> +8.9, temporal +51.1 -> +50.8, overall +14.7 -> +15.2.
    line_redundancy: float | None = Field(0.8, ge=-1.0, le=1.0, description="skip a line whose cosine with a "
                                          "line already packed is at least this (None: no check)")
    # Under an equal budget the anchors took their whole share even when their last lines were worth less than the
    # memories they pushed out (on conv-26..43, 12 single-hop questions the host alone covered were lost, each a
    # host hit at rank 5-25 squeezed out). Measured on LoCoMo (all ten, classic, equal budget; -0.1..0.2 tried on
    # conv-26..43, 0.1 best there, +17.6 -> +18.4; conv-44..50 +15.2 -> +15.2): single-hop +6.2 -> +7.0,
    # open-domain +5.2 -> +6.2, multi-hop +10.3 -> +9.6 (lower in both halves), temporal unchanged (its slots are
    # pinned), overall +16.4 -> +16.8.
    memory_floor: float | None = Field(0.1, ge=-1.0, le=1.0, description="under an equal budget, a line (not a "
                                       "temporal slot's) scoring below the first memory it pushes out plus this "
                                       "gives its room back (None: anchors always take their share)")
    full_names: bool = Field(True, description="add the full names of the people the context calls by a short "
                             "name only ('Lena: Lena Ortiz'); under an equal budget the last memories make room")
    # Query expansion (method: budget 9, round-robin topic -> entity -> event, stop when a module runs dry).
    expand: bool = True
    expansion_budget: int = Field(9, ge=0)
    expansion_order: tuple[str, ...] = ("topics", "entities", "events")
    continue_after_exhausted: bool = False
    per_anchor_queries: int = Field(2, ge=1, description="expansion queries one anchor may contribute")
    expansion_sigma: float | None = Field(None, ge=-1.0, le=1.0, description="minimum cosine of a line with the "
                                          "question to become an expansion query (None: line_sigma)")
    expansion_merge: Literal["round_robin", "score"] = Field(
        "round_robin", description="the method's topic -> entity -> event rounds, or the best lines first")
    # Host search and fusion of the original and expanded results (reciprocal-rank fusion).
    host_k: int = Field(10, ge=1)
    rrf_c: float = Field(60.0, gt=0)
    # None: the original list weighs half as much as all expansion lists together. On LoCoMo conv-26
    # (dense host, k=10) that gave the best evidence recall of the weights tried (1, 2, 3, 5, 9):
    # expansions promote what several of them agree on without burying the original's best hits.
    original_weight: float | None = Field(None, gt=0, description="RRF weight of the original query's list")
    expansion_weight: float = Field(1.0, ge=0)
    # Measured on LoCoMo (benchmarks/measure_locomo.py --choices): the host's first 6 hits kept, then each
    # expansion's best new memory in turn, raised evidence recall@10 most without costing answer coverage;
    # RRF (the method's natural reading, kept by the 'paper' variant) let expansions promote little.
    fusion_keep: int = Field(6, ge=0, description="the host's own first hits kept on top of the fused list")
    fusion: Literal["rrf", "slots"] = Field("slots", description="rrf: weighted reciprocal-rank fusion of all lists; "
                                            "slots: after the kept hits, each expansion's best new memory in turn")

    model_config = {"populate_by_name": True, "frozen": True}

    def fusion_weights(self, n_expansions: int) -> list[float]:
        original = self.original_weight or max(1.0, 0.5 * n_expansions * self.expansion_weight)
        return [original] + [self.expansion_weight] * n_expansions

    def k_for(self, module: str) -> int:
        if module not in self.modules:
            return 0
        return {"entities": self.K_E, "events": self.K_V, "topics": self.K_T}[module]

    @property
    def R(self) -> int:  # noqa: N802 - the method's name for it
        return self.temporal_slots

    def with_(self, **changes) -> QueryConfig:
        """A validated copy with some fields changed (the model is frozen so presets cannot be mutated);
        fields may be named by their aliases (``R``)."""
        if "R" in changes:
            changes["temporal_slots"] = changes.pop("R")
        unknown = set(changes) - set(type(self).model_fields)
        if unknown:
            raise ConfigError(f"query settings: unknown option(s) {', '.join(sorted(unknown))}")
        try:
            return type(self).model_validate(self.model_dump() | changes)
        except ValueError as err:
            raise ConfigError(f"query settings: {err}") from err


_ALL = ("entities", "events", "topics")
FULL = QueryConfig(variant="full")
ENTITIES_ONLY = QueryConfig(variant="+E", modules=("entities",))
EVENTS_ONLY = QueryConfig(variant="+V", modules=("events",))
TOPICS_ONLY = QueryConfig(variant="+T", modules=("topics",))
ENTITIES_EVENTS = QueryConfig(variant="+EV", modules=("entities", "events"))
ENTITIES_TOPICS = QueryConfig(variant="+ET", modules=("entities", "topics"))
EVENTS_TOPICS = QueryConfig(variant="+VT", modules=("events", "topics"))
# The method as written: native candidates only, top-K above sigma, temporal slots, round-robin
# expansion that stops when a module runs dry, whole anchors in three blocks (no line scoring).
PAPER = QueryConfig(variant="paper", widen=False, question_aware=False, packing="anchors", anchor_budget=None,
                    temporal_event_lines=False, temporal_slots=3, temporal_source_weight=0.0, temporal_lexical=0.0,
                    lines_per_anchor=6, fusion="rrf", fusion_keep=0, line_redundancy=None, line_lexical=0.0,
                    named_first=False, question_parts=False, full_names=False, memory_floor=None)
# -rrk takes the reranker out and nothing else: no cosine anywhere (anchors in native-match order, lines
# as stored, no sigma cut); candidates, K, temporal slots, packing, expansion and fusion stay as in full.
NO_RERANK = QueryConfig(variant="-rrk", rerank=False)
NO_EXPANSION = QueryConfig(variant="-exp", expand=False)
SUMMARIES = QueryConfig(variant="+Sum", mode=Mode.summaries, expand=False)
BASELINE = QueryConfig(variant="baseline", mode=Mode.none, expand=False)

VARIANTS: dict[str, QueryConfig] = {
    c.variant: c
    for c in (FULL, PAPER, ENTITIES_ONLY, EVENTS_ONLY, TOPICS_ONLY, ENTITIES_EVENTS, ENTITIES_TOPICS, EVENTS_TOPICS,
              NO_RERANK, NO_EXPANSION, SUMMARIES, BASELINE)
}
# Spellings people type: "+EVT" is the method's name for the full combination.
_ALIASES = {"+evt": "full", "evt": "full", "none": "baseline", "host": "baseline", "sum": "+Sum",
            "rrk": "-rrk", "exp": "-exp", "method": "paper"}


def get_variant(name: str) -> QueryConfig:
    """The preset named ``name`` (case-insensitive; '+EVT' = 'full'); ConfigError lists the known ones."""
    key = name.strip()
    lowered = {k.lower(): k for k in VARIANTS}
    key = _ALIASES.get(key.lower(), key)
    if key in VARIANTS:
        return VARIANTS[key]
    if key.lower() in lowered:
        return VARIANTS[lowered[key.lower()]]
    raise ConfigError(f"unknown variant {name!r}; choose one of {', '.join(VARIANTS)}")
