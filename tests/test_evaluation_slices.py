"""Evaluation slices (seeded random, stratified) and bootstrap intervals."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from gravity_engine.eval.statistics import bootstrap_ci, paired_bootstrap_ci, sample_slice


def _items():
    cats = ["1"] * 30 + ["2"] * 60 + ["3"] * 8 + ["4"] * 2
    return [SimpleNamespace(id=f"q{i}", category=c) for i, c in enumerate(cats)]


def test_stratified_slice_keeps_shares_and_every_category():
    got = sample_slice(_items(), 20, "stratified", seed=1)
    assert len(got) == 20
    counts = Counter(q.category for q in got)
    assert counts == {"1": 6, "2": 12, "3": 1, "4": 1}  # shares 30/60/8/2 of 100, every category at least once
    ids = [int(q.id[1:]) for q in got]
    assert ids == sorted(ids), "kept in file order"


def test_random_slice_is_seeded_and_not_the_first_n():
    a = sample_slice(_items(), 10, "random", seed=7)
    assert a == sample_slice(_items(), 10, "random", seed=7)
    assert a != sample_slice(_items(), 10, "random", seed=8)
    assert [q.id for q in a] != [f"q{i}" for i in range(10)]
    assert [q.id for q in sample_slice(_items(), 3, "first")] == ["q0", "q1", "q2"]


@pytest.mark.parametrize("n", [1, 3, 4, 99, 100, 150])
def test_slice_sizes(n):
    assert len(sample_slice(_items(), n, "stratified", seed=0)) == min(n, 100)


def test_bootstrap_interval_holds_the_mean_and_narrows_with_n():
    small = bootstrap_ci([True, False] * 5)
    large = bootstrap_ci([True, False] * 200)
    assert small.low < 0.5 < small.high and small.n == 10
    assert (large.high - large.low) < (small.high - small.low) / 3
    assert bootstrap_ci([]).value is None and bootstrap_ci([1, 1, 1]).low == 1.0


def test_paired_interval_of_a_gain():
    host = [False] * 20 + [True] * 20
    gravity = [True] * 10 + [False] * 10 + [True] * 20  # +10 of 40 questions
    ci = paired_bootstrap_ci(host, gravity, seed=3)
    assert ci.value == pytest.approx(0.25) and 0 < ci.low < 0.25 < ci.high
