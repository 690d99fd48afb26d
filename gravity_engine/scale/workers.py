"""Build many conversations with local worker processes (``--workers N``).

A ``ProcessPoolExecutor`` on the ``forkserver`` start method: the fork server imports torch, spaCy
and sentence-transformers once and every worker forks from it, so a worker starts in a blink
instead of paying the imports again; forking the CLI process itself would copy whatever thread
pools it had started. Each worker sets torch's threads to cores / workers and loads the embedding
model once (``jobs.init_worker``), then runs one conversation per task.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from .jobs import BuildJob, JobResult, init_worker, run_job

# Imported by the fork server before any worker forks from it (import cost paid once per run).
_PRELOAD = ["torch", "sentence_transformers", "spacy", "gravity_engine.build", "gravity_engine.extract.classic",
            "gravity_engine.extract.llm", "gravity_engine.scale.jobs"]

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


def run_local(jobs: list[BuildJob], workers: int = 1, progress: Progress | None = None) -> list[JobResult]:
    """Run ``jobs`` on ``workers`` processes (1: in this process); results in completion order."""
    notify = progress or (lambda r: None)
    workers = min(resolve_workers(workers), max(1, len(jobs)))
    threads = max(1, cpu_count() // workers)
    embedding_model = jobs[0].options.embedding_model if jobs else ""
    results: list[JobResult] = []
    if not jobs:
        return results
    if workers == 1:
        init_worker(None, embedding_model)  # this process: its entry point has set its threads
        for job in jobs:
            results.append(run_job(job))
            notify(results[-1])
        return results

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=init_worker,
                               initargs=(threads, embedding_model, dict(os.environ)))
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


__all__ = ["cpu_count", "resolve_workers", "run_local"]
