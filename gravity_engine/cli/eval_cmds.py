"""CLI commands of the benchmark runner: evaluate (answers + LLM judge, resumable) and report (tables, plots).

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .app import app, friendly_errors


def _accuracy_summary(out: Path) -> str:
    from ..eval.evaluate.items import CATEGORY_MAPPING
    from ..eval.evaluate.report import REAL_MODEL_NOTE, accuracy_table
    from ..eval.evaluate.results import load_results
    from ..eval.evaluate.stats import score_table

    _, rows = load_results(out)
    if not rows:
        return ""
    parts = []
    for dataset in dict.fromkeys(r.dataset for r in rows):
        lines = score_table(r for r in rows if r.dataset == dataset)
        parts.append(accuracy_table(lines, dataset))
        if dataset == "locomo":
            parts.append(CATEGORY_MAPPING)
    parts.append(REAL_MODEL_NOTE)
    return "\n".join(parts)


def _judge_prompt_label(settings) -> str:
    from ..eval.evaluate.judge import judge_prompt, load_judge_prompt

    if settings.judge_prompt is not None:
        return f"{load_judge_prompt(settings.judge_prompt).id} (from {settings.judge_prompt})"
    return judge_prompt(settings.dataset).id


@app.command()
@friendly_errors
def evaluate(
    dataset: str = typer.Argument(..., help="locomo, longmemeval, or custom (any conversation file + --questions)."),
    path: Path = typer.Argument(..., help="The dataset file, e.g. ../shared/data/locomo10.json."),
    host: str = typer.Option("dense", help="Memory system under Gravity: dense, bm25 or fullcontext."),
    variants: str = typer.Option("baseline,full", help="Comma-separated: baseline, full (+EVT), paper, +E, +V, +T, +EV, +ET, "
                                                       "+VT, -rrk, -exp, +Sum. Gain/loss needs baseline."),
    out: Optional[Path] = typer.Option(None, help="Results folder (default results/<dataset>-<host>); rerun to resume."),
    stores: Path = typer.Option(Path("runs"), help="Anchor stores, one folder per conversation (built when missing; "
                                                   "shared with `measure --runs`)."),
    backend: str = typer.Option("classic", help="Backend for stores that must be built: classic or llm."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c", help="Only this conversation (e.g. conv-26) "
                                                                                  "or LongMemEval question id."),
    questions: Optional[Path] = typer.Option(None, help="custom: the questions JSON (default <file>.questions.json)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N questions."),
    sample: Optional[int] = typer.Option(None, min=1, help="A seeded random sample of N questions (file order kept)."),
    seed: int = typer.Option(0, help="Seed of --sample and of the report's case studies."),
    concurrency: int = typer.Option(4, min=1, max=64, help="Answer/judge calls in flight (1 = strictly sequential)."),
    answer_model: Optional[str] = typer.Option(None, help="Answer model (default GRAVITY_LLM_MODEL, else gpt-4o-mini)."),
    judge_model: Optional[str] = typer.Option(None, help="Judge model (default GRAVITY_JUDGE_MODEL, else the "
                                                         "benchmark's own judge: gpt-4o for longmemeval, gpt-4o-mini "
                                                         "for locomo and custom)."),
    judge_prompt: Optional[Path] = typer.Option(None, "--judge-prompt", help="A text file with any published judge's "
                                                "exact prompt, placeholders {question}, {gold}, {answer} and optionally "
                                                "{question_type} (literal braces doubled); see docs/judging.md."),
    adversarial: bool = typer.Option(True, "--adversarial/--no-adversarial", help="LoCoMo category 5: run it "
                                     "(reported apart, never in J) or skip it."),
    k: Optional[int] = typer.Option(None, min=1, help="Memories the host returns (default 10)."),
    budget: Optional[int] = typer.Option(None, min=50, help="Equal budget: context tokens for memories + anchors, the "
                                         "same with and without Gravity (default: the host's k memories, anchors on top)."),
    anchor_share: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="With --budget: most of it the anchors "
                                                 "take (default: the query settings')."),
    retry_errors: bool = typer.Option(False, help="Also redo rows whose judge failed (answer errors are always redone)."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Serve repeated calls from the disk LLM cache."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (rows, calls, token estimate) and stop."),
    workers: Optional[int] = typer.Option(None, min=0, help="Build missing stores first with N worker processes "
                                          "(0 = one per core); see build-all."),
) -> None:
    """Answer every question with each variant, judge each answer with an LLM, append one row per
    (question, variant) to OUT/results.jsonl. Needs an OpenAI-compatible endpoint (GRAVITY_LLM_BASE_URL /
    GRAVITY_LLM_API_KEY); accuracy figures are only meaningful with a real model."""
    from tqdm import tqdm

    from ..errors import ConfigError
    from ..eval.evaluate.runner import EvalSettings, make_eval_clients, plan_evaluation, run_evaluation

    names = [v.strip() for v in variants.split(",") if v.strip()]
    out = out or Path("results") / f"{dataset.lower()}-{host.lower()}"
    settings = EvalSettings(dataset=dataset.lower(), path=path, out=out, host=host, variants=names, stores=stores,
                            backend=backend, conversation=conversation, questions=questions, limit=limit,
                            sample=sample, seed=seed, concurrency=concurrency, include_adversarial=adversarial,
                            host_k=k, budget=budget, anchor_share=anchor_share, retry_errors=retry_errors,
                            judge_prompt=judge_prompt)
    plan = plan_evaluation(settings)
    typer.echo(plan.describe())
    try:
        answer_llm, judge_llm = make_eval_clients(answer_model, judge_model, cache=cache, dataset=settings.dataset)
    except ConfigError:
        if not dry_run:
            raise
        typer.echo("  models: no endpoint configured (set GRAVITY_LLM_BASE_URL or GRAVITY_LLM_API_KEY to run)")
        return
    _echo_models(settings, plan, answer_llm, judge_llm)
    if dry_run:
        return
    if plan.to_build:
        from ..scale.run import build_stores_first

        build_stores_first(plan.conversations_to_build(), settings.stores, workers, settings.backend, typer.echo)
    if not plan.todo:
        typer.echo("nothing to do: every row is already in the results file")
    bar = tqdm(total=len(plan.items) * len(plan.variants), initial=plan.n_done, unit="row", desc="evaluating")

    def progress(done: int, total: int) -> None:
        bar.n = done
        bar.refresh()

    summary = run_evaluation(settings, answer_llm, judge_llm, progress=progress, plan=plan, echo=bar.write)
    bar.close()
    _echo_done(summary, out)


def _echo_models(settings, plan, answer_llm, judge_llm) -> None:
    typer.echo(f"  answer model: {answer_llm.config.model}; judge model: {judge_llm.config.model}; "
               f"endpoint: {answer_llm.config.endpoint_label()}")
    typer.echo(f"  judge prompt: {_judge_prompt_label(settings)}"
               + ("; +Sum: model-written batch summaries (made once, kept beside each store)"
                  if any(v == "+Sum" for v in plan.variants) else ""))


def _echo_done(summary, out: Path) -> None:
    """What the run wrote and spent, the accuracy table, and how to get the report."""
    use = summary.usage
    calls = sum(use.get(k, {}).get("total", {}).get("calls", 0) for k in ("answer", "judge"))
    hits = sum(use.get(k, {}).get("total", {}).get("cache_hits", 0) for k in ("answer", "judge"))
    tokens = sum(use.get(k, {}).get("total", {}).get("prompt_tokens", 0)
                 + use.get(k, {}).get("total", {}).get("completion_tokens", 0) for k in ("answer", "judge"))
    typer.echo(f"\n{summary.rows_written} rows written to {summary.results_path} in {summary.wall_s:.1f} s "
               f"({summary.answer_errors} answer errors, {summary.judge_errors} judge errors); "
               f"{calls} endpoint calls, {hits} cache hits, {tokens:,} tokens")
    table = _accuracy_summary(out)
    if table:
        typer.echo("\n" + table)
    typer.echo(f"\nReport: python -m gravity_engine report {out}")


@app.command()
@friendly_errors
def report(
    folders: List[Path] = typer.Argument(..., help="Results folders written by `evaluate` (one per dataset and host)."),
    out: Optional[Path] = typer.Option(None, help="Where report.md and its plots go (default <parent>/report)."),
    variant: str = typer.Option("full", help="The variant whose gains and losses the overlap, regression and case "
                                             "studies look at."),
    cases: int = typer.Option(3, min=0, help="Case studies per host: this many gains and as many losses."),
    seed: int = typer.Option(0, help="Seed of the case-study sample."),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="Draw PNG plots (matplotlib)."),
) -> None:
    """Tables (accuracy per host × variant and category, ablations, gain/loss, Jaccard, regression),
    plots and case studies as a Markdown report."""
    from ..eval.evaluate.report import build_report
    from ..query.config import get_variant

    target = out or Path(folders[0]).resolve().parent / "report"
    rep = build_report(folders, target, variant=get_variant(variant).variant, cases=cases, seed=seed, plots=plots)
    for dataset, table in rep.main_tables.items():
        typer.secho(f"\n{dataset}", bold=True)
        typer.echo(table)
    typer.echo(f"\nReport written to {rep.path}" + (f" with {len(rep.plots)} plot(s)" if rep.plots else ""))
