"""Cross-host measures: ``measure``'s LLM-free table for several memory systems in one run.

Anchors are loaded once per conversation and one query path (with its anchor index) serves
every host, so each host is measured with the same anchors and expansion queries; the path runs beside
each host's search, so both are timed under the same machine load. Each host ingests each
conversation once. Per host: the per-category table with and without Gravity (``measure.py``), and
one summary row with the Gravity query path's p50 beside the host's own search p50 and their ratio
(the issue's target: Gravity costs at most 1x the host's own search).

Hosts whose ingestion calls an LLM (A-Mem's evolution step, Mem0 with fact extraction, Graphiti's
episodes mode) use the configured endpoint, or a scripted server on 127.0.0.1 that ``scripted_llm`` starts
(``measure --scripted-llm`` passes ``testing.host_llm_routes.scripted_host_server``), whose heuristic answers make
their numbers a test of the plumbing, not of the library's real quality. Every table marks those hosts.
"""

from __future__ import annotations

import statistics
import time
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, Field

from ..conversation import Conversation, Question
from ..embed import Embedder
from ..errors import ConfigError, GravityError
from ..hosts import available_hosts, get_host, resolve
from ..hosts._optional import HostUnavailable
from ..llm.config import LLMConfig
from ..llm.guard import allow_local_model_requests
from ..query.pipeline import GravityQuery, resolve_embedder
from .measure import MeasureSettings, Progress, load_plan, measure_conversation, variant_slug
from .summary import MeasureRow, format_table, summarize, write_csv, write_summary_csv
from ..store import AnchorStore, load_conversation_store

# Starts an OpenAI-compatible server for hosts that call an LLM at ingest; it has ``base_url`` and
# ``chat_requests()`` (the calls so far, so each host's are counted) and stops when the context ends.
ScriptedLLM = Callable[[], AbstractContextManager[Any]]

Status = Callable[[str], None]

SCRIPTED_NOTE = ("* ingestion through the scripted LLM on 127.0.0.1 (heuristic answers): these numbers test the "
                 "plumbing, not the library's real quality")
REAL_LLM_NOTE = "+ ingestion through a real LLM endpoint (its extraction shapes these numbers)"


class HostSpec(BaseModel):
    """One host as measured: the name shown, the registry host behind it and its constructor options."""

    name: str
    host: str
    options: dict[str, Any] = Field(default_factory=dict)
    llm_at_ingest: bool = False  # its ingestion calls an LLM (needs an endpoint, or the scripted server)
    description: str = ""


# Measure-only names for a host library run another way than its default.
PRESETS: dict[str, HostSpec] = {s.name: s for s in [
    HostSpec(name="mem0-extract", host="mem0", options={"infer": True}, llm_at_ingest=True,
             description="Mem0 with its own LLM fact extraction (infer=True)"),
    HostSpec(name="graphiti-episodes", host="graphiti", options={"mode": "episodes"}, llm_at_ingest=True,
             description="Graphiti through add_episode (LLM entity and edge extraction)"),
    HostSpec(name="amem-noevolve", host="amem", options={"evolve": False},
             description="A-Mem notes without the evolution call (runs offline; not A-Mem's full method)"),
]}


def host_names() -> list[str]:
    """Every name ``parse_hosts`` accepts (the registered hosts, then the presets)."""
    return [h.name for h in available_hosts() if not h.error] + list(PRESETS)


def _spec(name: str, host_config: str | Path | None) -> HostSpec:
    key = name.strip().lower()
    registered = resolve(key)
    if key in PRESETS:
        spec = PRESETS[key].model_copy(deep=True)
        registered = resolve(spec.host)
    elif registered is not None and not registered.error:
        spec = HostSpec(name=registered.name, host=registered.name, llm_at_ingest=registered.llm_at_ingest)
    elif registered is not None:
        raise ConfigError(f"host {name!r} ({registered.package}) is registered but unusable: {registered.error}")
    else:
        raise ConfigError(f"unknown host {name!r}; choose from {', '.join(host_names())}, or 'all'")
    missing = registered.missing_modules() if registered is not None else []
    if missing:
        raise HostUnavailable(f"host {spec.name!r} needs {', '.join(missing)}, not installed here; "
                              f"install with: {registered.install_hint}")
    if spec.host == "mcp":
        if not host_config:
            raise ConfigError("host 'mcp' needs a server configuration: --host-config FILE.json "
                              "(see docs/hosts.md, 'mcp: attaching any memory server')")
        spec.options["config"] = str(host_config)
    return spec


def parse_hosts(hosts: str | list[str], host_config: str | Path | None = None,
                llm_ok: bool = True) -> tuple[list[HostSpec], dict[str, str]]:
    """Host specs from names (a list, or one comma-separated string; 'all' = every installed host) and the
    hosts 'all' left out with why. Explicitly named hosts that cannot run raise a ``ConfigError``."""
    names = [n.strip() for n in (hosts.split(",") if isinstance(hosts, str) else hosts) if n and n.strip()]
    if not names:
        raise ConfigError("no host given; choose from " + ", ".join(host_names()) + ", or 'all'")
    specs: list[HostSpec] = []
    skipped: dict[str, str] = {}
    for name in names:
        if name.lower() != "all":
            specs.append(_spec(name, host_config))
            continue
        for info in available_hosts():
            if info.error:
                skipped[info.name] = info.error
            elif not info.installed:
                skipped[info.name] = f"not installed ({info.install_hint})"
            elif info.name == "mcp" and not host_config:
                skipped[info.name] = "needs --host-config FILE.json"
            elif info.llm_at_ingest and not llm_ok:
                skipped[info.name] = ("calls an LLM at ingest: set GRAVITY_LLM_BASE_URL / GRAVITY_LLM_API_KEY, "
                                      "or pass --scripted-llm")
            else:
                specs.append(_spec(info.name, host_config))
    unique: dict[str, HostSpec] = {}
    for s in specs:
        unique.setdefault(s.name, s)
    return list(unique.values()), skipped


def _p50(values) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


@dataclass
class HostResult:
    """One host's rows over every measured question, its per-category summary and how it ingested."""

    spec: HostSpec
    rows: list[MeasureRow]
    ingest_seconds: float
    llm: str = ""  # "" no LLM at ingest, "scripted", or the endpoint's model
    llm_calls: int | None = None
    csv_path: Path | None = None
    summary_csv_path: Path | None = None
    summary: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.summary = self.summary or summarize(self.rows)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def scripted(self) -> bool:
        return self.llm == "scripted"

    @property
    def label(self) -> str:
        """The name with its mark: ``*`` scripted LLM at ingest, ``+`` a real LLM at ingest."""
        return self.name + (" *" if self.scripted else " +" if self.llm else "")

    def summary_row(self) -> dict:
        overall = next((s for s in self.summary if s["category"].startswith("overall")), {})
        gravity = _p50(r.query_path_ms for r in self.rows)
        no_embed = _p50(r.query_path_no_embed_ms for r in self.rows)
        host = _p50(r.host_search_ms for r in self.rows)

        def ratio(a):
            return None if a is None or not host else a / host

        cov_h, cov_g = overall.get("coverage_host"), overall.get("coverage_gravity")
        return {
            "host": self.name, "llm_at_ingest": self.llm or "none", "scripted": self.scripted,
            "llm_calls": self.llm_calls, "n": overall.get("n", 0), "ingest_s": round(self.ingest_seconds, 2),
            "recall_host": overall.get("recall_host"), "recall_expanded": overall.get("recall_expanded"),
            "coverage_host": cov_h, "coverage_gravity": cov_g,
            "coverage_delta": None if cov_h is None or cov_g is None else cov_g - cov_h,
            "temporal_grounding": overall.get("temporal_grounding"),
            "gravity_ms_p50": gravity, "host_search_ms_p50": host, "ratio": ratio(gravity),
            "gravity_no_embed_ms_p50": no_embed, "ratio_no_embed": ratio(no_embed),
            "expanded_search_ms_p50": _p50(r.expanded_search_ms for r in self.rows),
        }

    def table(self, k: int = 10) -> str:
        return format_table(self.summary, k)


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _ms(v) -> str:
    return "-" if v is None else f"{v:.1f}"


@dataclass
class CrossHostReport:
    """Every host's results on the same questions and anchors, with the summary the CLI and the app show."""

    dataset: str
    results: list[HostResult]
    settings: MeasureSettings
    skipped: dict[str, str] = field(default_factory=dict)  # host -> why it was not measured
    failed: dict[str, str] = field(default_factory=dict)  # host -> the error that stopped it
    conversations: list[str] = field(default_factory=list)
    n_questions: int = 0
    seconds: float = 0.0
    summary_csv_path: Path | None = None
    categories_csv_path: Path | None = None

    def summary_rows(self) -> list[dict]:
        """One row per host: recall@k and coverage alone / with Gravity (overall, excl. category 5), times, ratio."""
        return [r.summary_row() for r in self.results]

    def category_rows(self) -> list[dict]:
        """One row per host and category (``summary.summarize`` with a host column)."""
        return [{"host": r.name, "scripted": r.scripted} | s for r in self.results for s in r.summary]

    @property
    def any_scripted(self) -> bool:
        return any(r.scripted for r in self.results)

    def notes(self) -> list[str]:
        out = []
        if self.any_scripted:
            out.append(SCRIPTED_NOTE)
        if any(r.llm and not r.scripted for r in self.results):
            out.append(REAL_LLM_NOTE)
        return out

    def table(self) -> str:
        """The summary table, one row per host, with its legend."""
        k = self.settings.k
        head = ["host", "LLM at ingest", "n", f"R@{k} host", f"R@{k} +exp", "cov host", "cov +grav", "Δcov",
                "t-ground", "ingest s", "Gravity p50 ms", "host p50 ms", "ratio", "Gravity w/o embed", "ratio w/o embed",
                "exp. search p50 ms"]
        body = []
        for res, s in zip(self.results, self.summary_rows()):
            calls = f" ({s['llm_calls']} calls)" if s["llm_calls"] else ""
            delta = "-" if s["coverage_delta"] is None else f"{100 * s['coverage_delta']:+.1f}"
            body.append([res.label, (res.llm or "none") + calls, str(s["n"]), _pct(s["recall_host"]),
                         _pct(s["recall_expanded"]), _pct(s["coverage_host"]), _pct(s["coverage_gravity"]), delta,
                         _pct(s["temporal_grounding"]), f"{s['ingest_s']:.1f}", _ms(s["gravity_ms_p50"]),
                         _ms(s["host_search_ms_p50"]), "-" if s["ratio"] is None else f"{s['ratio']:.2f}x",
                         _ms(s["gravity_no_embed_ms_p50"]),
                         "-" if s["ratio_no_embed"] is None else f"{s['ratio_no_embed']:.2f}x",
                         _ms(s["expanded_search_ms_p50"])])
        widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in [head] + body]
        lines.insert(1, "-" * len(lines[0]))
        return "\n".join(lines + [""] + self.notes() + [
            f"recall and coverage: overall excl. category 5; coverage at {self.settings.budget.total} tokens for both; "
            "ratio = Gravity query path p50 / host's own search p50 at k. measure embeds all questions in one batch "
            "first and a host on the anchors' model searches with those vectors, so neither time holds the query "
            "embedding here; benchmarks/query.py times the end-to-end query a user waits for (target <= 2x the "
            "host's own search, embedding included)"])

    def host_tables(self) -> dict[str, str]:
        """Per host: a heading (marked when its ingestion went through an LLM) and its per-category table."""
        out = {}
        for r in self.results:
            how = (" — ingestion through the SCRIPTED LLM: says nothing about the library's real quality"
                   if r.scripted else f" — ingestion through the LLM {r.llm}" if r.llm else "")
            out[r.name] = f"== {r.label}{how} ==\n{r.table(self.settings.k)}"
        return out

    def text(self) -> str:
        """Everything the CLI prints: per-host tables, the summary, skipped and failed hosts."""
        parts = list(self.host_tables().values())
        parts.append("== summary: one row per host ==\n" + self.table())
        parts += [f"skipped {name}: {why}" for name, why in self.skipped.items()]
        parts += [f"FAILED {name}: {err}" for name, err in self.failed.items()]
        return "\n\n".join(parts)


def _env_llm() -> LLMConfig | None:
    try:
        return LLMConfig.from_env()
    except ConfigError:
        return None


def _llm_label(cfg: LLMConfig) -> str:
    return cfg.model


def _run(plan: list[tuple[AnchorStore, list[Question]]], specs: list[HostSpec], dataset: str,
         settings: MeasureSettings, embedder: Embedder | None, progress: Progress | None, status: Status | None,
         llm: LLMConfig | None, scripted_llm: ScriptedLLM | None) -> tuple[list[HostResult], dict[str, str]]:
    say = status or (lambda _m: None)
    if embedder is None and plan:
        embedder = resolve_embedder(plan[0][0])
    # One query path (and anchor index) per conversation, shared by every host; it is deterministic, so each
    # host gets the same anchors and expansions, and it runs beside each host's search so both are timed
    # under the same machine load.
    shared = [GravityQuery(store, embedder, settings.run_config()) for store, _ in plan]
    for gq, (_, qs) in zip(shared, plan):
        gq.run(qs[0].question, qs[0].question_date)  # untimed warm-up
    total = len(specs) * sum(len(qs) for _, qs in plan)
    results: list[HostResult] = []
    failed: dict[str, str] = {}
    with ExitStack() as stack:
        server = None
        needs_llm = [s for s in specs if s.llm_at_ingest]
        if needs_llm and scripted_llm is not None:
            server = stack.enter_context(scripted_llm())
            stack.enter_context(allow_local_model_requests())
            llm = LLMConfig(base_url=server.base_url, api_key="sk-local", model="scripted", timeout=60, max_retries=0,
                            cache=False)
            say(f"SCRIPTED LLM on {server.base_url} for {', '.join(s.name for s in needs_llm)}: heuristic "
                "extraction, so their numbers test the plumbing, not the library's real quality")
        elif needs_llm and llm is None:
            llm = _env_llm()
            if llm is None:
                raise ConfigError(f"host(s) {', '.join(s.name for s in needs_llm)} call an LLM while ingesting and no "
                                  "endpoint is configured: set GRAVITY_LLM_BASE_URL (or GRAVITY_LLM_API_KEY), or pass "
                                  "--scripted-llm to use the scripted local server (numbers then test the plumbing only)")
        per_host = sum(len(qs) for _, qs in plan)
        for index, spec in enumerate(specs):
            done = index * per_host
            options = dict(spec.options)
            label = ""
            if spec.llm_at_ingest:
                options["llm"] = llm
                label = "scripted" if server is not None else _llm_label(llm)
            before = len(server.chat_requests()) if server is not None else 0
            host = None
            try:
                host = get_host(spec.host, embedder=embedder, **options)
                rows: list[MeasureRow] = []
                ingest_s = 0.0
                for (store, qs), gravity in zip(plan, shared):
                    say(f"{spec.name}: ingesting {store.conversation.id} ({store.conversation.n_utterances()} turns)")
                    t0 = time.perf_counter()
                    host.ingest(store.conversation)
                    ingest_s += time.perf_counter() - t0
                    host.search("warm up", settings.k)  # first-call loading stays out of the search times
                    rows += measure_conversation(store, host, qs, dataset, settings, embedder, progress, done, total,
                                                 gravity=gravity)
                    done += len(qs)
            except GravityError as err:
                failed[spec.name] = str(err)
                say(f"{spec.name}: FAILED: {err}")
                if progress:
                    progress((index + 1) * per_host, total)
                continue
            finally:
                close = getattr(host, "close", None)
                if callable(close):
                    close()
            calls = (len(server.chat_requests()) - before) if server is not None else getattr(host, "llm_calls", None)
            results.append(HostResult(spec=spec, rows=rows, ingest_seconds=ingest_s, llm=label,
                                      llm_calls=calls if spec.llm_at_ingest else None))
            say(f"{spec.name}: done ({len(rows)} questions, ingest {ingest_s:.1f} s)")
    return results, failed


def measure_store_hosts(store: AnchorStore, questions: list[Question], hosts: str | list[str],
                        dataset: str = "locomo", settings: MeasureSettings | None = None,
                        embedder: Embedder | None = None, progress: Progress | None = None,
                        status: Status | None = None, llm: LLMConfig | None = None, scripted_llm: ScriptedLLM | None = None,
                        host_config: str | Path | None = None) -> CrossHostReport:
    """Every host in ``hosts`` on ``questions`` of one loaded store (the app's evaluation page); writes nothing."""
    started = time.perf_counter()
    settings = settings or MeasureSettings()
    if store.conversation is None:
        raise ConfigError(f"{store.path or 'store'}: no conversation.json, so no host can ingest the conversation")
    specs, skipped = parse_hosts(hosts, host_config, llm_ok=llm is not None or scripted_llm is not None or _env_llm() is not None)
    results, failed = _run([(store, questions)], specs, dataset, settings, embedder, progress, status, llm,
                           scripted_llm)
    return CrossHostReport(dataset=dataset, results=results, settings=settings, skipped=skipped, failed=failed,
                           conversations=[store.conversation.id], n_questions=len(questions),
                           seconds=time.perf_counter() - started)


def measure_hosts(dataset: str, path: str | Path, hosts: str | list[str], runs_dir: str | Path,
                  conversation: str | None = None, limit: int | None = None, settings: MeasureSettings | None = None,
                  embedder: Embedder | None = None, progress: Progress | None = None, status: Status | None = None,
                  llm: LLMConfig | None = None, scripted_llm: ScriptedLLM | None = None,
                  host_config: str | Path | None = None,
                  plan: tuple[str, list[tuple[Conversation, list[Question]]]] | None = None) -> CrossHostReport:
    """``measure`` over several hosts: each conversation's anchors loaded once from ``runs_dir`` (built there
    beforehand: ``build.ensure_stores``) and shared; one CSV of rows per host, a summary CSV (one row per host) and a
    per-category CSV. ``plan``: ``load_plan``'s answer when the caller has read the dataset already."""
    started = time.perf_counter()
    settings = settings or MeasureSettings()
    specs, skipped = parse_hosts(hosts, host_config, llm_ok=llm is not None or scripted_llm is not None or _env_llm() is not None)
    dataset, conv_plan = plan or load_plan(dataset, path, conversation, limit)
    runs = Path(runs_dir)
    plan = [(load_conversation_store(conv, runs), qs) for conv, qs in conv_plan]
    results, failed = _run(plan, specs, dataset, settings, embedder, progress, status, llm, scripted_llm)
    suffix = f"_{conversation}" if conversation else ""
    slug = variant_slug(settings.config)
    for r in results:
        stem = f"measure_{dataset}_{r.name}_{slug}{suffix}"
        r.csv_path = write_csv(r.rows, runs / f"{stem}.csv")
        r.summary_csv_path = write_summary_csv(r.summary, runs / f"{stem}_summary.csv")
    report = CrossHostReport(dataset=dataset, results=results, settings=settings, skipped=skipped, failed=failed,
                             conversations=[s.conversation.id for s, _ in plan],
                             n_questions=sum(len(qs) for _, qs in plan), seconds=time.perf_counter() - started)
    if results:
        stem = f"measure_{dataset}_hosts_{slug}{suffix}"
        report.summary_csv_path = write_summary_csv(report.summary_rows(), runs / f"{stem}.csv")
        report.categories_csv_path = write_summary_csv(report.category_rows(), runs / f"{stem}_categories.csv")
    return report
