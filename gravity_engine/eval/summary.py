"""Measure rows summarized: per category and overall (categories 1-4), with bootstrap intervals for the app, as
tables for the terminal and as CSV files. LoCoMo categories are printed by number and our name: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial (reported apart: its gold is usually an adversarial answer or
none)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from .grounding import TEMPORAL_STAGES
from .statistics import bootstrap_ci, category_order, paired_bootstrap_ci

LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}

LONGMEMEVAL_TYPES = {"single-session-user": "SSU", "single-session-assistant": "SSA",
                     "single-session-preference": "SSP", "multi-session": "MS", "knowledge-update": "KU",
                     "temporal-reasoning": "TR"}

def category_label(category: str, dataset: str) -> str:
    if dataset == "locomo":
        return f"{category} {LOCOMO_CATEGORIES.get(category, '?')}"
    return LONGMEMEVAL_TYPES.get(category, category)

class MeasureRow(BaseModel):
    conversation: str
    question_id: str
    category: str
    category_label: str
    question: str
    gold: str
    n_evidence: int
    recall_host: float | None
    recall_expanded: float | None
    covered_host: bool | None
    covered_gravity: bool | None
    host_tokens: int
    gravity_tokens: int
    anchor_tokens: int
    n_expansions: int
    temporal_grounded: bool | None = None  # only LoCoMo category 2 with a parseable gold date
    temporal_stage: str | None = None  # the stage that lost it (TEMPORAL_STAGES), same questions
    query_path_ms: float | None = None  # Gravity's path for this question, query embedding included
    query_path_no_embed_ms: float | None = None  # the same without the query embedding
    host_search_ms: float | None = None  # the host's own search for the question at k
    expanded_search_ms: float | None = None  # the host's searches of all expansion queries


def _mean(values) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None

def summarize(rows: list[MeasureRow]) -> list[dict]:
    """Per category (plus 'overall' without LoCoMo's category 5): means of every measure and counts."""
    groups: dict[str, list[MeasureRow]] = defaultdict(list)
    for r in rows:
        groups[r.category_label].append(r)
    overall = [r for r in rows if not r.category_label.startswith("5 ")]
    out = []
    for label, items in [*sorted(groups.items()), ("overall (excl. 5)", overall)]:
        if not items:
            continue
        grounded = [r.temporal_grounded for r in items if r.temporal_grounded is not None]
        out.append({
            "category": label, "n": len(items),
            "recall_host": _mean(r.recall_host for r in items),
            "recall_expanded": _mean(r.recall_expanded for r in items),
            "coverage_host": _mean(r.covered_host for r in items),
            "coverage_gravity": _mean(r.covered_gravity for r in items),
            "temporal_grounding": _mean(grounded),
            "n_grounding": len(grounded),
            "tokens_host": _mean(r.host_tokens for r in items),
            "tokens_gravity": _mean(r.gravity_tokens for r in items),
        })
    return out

def stage_counts(rows: list[MeasureRow]) -> dict[str, int]:
    """How many temporal questions each stage lost (``TEMPORAL_STAGES``; ``grounded`` = not lost)."""
    counts = dict.fromkeys(TEMPORAL_STAGES, 0)
    for r in rows:
        if r.temporal_stage is not None:
            counts[r.temporal_stage] += 1
    return counts

def format_stages(counts: dict[str, int], label: str = "") -> str:
    """One line: each stage's count and share of the temporal questions with a dated gold."""
    n = sum(counts.values()) or 1
    return f"{label:<30}{sum(counts.values()):>5}" + "".join(
        f"{counts[s]:>9} {100 * counts[s] / n:5.1f}%" for s in TEMPORAL_STAGES)

def stages_header() -> str:
    return f"{'':<30}{'n':>5}" + "".join(f"{s[:15]:>16}" for s in TEMPORAL_STAGES)

def format_table(summary: list[dict], k: int = 10) -> str:
    def pct(v):
        return "   -  " if v is None else f"{100 * v:5.1f}%"

    head = (f"{'category':<22}{'n':>5}  {'R@' + str(k) + ' host':>10}{'R@' + str(k) + ' +exp':>10}"
            f"{'cov host':>10}{'cov +grav':>10}{'Δcov':>8}{'t-ground':>10}{'tok host':>10}{'tok grav':>10}")
    lines = [head, "-" * len(head)]
    for s in summary:
        delta = (None if s["coverage_gravity"] is None or s["coverage_host"] is None
                 else s["coverage_gravity"] - s["coverage_host"])
        d = "   -  " if delta is None else f"{100 * delta:+5.1f}"
        ground = pct(s["temporal_grounding"]) if s["n_grounding"] else "   -  "
        lines.append(f"{s['category']:<22}{s['n']:>5}  {pct(s['recall_host']):>10}{pct(s['recall_expanded']):>10}"
                     f"{pct(s['coverage_host']):>10}{pct(s['coverage_gravity']):>10}{d:>8}{ground:>10}"
                     f"{(s['tokens_host'] or 0):>10.0f}{(s['tokens_gravity'] or 0):>10.0f}")
    return "\n".join(lines)

def write_csv(rows: list[MeasureRow], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(MeasureRow.model_fields))
        writer.writeheader()
        for r in rows:
            writer.writerow(r.model_dump())
    return path

def write_summary_csv(rows: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["category"])
        writer.writeheader()
        writer.writerows(rows)
    return path

PLAIN_LOCOMO = {"1": "Multi-hop", "2": "Temporal", "3": "Open-domain", "4": "Single-hop", "5": "Adversarial"}

PLAIN_LONGMEMEVAL = {"single-session-user": "One session, the user's facts",
                     "single-session-assistant": "One session, the assistant's words",
                     "single-session-preference": "One session, a preference", "multi-session": "Across sessions",
                     "knowledge-update": "Updated facts", "temporal-reasoning": "Time reasoning"}

def plain_category(category: str, dataset: str) -> str:
    """A category as people read it: 'Temporal (LoCoMo 2)', 'Updated facts', 'Single-hop'."""
    if dataset == "locomo" and category in PLAIN_LOCOMO:
        return f"{PLAIN_LOCOMO[category]} (LoCoMo {category})"
    if dataset == "longmemeval" and category in PLAIN_LONGMEMEVAL:
        return PLAIN_LONGMEMEVAL[category]
    return str(category).replace("-", " ").replace("_", " ").capitalize() or "No category"

def summarize_with_intervals(rows: list[MeasureRow], dataset: str, small_n: int = 10, seed: int = 0) -> list[dict]:
    """Per category, then all questions: n, coverage and recall@k alone and with Gravity as bootstrap
    intervals (``statistics.Interval``), the paired gain, and ``small`` when n < ``small_n``. LoCoMo's
    adversarial category is shown but left out of the total, as in ``summarize``."""
    groups: dict[str, list[MeasureRow]] = defaultdict(list)
    for r in rows:
        groups[r.category].append(r)
    adversarial = dataset == "locomo" and "5" in groups
    total = [r for r in rows if not (dataset == "locomo" and r.category == "5")]
    label_all = "All questions" + (" but adversarial (LoCoMo 5)" if adversarial else "")
    out = []
    for key, label, items in ([(c, plain_category(c, dataset) + (" · not in the total" if dataset == "locomo"
                                                                    and c == "5" else ""), groups[c])
                               for c in category_order(dataset, groups)] + [("all", label_all, total)]):
        if not items:
            continue
        host = [r.covered_host for r in items]
        grav = [r.covered_gravity for r in items]
        out.append({
            "key": key, "label": label, "n": len(items), "small": len(items) < small_n,
            "coverage_host": bootstrap_ci(host, seed=seed), "coverage_gravity": bootstrap_ci(grav, seed=seed),
            "coverage_gain": paired_bootstrap_ci(host, grav, seed=seed),
            "recall_host": bootstrap_ci([r.recall_host for r in items], seed=seed),
            "recall_expanded": bootstrap_ci([r.recall_expanded for r in items], seed=seed),
        })
    return out
