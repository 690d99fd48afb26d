"""CLI commands of annotated data: check-gold (gold files against their conversations) and train (the learned heads).

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

from pathlib import Path

import typer

from .app import app, friendly_errors


@app.command("check-gold")
@friendly_errors
def check_gold(paths: list[Path] = typer.Argument(..., help="Gold files (*.gold.json) or folders holding them."),
               quiet: bool = typer.Option(False, "--quiet", help="Print problems and the totals only.")) -> None:
    """Check gold annotations against their conversations and count what they hold (docs/gold_format.md)."""
    from ..eval.gold import check_against_conversation, find_gold_files, gold_stats, load_gold
    from ..loaders import load_conversation

    files = [f for p in paths for f in (find_gold_files(p) if p.is_dir() else [p])]
    if not files:
        raise typer.BadParameter(f"no *.gold.json under {', '.join(map(str, paths))}")
    totals: dict[str, int] = {}
    bad = 0
    for f in files:
        gold = load_gold(f)
        conv_path = gold.conversation_path()
        if conv_path is None:
            typer.secho(f"{f}: no conversation named", fg="red")
            bad += 1
            continue
        conv = load_conversation(conv_path)
        problems = check_against_conversation(gold, conv)
        stats = gold_stats(gold, conv)
        for k, v in stats.items():
            totals[k] = totals.get(k, 0) + v
        if problems:
            bad += 1
            typer.secho(f"{f}: {len(problems)} problems", fg="red")
            for line in problems:
                typer.echo(f"  {line}")
        elif not quiet:
            typer.echo(f"{f.name}: " + ", ".join(f"{v} {k}" for k, v in stats.items()))
    typer.secho(f"{len(files)} files, {bad} with problems; " + ", ".join(f"{v} {k}" for k, v in totals.items()),
                bold=True)
    if bad:
        raise typer.Exit(1)


@app.command()
@friendly_errors
def train(train_dir: Path = typer.Option(None, help="Annotated training conversations (default sample_data/train)."),
          dev_dir: Path = typer.Option(None, help="DEV conversations: thresholds and calibration only."),
          out: Path = typer.Option(None, help="Where the weights go (default: the package's own weights folder)."),
          seed: int = typer.Option(13, help="Seed of every random choice: the same data and seed, the same weights."),
          cache: Path = typer.Option(Path(".gravity_cache/train"), help="The rules' proposals per conversation."),
          thresholds_only: bool = typer.Option(False, "--thresholds-only",
                                               help="Keep the weights in --out; set their thresholds on DEV again.")
          ) -> None:
    """Train the classic extractor's learned heads (entity types, references, relations); see docs/learned.md."""
    from ..eval import train as training

    if thresholds_only:
        training.retune(out or training.WEIGHTS, dev_dir or training.DEV_DIR, cache=cache)
        return
    training.train(train_dir or training.TRAIN_DIR, dev_dir or training.DEV_DIR, out or training.WEIGHTS, seed=seed,
                   cache=cache)
