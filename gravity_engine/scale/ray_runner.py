"""Build many conversations on Ray: one task per conversation, Ray schedules them.

``address``: ``local`` starts a Ray instance on this machine (one CPU per core), ``auto`` joins the
cluster this node belongs to (``ray start`` was run here), anything else is passed to
``ray.init(address=...)`` (``ray://head:10001`` or ``head:6379``). Ray reuses a worker process for
the tasks it runs, so the embedding model, loaded through the engine's per-process cache, is
loaded once per worker. Each task writes its store under the run's output folder, which on a
cluster must be a path every node sees (a shared file system); the summary rows come back to the
driver. The API key never travels with a task: each worker reads its own environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import ConfigError
from . import jobs as _jobs
from .jobs import BuildJob, JobResult
from .workers import cpu_count

Progress = Callable[[JobResult], None]
LOCAL = "local"
# The local instance holds a few conversations at a time in its object store; Ray's default takes 30% of RAM.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024


def _build_task(job: BuildJob) -> JobResult:
    if not _jobs._initialized:
        _jobs.init_worker(1, job.options.embedding_model, backend=job.options.backend)  # one CPU: one torch thread
    return _jobs.run_job(job)


def connect(address: str, num_cpus: int | None = None) -> bool:
    """Join or start Ray; True when this call started it (and so should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    # Ray would otherwise report usage to its servers; this machine is offline and so are the tests.
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address not in (LOCAL, "auto"):
        _check_reachable(address)
    try:
        if address == LOCAL:
            ray.init(num_cpus=num_cpus or cpu_count(), include_dashboard=False, log_to_driver=False,
                     object_store_memory=_LOCAL_OBJECT_STORE_BYTES)
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise ConfigError(f"cannot connect to Ray at {address!r}: {err}") from None
    return True


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Ray retries an unreachable head for minutes; a plain connect says it at once."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"gcs://{address}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise ConfigError(f"--ray {address!r}: expected local, auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((parts.hostname, port), timeout=timeout).close()
    except OSError as err:
        raise ConfigError(f"cannot reach Ray at {address!r} ({parts.hostname}:{port}): {err}; "
                          "is the cluster up (ray start --head) and the port open?") from None


def run_ray(jobs: list[BuildJob], address: str = LOCAL, progress: Progress | None = None,
            num_cpus: int | None = None) -> list[JobResult]:
    """Run every job as a Ray task (one CPU each); results in completion order."""
    import ray
    from ray.exceptions import RayError

    notify = progress or (lambda r: None)
    if not jobs:
        return []
    started = connect(address, num_cpus)
    pending: dict = {}
    try:
        task = ray.remote(num_cpus=1, max_retries=1)(_build_task)
        for job in jobs:
            sent = BuildJob(job.conversation, job.out_dir, job.options.without_key()) if job.options.llm_config else job
            pending[task.remote(sent)] = job
        results: list[JobResult] = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                job = pending.pop(ref)
                try:
                    row = ray.get(ref)
                except RayError as err:  # the worker died or the task could not run: say so in its row
                    row = JobResult(job.conversation.id, "failed", out_dir=str(job.out_dir),
                                    error=f"Ray task failed: {type(err).__name__}: {str(err).splitlines()[0][:300]}")
                results.append(row)
                notify(row)
        return results
    except KeyboardInterrupt:
        for ref in pending:  # on a cluster the tasks would otherwise run on; finished stores stay
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
