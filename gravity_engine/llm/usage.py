"""Usage counters per prompt name: what a build report and the app's cost summary show."""

from __future__ import annotations

import threading

from pydantic import BaseModel


class PromptUsage(BaseModel):
    calls: int = 0  # logical calls answered by the endpoint (cache hits excluded)
    requests: int = 0  # HTTP requests sent, retries and repairs included
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_time_s: float = 0.0
    failures: int = 0  # calls that raised after all retries
    retries: int = 0
    repairs: int = 0  # calls that needed the repair round for invalid JSON

    def add(self, other: "PromptUsage") -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class UsageMeter:
    """Thread-safe accumulation of ``PromptUsage`` per prompt name."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_prompt: dict[str, PromptUsage] = {}

    def record(self, prompt: str, delta: PromptUsage) -> None:
        with self._lock:
            self._by_prompt.setdefault(prompt, PromptUsage()).add(delta)

    def by_prompt(self) -> dict[str, PromptUsage]:
        with self._lock:
            return {k: v.model_copy() for k, v in self._by_prompt.items()}

    def total(self) -> PromptUsage:
        total = PromptUsage()
        for usage in self.by_prompt().values():
            total.add(usage)
        return total

    def reset(self) -> None:
        with self._lock:
            self._by_prompt.clear()
