"""One build job per conversation: what a worker receives, what it runs and what it sends back.

The same ``run_job`` runs in this process (``--workers 1``), in a local process pool and in a Ray
task, so every runner builds a store the same way: ``build.build_store`` into ``<out>/<conversation id>``,
whose own checkpoints make an interrupted job resume where it stopped.
"""

from __future__ import annotations

import json
import os
import re
import resource
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable

from pydantic import SecretStr

from ..anchors import MODULES
from ..build import build_store
from ..conversation import Conversation
from ..embed import DEFAULT_MODEL, get_embedder
from ..errors import ConfigError
from ..extract.base import DEFAULT_BATCH_SIZE
from ..extract.classic.nlp import get_nlp
from ..llm.config import NO_KEY
from ..store import ANCHORS_FILE, REPORT_FILE

STATUSES = ("built", "resumed", "skipped", "partial", "failed")
_SAFE_ID = re.compile(r"[A-Za-z0-9_.@+-]{1,120}")


@dataclass(frozen=True)
class BuildOptions:
    """How every conversation of a run is built (the ``build_store`` arguments they share)."""

    backend: str = "classic"
    batch_size: int = DEFAULT_BATCH_SIZE
    modules: tuple[str, ...] = MODULES
    fused: bool = True
    embedding_model: str = DEFAULT_MODEL
    verify: bool = True
    llm_config: Any = None  # an LLMConfig for the llm backend; see ``key_from_env``
    # Ray keeps task arguments in its cluster store: there the key is left out and each worker reads
    # it from its own environment (GRAVITY_LLM_API_KEY / OPENAI_API_KEY).
    key_from_env: bool = False

    def without_key(self) -> "BuildOptions":
        if self.llm_config is None:
            return self
        return replace(self, llm_config=self.llm_config.model_copy(update={"api_key": SecretStr(NO_KEY)}),
                       key_from_env=True)

    def resolved_llm_config(self) -> Any:
        if self.llm_config is None or not self.key_from_env:
            return self.llm_config
        key = (os.environ.get("GRAVITY_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "").strip()
        return self.llm_config.model_copy(update={"api_key": SecretStr(key)}) if key else self.llm_config


@dataclass
class BuildJob:
    conversation: Conversation
    out_dir: Path
    options: BuildOptions


@dataclass
class JobResult:
    """One row of the summary table."""

    conversation_id: str
    status: str  # one of STATUSES
    out_dir: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    peak_rss_mb: float | None = None  # the worker process's high-water mark when the job ended
    worker: str = ""  # host:pid of the process that ran it
    llm_calls: int = 0
    torch_threads: int | None = None  # torch's intra-op threads in that worker
    started_at: float = 0.0  # wall clock (time.time) when the job started in its worker
    finished_at: float = 0.0  # wall clock when it ended
    cpu_s: float = 0.0  # CPU seconds its worker spent on it (every thread): the build's cost without the machine's load
    ready_at: float = 0.0  # wall clock when its worker had its models loaded (start-up over)
    error: str = ""

    @property
    def anchors(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {"conversation_id": self.conversation_id, "status": self.status, "out_dir": self.out_dir,
                "counts": self.counts, "anchors": self.anchors, "seconds": round(self.seconds, 3),
                "peak_rss_mb": self.peak_rss_mb, "worker": self.worker, "llm_calls": self.llm_calls,
                "torch_threads": self.torch_threads, "started_at": round(self.started_at, 3),
                "finished_at": round(self.finished_at, 3), "cpu_s": round(self.cpu_s, 3),
                "ready_at": round(self.ready_at, 3), "error": self.error}


def store_dirname(conversation_id: str) -> str:
    """The conversation id as a folder name: itself when it is a safe name (what ``measure`` and
    ``evaluate`` look for), otherwise refused rather than silently renamed."""
    if _SAFE_ID.fullmatch(conversation_id) and conversation_id not in (".", ".."):
        return conversation_id
    raise ConfigError(f"conversation id {conversation_id!r} cannot be a folder name; "
                      "rename it (letters, digits and _ . @ + - only)")


def store_state(out_dir: Path) -> str:
    """``missing``, ``complete`` or ``partial`` (written, but some batches failed and a rerun retries them)."""
    if not (out_dir / ANCHORS_FILE).is_file():
        return "missing"
    try:
        report = json.loads((out_dir / REPORT_FILE).read_text(encoding="utf-8"))
        failed = report["batches"]["failed"]
    except (OSError, ValueError, KeyError, TypeError):
        return "partial"  # no readable report: build it again (its checkpoints make that cheap)
    return "partial" if failed else "complete"


def plan_jobs(conversations: Iterable[Conversation], out_root: Path, options: BuildOptions,
              force: bool = False) -> tuple[list[BuildJob], list[JobResult]]:
    """The jobs still to run (longest conversation first), and a ``skipped`` row for each conversation
    whose store is complete."""
    jobs: list[BuildJob] = []
    skipped: list[JobResult] = []
    seen: dict[str, str] = {}
    for conv in conversations:
        name = store_dirname(conv.id)
        if name in seen:
            raise ConfigError(f"two conversations share the id {conv.id!r} ({seen[name] or '?'} and "
                              f"{conv.source or '?'}); their stores would overwrite each other")
        seen[name] = conv.source
        out = Path(out_root) / name
        if not force and store_state(out) == "complete":
            skipped.append(JobResult(conv.id, "skipped", out_dir=str(out), counts=_stored_counts(out)))
        else:
            jobs.append(BuildJob(conv, out, options))
    # Longest first: a long conversation started last would leave the other workers idle at the end.
    jobs.sort(key=lambda j: -sum(len(u.text) for u in j.conversation.utterances()))
    return jobs, skipped


def _stored_counts(out_dir: Path) -> dict[str, int]:
    try:
        return dict(json.loads((out_dir / REPORT_FILE).read_text(encoding="utf-8")).get("counts") or {})
    except (OSError, ValueError, AttributeError):
        return {}


# --- the worker side -------------------------------------------------------------------------------

_initialized = False
_ready_at = 0.0


def init_worker(threads: int | None, embedding_model: str = DEFAULT_MODEL,
                environ: dict[str, str] | None = None, backend: str = "classic") -> None:
    """Once per worker process: the run's environment, torch's thread count (None: leave the process's
    own setting), the models loaded and warmed up, so that the first build costs what the others do and
    the run's start-up ends here (``JobResult.ready_at``)."""
    global _initialized, _ready_at
    if environ is not None:
        # A forkserver child starts from the server's environment, which may predate this run's.
        os.environ.clear()
        os.environ.update(environ)
    if threads is not None:
        # The variable is how gravity_engine.threads.configure() sizes torch, should anything in the
        # worker call it; torch itself is set here, at process start, and nowhere else.
        os.environ["GRAVITY_TORCH_THREADS"] = str(max(1, threads))
        import torch

        torch.set_num_threads(max(1, threads))

    # Both lru-cached per process: every job of this worker reuses them. A first call pays one-time
    # costs (kernel set-up, vocabulary growth) that would otherwise land in the first job.
    get_embedder(embedding_model).encode(["warm-up: Lena opened her bakery on Elm Street yesterday."])
    if backend == "classic":
        get_nlp()("Warm-up: Lena opened her bakery on Elm Street yesterday.")
    _initialized = True
    _ready_at = time.time()


def run_job(job: BuildJob) -> JobResult:
    """Build one store; any failure becomes a ``failed`` row, never an exception (KeyboardInterrupt aside)."""
    opts = job.options
    started, cpu_started, row_started_at = time.perf_counter(), time.process_time(), time.time()
    row = JobResult(job.conversation.id, "failed", out_dir=str(job.out_dir), worker=_worker_name())
    try:
        store = build_store(job.conversation, job.out_dir, backend=opts.backend,
                            embedder=get_embedder(opts.embedding_model),
                            embedding_model=opts.embedding_model, batch_size=opts.batch_size, modules=opts.modules,
                            fused=opts.fused, llm_config=opts.resolved_llm_config(), verify=opts.verify)
    except Exception as err:  # one conversation's failure must not stop the others; the row says why
        row.error = f"{type(err).__name__}: {err}"[:500]
    else:
        report = store.report
        failed = report["batches"]["failed"]
        row.counts = dict(report["counts"])
        row.llm_calls = int(((report.get("llm") or {}).get("total") or {}).get("calls", 0))
        if failed:
            row.status = "partial"
            row.error = f"{len(failed)} batches failed (first: {failed[0]['error']})"[:500]
        else:
            row.status = "resumed" if report["batches"]["from_checkpoint"] else "built"
    row.seconds = time.perf_counter() - started
    row.cpu_s = time.process_time() - cpu_started
    row.started_at, row.ready_at = row_started_at, _ready_at
    row.peak_rss_mb = peak_rss_mb()
    import torch

    row.torch_threads = torch.get_num_threads()
    row.finished_at = time.time()
    return row


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB (ru_maxrss is in KB on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _worker_name() -> str:
    return f"{os.uname().nodename}:{os.getpid()}"
