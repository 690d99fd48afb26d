"""Token F1, accuracy tables, gain/loss, Jaccard and regression on small hand-made inputs with known results."""

from __future__ import annotations

import math

import pytest

from gravity_engine.eval.evaluate.f1 import locomo_f1, multi_part_f1, normalize_tokens, token_f1
from gravity_engine.eval.evaluate.report import accuracy_table, cell
from gravity_engine.eval.evaluate.results import ResultRow
from gravity_engine.eval.evaluate.stats import (accuracy, gain_loss, gain_regression, host_gains, jaccard, pairwise_jaccard,
                                           regression, score_table)


@pytest.mark.parametrize("text, tokens", [
    ("The Dogs, and a cat!", ["dog", "cat"]),
    ("Running   races.", ["run", "race"]),
    ("7 May, 2023", ["7", "may", "2023"]),
    ("", []),
], ids=["articles-and-punctuation", "stemming", "dates", "empty"])
def test_normalize_tokens(text, tokens):
    assert normalize_tokens(text) == tokens


@pytest.mark.parametrize("pred, gold, expected", [
    ("May 7, 2023", "7 May 2023", 1.0),
    ("the library", "a library downtown", 2 * (1 * 0.5) / 1.5),  # p=1, r=1/2
    ("painting", "pottery", 0.0),
    ("", "pottery", 0.0),
    ("dogs dogs", "dog", 2 * (0.5 * 1) / 1.5),  # multiset overlap: one of two predicted tokens matches
], ids=["same-date", "partial", "disjoint", "empty-prediction", "repeated-token"])
def test_token_f1(pred, gold, expected):
    assert token_f1(pred, gold) == pytest.approx(expected)


def test_category_rules_of_locomo_f1():
    # 1 multi-hop: best F1 per comma-separated gold part, averaged over the gold parts.
    assert multi_part_f1("pottery, camping", "camping, pottery, painting") == pytest.approx(2 / 3)
    assert locomo_f1("pottery, camping", "camping, pottery, painting", "1") == pytest.approx(2 / 3)
    # the same texts scored as one string (category 4) give plain token F1
    assert locomo_f1("pottery, camping", "camping, pottery, painting", "4") == pytest.approx(2 * 1 * (2 / 3) / (5 / 3))
    # 3 open-domain: the gold's rationale after ';' does not count
    assert locomo_f1("likely yes", "Likely yes; she mentions it twice", "3") == 1.0
    # 5 adversarial: credit for saying it is not in the conversation
    assert locomo_f1("Not mentioned in the conversation", None, "5") == 1.0
    assert locomo_f1("Yes, in Paris", None, "5") == 0.0
    assert locomo_f1("anything", None, "2") is None


def row(qid, variant, correct, category="4", host="dense", dataset="locomo", abstention=False, f1=None, error=None):
    return ResultRow(dataset=dataset, conversation_id="c", question_id=qid, category=category,
                     category_label=category, question=f"question {qid}", gold="gold", host=host, variant=variant,
                     answer="x", judge_correct=None if error else correct, judge_error=error, abstention=abstention,
                     f1=f1)


def test_accuracy_counts_judge_errors_apart_and_leaves_category_5_out_of_j():
    rows = [row("a", "baseline", True, "1"), row("b", "baseline", False, "2"), row("c", "baseline", True, "2"),
            row("d", "baseline", None, "4", error="judge reply invalid"), row("e", "baseline", True, "5"),
            row("f", "baseline", False, "5")]
    (line,) = score_table(rows)
    assert (line.overall.correct, line.overall.n, line.overall.errors) == (2, 3, 1)
    assert line.overall.value == pytest.approx(2 / 3)
    assert line.by_category["5"].value == 0.5 and line.abstention.n == 2
    assert list(line.by_category) == ["1", "2", "4", "5"]
    assert accuracy([]).value is None


def test_longmemeval_micro_and_macro_differ_as_expected():
    # Type A: 3 of 4 correct; type B: 0 of 1. Micro = 3/5 = 0.6; macro = (0.75 + 0) / 2 = 0.375.
    rows = [row(f"a{i}", "full", i < 3, "multi-session", dataset="longmemeval") for i in range(4)]
    rows.append(row("b_abs", "full", False, "temporal-reasoning", dataset="longmemeval", abstention=True))
    (line,) = score_table(rows)
    assert line.overall.value == pytest.approx(0.6)
    assert line.macro == pytest.approx(0.375)
    assert (line.abstention.correct, line.abstention.n) == (0, 1)
    assert list(line.by_category) == ["multi-session", "temporal-reasoning"]
    table = accuracy_table([line], "longmemeval")
    assert "| dense | full | 60.0 (5) |" in table and "37.5" in table and "MS" in table and "TR" in table


def test_gain_loss_is_paired_by_question():
    base = [row("a", "baseline", False, "1"), row("b", "baseline", True, "1"), row("c", "baseline", False, "2"),
            row("d", "baseline", True, "2"), row("e", "baseline", False, "5"), row("f", "baseline", True, "4")]
    full = [row("a", "full", True, "1"), row("b", "full", False, "1"), row("c", "full", True, "2"),
            row("d", "full", True, "2"), row("e", "full", True, "5"), row("f", "full", None, "4", error="x")]
    gl = gain_loss(base, full)
    assert gl["overall"].gains == {"a", "c"} and gl["overall"].losses == {"b"}  # e is category 5: not in J
    assert gl["overall"].n == 4 and gl["overall"].net == 1 and gl["overall"].ratio == 2.0
    assert gl["5"].gains == {"e"} and gl["1"].net == 0 and gl["2"].ratio == math.inf
    assert "4" not in gl  # f has no verdict under full: no pair


@pytest.mark.parametrize("a, b, expected", [
    ({1, 2, 3}, {2, 3, 4}, 0.5),
    ({1}, {2}, 0.0),
    ({1, 2}, {1, 2}, 1.0),
    (set(), set(), None),
], ids=["half", "disjoint", "equal", "both-empty"])
def test_jaccard(a, b, expected):
    assert jaccard(a, b) == expected


def test_pairwise_jaccard_covers_every_pair_once():
    pairs = pairwise_jaccard({"dense": {"q1", "q2"}, "bm25": {"q2"}, "full": {"q3"}})
    assert pairs == [("dense", "bm25", 0.5), ("dense", "full", 0.0), ("bm25", "full", 0.0)]


def test_regression_slope_intercept_and_r2():
    exact = regression([0.1, 0.2, 0.3], [0.3, 0.5, 0.7])
    assert exact.slope == pytest.approx(2.0) and exact.intercept == pytest.approx(0.1) and exact.r2 == pytest.approx(1.0)
    # xs 1..4, ys 2,4,5,4: Sxy = 3.5, Sxx = 5, SST = 4.75 -> slope 0.7, intercept 3.75 - 0.7 * 2.5 = 2.0,
    # R² = Sxy² / (Sxx * SST) = 12.25 / 23.75
    noisy = regression([1, 2, 3, 4], [2, 4, 5, 4])
    assert noisy.slope == pytest.approx(0.7) and noisy.intercept == pytest.approx(2.0)
    assert noisy.r2 == pytest.approx(12.25 / 23.75) and noisy.n == 4 and noisy.p_value is not None
    assert regression([0.5, 0.5], [0.1, 0.2]) is None  # one distinct x: no line
    two = regression([0.4, 0.6], [0.1, 0.0])
    assert two.slope == pytest.approx(-0.5) and two.r2 == 1.0


def test_gain_regression_across_hosts():
    rows = []
    # host h1: baseline 1/4, full 3/4; h2: baseline 2/4, full 3/4; h3: baseline 3/4, full 3/4.
    for host, base_right in (("h1", 1), ("h2", 2), ("h3", 3)):
        for i in range(4):
            rows.append(row(f"q{i}", "baseline", i < base_right, host=host))
            rows.append(row(f"q{i}", "full", i < 3, host=host))
    gains = host_gains(rows, "locomo", "full")
    assert [g.delta for g in gains] == pytest.approx([0.5, 0.25, 0.0])
    reg = gain_regression(gains)
    assert reg.slope == pytest.approx(-1.0) and reg.r2 == pytest.approx(1.0) and reg.n == 3


def test_cells_escape_markdown_and_html():
    assert cell("a|b\n<script>") == "a\\|b &lt;script&gt;"
