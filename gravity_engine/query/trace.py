"""The query trace: one JSON object per question, everything the query path saw and decided.

Stable schema (``TRACE_VERSION``; fields are only ever added). Top level:

* ``question``, ``question_date``, ``reference_time`` (what relative times were resolved against),
  ``variant``, ``config`` (the mode and every query option by its name, as ``--set`` takes them), ``host``
  and ``host_k``;
* ``temporal``: ``{reference, spans: [{text, start, end, kind}], asks_when, unresolved}``;
* ``modules``: ``{entities|events|topics: {k, n_anchors, n_candidates, n_native, n_widened,
  n_temporal, matched_terms, truncated, kept_ids, candidates: [...]}}``; each candidate has
  ``anchor_id, label, native_reason`` ("name: X", "alias: X", "partial name: X", "fuzzy name: X ~ y
  (92)", "participant", "keyword", "participant+keyword", "label/keyword", "dense" = widening,
  "temporal match"), ``native_score``, ``cosine`` (null when reranking is off), ``rank`` (1 = best),
  ``kept`` and ``status`` ("kept", "temporal slot", "below sigma", "beyond K", "module off");
* ``expansions``: ``[{query, module, anchor_id, stored_vector}]`` in merge order (topic -> entity -> event);
* ``host_results``: ``[{query, source: original|expansion, module, anchor_id, memories: [...]}]``;
* ``merged``: the memories given to the prompt after reciprocal-rank fusion, with ``rrf`` and the
  indexes of the ``host_results`` lists they came from;
* ``blocks``: ``[{module, title, text, tokens, anchor_ids, lines: [{anchor_id, field, text, score,
  pinned, source_ids}]}]`` and ``injected_tokens`` (the prompt shows no ids; the lines keep them);
* ``pushed_out``: the host's own top-k memories that the context with Gravity does not hold;
* ``prompt_without`` / ``prompt_with``: ``{messages, text, tokens}``;
* ``answers``: ``{without, with, status, model}``; status is "answered" or "unavailable: ...";
* ``timings_ms``: ``embed, retrieve, temporal, expand, inject`` (the Gravity path), ``query_path``
  (their sum), ``host_search``, ``host_expanded_search``, ``llm``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

TRACE_VERSION = 1


class CandidateTrace(BaseModel):
    anchor_id: str
    label: str
    native_reason: str
    native_score: float
    cosine: float | None
    rank: int
    kept: bool
    status: str


class ModuleTrace(BaseModel):
    module: str
    k: int
    n_anchors: int
    n_candidates: int
    n_native: int
    n_widened: int
    n_temporal: int
    matched_terms: list[str] = Field(default_factory=list)
    kept_ids: list[str] = Field(default_factory=list)
    truncated: bool = False  # candidates beyond ``max_candidates`` are counted but not listed
    candidates: list[CandidateTrace] = Field(default_factory=list)


class ExpansionTrace(BaseModel):
    query: str
    module: str
    anchor_id: str
    stored_vector: bool = False  # searched with the embedding stored at build time (nothing encoded)


class MemoryTrace(BaseModel):
    text: str
    utterance_ids: list[str] = Field(default_factory=list)
    score: float = 0.0
    timestamp: str | None = None
    session_id: str | None = None
    rank: int = 0


class HostSearchTrace(BaseModel):
    query: str
    source: str  # "original" | "expansion"
    module: str | None = None
    anchor_id: str | None = None
    memories: list[MemoryTrace] = Field(default_factory=list)


class MergedMemory(MemoryTrace):
    rrf: float = 0.0
    from_lists: list[int] = Field(default_factory=list)


class LineTrace(BaseModel):
    anchor_id: str
    field: str  # the anchor field the line shows ("attributes[3]", "relations[0]", "what", "key_facts[1]")
    text: str
    score: float | None = None  # cosine with the question plus ``line_lexical`` (null when reranking is off)
    pinned: bool = False  # an event in a temporal slot
    source_ids: list[str] = Field(default_factory=list)


class BlockTrace(BaseModel):
    module: str
    title: str
    text: str
    tokens: int
    anchor_ids: list[str] = Field(default_factory=list)
    lines: list[LineTrace] = Field(default_factory=list)  # what the block shows, with ids and sources


class PromptTrace(BaseModel):
    messages: list[dict[str, str]]
    text: str
    tokens: int


class AnswerTrace(BaseModel):
    without: str | None = None
    with_: str | None = Field(None, alias="with")
    status: str = "unavailable: no endpoint configured"
    model: str | None = None

    model_config = {"populate_by_name": True}


class QueryTrace(BaseModel):
    trace_version: int = TRACE_VERSION
    question: str
    question_date: str | None = None
    reference_time: str | None = None
    variant: str
    config: dict[str, Any]
    host: str
    host_k: int
    temporal: dict[str, Any] = Field(default_factory=dict)
    modules: dict[str, ModuleTrace] = Field(default_factory=dict)
    expansions: list[ExpansionTrace] = Field(default_factory=list)
    host_results: list[HostSearchTrace] = Field(default_factory=list)
    merged: list[MergedMemory] = Field(default_factory=list)
    blocks: list[BlockTrace] = Field(default_factory=list)
    injected_tokens: int = 0
    pushed_out: list[MemoryTrace] = Field(default_factory=list)  # host top-k memories missing with Gravity
    prompt_without: PromptTrace | None = None
    prompt_with: PromptTrace | None = None
    answers: AnswerTrace = Field(default_factory=AnswerTrace)
    timings_ms: dict[str, float] = Field(default_factory=dict)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2, by_alias=True)
