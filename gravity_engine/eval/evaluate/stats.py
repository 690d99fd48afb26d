"""Statistics over result rows: accuracy tables, ablations, gain/loss, Jaccard overlap and regression.

Pure functions of ``ResultRow`` lists (or plain sets and numbers), so each can be checked on small
hand-made inputs. Accuracy counts only judged rows (``judge_correct`` not None); judge errors and
answer errors are counted beside it, never as wrong.

* LoCoMo: J over categories 1-4; category 5 (adversarial) reported apart.
* LongMemEval: per type, micro (all questions) and macro (the mean of the per-type accuracies), and
  abstention accuracy over the ``_abs`` questions.
* Gain/loss of a variant against the baseline, paired by question: wrong->right (gain), right->wrong
  (loss), net and gain/loss ratio.
"""

from __future__ import annotations

import math
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ..statistics import category_order
from .results import ResultRow

BASELINE = "baseline"
# The order of the method's ablation table.
VARIANT_ORDER = ("baseline", "+E", "+V", "+T", "+EV", "+ET", "+VT", "full", "-rrk", "-exp", "+Sum")


@dataclass
class Acc:
    n: int = 0  # judged rows
    correct: int = 0
    errors: int = 0  # rows without a verdict (answer or judge error)

    @property
    def value(self) -> float | None:
        return self.correct / self.n if self.n else None


def accuracy(rows: Iterable[ResultRow]) -> Acc:
    acc = Acc()
    for r in rows:
        if r.judge_correct is None:
            acc.errors += 1
        else:
            acc.n += 1
            acc.correct += bool(r.judge_correct)
    return acc


def mean(values: Iterable[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def in_j(row: ResultRow) -> bool:
    """Rows that count in the headline accuracy: everything but LoCoMo's adversarial category."""
    return not (row.dataset == "locomo" and row.category == "5")


def variant_order(variants: Iterable[str]) -> list[str]:
    vs = list(OrderedDict.fromkeys(variants))
    return [v for v in VARIANT_ORDER if v in vs] + [v for v in vs if v not in VARIANT_ORDER]


@dataclass
class ScoreLine:
    """One (host, variant): headline accuracy, per category, and the side measures."""

    host: str
    variant: str
    dataset: str
    overall: Acc  # LoCoMo: J over 1-4; LongMemEval: micro
    by_category: dict[str, Acc] = field(default_factory=dict)
    macro: float | None = None  # LongMemEval: mean of per-type accuracies
    abstention: Acc | None = None  # LongMemEval _abs / LoCoMo category 5
    f1: float | None = None  # mean token F1 over the J rows
    coverage: float | None = None
    recall: float | None = None
    n_rows: int = 0


def score_line(rows: list[ResultRow], host: str, variant: str, dataset: str) -> ScoreLine:
    groups: dict[str, list[ResultRow]] = defaultdict(list)
    for r in rows:
        groups[r.category].append(r)
    j_rows = [r for r in rows if in_j(r)]
    line = ScoreLine(host=host, variant=variant, dataset=dataset, overall=accuracy(j_rows),
                     by_category={c: accuracy(groups[c]) for c in category_order(dataset, groups)},
                     f1=mean(r.f1 for r in j_rows), coverage=mean(r.answer_covered for r in j_rows),
                     recall=mean(r.evidence_recall for r in j_rows), n_rows=len(rows))
    if dataset == "longmemeval":
        line.macro = mean(a.value for c, a in line.by_category.items())
        line.abstention = accuracy(r for r in rows if r.abstention)
    elif dataset == "locomo":
        line.abstention = line.by_category.get("5")
    return line


def group_rows(rows: Iterable[ResultRow]) -> dict[tuple[str, str, str], list[ResultRow]]:
    """Rows by (dataset, host, variant)."""
    out: dict[tuple[str, str, str], list[ResultRow]] = defaultdict(list)
    for r in rows:
        out[(r.dataset, r.host, r.variant)].append(r)
    return out


def score_table(rows: Iterable[ResultRow]) -> list[ScoreLine]:
    """One ``ScoreLine`` per (dataset, host, variant), hosts in first-seen order, variants in ablation order."""
    groups = group_rows(rows)
    lines = []
    keys = list(groups)
    datasets = list(OrderedDict.fromkeys(d for d, _, _ in keys))
    for d in datasets:
        hosts = list(OrderedDict.fromkeys(h for dd, h, _ in keys if dd == d))
        for h in hosts:
            for v in variant_order(vv for dd, hh, vv in keys if dd == d and hh == h):
                lines.append(score_line(groups[(d, h, v)], h, v, d))
    return lines


# --- gain / loss -----------------------------------------------------------------------------------

@dataclass
class GainLoss:
    n: int = 0  # questions judged under both
    gains: set[str] = field(default_factory=set)  # wrong -> right
    losses: set[str] = field(default_factory=set)  # right -> wrong

    @property
    def net(self) -> int:
        return len(self.gains) - len(self.losses)

    @property
    def ratio(self) -> float | None:
        """gains / losses; inf when there are gains and no losses, None when neither."""
        if not self.losses:
            return math.inf if self.gains else None
        return len(self.gains) / len(self.losses)


def gain_loss(baseline: list[ResultRow], variant: list[ResultRow], categories: bool = True,
              only_j: bool = True) -> dict[str, GainLoss]:
    """Paired by question id: 'overall' (J rows) and, with ``categories``, one entry per category."""
    base = {r.question_id: r for r in baseline if r.judge_correct is not None}
    out: dict[str, GainLoss] = {"overall": GainLoss()}
    for r in variant:
        b = base.get(r.question_id)
        if b is None or r.judge_correct is None:
            continue
        targets = [r.category] if categories else []
        if in_j(r) or not only_j:
            targets.append("overall")
        for key in targets:
            gl = out.setdefault(key, GainLoss())
            gl.n += 1
            if r.judge_correct and not b.judge_correct:
                gl.gains.add(r.question_id)
            elif b.judge_correct and not r.judge_correct:
                gl.losses.add(r.question_id)
    return out


def jaccard(a: set, b: set) -> float | None:
    """|a & b| / |a | b|; None when both are empty (no overlap to speak of)."""
    union = a | b
    return len(a & b) / len(union) if union else None


def pairwise_jaccard(sets: dict[str, set]) -> list[tuple[str, str, float | None]]:
    names = list(sets)
    return [(x, y, jaccard(sets[x], sets[y])) for i, x in enumerate(names) for y in names[i + 1:]]


@dataclass
class Regression:
    slope: float
    intercept: float
    r2: float
    n: int
    p_value: float | None = None


def regression(xs: list[float], ys: list[float]) -> Regression | None:
    """Least-squares line of ys on xs with R² (scipy's linregress when installed); None below 2 distinct xs."""
    pairs = [(float(x), float(y)) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len({x for x, _ in pairs}) < 2:
        return None
    x = [p[0] for p in pairs]
    y = [p[1] for p in pairs]
    try:
        from scipy.stats import linregress
    except ImportError:  # numpy alone: the same fit, no p-value
        import numpy as np

        slope, intercept = np.polyfit(x, y, 1)
        pred = np.polyval([slope, intercept], x)
        ss_res = float(((np.asarray(y) - pred) ** 2).sum())
        ss_tot = float(((np.asarray(y) - np.mean(y)) ** 2).sum())
        r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
        return Regression(float(slope), float(intercept), r2, len(pairs))
    if len(pairs) == 2:  # linregress warns on two points; the line is exact
        slope = (y[1] - y[0]) / (x[1] - x[0])
        return Regression(slope, y[0] - slope * x[0], 1.0, 2, None)
    fit = linregress(x, y)
    r2 = float(fit.rvalue ** 2) if not math.isnan(fit.rvalue) else 1.0
    return Regression(float(fit.slope), float(fit.intercept), r2, len(pairs), float(fit.pvalue))


@dataclass
class HostGains:
    host: str
    baseline_acc: float | None
    variant_acc: float | None
    gain_loss: dict[str, GainLoss]

    @property
    def delta(self) -> float | None:
        if self.baseline_acc is None or self.variant_acc is None:
            return None
        return self.variant_acc - self.baseline_acc


def host_gains(rows: list[ResultRow], dataset: str, variant: str = "full") -> list[HostGains]:
    """Per host of ``dataset``: baseline and ``variant`` accuracy and the paired gain/loss sets."""
    groups = group_rows(r for r in rows if r.dataset == dataset)
    hosts = list(OrderedDict.fromkeys(h for _, h, _ in groups))
    out = []
    for h in hosts:
        base, var = groups.get((dataset, h, BASELINE)), groups.get((dataset, h, variant))
        if not base or not var:
            continue
        out.append(HostGains(h, accuracy(r for r in base if in_j(r)).value, accuracy(r for r in var if in_j(r)).value,
                             gain_loss(base, var)))
    return out


def gain_regression(gains: list[HostGains]) -> Regression | None:
    """Across hosts: the variant's gain (accuracy points) against the baseline accuracy."""
    pts = [(g.baseline_acc, g.delta) for g in gains if g.delta is not None]
    return regression([p[0] for p in pts], [p[1] for p in pts])
