"""The query path end to end: host search alone, anchor retrieval, expansion, fusion, injection, answers.

``GravityQuery(store).run(question)`` is the Gravity path alone (what ``benchmarks/query.py`` times):
query embedding, temporal detection, per-module retrieval and rerank, line scoring and packing,
expansion. ``ask(store, host, question)`` adds the host through ``session.run_question`` (the one
path ``measure`` and ``evaluate`` take too): its search for the question and for each expansion
query, fusion, the contexts without and with the anchors under one budget, the answer prompts, and
the answers when an LLM client is given. Everything lands in a ``QueryTrace``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import date

import numpy as np

from ..anchors import MODULES, Anchor
from ..embed import DEFAULT_MODEL, Embedder, embedder_for
from ..errors import ConfigError, GravityError, StoreError
from ..hosts.base import Host, Memory
from ..prompts.answer import NAME, VERSION
from ..store import AnchorStore
from . import temporal
from .config import FULL, Mode, QueryConfig, get_variant
from .expand import Expansion, expand
from .index import AnchorIndex, Postings
from .inject import BLOCK_TITLES, InjectedContext, answer_messages, count_tokens, prompt_text, render_summaries
from .pack import LineSelection, pack_lines, score_lines
from .session import HostSession, QuestionRun, memory_key, run_question
from .retrieve import STATUS_NAMES, TEMPORAL_SLOT, ModuleSelection, select_module
from .summaries import pick_summaries, store_summaries, summaries_kind, write_model_summaries
from .names import FullNames
from ..text import content_tokens, question_parts, stems
from .trace import (AnswerTrace, BlockTrace, CandidateTrace, ExpansionTrace, HostSearchTrace, LineTrace, MemoryTrace,
                    MergedMemory, ModuleTrace, PromptTrace, QueryTrace)


def resolve_embedder(store: AnchorStore, embedder: Embedder | None = None) -> Embedder:
    """The embedder the store was built with (or the one given), checked against the stored matrices."""
    dims = {m.shape[1] for m in store.embeddings.values() if m.ndim == 2 and m.shape[0]}
    if embedder is None:
        name = store.anchors.built_with.embedding_model or DEFAULT_MODEL
        embedder = embedder_for(name, next(iter(dims)) if dims else store.anchors.built_with.embedding_dim)
    if dims and embedder.dim not in dims:
        raise ConfigError(f"{store.path or 'store'}: anchors were embedded with {sorted(dims)} dimensions "
                          f"({store.anchors.built_with.embedding_model or 'unknown model'}), but the query embedder "
                          f"{embedder.name!r} gives {embedder.dim}")
    return embedder


@dataclass
class GravityResult:
    """What the Gravity path decided for one question, before any host or LLM."""

    question: str
    config: QueryConfig
    qtime: temporal.QueryTime
    modules: dict[str, ModuleSelection] = field(default_factory=dict)
    selected: dict[str, list[Anchor]] = field(default_factory=dict)
    expansions: list[Expansion] = field(default_factory=list)
    lines: LineSelection = field(default_factory=LineSelection)  # every candidate line, scored
    context: InjectedContext = field(default_factory=InjectedContext)
    timings_ms: dict[str, float] = field(default_factory=dict)
    qvec: np.ndarray | None = None  # the question's embedding (hosts on the same model search with it)
    summaries: str = ""  # +Sum: which summaries were injected ("extractive" or "model-written by <model>")


# How close an event must be to "the conference" of "after the conference" to set the boundary (MiniLM scale).
EVENT_REF_MIN_COSINE = 0.45


class GravityQuery:
    """The anchor side of the query path for one store; build once, call ``run`` per question."""

    def __init__(self, store: AnchorStore, embedder: Embedder | None = None, config: QueryConfig | str = FULL,
                 count=count_tokens):
        if isinstance(config, str):
            config = get_variant(config)
        store.check_embeddings()
        self.store = store
        self.config = config
        self.embedder = resolve_embedder(store, embedder)
        self.index = AnchorIndex.for_store(store)
        self.count = count
        self._rows = {m: store.anchors.module(m) for m in MODULES}
        self._sources = None  # (utterance vectors, event rows, their cited utterances' rows)
        self._stems: Postings | None = None  # the events' word stems, for questions about time
        self._line_stems: tuple = (None, None)  # (line table, its lines' word stems): built on first use
        self._event_lines: tuple = (None, None)  # (line table, its event rows): built on the first question about time
        self._full_names: FullNames | None = None

    @property
    def full_names(self) -> FullNames:
        """The store's people by full name and short names (``names.py``), built on first use."""
        if self._full_names is None:
            conv = self.store.conversation
            self._full_names = FullNames(self.store.anchors, list(conv.speakers) if conv is not None else None)
        return self._full_names

    def reference(self, question_date: str | date | None = None) -> date | None:
        if question_date:
            ref = temporal._as_date(question_date)
            if ref is None:
                raise GravityError(f"question date {question_date!r} is not a date")
            return ref
        conv = self.store.conversation
        last = conv.last_time() if conv is not None else None
        return last.date() if last else None

    def run(self, question: str, question_date: str | date | None = None, config: QueryConfig | None = None,
            qvec: np.ndarray | None = None) -> GravityResult:
        """Embed, detect time, retrieve and rerank per module, score and pack lines, expand (the timed path).

        The anchor blocks take at most ``config.budget.anchor_cap()`` tokens; ``qvec`` is the question's
        embedding when the caller has it already."""
        config = config or self.config
        budget = config.budget.anchor_cap()
        t = time.perf_counter
        timings: dict[str, float] = {}
        t0 = t()
        qtime = temporal.detect(question, self.reference(question_date), config.temporal.recent_days)
        timings["temporal"] = (t() - t0) * 1000
        result = GravityResult(question=question, config=config, qtime=qtime, timings_ms=timings)
        if config.mode == Mode.none:
            return result
        t0 = t()
        phrases = [phrase for _, phrase in qtime.event_refs] if "events" in config.selection.modules else []
        parts = question_parts(question) if config.lines.question_parts else []
        part_vecs = None
        if qvec is None or phrases or parts:
            vectors = self.embedder.encode([question, *phrases, *parts])
            qvec = vectors[0] if qvec is None else qvec
            phrase_vecs = vectors[1:1 + len(phrases)]
            part_vecs = vectors[1 + len(phrases):] if parts else None
        timings["embed"] = (t() - t0) * 1000
        result.qvec = qvec
        if phrases:
            self._bound_by_events(qtime, phrase_vecs)
        t0 = t()
        if config.mode == Mode.summaries:
            target = budget if budget is not None else self._full_size(question, qvec, qtime)
            summaries, matrix = store_summaries(self.store, self.embedder)
            result.summaries = summaries_kind(self.store)
            chosen = pick_summaries(summaries, matrix, qvec, target, self.count)
            timings["retrieve"] = (t() - t0) * 1000
            t0 = t()
            result.context = render_summaries([(s.id, s.text) for s in chosen], self.count)
            timings["inject"] = (t() - t0) * 1000
            return result
        qtokens = content_tokens(question)
        # Small products: BLAS runs on the thread count set at start (gravity_engine.threads), never changed here.
        for module in MODULES:
            if module not in config.selection.modules:
                continue
            sel = select_module(module, self.store, self.index, qvec, qtokens, config, qtime,
                                self._rank_matrix(module, qtime, config), self._source_cos(module, qtime, config, qvec),
                                self._lexical(module, qtime, config, question))
            result.modules[module] = sel
            rows = self._rows[module]
            result.selected[module] = [rows[r] for r in sel.kept]
        timings["retrieve"] = (t() - t0) * 1000
        t0 = t()
        result.lines = self._score_lines(result, qvec if part_vecs is None else np.vstack([qvec, part_vecs]), config)
        result.context = pack_lines(result.lines, config, budget, self.count)
        timings["inject"] = (t() - t0) * 1000
        t0 = t()
        result.expansions = expand(result.lines, config, question)
        timings["expand"] = (t() - t0) * 1000
        return result

    def _rank_matrix(self, module: str, qtime: temporal.QueryTime, config: QueryConfig) -> np.ndarray | None:
        """The vectors a module's candidates are reranked by: for a question about time, each event's line
        (``temporal_event_lines``); otherwise None, the stored anchor embeddings."""
        if module != "events" or not config.temporal.temporal_event_lines or not self._about_time(module, qtime):
            return None
        table = self.store.line_table()
        if self._event_lines[0] is not table:
            lines = self.store.line_matrix(self.embedder)
            rows = [table.by_anchor[e.id][0] for e in self._rows["events"]]
            self._event_lines = (table, lines[rows] if rows else self.store.matrix("events"))
        return self._event_lines[1]

    def _about_time(self, module: str, qtime: temporal.QueryTime) -> bool:
        return module == "events" and (qtime.asks_when or qtime.has_expression)

    def _source_cos(self, module: str, qtime: temporal.QueryTime, config: QueryConfig,
                    qvec: np.ndarray) -> np.ndarray | None:
        """For a question about time, each event's best cosine among the utterances it cites, from the host
        vectors the build stored (an event's words are a few; the utterance says what it was about)."""
        uv = self.store.utterance_vectors
        if not (config.temporal.temporal_source_weight and self._about_time(module, qtime)) or uv is None \
                or uv.model != self.embedder.name:
            return None
        if self._sources is None or self._sources[0] is not uv:
            row_of = {u: i for i, u in enumerate(uv.ids)}
            pairs = np.array([(r, row_of[s]) for r, e in enumerate(self._rows["events"]) for s in e.source_ids
                              if s in row_of], dtype=np.int64).reshape(-1, 2)
            self._sources = (uv, pairs[:, 0], pairs[:, 1])
        _, events, utts = self._sources
        out = np.full(len(self._rows["events"]), -np.inf, dtype=np.float32)
        np.maximum.at(out, events, uv.matrix[utts] @ qvec)
        return out

    def _lexical(self, module: str, qtime: temporal.QueryTime, config: QueryConfig,
                 question: str) -> np.ndarray | None:
        """For a question about time, ``temporal_lexical`` times the idf-weighted share of the question's
        word stems each event's text holds: "adopt" finds "adopted", which the cosine of a short line
        spread over names and dates may not rank first."""
        if not (config.temporal.temporal_lexical and self._about_time(module, qtime)):
            return None
        if self._stems is None:
            self._stems = Postings.build(len(self._rows["events"]),
                                         [stems(content_tokens(f"{e.what} {e.where}")) for e in self._rows["events"]])
        q = list(dict.fromkeys(stems(content_tokens(question))))
        total = sum(self._stems.idf.get(t, 0.0) for t in q)
        if not total:
            return None
        score, _ = self._stems.score(q)
        return (config.temporal.temporal_lexical * score / total).astype(np.float32)

    def _line_lexical(self, question: str, config: QueryConfig) -> np.ndarray | None:
        """``line_lexical`` times the idf-weighted share of the question's word stems each anchor line holds
        (one value per row of the store's line table), or None when off or nothing matches."""
        if not config.lines.line_lexical:
            return None
        table = self.store.line_table()
        if self._line_stems[0] is not table:
            self._line_stems = (table, Postings.build(len(table.lines),
                                                      [stems(content_tokens(ln.search_text)) for ln in table.lines]))
        postings = self._line_stems[1]
        q = list(dict.fromkeys(stems(content_tokens(question))))
        total = sum(postings.idf.get(t, 0.0) for t in q)
        if not total:
            return None
        score, _ = postings.score(q)
        return (config.lines.line_lexical * score / total).astype(np.float32)

    def _score_lines(self, result: GravityResult, qvec: np.ndarray, config: QueryConfig) -> LineSelection:
        """``qvec``: the question's vector, or a matrix of it and its parts' (``question_parts``)."""
        event_scores: dict[str, float] = {}
        pinned: set[str] = set()
        sel = result.modules.get("events")
        if sel is not None and sel.kept:
            rows = self._rows["events"]
            # Only the kept events matter; a common name can make 10,000s of candidates.
            pos = np.flatnonzero(np.isin(sel.rows, np.asarray(sel.kept, dtype=sel.rows.dtype)))
            slot = STATUS_NAMES.index(TEMPORAL_SLOT)
            for p in pos.tolist():
                anchor = rows[int(sel.rows[p])]
                event_scores[anchor.id] = float(sel.cosine[p])
                if sel.status_codes[p] == slot:
                    pinned.add(anchor.id)
        return score_lines(result.selected, self.store, self.embedder, qvec, config, event_scores, pinned,
                           self._line_lexical(result.question, config))

    def _bound_by_events(self, qtime: temporal.QueryTime, phrase_vecs: np.ndarray,
                         min_cosine: float = EVENT_REF_MIN_COSINE) -> None:
        """'after the conference': the best-matching dated event sets the boundary of a time span."""
        matrix = self.store.matrix("events")
        events = self._rows["events"]
        if not len(events):
            return
        dated = np.array([bool(e.date_start) for e in events])
        for (word, phrase), vec in zip(qtime.event_refs, phrase_vecs):
            scores = np.where(dated, matrix @ vec, -1.0)
            best = int(np.argmax(scores))
            if scores[best] >= min_cosine:
                span = temporal.event_bounded_span(word, phrase, events[best])
                if span is not None:
                    qtime.spans.append(span)

    def _full_size(self, question: str, qvec: np.ndarray, qtime: temporal.QueryTime) -> int:
        """Tokens the full variant would inject for this question: +Sum is matched to it."""
        full = FULL
        probe = GravityResult(question=question, config=full, qtime=qtime)
        qtokens = content_tokens(question)
        for module in MODULES:
            sel = select_module(module, self.store, self.index, qvec, qtokens, full, qtime,
                                self._rank_matrix(module, qtime, full), self._source_cos(module, qtime, full, qvec),
                                self._lexical(module, qtime, full, question))
            probe.modules[module] = sel
            probe.selected[module] = [self._rows[module][r] for r in sel.kept]
        lines = self._score_lines(probe, qvec, full)
        return max(pack_lines(lines, full, full.budget.anchor_budget, self.count).total_tokens, 1)


@dataclass
class QueryResult:
    """One question through host and Gravity: the trace plus the objects callers want directly."""

    trace: QueryTrace
    gravity: GravityResult
    host_memories: list[Memory]
    merged_memories: list[Memory]
    messages_without: list[dict[str, str]]
    messages_with: list[dict[str, str]]
    run: QuestionRun | None = None  # the structured contexts (memories and anchor lines) of both prompts

    @property
    def answer_without(self) -> str | None:
        return self.trace.answers.without

    @property
    def answer_with(self) -> str | None:
        return self.trace.answers.with_


def _memory_traces(memories: list[Memory]) -> list[MemoryTrace]:
    return [MemoryTrace(text=m.text, utterance_ids=m.utterance_ids, score=m.score, timestamp=m.timestamp,
                        session_id=m.session_id, rank=i + 1) for i, m in enumerate(memories)]


def _label(anchor: Anchor) -> str:
    return getattr(anchor, "name", None) or getattr(anchor, "label", None) or getattr(anchor, "what", "")


def module_traces(store: AnchorStore, gravity: GravityResult, max_candidates: int = 200) -> dict[str, ModuleTrace]:
    out: dict[str, ModuleTrace] = {}
    for module, sel in gravity.modules.items():
        rows = store.anchors.module(module)
        cands = []
        status = sel.status
        for i in range(min(len(sel.rows), max_candidates)):
            a = rows[int(sel.rows[i])]
            cos = float(sel.cosine[i])
            cands.append(CandidateTrace(anchor_id=a.id, label=_label(a), native_reason=sel.reason(i),
                                        native_score=round(float(sel.native[i]), 4),
                                        cosine=None if np.isnan(cos) else round(cos, 4), rank=i + 1,
                                        kept=status[i] in ("kept", "temporal slot"), status=status[i]))
        out[module] = ModuleTrace(module=module, k=gravity.config.selection.k_for(module), n_anchors=len(rows),
                                  n_candidates=len(sel.rows), n_native=sel.n_native, n_widened=sel.n_widened,
                                  n_temporal=sel.n_temporal, matched_terms=sel.matched_terms,
                                  kept_ids=[rows[r].id for r in sel.kept], truncated=len(sel.rows) > max_candidates,
                                  candidates=cands)
    return out


def ask(store: AnchorStore, host: Host, question: str, config: QueryConfig | str = FULL,
        question_date: str | None = None, llm=None, embedder: Embedder | None = None,
        gravity: GravityQuery | None = None, max_candidates: int = 200,
        session: HostSession | None = None) -> QueryResult:
    """Answer ``question`` with ``host`` alone and with Gravity; the answers need ``llm`` (else marked unavailable).

    ``config.budget`` says how the two contexts are filled (default: the host's k memories, the anchors on top
    within ``anchor_budget`` tokens). ``session``: a ``HostSession`` to reuse across questions."""
    if isinstance(config, str):
        config = get_variant(config)
    if store.conversation is None:
        raise StoreError(f"{store.path or 'store'}: no conversation.json, so no host can ingest the conversation")
    gq = gravity or GravityQuery(store, embedder, config)
    if config.mode == Mode.summaries and llm is not None:
        write_model_summaries(store, llm)  # the method's +Sum: once per store, then read from beside it
    if session is None or session.host is not host:
        session = HostSession(host, store.conversation, gq.embedder, store.utterance_vectors)
    t = time.perf_counter
    k = config.fusion.host_k
    run = run_question(gq, session, question, question_date, config, k)
    g = run.gravity
    qdate = str(question_date) if question_date else None
    without = answer_messages(question, run.without.memory_lines, None, qdate)
    injected = run.with_.anchors  # the anchor blocks, and the full names the context needed
    with_ = answer_messages(question, run.with_.memory_lines, injected, qdate) if config.mode != Mode.none else without
    answers = AnswerTrace()
    llm_ms = 0.0
    if llm is not None:
        t0 = t()
        answers = _answer(llm, without, with_, config.mode == Mode.none)
        llm_ms = (t() - t0) * 1000
    timings = dict(run.timings_ms)
    timings["query_path"] = sum(timings.get(s, 0.0) for s in ("embed", "temporal", "retrieve", "expand", "inject"))
    timings["llm"] = llm_ms
    searches = [HostSearchTrace(query=question, source="original", memories=_memory_traces(run.original[:k]))]
    for e, mems in zip(g.expansions, run.expanded):
        searches.append(HostSearchTrace(query=e.query, source="expansion", module=e.module, anchor_id=e.anchor_id,
                                        memories=_memory_traces(mems)))
    trace = QueryTrace(
        question=question, question_date=qdate,
        reference_time=g.qtime.reference.isoformat() if g.qtime.reference else None,
        variant=config.variant, config={"mode": config.mode.value} | config.options(), host=session.name,
        host_k=k, temporal=g.qtime.as_dict(), modules=module_traces(store, g, max_candidates),
        expansions=[ExpansionTrace(query=e.query, module=e.module, anchor_id=e.anchor_id,
                                   stored_vector=e.vector is not None) for e in g.expansions],
        host_results=searches,
        merged=[MergedMemory(**_memory_traces([m])[0].model_dump() | {"rank": i + 1}, rrf=round(sc, 6), from_lists=o)
                for i, (m, sc, o) in enumerate(run.fused)],
        blocks=[_block_trace(m, injected, g.summaries) for m in injected.blocks],
        injected_tokens=injected.total_tokens,
        pushed_out=_pushed_out(run, k),
        prompt_without=_prompt_trace(without), prompt_with=_prompt_trace(with_),
        answers=answers, timings_ms={key: round(v, 3) for key, v in timings.items()},
    )
    return QueryResult(trace=trace, gravity=g, host_memories=run.without.memories, merged_memories=run.with_.memories,
                       messages_without=without, messages_with=with_, run=run)


def _block_trace(module: str, ctx: InjectedContext, summaries: str = "") -> BlockTrace:
    lines = [LineTrace(anchor_id=s.line.anchor_id, field=s.line.field, text=s.line.text,
                       score=None if s.score != s.score else round(s.score, 4), pinned=s.pinned,
                       source_ids=list(s.line.source_ids)) for s in ctx.lines.get(module, [])]
    title = BLOCK_TITLES.get(module) or f"Conversation Summaries ({summaries or 'extractive'})"
    return BlockTrace(module=module, title=title, text=ctx.blocks[module],
                      tokens=ctx.tokens[module], anchor_ids=ctx.anchor_ids.get(module, []), lines=lines)


def _pushed_out(run: QuestionRun, k: int) -> list[MemoryTrace]:
    """The host's own top-k memories that the context with Gravity no longer holds (fusion or the anchors'
    share of the budget pushed them out): a user should see what Gravity cost."""
    kept = {memory_key(m) for m in run.with_.memories}
    return [t for t, m in zip(_memory_traces(run.original[:k]), run.original[:k]) if memory_key(m) not in kept]


def _prompt_trace(messages: list[dict[str, str]]) -> PromptTrace:
    text = prompt_text(messages)
    return PromptTrace(messages=messages, text=text, tokens=count_tokens(text))


def _answer(llm, without: list[dict[str, str]], with_: list[dict[str, str]], same: bool) -> AnswerTrace:
    model = getattr(getattr(llm, "config", None), "model", None)
    a_without = llm.chat(without, NAME, prompt_version=VERSION).strip()
    a_with = a_without if same else llm.chat(with_, NAME, prompt_version=VERSION).strip()
    return AnswerTrace(without=a_without, with_=a_with, status="answered", model=model)
