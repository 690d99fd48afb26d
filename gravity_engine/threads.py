"""Thread limits of torch and of the BLAS library, set once when the process starts.

``torch.set_num_threads`` and threadpoolctl's limits are process-wide. Changed and restored from worker
threads (a query in one Streamlit session while a build runs in another), an unlucky interleaving
restores a neighbour's temporary value: the second caller saved the first one's "1" and puts it back
last, and every thread started afterwards runs on one core. So the limits are set here, once, by the
entry points (the CLI, the app, the test session), and nothing else in the engine changes them.

Defaults: one thread for torch and one for BLAS (numpy's OpenBLAS). ``benchmarks/threads.py`` on this
project's shared 2-core machines (load average 8-10): MiniLM embedding one question took 38 ms p50
with one torch thread and 839 ms with two, 100 questions in one batch 1.2 s against 5.9 s; OpenMP
teams that wait for a busy core spin instead of working. Where cores are free,
``GRAVITY_TORCH_THREADS`` (and ``GRAVITY_BLAS_THREADS``) give more.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass

from .errors import ConfigError

TORCH_ENV = "GRAVITY_TORCH_THREADS"
BLAS_ENV = "GRAVITY_BLAS_THREADS"


@dataclass(frozen=True)
class ThreadLimits:
    torch: int
    blas: int


_lock = threading.Lock()
_limits: ThreadLimits | None = None
_blas_limiter = None  # threadpoolctl's limiter, kept so the limit is never garbage-collected or restored


def _from_env(var: str, default: int) -> int:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{var}={raw!r} is not a whole number of threads") from None
    if value < 1:
        raise ConfigError(f"{var}={raw!r}: give at least 1 thread")
    return value


def default_limits() -> ThreadLimits:
    return ThreadLimits(torch=_from_env(TORCH_ENV, 1), blas=_from_env(BLAS_ENV, 1))


def configure(torch_threads: int | None = None, blas_threads: int | None = None) -> ThreadLimits:
    """Set the limits for the whole process. Only the first call sets anything; later calls return the
    limits in force, so every entry point may call it. Call it before starting worker threads."""
    global _limits
    with _lock:
        if _limits is not None:
            return _limits
        base = default_limits()
        limits = ThreadLimits(torch=torch_threads or base.torch, blas=blas_threads or base.blas)
        _limit_blas(limits.blas)
        _limit_torch(limits.torch)
        _limits = limits
        return limits


def current() -> ThreadLimits | None:
    """The limits set by ``configure``, or None when no entry point has called it."""
    return _limits


def _limit_blas(n: int) -> None:
    global _blas_limiter
    # OpenBLAS copies loaded later (scipy's, scikit-learn's) read the variable when they load.
    os.environ["OPENBLAS_NUM_THREADS"] = str(n)
    import numpy  # noqa: F401  (loads numpy's OpenBLAS so that the limit below reaches it)
    from threadpoolctl import threadpool_limits

    _blas_limiter = threadpool_limits(limits=n, user_api="blas")


def _limit_torch(n: int) -> None:
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(n)
        return
    # Not imported yet (most CLI commands never need it): torch sizes its pool from these when it loads,
    # on whichever thread first uses it, so importing torch here only to set a number is not needed.
    os.environ["OMP_NUM_THREADS"] = str(n)
    os.environ["MKL_NUM_THREADS"] = str(n)
