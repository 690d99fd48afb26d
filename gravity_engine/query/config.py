"""Query-time options, grouped by the step of the query path they steer, and the named ablation presets.

``QueryConfig`` holds one sub-model per step: ``selection`` (which anchors are candidates and which are kept),
``temporal`` (dated events for questions about time), ``lines`` (which lines of the kept anchors enter the
prompt), ``expansion`` (the queries sent back to the host), ``fusion`` (how the host's lists are merged) and
``budget`` (how many tokens each context gets). Every option's name is unique across the groups, so
``config.with_(line_sigma=0.3)`` and ``--set line_sigma=0.3`` name it without its group.

The method's text gives no numbers for K, sigma or the temporal slots; the defaults are our own, chosen on
LoCoMo with the classic anchors and the dense host. How each was chosen, with its numbers, is in
docs/query-settings.md.
"""

from __future__ import annotations

from enum import Enum
from typing import Iterable, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from ..errors import ConfigError

MODULES = ("entities", "events", "topics")


class Mode(str, Enum):
    """What goes into the anchor slot of the prompt."""

    anchors = "anchors"  # Gravity's structured anchors (the method)
    summaries = "summaries"  # +Sum: free-form batch summaries, same slot, no expansion
    none = "none"  # the host alone


class _Group(BaseModel):
    model_config = {"frozen": True, "extra": "forbid"}


class Selection(_Group):
    """Candidates per module (native matches, optionally widened) and the top K kept above sigma."""

    modules: tuple[str, ...] = Field(MODULES, description="the anchor modules the question draws on")
    K_E: int = Field(3, ge=0, description="entity profiles kept")
    K_V: int = Field(6, ge=0, description="event records kept")
    K_T: int = Field(2, ge=0, description="topic arcs kept")
    sigma: float = Field(0.25, ge=-1.0, le=1.0, description="minimum cosine similarity to keep an anchor")
    named_first: bool = Field(True, description="entities the question names in full (name or alias) rank before "
                                                "those matched by part of a name, whatever their cosine")
    rerank: bool = Field(True, description="False is the -rrk ablation: native-match order, no sigma cut")
    fuzzy_cutoff: float = Field(88.0, ge=0, le=100, description="rapidfuzz ratio a query word needs to match a name")
    fuzzy_min_len: int = Field(4, ge=1, description="shortest query word matched fuzzily")
    widen: bool = Field(False, description="add the best dense matches over the whole module when native "
                                           "matching finds few candidates")
    widen_k: int = Field(20, ge=0, description="most candidates widening adds per module")
    widen_min_factor: float = Field(2.0, ge=0, description="widen when candidates < factor * K")

    def k_for(self, module: str) -> int:
        if module not in self.modules:
            return 0
        return {"entities": self.K_E, "events": self.K_V, "topics": self.K_T}[module]


class Temporal(_Group):
    """Temporal preservation: up to ``temporal_slots`` of the K_V event slots go to events whose dates match
    the question's (for a "when" question: to dated events above sigma)."""

    temporal_preservation: bool = Field(True, description="reserve event slots for date-matching events")
    temporal_slots: int = Field(6, ge=0, description="event slots reserved (the method's R)")
    temporal_event_lines: bool = Field(True, description="rank the events of a question about time by their "
                                                         "line's embedding instead of the compact text's")
    temporal_source_weight: float = Field(0.5, ge=0, le=1, description="for a question about time, mix into each "
                                          "event's cosine the best cosine of the utterances it cites (the store's "
                                          "host vectors; stores without them skip it); 0 = off")
    temporal_lexical: float = Field(0.2, ge=0, description="for a question about time, add this times the share "
                                    "(idf-weighted) of the question's word stems found in the event's text")
    recent_days: int = Field(60, ge=1, description="'recently' = this many days before the reference time")


class Lines(_Group):
    """Which lines of the selected anchors enter the prompt (query/pack.py)."""

    question_aware: bool = Field(True, description="rank each profile's and topic's lines against the question "
                                                   "(False: stored order, the method's literal reading)")
    packing: Literal["lines", "anchors"] = Field("lines", description="spend the anchor budget line by line, best "
                                                                      "first across modules, or on whole anchors")
    question_parts: bool = Field(True, description="a question asking two things ('..., and in which state does "
                                 "Priya live?'): each line scores its best cosine with the question or one part")
    line_sigma: float = Field(0.25, ge=-1.0, le=1.0, description="minimum cosine of a line with the question")
    line_lexical: float = Field(0.7, ge=0, description="add this times the share (idf-weighted) of the question's "
                                "word stems found in a profile or topic line to the line's cosine")
    lines_per_anchor: int = Field(12, ge=1, description="most lines one entity profile or topic arc shows")
    line_redundancy: float | None = Field(0.8, ge=-1.0, le=1.0, description="skip a line whose cosine with a "
                                          "line already packed is at least this (None: no check)")
    memory_floor: float | None = Field(0.1, ge=-1.0, le=1.0, description="under an equal budget, a line (not a "
                                       "temporal slot's) scoring below the first memory it pushes out plus this "
                                       "gives its room back (None: anchors always take their share)")
    full_names: bool = Field(True, description="add the full names of the people the context calls by a short "
                             "name only ('Lena: Lena Ortiz'); under an equal budget the last memories make room")


class Expansion(_Group):
    """Query expansion (method: budget 9, round-robin topic -> entity -> event, stop when a module runs dry)."""

    expand: bool = Field(True, description="send expansion queries to the host")
    expansion_budget: int = Field(9, ge=0, description="most expansion queries per question")
    expansion_order: tuple[str, ...] = Field(("topics", "entities", "events"), description="the modules' turns, "
                                             "first to last, in round-robin expansion")
    continue_after_exhausted: bool = Field(False, description="keep going round the other modules when one runs dry")
    per_anchor_queries: int = Field(2, ge=1, description="expansion queries one anchor may contribute")
    expansion_sigma: float | None = Field(None, ge=-1.0, le=1.0, description="minimum cosine of a line with the "
                                          "question to become an expansion query (None: line_sigma)")
    expansion_merge: Literal["round_robin", "score"] = Field(
        "round_robin", description="the method's topic -> entity -> event rounds, or the best lines first")


class Fusion(_Group):
    """The host's search and the fusion of the original and expanded result lists."""

    host_k: int = Field(10, ge=1, description="memories the host returns per search")
    fusion_method: Literal["rrf", "slots"] = Field("slots", description="rrf: weighted reciprocal-rank fusion of "
                                                   "all lists; slots: after the kept hits, each expansion's best "
                                                   "new memory in turn")
    fusion_keep: int = Field(6, ge=0, description="the host's own first hits kept on top of the fused list")
    rrf_c: float = Field(60.0, gt=0, description="the constant of reciprocal-rank fusion")
    original_weight: float | None = Field(None, gt=0, description="RRF weight of the original query's list (None: "
                                          "half the weight of all expansion lists together)")
    expansion_weight: float = Field(1.0, ge=0, description="RRF weight of each expansion's list")

    def weights(self, n_expansions: int) -> list[float]:
        original = self.original_weight or max(1.0, 0.5 * n_expansions * self.expansion_weight)
        return [original] + [self.expansion_weight] * n_expansions


class Budget(_Group):
    """How the two contexts are filled:

    * ``total=None`` (``ask``'s default): the host's k memories (fused with the expansion results), the anchors
      on top within ``anchor_budget`` tokens;
    * ``total=N`` (equal budget, ``measure``'s default): both contexts get N tokens; with Gravity the anchors
      take at most ``anchor_share`` of them and memories fill the rest;
    * ``total=N, additive=True`` (the method's mode): N tokens of memories on both sides, the anchors on top
      within ``anchor_share * N``.
    """

    total: int | None = Field(None, ge=0, description="context tokens, the same with and without Gravity "
                                                      "(None: the host's k memories)")
    anchor_share: float = Field(0.4, ge=0.0, le=1.0, description="most of the total the anchor blocks take")
    anchor_budget: int | None = Field(400, ge=0, description="most tokens the anchor blocks take when there is no "
                                                             "total (None: K limits only)")
    additive: bool = Field(False, description="anchors on top of the total's memories (the method's mode)")
    pool: int = Field(60, ge=1, description="memories fetched to fill a token total")

    def anchor_cap(self) -> int | None:
        """The most tokens the anchor blocks may take."""
        return self.anchor_budget if self.total is None else int(self.total * self.anchor_share)


_GROUPS: dict[str, type[_Group]] = {"selection": Selection, "temporal": Temporal, "lines": Lines,
                                    "expansion": Expansion, "fusion": Fusion, "budget": Budget}
# option name -> its group; the names are unique across groups (checked here, at import)
OPTION_GROUP: dict[str, str] = {name: group for group, model in _GROUPS.items() for name in model.model_fields}
if len(OPTION_GROUP) != sum(len(m.model_fields) for m in _GROUPS.values()):
    raise RuntimeError("query option names must be unique across the groups")
_SPELLINGS = {"R": "temporal_slots"}  # the method's name for the temporal slots
_DEFAULTS = {name: field.default for model in _GROUPS.values() for name, field in model.model_fields.items()}


class QueryConfig(BaseModel):
    """Every knob of the query path, one sub-model per step; ``VARIANTS`` holds the named presets."""

    variant: str = "full"
    mode: Mode = Mode.anchors
    selection: Selection = Selection()
    temporal: Temporal = Temporal()
    lines: Lines = Lines()
    expansion: Expansion = Expansion()
    fusion: Fusion = Fusion()
    budget: Budget = Budget()

    model_config = {"frozen": True, "extra": "forbid"}

    @model_validator(mode="before")
    @classmethod
    def _route_options(cls, data):
        """Options named without their group (``QueryConfig(line_sigma=0.3)``) go to their group."""
        if not isinstance(data, dict):
            return data
        out = {k: v for k, v in data.items() if k not in OPTION_GROUP and k not in _SPELLINGS}
        for key, value in data.items():
            name = _SPELLINGS.get(key, key)
            if name in OPTION_GROUP:
                group = OPTION_GROUP[name]
                current = out.get(group, {})
                out[group] = (current.model_dump() if isinstance(current, BaseModel) else dict(current)) | {name: value}
        return out

    def options(self) -> dict[str, object]:
        """Every option by its name, without the groups (what ``with_`` and ``--set`` take)."""
        return {name: value for group in _GROUPS for name, value in getattr(self, group).model_dump().items()}

    def with_(self, **changes) -> QueryConfig:
        """A validated copy with some options changed (the model is frozen so presets cannot be mutated).
        Options are named without their group (``line_sigma=0.3``), ``R`` for the temporal slots;
        ``variant`` and ``mode`` as themselves."""
        unknown = {k for k in changes if _SPELLINGS.get(k, k) not in OPTION_GROUP} - {"variant", "mode"}
        for group in sorted(unknown & set(_GROUPS)):
            raise ConfigError(f"query settings: {group} is a group of options; name one of them: "
                              f"{', '.join(_GROUPS[group].model_fields)}")
        if unknown:
            raise ConfigError(f"query settings: unknown option(s) {', '.join(sorted(unknown))} "
                              "(every option: docs/query-settings.md)")
        try:
            return type(self).model_validate(self.model_dump() | changes)
        except ValidationError as err:
            problems = "; ".join(f"{e['loc'][-1]}={e['input']!r}: {e['msg']}" for e in err.errors())
            raise ConfigError(f"query settings: {problems}") from None

    def with_typed(self, settings: Iterable[str]) -> QueryConfig:
        """``with_`` for options as a person types them: ``line_sigma=0.3``, ``memory_floor=none``,
        ``modules=entities,events``, ``rerank=off`` (the CLI's and the benchmarks' ``--set``)."""
        changes: dict[str, object] = {}
        for setting in settings:
            name, sep, text = setting.partition("=")
            name, text = name.strip(), text.strip()
            if not sep or not name:
                raise ConfigError(f"query setting {setting!r}: write it as NAME=VALUE, e.g. line_sigma=0.3")
            option = _SPELLINGS.get(name, name)
            default = _DEFAULTS.get(option)
            if text.lower() in ("none", "null"):
                changes[name] = None  # refused by validation where the option cannot be None
            elif isinstance(default, tuple):
                changes[name] = tuple(part.strip() for part in text.split(",") if part.strip())
            else:
                changes[name] = text  # validation converts the text to the option's type, or says why not
        return self.with_(**changes)


FULL = QueryConfig(variant="full")
ENTITIES_ONLY = FULL.with_(variant="+E", modules=("entities",))
EVENTS_ONLY = FULL.with_(variant="+V", modules=("events",))
TOPICS_ONLY = FULL.with_(variant="+T", modules=("topics",))
ENTITIES_EVENTS = FULL.with_(variant="+EV", modules=("entities", "events"))
ENTITIES_TOPICS = FULL.with_(variant="+ET", modules=("entities", "topics"))
EVENTS_TOPICS = FULL.with_(variant="+VT", modules=("events", "topics"))
# The method as written: native candidates only, top-K above sigma, temporal slots, round-robin
# expansion that stops when a module runs dry, whole anchors in three blocks (no line scoring).
PAPER = FULL.with_(variant="paper", widen=False, question_aware=False, packing="anchors", anchor_budget=None,
                   temporal_event_lines=False, temporal_slots=3, temporal_source_weight=0.0, temporal_lexical=0.0,
                   lines_per_anchor=6, fusion_method="rrf", fusion_keep=0, line_redundancy=None, line_lexical=0.0,
                   named_first=False, question_parts=False, full_names=False, memory_floor=None)
# -rrk takes the reranker out and nothing else: no cosine anywhere (anchors in native-match order, lines
# as stored, no sigma cut); candidates, K, temporal slots, packing, expansion and fusion stay as in full.
NO_RERANK = FULL.with_(variant="-rrk", rerank=False)
NO_EXPANSION = FULL.with_(variant="-exp", expand=False)
SUMMARIES = FULL.with_(variant="+Sum", mode=Mode.summaries, expand=False)
BASELINE = FULL.with_(variant="baseline", mode=Mode.none, expand=False)

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
