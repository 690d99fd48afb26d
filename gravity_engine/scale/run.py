"""A corpus build: plan (finished stores skipped), optional batch-API pass, workers or Ray, summary."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..build.stores import ensure_stores
from ..conversation import Conversation
from ..errors import ConfigError
from ..extract.batch import BatchAPIRun, extraction_requests
from ..fileio import atomic_write_json
from ..llm import LLMConfig
from .jobs import BuildOptions, JobResult, plan_jobs
from .ray_runner import run_ray
from .workers import resolve_workers, run_local

SUMMARY_FILE = "build-summary.json"
BATCH_STATE_DIR = Path(".checkpoints") / "batch-api"  # under the corpus's output folder, beside the stores

Progress = Callable[[JobResult], None]
Status = Callable[[str], None]


@dataclass
class RunSummary:
    rows: list[JobResult] = field(default_factory=list)
    runner: str = ""  # "in process", "2 processes", "ray local", ...
    wall_s: float = 0.0
    started_at: float = 0.0  # wall clock (time.time) when the run started: before planning, workers, Ray
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    batch_api: dict[str, Any] | None = None

    def failed(self) -> list[JobResult]:
        return [r for r in self.rows if r.status in ("failed", "partial")]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def peak_rss_by_worker(self) -> dict[str, float]:
        """Each worker process's peak resident memory (MB), as its last job saw it."""
        peaks: dict[str, float] = {}
        for r in self.rows:
            if r.worker and r.peak_rss_mb is not None:
                peaks[r.worker] = max(peaks.get(r.worker, 0.0), r.peak_rss_mb)
        return peaks

    def phases(self, launched: float | None = None, exited: float | None = None) -> dict[str, float]:
        """Where the run's wall time went, in seconds, from the rows' wall-clock starts and ends per worker:

        ``start-up``: from ``launched`` (default: the run's start) to the first build's start (imports, models,
        Ray's start); ``read``: from ``launched`` to the run's start (the caller's imports and reading of the
        corpus); ``ready``: to the last worker's models loaded; ``builds``: until the first worker runs
        out of work (all busy); ``tail``: until the last build ends (some workers idle); ``exit``: from there
        to ``exited`` (default: the run's end); ``idle``: the workers' core-seconds without a build between
        the first start and the last end; ``busy``: the builds' seconds; ``build_cpu``: their CPU seconds
        (all threads of their worker; what the machine's load does not change). Empty without a build."""
        rows = [r for r in self.rows if r.status != "skipped" and r.started_at and r.finished_at]
        if not rows:
            return {}
        launched = self.started_at if launched is None else launched
        exited = self.started_at + self.wall_s if exited is None else exited
        first, last = min(r.started_at for r in rows), max(r.finished_at for r in rows)
        ends: dict[str, float] = {}
        for r in rows:
            ends[r.worker] = max(ends.get(r.worker, 0.0), r.finished_at)
        first_out = min(ends.values())
        busy = sum(r.seconds for r in rows)
        ready = max(r.ready_at or first for r in rows)
        return {"start-up": first - launched, "read": self.started_at - launched, "ready": ready - launched,
                "builds": first_out - first, "tail": last - first_out, "exit": exited - last, "span": last - first,
                "idle": max(0.0, len(ends) * (last - first) - busy), "busy": busy,
                "build_cpu": sum(r.cpu_s for r in rows)}

    def table(self) -> str:
        head = (f"{'conversation':<24}{'status':<9}{'entities':>9}{'events':>8}{'topics':>8}{'seconds':>9}"
                f"{'peak RSS MB':>13}  worker")
        lines = [head, "-" * len(head)]
        for r in sorted(self.rows, key=lambda r: r.conversation_id):
            c = r.counts
            rss = f"{r.peak_rss_mb:.0f}" if r.peak_rss_mb is not None else "-"
            secs = f"{r.seconds:.1f}" if r.status != "skipped" else "-"
            lines.append(f"{r.conversation_id[:23]:<24}{r.status:<9}{c.get('entities', 0):>9}{c.get('events', 0):>8}"
                         f"{c.get('topics', 0):>8}{secs:>9}{rss:>13}  {r.worker}")
        for file, error in self.unreadable:
            lines.append(f"{Path(file).name[:23]:<24}{'unread':<9}  {error}")
        worked = sum(r.seconds for r in self.rows)
        summary = ", ".join(f"{n} {s}" for s, n in sorted(self.counts().items()))
        lines.append("-" * len(head))
        lines.append(f"{len(self.rows)} conversations ({summary or 'none'}) with {self.runner} in {self.wall_s:.1f} s "
                     f"wall ({worked:.1f} s of builds)")
        peaks = self.peak_rss_by_worker()
        if peaks:
            lines.append(f"peak RSS per worker: {', '.join(f'{v:.0f}' for v in sorted(peaks.values()))} MB")
        p = self.phases()
        if p:
            lines.append(f"start-up {p['start-up']:.1f} s, all workers busy {p['builds']:.1f} s, "
                         f"tail {p['tail']:.1f} s, end {p['exit']:.1f} s; workers idle {p['idle']:.1f} core-s; "
                         f"builds used {p['build_cpu']:.1f} CPU s")
        for r in self.failed():
            lines.append(f"{r.status} {r.conversation_id}: {r.error}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"runner": self.runner, "wall_s": round(self.wall_s, 3), "started_at": round(self.started_at, 3),
                "phases": {k: round(v, 3) for k, v in self.phases().items()}, "counts": self.counts(),
                "peak_rss_mb_by_worker": self.peak_rss_by_worker(), "batch_api": self.batch_api,
                "unreadable": [{"file": f, "error": e} for f, e in self.unreadable],
                "conversations": [r.to_dict() for r in self.rows]}


def build_corpus(conversations: Iterable[Conversation], out_root: str | Path, options: BuildOptions | None = None, *,
                 workers: int | None = None, ray: str | None = None, batch_api: bool = False, poll_s: float = 30.0,
                 force: bool = False, progress: Progress | None = None, status: Status | None = None,
                 planned: Callable[[int, int], None] | None = None) -> RunSummary:
    """Build one store per conversation under ``out_root/<conversation id>``; rerun to resume.

    ``workers``: local processes (0 = one per core, 1 or None = this process); ``ray``: ``local``, ``auto``
    or a cluster address instead (with ``local``, ``workers`` is the CPUs it gets; None or 0: every core).
    ``batch_api`` (llm backend) first answers every extraction request through the endpoint's batch API,
    so the builds then run from the cache. ``planned(todo, skipped)`` is told
    the plan before any work starts; ``progress`` gets each conversation's row as it finishes.
    """
    options = options or BuildOptions()
    out = Path(out_root)
    started, started_at = time.perf_counter(), time.time()
    say = status or (lambda msg: None)
    jobs, skipped = plan_jobs(conversations, out, options, force=force)
    if planned is not None:
        planned(len(jobs), len(skipped))
    summary = RunSummary(rows=list(skipped), started_at=started_at)
    if batch_api:
        summary.batch_api = _batch_pass(jobs, out, options, poll_s, say)
    if ray:
        summary.runner = f"ray {ray}"
        done = run_ray(jobs, ray, progress=progress, num_cpus=workers or None)
    else:
        n = min(resolve_workers(1 if workers is None else workers), max(1, len(jobs)))
        summary.runner = "1 process (this one)" if n == 1 else f"{n} processes"
        done = run_local(jobs, n, progress=progress)
    summary.rows.extend(done)
    summary.wall_s = time.perf_counter() - started
    return summary


def _batch_pass(jobs, out: Path, options: BuildOptions, poll_s: float, say: Status) -> dict[str, Any]:
    if options.backend != "llm" or options.llm_config is None:
        raise ConfigError("--batch-api sends llm extraction requests: use it with --backend llm")
    config = options.llm_config
    items = extraction_requests([j.conversation for j in jobs], config, batch_size=options.batch_size,
                                fused=options.fused, modules=options.modules)
    report = BatchAPIRun(config, out / BATCH_STATE_DIR, poll_s=poll_s, status=say).run(items)
    say(report.describe())
    return asdict(report)


def build_missing(conversations: Iterable[Conversation], stores: str | Path, workers: int | None,
                  backend: str = "classic", progress: Progress | None = None) -> RunSummary:
    """The stores ``measure`` and ``evaluate`` need, built in parallel before they start; existing ones are kept."""
    llm_config = None
    if backend == "llm":
        llm_config = LLMConfig.from_env()
    return build_corpus(conversations, stores, BuildOptions(backend=backend, llm_config=llm_config),
                        workers=workers, progress=progress)


def write_summary(summary: RunSummary, out_root: str | Path) -> Path:
    path = Path(out_root) / SUMMARY_FILE
    atomic_write_json(path, summary.to_dict())
    return path


def build_stores_first(conversations: list[Conversation], stores: str | Path, workers: int | None = None,
                       backend: str = "classic", status: Status | None = None) -> list[str]:
    """``measure`` and ``evaluate``: the stores they need, built before they start (measuring itself never builds),
    in this process or, with ``workers``, in that many processes (0 = one per core); the ids built."""
    if workers is None:
        return ensure_stores(conversations, stores, backend=backend, status=status)
    summary = _announce(build_missing(conversations, stores, workers, backend), status)
    return [r.conversation_id for r in summary.rows if r.status != "skipped"]


def _announce(summary: RunSummary, status: Status | None) -> RunSummary:
    built = [r for r in summary.rows if r.status != "skipped"]
    if status is not None and built:
        status(f"built {len(built)} anchor stores with {summary.runner} in {summary.wall_s:.1f} s")
        for r in summary.failed():
            status(f"  {r.status} {r.conversation_id}: {r.error}")
    return summary
