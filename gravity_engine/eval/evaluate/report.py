"""The Markdown report of one or more results folders: tables, PNG plots and case studies.

``build_report([folder, ...], out_dir)`` writes ``out_dir/report.md`` and its plots beside it and
returns the text. Every table states the LoCoMo category mapping and that accuracy figures need a
real answer and judge model; runs against a local scripted server are flagged as such.
"""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ...errors import InputError
from ...fileio import atomic_write_text
from ...llm.guard import is_loopback_url
from ..statistics import category_order
from .items import CATEGORY_MAPPING, category_label
from .results import ResultRow, RunInfo, load_results
from .stats import (BASELINE, Acc, HostGains, ScoreLine, gain_regression, host_gains, pairwise_jaccard, score_table,
                    variant_order)

REAL_MODEL_NOTE = ("Accuracy (J) figures are only meaningful with a real answer model and a real judge model: "
                   "a scripted or toy endpoint measures the runner, not the method.")
_DATASET_TITLES = {"locomo": "LoCoMo", "longmemeval": "LongMemEval", "custom": "Custom question set"}
_MAX_CONTEXT_CHARS = 1500


@dataclass
class Run:
    folder: Path
    info: RunInfo | None
    rows: list[ResultRow]

    @property
    def scripted(self) -> bool:
        """A run against a loopback endpoint or the scripted server's model: its accuracy is not the method's."""
        info = self.info
        if info is None:
            return False
        return bool(info.endpoint and is_loopback_url(info.endpoint)) or info.answer_model == "gravity-echo"


@dataclass
class Report:
    path: Path
    markdown: str
    main_tables: dict[str, str] = field(default_factory=dict)  # dataset -> its accuracy table
    plots: list[Path] = field(default_factory=list)


def cell(text) -> str:
    """Text safe inside a Markdown table cell (data may hold pipes, newlines or HTML)."""
    s = "" if text is None else str(text)
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace(
        "\r", " ").replace("\n", " ")


def block(text: str, limit: int = _MAX_CONTEXT_CHARS) -> str:
    s = text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"
    return "```text\n" + s.replace("```", "ʼʼʼ") + "\n```"


def pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def acc_cell(a: Acc | None) -> str:
    if a is None or (a.n == 0 and a.errors == 0):
        return "–"
    if a.n == 0:
        return f"– ({a.errors} err)"
    return f"{pct(a.value)} ({a.n})"


def points(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:+.1f}"


def ratio(v: float | None) -> str:
    if v is None:
        return "–"
    return "∞" if math.isinf(v) else f"{v:.2f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _caption(dataset: str) -> str:
    parts = []
    if dataset == "locomo":
        parts.append(CATEGORY_MAPPING + " J = LLM-judge accuracy (%) over categories 1–4; (n) = judged questions.")
    elif dataset == "longmemeval":
        parts.append("LongMemEval types: SSU single-session-user, SSA single-session-assistant, SSP "
                     "single-session-preference, MS multi-session, KU knowledge-update, TR temporal-reasoning; "
                     "micro = all questions, macro = mean of the per-type accuracies, abstention = the _abs questions.")
    parts.append(REAL_MODEL_NOTE)
    return "\n".join(f"_{p}_" for p in parts)


def _categories(lines: list[ScoreLine]) -> list[str]:
    return list(OrderedDict.fromkeys(c for ln in lines for c in ln.by_category))


def accuracy_table(lines: list[ScoreLine], dataset: str) -> str:
    """Host × variant: headline accuracy, Δ vs the host's baseline, per category/type, F1, coverage, recall."""
    cats = _categories(lines)
    base = {ln.host: ln.overall.value for ln in lines if ln.variant == BASELINE}
    if dataset == "longmemeval":
        header = ["host", "variant", "micro (n)", "Δ micro", "macro"] + [category_label(dataset, c) for c in cats] + [
            "abstention", "coverage", "errors"]
    else:
        first = "J 1–4 (n)" if dataset == "locomo" else "accuracy (n)"
        header = ["host", "variant", first, "Δ vs baseline"] + [cell(category_label(dataset, c)) for c in cats] + [
            "F1", "coverage", "recall", "errors"]
    rows = []
    for ln in lines:
        b = base.get(ln.host)
        delta = points(ln.overall.value - b) if b is not None and ln.overall.value is not None and ln.variant != BASELINE else "–"
        errors = sum(a.errors for a in ln.by_category.values())
        per_cat = [acc_cell(ln.by_category.get(c)) for c in cats]
        if dataset == "longmemeval":
            rows.append([cell(ln.host), cell(ln.variant), acc_cell(ln.overall), delta, pct(ln.macro)] + per_cat + [
                acc_cell(ln.abstention), pct(ln.coverage), str(errors)])
        else:
            rows.append([cell(ln.host), cell(ln.variant), acc_cell(ln.overall), delta] + per_cat + [
                pct(ln.f1), pct(ln.coverage), pct(ln.recall), str(errors)])
    return table(header, rows)


def ablation_table(lines: list[ScoreLine], dataset: str) -> str:
    """Per host, each variant's change against the baseline in points, overall and per category."""
    cats = [c for c in _categories(lines) if not (dataset == "locomo" and c == "5")]
    header = ["host", "variant", "overall"] + [cell(category_label(dataset, c)) for c in cats]
    by_host: dict[str, dict[str, ScoreLine]] = OrderedDict()
    for ln in lines:
        by_host.setdefault(ln.host, {})[ln.variant] = ln
    rows = []
    for host, variants in by_host.items():
        base = variants.get(BASELINE)
        if base is None:
            continue
        for v in variant_order(variants):
            if v == BASELINE:
                continue
            ln = variants[v]

            def diff(a: Acc | None, b: Acc | None) -> str:
                if a is None or b is None or a.value is None or b.value is None:
                    return "–"
                return points(a.value - b.value)

            rows.append([cell(host), cell(v), diff(ln.overall, base.overall)]
                        + [diff(ln.by_category.get(c), base.by_category.get(c)) for c in cats])
    return table(header, rows) if rows else ""


def gain_loss_table(gains_by_variant: dict[str, list[HostGains]], dataset: str) -> str:
    header = ["host", "variant", "category", "n", "wrong→right", "right→wrong", "net", "ratio"]
    rows = []
    for variant, gains in gains_by_variant.items():
        for g in gains:
            keys = ["overall"] + [c for c in _order_cats(dataset, g.gain_loss) if c != "overall"]
            for key in keys:
                gl = g.gain_loss[key]
                label = "overall (J)" if key == "overall" else category_label(dataset, key)
                rows.append([cell(g.host), cell(variant), cell(label), str(gl.n), str(len(gl.gains)),
                             str(len(gl.losses)), f"{gl.net:+d}", ratio(gl.ratio)])
    return table(header, rows) if rows else ""


def _order_cats(dataset: str, gl: dict) -> list[str]:
    return category_order(dataset, [k for k in gl if k != "overall"])


# --- plots ------------------------------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


def plot_accuracy(lines: list[ScoreLine], dataset: str, path: Path) -> Path:
    """Grouped bars: per category, one bar per host/variant."""
    plt = _plt()
    cats = _categories(lines)
    series = [(f"{ln.host} · {ln.variant}", ln) for ln in lines]
    labels = ["J 1–4" if dataset == "locomo" else "overall"] + [category_label(dataset, c) for c in cats]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(labels) * max(1, len(series)) / 2.5), 4.2))
    width = 0.8 / max(1, len(series))
    for i, (name, ln) in enumerate(series):
        vals = [ln.overall.value] + [(ln.by_category[c].value if c in ln.by_category else None) for c in cats]
        xs = [j + i * width for j in range(len(labels))]
        ax.bar(xs, [100 * v if v is not None else 0 for v in vals], width, label=name)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(labels))], labels, rotation=20, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{_DATASET_TITLES.get(dataset, dataset)}: accuracy by category (needs a real model)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_gain_loss(gains_by_variant: dict[str, list[HostGains]], dataset: str, path: Path) -> Path:
    plt = _plt()
    names, g_vals, l_vals = [], [], []
    for variant, gains in gains_by_variant.items():
        for g in gains:
            names.append(f"{g.host} · {variant}")
            g_vals.append(len(g.gain_loss["overall"].gains))
            l_vals.append(-len(g.gain_loss["overall"].losses))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(names) + 2), 3.8))
    xs = range(len(names))
    ax.bar(xs, g_vals, color="#2a9d8f", label="wrong→right (gains)")
    ax.bar(xs, l_vals, color="#e76f51", label="right→wrong (losses)")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(xs), names, rotation=20, ha="right")
    ax.set_ylabel("questions")
    ax.set_title(f"{_DATASET_TITLES.get(dataset, dataset)}: gains and losses vs the host alone")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_regression(gains: list[HostGains], reg, dataset: str, variant: str, path: Path) -> Path:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.0, 3.8))
    pts = [(g.baseline_acc, g.delta, g.host) for g in gains if g.delta is not None]
    ax.scatter([100 * p[0] for p in pts], [100 * p[1] for p in pts])
    for x, y, h in pts:
        ax.annotate(h, (100 * x, 100 * y), fontsize=8, xytext=(3, 3), textcoords="offset points")
    if reg is not None:
        xs = [min(p[0] for p in pts), max(p[0] for p in pts)]
        ax.plot([100 * x for x in xs], [100 * (reg.intercept + reg.slope * x) for x in xs], "--",
                label=f"slope {reg.slope:.2f}, R² {reg.r2:.2f}")
        ax.legend(fontsize=8)
    ax.set_xlabel("baseline accuracy (%)")
    ax.set_ylabel(f"gain of {variant} (points)")
    ax.set_title(f"{_DATASET_TITLES.get(dataset, dataset)}: gain vs baseline across hosts")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --- case studies -----------------------------------------------------------------------------------

def case_studies(rows: list[ResultRow], dataset: str, variant: str, n: int, seed: int) -> str:
    """For each host, up to ``n`` gains and ``n`` losses of ``variant`` against the baseline, in full."""
    out = []
    by_key = {(r.host, r.variant, r.question_id): r for r in rows if r.dataset == dataset}
    for g in host_gains(rows, dataset, variant):
        overall = g.gain_loss["overall"]
        rng = random.Random(seed)
        for kind, ids in (("Gain (wrong → right)", overall.gains), ("Loss (right → wrong)", overall.losses)):
            chosen = sorted(ids)
            chosen = sorted(rng.sample(chosen, n)) if len(chosen) > n else chosen
            for qid in chosen:
                base, var = by_key[(g.host, BASELINE, qid)], by_key[(g.host, variant, qid)]
                out.append(f"#### {kind} · {cell(g.host)} · {cell(var.category_label)} · `{cell(qid)}`\n")
                out.append(f"- **Question**: {cell(var.question)}")
                out.append(f"- **Gold**: {cell(var.gold if not var.abstention else '(not answerable: ' + (var.gold or 'adversarial') + ')')}")
                out.append(f"- **Host alone**: {cell(base.answer)} — judged {cell(base.judge_label)}")
                out.append(f"- **With Gravity ({cell(variant)})**: {cell(var.answer)} — judged {cell(var.judge_label)}")
                if var.judge_reasoning:
                    out.append(f"- **Judge's reason**: {cell(var.judge_reasoning)}")
                ids = "; ".join(f"{m}: {', '.join(v)}" for m, v in var.injected_anchor_ids.items() if v)
                out.append(f"- **Injected anchors** ({var.injected_tokens} tokens): {cell(ids) or 'none'}\n")
                if var.injected_context:
                    out.append(block(var.injected_context) + "\n")
    return "\n".join(out)


# --- the report -------------------------------------------------------------------------------------

def load_runs(folders: list[str | Path]) -> list[Run]:
    runs = []
    for folder in folders:
        info, rows = load_results(folder)
        runs.append(Run(Path(folder), info, rows))
    if not runs:
        raise InputError("give at least one results folder")
    return runs


def _runs_table(runs: list[Run]) -> str:
    header = ["folder", "dataset", "host", "variants", "answer model", "judge model", "endpoint", "rows",
              "answer errors", "judge errors"]
    rows = []
    for r in runs:
        i = r.info
        rows.append([cell(r.folder), cell(i.dataset if i else "?"), cell(i.host if i else "?"),
                     cell(", ".join(variant_order({x.variant for x in r.rows}))),
                     cell(i.answer_model if i else "?") + (" **(scripted)**" if r.scripted else ""),
                     cell(i.judge_model if i else "?"), cell(i.endpoint if i else "?"), str(len(r.rows)),
                     str(sum(1 for x in r.rows if x.answer_error)), str(sum(1 for x in r.rows if x.judge_error))])
    return table(header, rows)


def build_report(folders: list[str | Path], out_dir: str | Path, *, variant: str = "full", cases: int = 3,
                 seed: int = 0, plots: bool = True) -> Report:
    """Read the results folders, write ``out_dir/report.md`` (+ PNG plots), return the report."""
    runs = load_runs(folders)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = [r for run in runs for r in run.rows]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    md = ["# Gravity evaluation report", "", f"Generated {stamp} from {len(runs)} results folder(s).", "",
          f"> **{REAL_MODEL_NOTE}**", ""]
    if any(r.scripted for r in runs):
        md += ["> ⚠ At least one run below used a local scripted server (loopback endpoint): its accuracy "
               "numbers are fixtures of a test, not measurements of Gravity.", ""]
    md += ["## Runs", "", _runs_table(runs), ""]
    report = Report(path=out / "report.md", markdown="")
    for dataset in OrderedDict.fromkeys(r.dataset for r in rows):
        drows = [r for r in rows if r.dataset == dataset]
        lines = [ln for ln in score_table(drows)]
        title = _DATASET_TITLES.get(dataset, dataset)
        md += [f"## {title}", "", "### Accuracy by host and variant", "", _caption(dataset), ""]
        main = accuracy_table(lines, dataset)
        report.main_tables[dataset] = main
        md += [main, ""]
        variants = variant_order({r.variant for r in drows})
        if plots and lines:
            p = plot_accuracy(lines, dataset, out / f"{dataset}_accuracy.png")
            report.plots.append(p)
            md += [f"![{title} accuracy by category]({p.name})", ""]
        abl = ablation_table(lines, dataset)
        if abl and len(variants) > 2:
            md += ["### Ablations: change against the host alone (points)", "", _caption(dataset), "", abl, ""]
        others = [v for v in variants if v != BASELINE]
        gains = {v: host_gains(drows, dataset, v) for v in others}
        gains = {v: g for v, g in gains.items() if g}
        if gains:
            md += ["### Gains and losses against the host alone", "",
                   "_Paired by question: wrong→right = gains, right→wrong = losses, ratio = gains / losses; "
                   "'overall (J)' leaves LoCoMo category 5 out._", _caption(dataset), "",
                   gain_loss_table(gains, dataset), ""]
            if plots:
                p = plot_gain_loss(gains, dataset, out / f"{dataset}_gain_loss.png")
                report.plots.append(p)
                md += [f"![{title} gains and losses]({p.name})", ""]
        primary = variant if variant in gains else (others[0] if others and others[0] in gains else None)
        hg = gains.get(primary, []) if primary else []
        if len(hg) >= 2:
            md += [f"### Overlap across hosts ({primary})", "",
                   "_Jaccard similarity of the sets of questions each host gains (and loses) with Gravity._",
                   _caption(dataset), ""]
            jg = pairwise_jaccard({g.host: g.gain_loss["overall"].gains for g in hg})
            jl = {(a, b): v for a, b, v in pairwise_jaccard({g.host: g.gain_loss["overall"].losses for g in hg})}
            md += [table(["host A", "host B", "Jaccard of gains", "Jaccard of losses"],
                         [[cell(a), cell(b), "–" if v is None else f"{v:.2f}",
                           "–" if jl[(a, b)] is None else f"{jl[(a, b)]:.2f}"] for a, b, v in jg]), ""]
            reg = gain_regression(hg)
            md += [f"### Gain against baseline accuracy across hosts ({primary})", "", _caption(dataset), ""]
            if reg is None:
                md += ["_Not enough distinct baseline accuracies for a regression._", ""]
            else:
                note = " (two hosts: the line passes through both points, R² is trivially 1)" if reg.n == 2 else ""
                md += [table(["hosts", "slope (points of gain per point of baseline)", "intercept (points)", "R²",
                              "p-value"],
                             [[str(reg.n), f"{reg.slope:.3f}", f"{100 * reg.intercept:.1f}", f"{reg.r2:.3f}",
                               "–" if reg.p_value is None else f"{reg.p_value:.3f}"]]) + note, ""]
                if plots:
                    p = plot_regression(hg, reg, dataset, primary, out / f"{dataset}_regression.png")
                    report.plots.append(p)
                    md += [f"![{title} gain vs baseline]({p.name})", ""]
        if primary and cases > 0:
            text = case_studies(drows, dataset, primary, cases, seed)
            if text:
                md += [f"### Case studies ({primary} vs the host alone)", "",
                       f"_A seeded sample of up to {cases} gains and {cases} losses per host, with the anchors "
                       "that were injected. " + REAL_MODEL_NOTE + "_", "", text, ""]
    report.markdown = "\n".join(md)
    atomic_write_text(report.path, report.markdown)
    return report
