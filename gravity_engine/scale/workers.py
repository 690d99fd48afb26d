"""Build many conversations with local worker processes (``--workers N``).

A ``ProcessPoolExecutor`` on the ``forkserver`` start method: the fork server imports torch, spaCy
and sentence-transformers once and every worker forks from it, so a worker starts in a blink
instead of paying the imports again; forking the CLI process itself would copy whatever thread
pools it had started. Each worker sets torch's threads to cores / workers, loads and warms its models
once (``jobs.init_worker``), then runs one conversation per task.

Start-up is the part of a run two workers cannot halve, so it is overlapped where it can be:
``start_forkserver`` launches the fork server's imports before the caller reads its corpus (the
server only imports; it never runs torch, so forking from it stays safe).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from .jobs import BuildJob, JobResult, init_worker, run_job

# Imported by the fork server before any worker forks from it (import cost paid once per run); the llm
# backend's client only when it is used (classic builds never import it). The CLI package too: a worker of
# ``python -m gravity_engine`` re-runs that module (as multiprocessing's spawn does) before its first task.
_PRELOAD = ["torch", "sentence_transformers", "spacy", "gravity_engine.build", "gravity_engine.extract.classic",
            "gravity_engine.scale.jobs", "gravity_engine.cli"]
_PRELOAD_LLM = ["gravity_engine.extract.llm"]

Progress = Callable[[JobResult], None]


def cpu_count() -> int:
    """Cores this process may run on (a container's or taskset's limit, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def resolve_workers(workers: int) -> int:
    """``0`` means one worker per core."""
    if workers < 0:
        raise ValueError("--workers must be 0 (all cores) or more")
    return workers or cpu_count()


def preload_modules(backend: str = "classic") -> list[str]:
    return _PRELOAD + (_PRELOAD_LLM if backend == "llm" else [])


def _forkserver_context(backend: str):
    context = multiprocessing.get_context("forkserver")
    # Takes effect when the server starts; a server already running (started early) keeps its list.
    context.set_forkserver_preload(preload_modules(backend))
    return context


def start_forkserver(workers: int | None, backend: str = "classic") -> bool:
    """Start the fork server's imports now when ``workers`` means more than one process, so that they run
    on another core while this process reads and plans its corpus (~10 s of imports against ~1-2 s of
    reading LongMemEval); True when it was started. Starting it for a run that ends up with one job
    costs only that idle server's imports."""
    if resolve_workers(1 if workers is None else workers) < 2:
        return False
    _forkserver_context(backend)
    # The pool would start it at its first submit (and wait for its imports there); started here, that
    # wait is mostly over by then. A running server is reused by every pool of this process.
    multiprocessing.forkserver.ensure_running()
    return True


def run_local(jobs: list[BuildJob], workers: int = 1, progress: Progress | None = None) -> list[JobResult]:
    """Run ``jobs`` on ``workers`` processes (1: in this process); results in completion order."""
    notify = progress or (lambda r: None)
    workers = min(resolve_workers(workers), max(1, len(jobs)))
    threads = max(1, cpu_count() // workers)
    results: list[JobResult] = []
    if not jobs:
        return results
    embedding_model, backend = jobs[0].options.embedding_model, jobs[0].options.backend
    if workers == 1:
        init_worker(None, embedding_model, backend=backend)  # this process: its entry point has set its threads
        for job in jobs:
            results.append(run_job(job))
            notify(results[-1])
        return results

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_forkserver_context(backend), initializer=init_worker,
                               initargs=(threads, embedding_model, dict(os.environ), backend))
    pending = {pool.submit(run_job, job): job for job in jobs}
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                job = pending.pop(future)
                try:
                    row = future.result()
                except BrokenProcessPool:
                    # A worker died (killed, out of memory): its job and those queued behind it fail
                    # with the reason; their checkpoints stay for the rerun.
                    row = JobResult(job.conversation.id, "failed", out_dir=str(job.out_dir),
                                    error="the worker process ended (killed, out of memory, or it could not start); "
                                          "run again to resume")
                results.append(row)
                notify(row)
    except BaseException:
        # Interrupted (Ctrl-C, or SIGINT to this process alone): stop the builds in progress rather than
        # wait for them; their finished batches are checkpointed and the rerun resumes there.
        pool.shutdown(wait=False, cancel_futures=True)
        for process in multiprocessing.active_children():
            process.terminate()
        raise
    pool.shutdown(wait=True)
    return results


__all__ = ["cpu_count", "preload_modules", "resolve_workers", "run_local", "start_forkserver"]
