"""The evaluation page's headline, in words a stakeholder reads right: what is measured, over how many
questions, which were left out and why, and whether the slice is big enough to quote a gain."""

from __future__ import annotations

from typing import Any

# Below this many questions in the total the headline shows no gain: one question moves it by 100 points.
HEADLINE_MIN_N = 20
MEASURE_NAME = "Holds the gold answer"
MEASURE_EXPLAINED = ("The share of questions whose context (the prompt the host's model would read) holds every "
                     "part of the gold answer in one line, at the same token budget with and without Gravity. "
                     "Not answer accuracy: no model answered here.")


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 question', '50 questions'."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def excluded_count(categories: list[str], dataset: str) -> int:
    """How many questions of a slice are measured but left out of the total (LoCoMo's adversarial category)."""
    return sum(1 for c in categories if dataset == "locomo" and str(c) == "5")


def run_label(categories: list[str], dataset: str) -> str:
    """The run button's words: how many questions and how many of them count toward the total."""
    n = len(categories)
    out = excluded_count(categories, dataset)
    text = f"Run on {plural(n, 'question')}"
    return text + (f" ({n - out} in the total, {out} adversarial shown apart)" if out else "")


def headline(summary: list[dict[str, Any]], categories: list[str], dataset: str,
             min_n: int = HEADLINE_MIN_N) -> dict[str, Any]:
    """What the headline says. ``summary`` is ``eval.summary.summarize_with_intervals`` (the total last), ``categories``
    those of the questions measured. Keys: ``n`` (in the total), ``asked``, ``excluded`` (measured, shown apart), ``counts`` (a line
    for beside the numbers), ``show_gain`` (False below ``min_n``) and ``warning`` (the small-n note, or "")."""
    total = summary[-1] if summary else {"n": 0}
    n = int(total["n"])
    asked = len(categories)
    excluded = excluded_count(categories, dataset)
    counts = f"n = {n}" + (f" of {asked} measured; {excluded} adversarial (LoCoMo category 5) shown apart, not in "
                           "the total" if excluded else "")
    small = n < min_n
    warning = (f"Only {plural(n, 'question')} in the total: too few to quote a gain (one question moves it by "
               f"{100 / max(n, 1):.0f} points). Run at least {min_n}." if small else "")
    return {"n": n, "asked": asked, "excluded": excluded, "counts": counts, "show_gain": not small and n > 0,
            "warning": warning}
