"""Statistics any evaluation uses, of plain numbers and items: the order categories are shown in, question
slices (seeded, stratified by category), and bootstrap intervals for a mean and a paired difference."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import numpy as np

LOCOMO_ORDER = ("1", "2", "3", "4", "5")
LONGMEMEVAL_ORDER = ("single-session-user", "single-session-assistant", "single-session-preference",
                     "multi-session", "knowledge-update", "temporal-reasoning")


def category_order(dataset: str, categories: Iterable[str]) -> list[str]:
    known = {"locomo": LOCOMO_ORDER, "longmemeval": LONGMEMEVAL_ORDER}.get(dataset, ())
    cats = set(categories)
    return [c for c in known if c in cats] + sorted(cats - set(known))



SLICES = ("stratified", "random", "first")


def sample_slice(items: list, n: int, how: str = "stratified", seed: int = 0, key=lambda item: item.category) -> list:
    """``n`` of ``items`` in their original order: a seeded random sample, a seeded sample stratified by
    ``key`` (each group's share kept, every group at least once when ``n`` allows), or the first ``n``."""
    if how not in SLICES:
        raise ValueError(f"unknown slice {how!r}; choose one of {', '.join(SLICES)}")
    n = max(0, min(int(n), len(items)))
    if how == "first" or n == len(items):
        return list(items[:n])
    rng = random.Random(seed)
    if how == "random":
        chosen = set(rng.sample(range(len(items)), n))
        return [x for i, x in enumerate(items) if i in chosen]
    groups: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[str(key(item))].append(i)
    names = sorted(groups)
    # Largest-remainder allocation of n over the groups' shares; a floor of one when there is room for all.
    floor = 1 if n >= len(names) else 0
    exact = {g: n * len(groups[g]) / len(items) for g in names}
    take = {g: min(len(groups[g]), max(floor, int(exact[g]))) for g in names}
    for g in sorted(names, key=lambda g: (-(exact[g] - int(exact[g])), g)):
        if sum(take.values()) >= n:
            break
        if take[g] < len(groups[g]):
            take[g] += 1
    while sum(take.values()) > n:  # floors may overshoot: trim the largest groups
        g = max(names, key=lambda g: (take[g], g))
        take[g] -= 1
    while sum(take.values()) < n:  # small groups may be exhausted: fill from the others
        g = next(g for g in sorted(names, key=lambda g: -len(groups[g])) if take[g] < len(groups[g]))
        take[g] += 1
    chosen = {i for g in names for i in rng.sample(groups[g], take[g])}
    return [x for i, x in enumerate(items) if i in chosen]


@dataclass
class Interval:
    value: float | None  # the mean over the sample
    low: float | None  # bootstrap percentile bounds (None when the sample is empty)
    high: float | None
    n: int


def bootstrap_ci(values: Iterable[float | bool | None], level: float = 0.95, n_boot: int = 2000,
                 seed: int = 0) -> Interval:
    """Mean with a percentile bootstrap interval (``n_boot`` resamples, seeded); Nones are left out."""
    x = np.array([float(v) for v in values if v is not None], dtype=float)
    if not len(x):
        return Interval(None, None, None, 0)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(n_boot, len(x)))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    return Interval(float(x.mean()), float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail)),
                    len(x))


def paired_bootstrap_ci(a: Iterable[float | bool | None], b: Iterable[float | bool | None], level: float = 0.95,
                        n_boot: int = 2000, seed: int = 0) -> Interval:
    """Mean of b - a over the pairs where both are known, with a bootstrap interval that resamples pairs
    (the same questions on both sides, so their shared difficulty cancels)."""
    diffs = [float(y) - float(x) for x, y in zip(a, b) if x is not None and y is not None]
    return bootstrap_ci(diffs, level, n_boot, seed)
