"""The benchmark runner: build or reuse anchors, answer every question with every variant, judge, write rows.

    settings = EvalSettings(dataset="locomo", path="../shared/data/locomo10.json", host="dense",
                            variants=["baseline", "full"], out=Path("results/locomo-dense"))
    print(plan_evaluation(settings).describe())
    summary = run_evaluation(settings, answer_llm, judge_llm)

The query path (host search, Gravity's anchors, the prompt) runs on the calling thread, one question
and variant at a time; the answer and judge calls run on a bounded thread pool, and each worker
appends its finished row to ``results.jsonl`` at once. A rerun skips every row already there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field

from ...embed import CachingEmbedder
from ...errors import ConfigError, LLMError
from ...llm.config import DEFAULT_MODEL
from ..coverage import covers, normalized_text
from ..grounding import grounded, injected_events
from ...extract.base import DEFAULT_BATCH_SIZE, make_batches
from ...hosts import get_host
from ...hosts.dense import ingest_with_vectors
from ...llm import LLMConfig, OpenAIClient, ResponseCache
from ...prompts.answer import NAME, PROMPT as ANSWER, VERSION
from ...prompts.summarize_batch import PROMPT as SUMMARIZE
from ...query.config import FULL, Mode, QueryConfig, get_variant
from ...query.pipeline import GravityQuery, ask, resolve_embedder
from ...query.session import HostSession
from ...query.summaries import SUMMARIES_FILE, write_model_summaries
from ...store import ANCHORS_FILE, check_store_backend, load_conversation_store
from .f1 import locomo_f1, token_f1
from .items import EvalItem, category_label, is_abstention, load_items, select_items
from .judge import default_judge_model, judge_answer, judge_prompt, load_judge_prompt
from .results import RESULTS_FILE, ResultRow, ResultsFile, RunInfo, read_run_info, write_run_info

log = logging.getLogger("gravity_engine.eval.evaluate")

# gpt-4o-mini: the judge of the published LoCoMo J scores; LongMemEval's is gpt-4o (``default_judge_model``).
DEFAULT_JUDGE_MODEL = DEFAULT_MODEL
# Rough token costs for the plan's estimate (approximate GPT tokens; chars / 4 for conversation text).
_ANSWER_INSTRUCTIONS = 170  # the answer prompt's fixed text, anchors instruction included
_JUDGE_INSTRUCTIONS = 190
_ANCHOR_TOKENS = 450  # a typical injection with the default K_E=3, K_V=6, K_T=2
_ANSWER_COMPLETION = 12
_JUDGE_COMPLETION = 35

Progress = Callable[[int, int], None]


class EvalSettings(BaseModel):
    """Everything that decides which rows a run writes and how."""

    dataset: str
    path: Path
    out: Path
    host: str = "dense"
    variants: list[str] = Field(default_factory=lambda: ["baseline", "full"])
    stores: Path = Path("runs")  # anchor stores, one folder per conversation (shared with `measure`)
    backend: str = "classic"
    conversation: str | None = None
    questions: Path | None = None  # custom datasets: the questions file
    limit: int | None = Field(None, ge=1)
    sample: int | None = Field(None, ge=1)
    seed: int = 0
    concurrency: int = Field(4, ge=1, le=64)
    include_adversarial: bool = True  # LoCoMo category 5: run and report apart (never in J)
    host_k: int | None = Field(None, ge=1)
    # None: the host's k memories with the anchors on top (the method's prompt); N: an equal budget of N
    # context tokens, the anchors taking at most anchor_share of it (as ``measure``; None: the query settings').
    budget: int | None = Field(None, ge=50)
    anchor_share: float | None = Field(None, ge=0.0, le=1.0)
    retry_errors: bool = False  # also redo rows whose judge failed
    judge_prompt: Path | None = None  # a published judge's exact text as a template (``judge.load_judge_prompt``)
    max_consecutive_errors: int = Field(10, ge=1)

    def configs(self) -> list[QueryConfig]:
        """The variants' configs, deduplicated, canonical names ('+EVT' -> 'full')."""
        seen: dict[str, QueryConfig] = {}
        for name in self.variants:
            changes = {"host_k": self.host_k, "total": self.budget, "anchor_share": self.anchor_share}
            config = get_variant(name).with_(**{k: v for k, v in changes.items() if v is not None})
            seen.setdefault(config.variant, config)
        if not seen:
            raise ConfigError("choose at least one variant (e.g. --variants baseline,full)")
        return list(seen.values())


@dataclass
class EvalPlan:
    settings: EvalSettings
    items: list[EvalItem]
    variants: list[str]
    todo: list[tuple[EvalItem, QueryConfig]]
    n_done: int
    to_build: list[str]
    prompt_tokens: int
    completion_tokens: int
    summary_calls: int = 0  # +Sum: one model-written summary per batch of each conversation, made once

    def conversations_to_build(self) -> list:
        """The conversations whose stores are missing (``to_build``), for the build layer to build first."""
        by_id = {it.conversation.id: it.conversation for it in self.items}
        return [by_id[cid] for cid in self.to_build]

    @property
    def calls(self) -> int:
        # one answer and one judge call per row (cache hits cost nothing), plus the +Sum summaries
        return 2 * len(self.todo) + self.summary_calls

    def describe(self) -> str:
        s = self.settings
        convs = len({it.conversation.id for it in self.items})
        lines = [
            f"Evaluation plan: {s.dataset} {s.path} with host '{s.host}'",
            f"  questions: {len(self.items)} from {convs} conversation(s); variants: {', '.join(self.variants)}",
            f"  rows: {len(self.items) * len(self.variants)} in total, {self.n_done} already in {s.out / RESULTS_FILE}, "
            f"{len(self.todo)} to do",
            f"  anchor stores to build ({s.backend} backend, under {s.stores}): {len(self.to_build)}"
            + (f" ({', '.join(self.to_build[:5])}{', ...' if len(self.to_build) > 5 else ''})" if self.to_build else ""),
            f"  LLM calls: {len(self.todo)} answers + {len(self.todo)} judgements"
            + (f" + {self.summary_calls} batch summaries for +Sum" if self.summary_calls else "")
            + f" = {self.calls} (fewer when the disk cache or a store's {SUMMARIES_FILE} already holds some)",
            f"  estimated tokens: ~{self.prompt_tokens:,} prompt + ~{self.completion_tokens:,} completion "
            "(approximate: conversation text counted as characters / 4)",
        ]
        return "\n".join(lines)


def _conversation_chars(item: EvalItem, cache: dict[str, tuple[float, int]]) -> tuple[float, int]:
    conv = item.conversation
    if conv.id not in cache:
        texts = [u.display_text() for u in conv.utterances()]
        total = sum(len(t) for t in texts)
        cache[conv.id] = (total / max(1, len(texts)), total)
    return cache[conv.id]


def plan_evaluation(settings: EvalSettings, items: list[EvalItem] | None = None) -> EvalPlan:
    """Which rows are left to do and what they will cost; reads the results file, changes nothing."""
    configs = settings.configs()
    if settings.judge_prompt is not None:
        load_judge_prompt(settings.judge_prompt)  # a bad template is reported before anything is asked
    if items is None:
        items = load_items(settings.dataset, settings.path, settings.conversation, settings.questions,
                           settings.include_adversarial)
        items = select_items(items, settings.limit, settings.sample, settings.seed)
    done = {r.key for r in ResultsFile(settings.out / RESULTS_FILE).rows()
            if r.done and not (settings.retry_errors and r.judge_error)}
    todo = [(it, c) for it in items for c in configs if (it.question.id, c.variant) not in done]
    n_done = len(items) * len(configs) - len(todo)
    need = list(OrderedDict.fromkeys(it.conversation.id for it, _ in todo))
    to_build = [cid for cid in need if not (settings.stores / cid / ANCHORS_FILE).is_file()]
    for cid in need:  # before any paid call: a store another backend built would be scored under this one's name
        if cid not in to_build:
            check_store_backend(settings.stores / cid, settings.backend)
    chars: dict[str, tuple[float, int]] = {}
    prompt = completion = 0
    for it, c in todo:
        mean_chars, total_chars = _conversation_chars(it, chars)
        if settings.host == "fullcontext":
            memories = min(total_chars / 4, 100_000)
        else:
            memories = c.fusion.host_k * (mean_chars / 4 + 14)  # + the timestamp and ids on each memory line
        q = len(it.question.question) / 4
        gold = len(it.question.answer or "") / 4
        anchors = 0 if c.mode == Mode.none else _ANCHOR_TOKENS
        prompt += int(_ANSWER_INSTRUCTIONS + memories + anchors + q) + int(_JUDGE_INSTRUCTIONS + q + gold + 12)
        completion += _ANSWER_COMPLETION + _JUDGE_COMPLETION
    summary_calls = 0
    for cid in OrderedDict.fromkeys(it.conversation.id for it, c in todo if c.mode == Mode.summaries):
        conv = next(it.conversation for it, _ in todo if it.conversation.id == cid)
        summary_calls += len(make_batches(conv, DEFAULT_BATCH_SIZE))
    return EvalPlan(settings, items, [c.variant for c in configs], todo, n_done, to_build, prompt, completion,
                    summary_calls)


@dataclass
class EvalSummary:
    plan: EvalPlan
    rows_written: int = 0
    answer_errors: int = 0
    judge_errors: int = 0
    cancelled: bool = False
    wall_s: float = 0.0
    plan_s: float = 0.0  # reading the dataset and the results file
    load_s: float = 0.0  # loading the anchor stores
    query_s: float = 0.0  # host search + Gravity's query path + prompt, on the calling thread
    answer_s: float = 0.0  # summed over workers: time inside answer calls
    judge_s: float = 0.0
    usage: dict[str, Any] = field(default_factory=dict)
    results_path: Path | None = None


class _HostForRun:
    """The host as the runner hands it to ``ask``: ingested once per conversation, and each distinct
    search (query, k) run once. ``ask`` ingests and searches the original question again for every
    variant; repeating identical, deterministic work would only inflate the runner's cost."""

    def __init__(self, host, max_entries: int = 20_000):
        self._host = host
        self._ingested: Any = None
        self._memo: dict[tuple[str, int], list] = {}
        self._max = max_entries

    def ingest(self, conversation, vectors=None) -> None:
        if self._ingested is not conversation:
            ingest_with_vectors(self._host, conversation, vectors)
            self._ingested = conversation
            self._memo.clear()

    def search(self, query: str, k: int = 10) -> list:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int = 10) -> list[list]:
        missing = list(dict.fromkeys(q for q in queries if (q, k) not in self._memo))
        if missing:
            many = getattr(self._host, "search_many", None)
            found = many(missing, k) if callable(many) else [self._host.search(q, k) for q in missing]
            if len(self._memo) + len(missing) > self._max:
                self._memo.clear()
            self._memo.update(((q, k), m) for q, m in zip(missing, found))
        return [self._memo[(q, k)] for q in queries]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._host, name)


@dataclass
class _Job:
    item: EvalItem
    config: QueryConfig
    messages: list[dict[str, str]]
    row: dict[str, Any]


def _recall(evidence: list[str], memories) -> float | None:
    if not evidence:
        return None
    got = {u for m in memories for u in m.utterance_ids}
    return sum(1 for e in evidence if e in got) / len(evidence)


class Runner:
    """One run: holds the clients, the results file and the counters; ``run()`` does the work."""

    def __init__(self, settings: EvalSettings, answer_llm, judge_llm, *, embedder=None,
                 progress: Progress | None = None, cancel: threading.Event | None = None,
                 echo: Callable[[str], None] | None = None):
        self.settings = settings
        self.answer_llm = answer_llm
        self.judge_llm = judge_llm
        self.embedder = embedder
        self.progress = progress
        self.cancel = cancel or threading.Event()
        self.echo = echo or (lambda msg: log.info(msg))
        self._lock = threading.Lock()
        self._embedders: dict[str, Any] = {}
        self._consecutive_errors = 0
        self._last_error = ""
        self.judge_template = load_judge_prompt(settings.judge_prompt) if settings.judge_prompt else None

    # --- the calling thread: stores, hosts, the query path -----------------------------------------
    def _store(self, conv, summary: EvalSummary):
        t0 = time.perf_counter()
        store = load_conversation_store(conv, self.settings.stores, self.settings.backend)
        summary.load_s += time.perf_counter() - t0
        return store

    def _embedder_for(self, store):
        name = store.anchors.built_with.embedding_model or ""
        if name not in self._embedders:
            self._embedders[name] = resolve_embedder(store, self.embedder)
        return self._embedders[name]

    def _prepare(self, store, session, gq, item: EvalItem, config: QueryConfig) -> _Job:
        s = self.settings
        q = item.question
        t0 = time.perf_counter()
        result = ask(store, session.host, q.question, config, question_date=q.question_date, gravity=gq,
                     session=session)
        messages = result.messages_with
        gold = None if q.answer is None else str(q.answer)
        abstention = is_abstention(s.dataset, q)
        pack = result.run.with_ if config.mode != Mode.none else result.run.without
        lines = pack.lines()  # memories and anchor lines as given to the model (not the question)
        g = result.gravity
        is_grounded = None
        if s.dataset == "locomo" and q.category == "2" and gold and config.mode == Mode.anchors:
            is_grounded = grounded(gold, g.qtime.reference, injected_events(g, pack.anchors))
        memories = result.merged_memories if config.mode != Mode.none else result.host_memories
        row = dict(
            dataset=s.dataset, conversation_id=item.conversation.id, question_id=q.id, category=q.category,
            category_label=category_label(s.dataset, q.category), question=q.question, gold=gold,
            question_date=q.question_date, abstention=abstention, host=s.host, variant=config.variant,
            evidence_recall=_recall(q.evidence, memories), evidence_recall_host=_recall(q.evidence, result.host_memories),
            answer_covered=covers(gold, normalized_text(lines)) if gold and not abstention else None,
            temporal_grounded=is_grounded, n_expansions=len(g.expansions), injected_tokens=pack.anchors.total_tokens,
            prompt_tokens=result.trace.prompt_with.tokens if result.trace.prompt_with else 0,
            injected_anchor_ids=pack.anchors.anchor_ids, injected_context=pack.anchors.text,
            timings_ms={"query": round((time.perf_counter() - t0) * 1000, 3)},
        )
        return _Job(item, config, messages, row)

    # --- worker threads: the endpoint ---------------------------------------------------------------
    def _finish(self, job: _Job, results: ResultsFile) -> ResultRow:
        s = self.settings
        q = job.item.question
        row = dict(job.row)
        row["answer_model"] = getattr(getattr(self.answer_llm, "config", None), "model", None)
        t0 = time.perf_counter()
        try:
            answer = self.answer_llm.chat(job.messages, NAME, prompt_version=VERSION).strip()
            row["answer"] = answer
        except LLMError as err:
            answer = None
            row["answer_error"] = str(err)
        row["timings_ms"]["answer"] = round((time.perf_counter() - t0) * 1000, 3)
        if answer is not None:
            verdict = judge_answer(self.judge_llm, s.dataset, q.question, row["gold"], answer, q.category,
                                   row["abstention"], q.metadata.get("adversarial_answer"), self.judge_template)
            row.update(judge_correct=verdict.correct, judge_label=verdict.label, judge_reasoning=verdict.reasoning,
                       judge_model=verdict.model, judge_prompt=verdict.prompt, judge_error=verdict.error)
            row["timings_ms"]["judge"] = round(verdict.ms, 3)
            if s.dataset == "locomo":
                row["f1"] = locomo_f1(answer, row["gold"], q.category)
            elif row["gold"] and not row["abstention"]:
                row["f1"] = token_f1(answer, row["gold"])
        result = ResultRow(**row)
        results.append(result)
        return result

    # --- bookkeeping on the calling thread ------------------------------------------------------------
    def _collect(self, fut: Future, summary: EvalSummary, total: int) -> None:
        row: ResultRow = fut.result()  # re-raises what a worker could not handle (e.g. a forbidden request)
        summary.rows_written += 1
        summary.answer_s += row.timings_ms.get("answer", 0.0) / 1000
        summary.judge_s += row.timings_ms.get("judge", 0.0) / 1000
        if row.answer_error:
            summary.answer_errors += 1
            self._consecutive_errors += 1
            self._last_error = row.answer_error
        else:
            self._consecutive_errors = 0
        if row.judge_error:
            summary.judge_errors += 1
        if self.progress:
            self.progress(summary.plan.n_done + summary.rows_written, total)
        if self._consecutive_errors >= self.settings.max_consecutive_errors:
            raise LLMError(f"the answer endpoint failed {self._consecutive_errors} times in a row (last: "
                           f"{self._last_error}); finished rows are saved, fix the endpoint and run again to resume")

    def run(self, plan: EvalPlan | None = None) -> EvalSummary:
        s = self.settings
        started = time.perf_counter()
        plan = plan or plan_evaluation(s)
        summary = EvalSummary(plan=plan, results_path=s.out / RESULTS_FILE, plan_s=time.perf_counter() - started)
        self._write_run_info(plan)
        total = len(plan.items) * len(plan.variants)
        by_conv: OrderedDict[str, list[tuple[EvalItem, QueryConfig]]] = OrderedDict()
        for it, c in plan.todo:
            by_conv.setdefault(it.conversation.id, []).append((it, c))
        pool = ThreadPoolExecutor(s.concurrency, thread_name_prefix="eval") if s.concurrency > 1 else None
        in_flight: set[Future] = set()
        results = ResultsFile(s.out / RESULTS_FILE).open()
        try:
            for rows in by_conv.values():
                if self.cancel.is_set():
                    break
                store = self._store(rows[0][0].conversation, summary)
                if any(c.mode == Mode.summaries for _, c in rows):
                    # The method's +Sum: the answer model summarizes each batch once; kept beside the store.
                    made = write_model_summaries(store, self.answer_llm)
                    self.echo(f"+Sum for {store.anchors.conversation_id or rows[0][0].conversation.id}: "
                              f"{len(made.summaries)} {made.label} batch summaries")
                # One text cache per conversation: the question is embedded once for the host and for
                # Gravity and for every variant, not once per use.
                embedder = CachingEmbedder(self._embedder_for(store), max_items=20_000)
                host = _HostForRun(get_host(s.host, embedder=embedder))
                gq = GravityQuery(store, embedder, FULL)
                session = HostSession(host, store.conversation, embedder, store.utterance_vectors)
                for item, config in rows:
                    if self.cancel.is_set():
                        break
                    t0 = time.perf_counter()
                    job = self._prepare(store, session, gq, item, config)
                    summary.query_s += time.perf_counter() - t0
                    if pool is None:
                        fut: Future = Future()
                        fut.set_result(self._finish(job, results))
                        self._collect(fut, summary, total)
                        continue
                    # Bounded: a killed run loses at most the rows in flight, and memory stays flat.
                    while len(in_flight) >= 2 * s.concurrency:
                        finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                        for f in finished:
                            self._collect(f, summary, total)
                    in_flight.add(pool.submit(self._finish, job, results))
            while in_flight:
                finished, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                for f in finished:
                    self._collect(f, summary, total)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)  # running rows finish and are written
            results.close()
            summary.cancelled = self.cancel.is_set()
            summary.wall_s = time.perf_counter() - started
            summary.usage = {"answer": _usage(self.answer_llm), "judge": _usage(self.judge_llm)}
        return summary

    def _write_run_info(self, plan: EvalPlan) -> None:
        s = self.settings
        old = read_run_info(s.out)
        if old is not None and (old.dataset != s.dataset or old.host != s.host):
            raise ConfigError(f"{s.out} holds a {old.dataset} run with host '{old.host}'; "
                              f"choose another --out for {s.dataset} with host '{s.host}'")
        judge_id = judge_prompt(s.dataset, self.judge_template).id
        judge_model = getattr(getattr(self.judge_llm, "config", None), "model", None)
        if old is not None:
            before = (old.prompt_versions.get("judge"), old.judge_model)
            if before[0] and (before[0], before[1] or judge_model) != (judge_id, judge_model):
                # One table, one judge: rows judged by two prompts or models do not add up to one score.
                raise ConfigError(f"{s.out} was judged with {before[0]} by {before[1]}; this run would judge with "
                                  f"{judge_id} by {judge_model}. Choose another --out (or the same judge)")
        variants = list(OrderedDict.fromkeys((old.variants if old else []) + plan.variants))
        cfg = getattr(self.answer_llm, "config", None)
        info = RunInfo(dataset=s.dataset, source=str(s.path), host=s.host, variants=variants,
                       answer_model=getattr(cfg, "model", None),
                       judge_model=judge_model,
                       endpoint=cfg.endpoint_label() if cfg is not None else None, backend=s.backend,
                       stores=str(s.stores), include_adversarial=s.include_adversarial,
                       prompt_versions={"answer": ANSWER.id, "judge": judge_id}
                       | ({"summarize_batch": SUMMARIZE.id} if "+Sum" in variants else {}),
                       settings=s.model_dump(mode="json", exclude={"variants"}))
        s.out.mkdir(parents=True, exist_ok=True)
        write_run_info(s.out, info)


def _usage(client) -> dict[str, Any]:
    report = getattr(client, "usage_report", None)
    return report() if callable(report) else {}


def run_evaluation(settings: EvalSettings, answer_llm, judge_llm, *, embedder=None, progress: Progress | None = None,
                   cancel: threading.Event | None = None, echo: Callable[[str], None] | None = None,
                   plan: EvalPlan | None = None) -> EvalSummary:
    """Run (or resume) an evaluation; see the module docstring. ``cancel`` stops it between rows."""
    return Runner(settings, answer_llm, judge_llm, embedder=embedder, progress=progress, cancel=cancel,
                  echo=echo).run(plan)


def make_eval_clients(answer_model: str | None = None, judge_model: str | None = None, cache: bool = True,
                      concurrency: int | None = None, dataset: str | None = None):
    """Answer and judge clients on the endpoint of ``LLMConfig.from_env()``, sharing one disk cache.

    The answer model defaults to GRAVITY_LLM_MODEL (else gpt-4o-mini); the judge model to
    GRAVITY_JUDGE_MODEL, else the benchmark's own judge (``default_judge_model``: gpt-4o for
    LongMemEval, gpt-4o-mini for LoCoMo and custom sets)."""
    import os


    base = LLMConfig.from_env()
    judge = judge_model or os.environ.get("GRAVITY_JUDGE_MODEL", "").strip() or default_judge_model(dataset or "")
    extra = {"concurrency": concurrency} if concurrency else {}
    answer_cfg = LLMConfig.build(**(base.model_dump() | {"model": answer_model or base.model, "cache": cache} | extra))
    judge_cfg = LLMConfig.build(**(base.model_dump() | {"model": judge, "temperature": 0.0, "cache": cache} | extra))
    shared = ResponseCache(base.cache_dir) if cache else False
    return OpenAIClient(answer_cfg, cache=shared), OpenAIClient(judge_cfg, cache=shared)
