"""CLI command ``build-ideal``: LoCoMo's own annotations as anchors, through the real llm pipeline.

A measuring instrument (what the query path does with near-perfect anchors), not a model: see
``gravity_engine.testing.ideal_locomo``.

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from ..errors import ConfigError
from .app import app, friendly_errors


def _summary_line(cid: str, report: dict, seconds: float) -> str:
    c = report["counts"]
    stats = report.get("stats", {})
    invented = int(stats.get("invented_source_ids", 0))
    invented += int(report.get("source_ids", {}).get("dropped_nonexistent", 0))
    ver = report.get("verification") or {}
    share = f"{ver['share']:.1%}" if ver.get("share") is not None else "-"
    llm = (report.get("llm") or {}).get("total", {})
    return (f"{cid}: {c['entities']} entities, {c['events']} events, {c['topics']} topics from "
            f"{report['utterances']} utterances in {seconds:.1f} s; {invented} invented ids dropped; "
            f"verified {share}; {llm.get('calls', 0)} calls, {llm.get('cache_hits', 0)} cache hits")


@app.command("build-ideal")
@friendly_errors
def build_ideal(
    input_path: Path = typer.Argument(..., help="LoCoMo's locomo10.json (read at run time; never copied)."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c", help="One sample id, e.g. conv-26."),
    all_: bool = typer.Option(False, "--all", help="Every conversation of the file, one store each under --runs."),
    out: Optional[Path] = typer.Option(None, "--out", "-o",
                                       help="Store directory for --conversation (default: <runs>/<id>)."),
    runs: Path = typer.Option(Path("runs/ideal"), "--runs", help="Parent directory of the stores."),
    force: bool = typer.Option(False, "--force", help="--all: rebuild stores that exist already (default: skip them)."),
    embedding_model: str = typer.Option("all-MiniLM-L6-v2", help="sentence-transformers model name or local path."),
    batch_size: int = typer.Option(20, min=1, max=500, help="Utterances per extraction batch."),
) -> None:
    """Ideal anchors from LoCoMo's annotations (observation facts, per-session event summaries with the session
    date, session summaries), answered by a scripted endpoint on 127.0.0.1 through the real llm pipeline.
    A measuring instrument: what the query path does with near-perfect anchors; never a model."""
    from tqdm import tqdm

    from ..build import BuildProgress
    from ..embed import get_embedder
    from ..loaders import load_conversations
    from ..store import ANCHORS_FILE
    from ..testing.ideal_locomo import build_ideal_store, pick_sample, read_locomo_samples

    if all_ == bool(conversation):
        raise ConfigError("choose one conversation with --conversation ID, or every one with --all")
    if all_ and out is not None:
        raise ConfigError("--out names one store; with --all the stores go under --runs")
    samples = read_locomo_samples(input_path)
    if conversation:
        todo = [(pick_sample(samples, conversation, str(input_path)), out or runs / conversation)]
    else:
        todo = [(s, runs / str(s["sample_id"])) for s in samples]
    convs = {c.id: c for c in load_conversations(input_path, fmt="locomo",
                                                 conversation=conversation if conversation else None)}
    embedder = None
    built = skipped = 0
    started = time.perf_counter()
    for sample, target in todo:
        cid = str(sample["sample_id"])
        if all_ and not force and (target / ANCHORS_FILE).is_file():
            typer.echo(f"{cid}: {target} exists, skipped (--force rebuilds it)")
            skipped += 1
            continue
        if embedder is None:
            embedder = get_embedder(embedding_model)
        bar = tqdm(total=1, unit="batch", desc=f"{cid} extract", leave=False)

        def on_progress(p: BuildProgress, bar=bar, cid=cid) -> None:
            if bar.total != p.total:
                bar.total = p.total
            bar.set_description(f"{cid} {p.stage}")
            bar.n = p.done
            bar.refresh()

        t0 = time.perf_counter()
        try:
            store = build_ideal_store(input_path, cid, target, embedder=embedder, progress=on_progress, sample=sample,
                                      conversation=convs.get(cid), batch_size=batch_size)
        finally:
            bar.close()
        built += 1
        typer.echo(_summary_line(cid, store.report, time.perf_counter() - t0) + f" -> {target}")
        failed = store.report["batches"]["failed"]
        if failed:
            typer.secho(f"{cid}: {len(failed)} batches failed (first: {failed[0]['error']}); run again to retry",
                        fg=typer.colors.YELLOW, err=True)
            raise typer.Exit(code=1)
    if all_:
        typer.echo(f"done: {built} built, {skipped} skipped in {time.perf_counter() - started:.1f} s")
