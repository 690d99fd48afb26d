"""LLM-free measures of the query path, per question category.

* **evidence recall@k**: the share of a question's evidence utterances among the host's top-k
  memories, for the original query alone and after fusing in the expansion queries' results.
* **answer coverage**: a question is covered when every part of its gold answer occurs in one line of the final
  context (the rule: ``coverage``). Host alone and host + anchors get the SAME total token budget: with Gravity
  the anchor lines (at most ``anchor_share`` of it, packed best first) take part of the budget and the memories
  fill the rest (the fused top-k first, then the host's own ranking). ``additive`` is the method's mode instead:
  the same memories' budget on both sides and the anchors on top (``query/session.py``).
* **temporal grounding** (LoCoMo category 2): the share of questions whose gold date lies in the resolved date
  range of an injected event, and for each the stage that lost it (``grounding``).

Rows are summarized, tabled and written as CSV by ``summary``.

Each row also carries times: the Gravity query path (query embedding, temporal detection, retrieval,
rerank, expansion, injection; host search excluded), the host's own search for the question at k,
and the host searches of the expansion queries. ``measure_hosts.py`` runs this over several hosts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..conversation import Conversation, Question
from ..embed import Embedder
from ..errors import InputError
from ..hosts.base import Host, Memory
from ..loaders import load_conversations
from ..query.config import FULL, Budget, Mode, QueryConfig
from ..query.pipeline import GravityQuery, GravityResult
from ..query.session import HostSession, run_question
from ..store import AnchorStore, load_conversation_store
from .coverage import covers, normalized_text
from .grounding import GROUNDED, injected_events, temporal_stage
from .summary import MeasureRow, category_label, format_table, summarize, write_csv, write_summary_csv

Progress = Callable[[int, int], None]

@dataclass
class MeasureSettings:
    k: int = 10  # recall@k and the host's k for fusion
    config: QueryConfig = field(default_factory=lambda: FULL)
    # Both contexts are filled under this budget, whatever ``config.budget`` says: measuring compares at equal cost
    # (or, with ``additive``, the method's mode).
    budget: Budget = field(default_factory=lambda: Budget(total=1000))

    def run_config(self) -> QueryConfig:
        """``config`` under the measuring budget."""
        return self.config.model_copy(update={"budget": self.budget})

def _recall(evidence: list[str], memories: list[Memory]) -> float | None:
    if not evidence:
        return None
    got = {u for m in memories for u in m.utterance_ids}
    return sum(1 for e in evidence if e in got) / len(evidence)

def path_ms(g: GravityResult) -> tuple[float, float]:
    """Milliseconds of Gravity's query path for one result: with and without the query embedding."""
    t = g.timings_ms
    total = sum(t.get(step, 0.0) for step in ("embed", "temporal", "retrieve", "expand", "inject"))
    return total, total - t.get("embed", 0.0)

def measure_conversation(store: AnchorStore, host: Host, questions: list[Question], dataset: str = "locomo",
                         settings: MeasureSettings | None = None, embedder: Embedder | None = None,
                         progress: Progress | None = None, done_before: int = 0, total: int | None = None,
                         gravity: GravityQuery | None = None) -> list[MeasureRow]:
    """One row per question of one conversation (see the module docstring for each measure).

    ``gravity``: a ``GravityQuery`` on ``store`` to share between hosts (its index is built once)."""
    settings = settings or MeasureSettings()
    config = settings.run_config()
    gq = gravity or GravityQuery(store, embedder, config)
    session = HostSession(host, store.conversation, gq.embedder, store.utterance_vectors)
    # Every question embedded in one encoder call; the path and the host then reuse the vectors.
    texts = [q.question for q in questions]
    vectors = gq.embedder.encode(texts) if texts else None
    cache: dict = {}
    store_events = store.anchors.module("events")
    rows: list[MeasureRow] = []
    total = total or len(questions)
    k = settings.k
    for i, q in enumerate(questions):
        gold = "" if q.answer is None else str(q.answer)
        run = run_question(gq, session, q.question, q.question_date, config, k, cache, qvec=vectors[i])
        g = run.gravity
        host_text = normalized_text(run.without.lines())
        grav_text = normalized_text(run.with_.lines())
        grounded = stage = None
        if dataset == "locomo" and q.category == "2" and gold and config.mode == Mode.anchors:
            stage = temporal_stage(gold, g.qtime.reference, q.evidence, store_events, g.selected.get("events", []),
                                   injected_events(g, run.with_.anchors))
            grounded = None if stage is None else stage == GROUNDED
        path, path_no_embed = path_ms(g)
        expanded_ms = run.timings_ms.get("host_expanded_search") if run.expanded else None
        rows.append(MeasureRow(
            conversation=store.anchors.conversation_id or (store.conversation.id if store.conversation else ""),
            question_id=q.id, category=q.category, category_label=category_label(q.category, dataset),
            question=q.question, gold=gold, n_evidence=len(q.evidence),
            recall_host=_recall(q.evidence, run.original[:k]),
            recall_expanded=_recall(q.evidence, run.merged[:k]),
            covered_host=covers(gold, host_text) if gold else None,
            covered_gravity=covers(gold, grav_text) if gold else None,
            host_tokens=run.without.tokens, gravity_tokens=run.with_.tokens, anchor_tokens=run.with_.anchors.total_tokens,
            n_expansions=len(g.expansions), temporal_grounded=grounded, temporal_stage=stage,
            query_path_ms=round(path, 3), query_path_no_embed_ms=round(path_no_embed, 3),
            host_search_ms=round(run.timings_ms.get("host_search", 0.0), 3),
            expanded_search_ms=None if expanded_ms is None else round(expanded_ms, 3),
        ))
        if progress:
            progress(done_before + i + 1, total)
    return rows

@dataclass
class MeasureReport:
    rows: list[MeasureRow]
    summary: list[dict]
    csv_path: Path | None
    summary_csv_path: Path | None
    table: str
    seconds: float

def variant_slug(config: QueryConfig) -> str:
    """The variant name as a file-name part (+ and - spelled out)."""
    return config.variant.replace("+", "plus").replace("-", "minus")

def plan_questions(conversations: list[Conversation], limit: int | None = None) -> list[tuple[Conversation, list[Question]]]:
    """The measurable questions (a gold answer, or category 5) per conversation, the first ``limit`` in all."""
    plan: list[tuple[Conversation, list[Question]]] = []
    left = limit
    for conv in conversations:
        qs = [q for q in conv.questions if q.answer is not None or q.category == "5"]
        if left is not None:
            qs = qs[:left]
            left -= len(qs)
        if qs:
            plan.append((conv, qs))
        if left is not None and left <= 0:
            break
    return plan

def load_plan(dataset: str, path: str | Path, conversation: str | None = None,
              limit: int | None = None) -> tuple[str, list[tuple[Conversation, list[Question]]]]:
    """The dataset name checked and the conversations' questions to measure (``plan_questions``)."""
    dataset = dataset.lower()
    if dataset not in ("locomo", "longmemeval"):
        raise InputError(f"unknown dataset {dataset!r}; choose locomo or longmemeval", source=str(path))
    conversations = load_conversations(path, conversation=conversation)
    if not conversations:
        raise InputError("no conversation to measure" + (f" with id {conversation!r}" if conversation else ""),
                         source=str(path))
    return dataset, plan_questions(conversations, limit)

def run_measure(dataset: str, path: str | Path, host_factory: Callable[[], Host], runs_dir: str | Path,
                conversation: str | None = None, limit: int | None = None, settings: MeasureSettings | None = None,
                embedder: Embedder | None = None, progress: Progress | None = None) -> MeasureReport:
    """Measure every question (or the first ``limit``) of ``path`` on the stores under ``runs_dir`` (which must
    exist: ``build.ensure_stores``); writes CSVs."""
    started = time.perf_counter()
    settings = settings or MeasureSettings()
    dataset, plan = load_plan(dataset, path, conversation, limit)
    total = sum(len(qs) for _, qs in plan)
    runs = Path(runs_dir)
    rows: list[MeasureRow] = []
    host_name = "host"
    for conv, qs in plan:
        store = load_conversation_store(conv, runs)
        host = host_factory()
        host_name = getattr(host, "name", host_name)
        rows += measure_conversation(store, host, qs, dataset, settings, embedder, progress, len(rows), total)
    summary = summarize(rows)
    stem = f"measure_{dataset}_{host_name}_{variant_slug(settings.config)}"
    if conversation:
        stem += f"_{conversation}"
    csv_path = write_csv(rows, runs / f"{stem}.csv")
    summary_path = write_summary_csv(summary, runs / f"{stem}_summary.csv")
    return MeasureReport(rows=rows, summary=summary, csv_path=csv_path, summary_csv_path=summary_path,
                         table=format_table(summary, settings.k), seconds=time.perf_counter() - started)
