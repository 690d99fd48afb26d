"""Usage counters per prompt name: what a build report and the app's cost summary show."""

from __future__ import annotations

import threading

from pydantic import BaseModel


class PromptUsage(BaseModel):
    calls: int = 0  # logical calls answered by the endpoint (cache hits excluded)
    requests: int = 0  # HTTP requests sent: every attempt, failed or not, retries, repairs and fallbacks included
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_time_s: float = 0.0
    failures: int = 0  # calls that raised after all retries
    retries: int = 0
    repairs: int = 0  # calls that needed the repair round for invalid JSON
    timeouts: int = 0  # attempts abandoned because no token came for ``timeout`` seconds
    format_fallbacks: int = 0  # attempts whose response_format the endpoint refused (the next mode followed)
    busy: int = 0  # attempts given up on a busy server: a stream stalled before its first token, or cut short
    stream_fallbacks: int = 0  # attempts whose ``stream: true`` the endpoint refused (asked again unstreamed)

    def add(self, other: "PromptUsage") -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> str:
        """One line for reports: every request sent is counted, answered or not."""
        return usage_summary(self.model_dump())


def usage_summary(u: dict) -> str:
    """``PromptUsage`` fields (or a report's dict of them) as one line that never hides a failed request."""
    get = lambda k: int(u.get(k, 0) or 0)  # noqa: E731
    failed = [f"{get('failures')} failed"] if get("failures") else []
    extra = [f"{get(k)} {label}" for k, label in (("retries", "retries"), ("timeouts", "timeouts"),
                                                   ("busy", "busy-server drops"),
                                                   ("format_fallbacks", "format fallbacks"),
                                                   ("stream_fallbacks", "stream fallbacks"),
                                                   ("repairs", "repairs")) if get(k)]
    head = f"{get('requests')} requests for {get('calls') + get('failures')} calls ({get('calls')} answered"
    return (f"{', '.join([head] + failed + extra)}), {get('cache_hits')} cache hits, "
            f"{get('prompt_tokens'):,} prompt + {get('completion_tokens'):,} completion tokens")


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
