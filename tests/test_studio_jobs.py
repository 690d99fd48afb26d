"""studio's background work: the BackgroundJob base both app jobs share, and the embedder loaded once however
many threads ask for it while it loads."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from functools import lru_cache

from app_services import studio
from gravity_engine.errors import GravityError


@dataclass
class _StepJob(studio.BackgroundJob):
    """Counts steps until cancelled or told to fail."""

    steps: int = 0
    fail_with: Exception | None = None
    step_done: threading.Event = field(default_factory=threading.Event)

    def _work(self, limit: int) -> None:
        while self.steps < limit:
            if self._cancel.is_set():
                self.cancelled = True
                return
            if self.fail_with is not None:
                raise self.fail_with
            self.steps += 1
            self.step_done.set()
            time.sleep(0.01)


def test_a_job_reports_its_failure_instead_of_dying_with_its_thread():
    job = _StepJob(fail_with=GravityError("the store folder is gone"))
    job._start("t", 10)
    job.join(10)
    assert not job.running and job.finished is not None and job.error == "the store folder is gone"
    job = _StepJob(fail_with=KeyError("x"))
    job._start("t", 10)
    job.join(10)
    assert job.error == "KeyError: 'x'"


def test_a_cancelled_job_stops_and_a_restart_clears_the_flags():
    job = _StepJob()
    job._start("t", 10_000)
    assert job.step_done.wait(10)
    job.cancel()
    job.join(10)
    assert job.cancelled and not job.running and job.steps < 10_000
    job._start("t", job.steps + 3)  # resume: the cancel flag and the outcome are reset
    job.join(10)
    assert not job.cancelled and job.error is None and job.finished is not None


def test_both_app_jobs_are_background_jobs():
    assert issubclass(studio.BuildJob, studio.BackgroundJob) and issubclass(studio.EvaluationJob, studio.BackgroundJob)


def test_the_embedder_loads_once_when_threads_ask_while_it_loads(monkeypatch):
    import gravity_engine.embed as embed

    loads = []

    @lru_cache(maxsize=4)
    def slow_get_embedder(model: str):
        loads.append(model)
        time.sleep(0.3)  # a model load takes seconds: the other threads ask meanwhile
        return object()

    monkeypatch.setattr(embed, "get_embedder", slow_get_embedder)
    got = []
    threads = [threading.Thread(target=lambda: got.append(embed.embedder_for("some-model"))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert loads == ["some-model"] and len(got) == 3 and len({id(g) for g in got}) == 1


def test_the_preload_freezes_the_heap_it_leaves_behind(monkeypatch):
    """Streamlit collects garbage after every script run; after the preload, what it loaded is frozen out of the
    collector's walk (a full collection over torch and spaCy took 0.25 s of each rerun)."""
    import gc

    monkeypatch.setattr(studio, "_PAGE_LIBRARIES", ())
    monkeypatch.setattr(studio, "_WARMED", set())
    gc.unfreeze()
    try:
        studio.load_embedder_soon("fake-embedder-preload", dim=8, delay=0)
        deadline = time.monotonic() + 30
        while gc.get_freeze_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
