"""CLI commands of annotated data: check-gold (a gold file or a folder of them, against their conversations)."""

from __future__ import annotations

from pathlib import Path

import typer

from .app import app, friendly_errors


@app.command("check-gold")
@friendly_errors
def check_gold(paths: list[Path] = typer.Argument(..., help="Gold files (*.gold.json) or folders holding them."),
               quiet: bool = typer.Option(False, "--quiet", help="Print problems and the totals only.")) -> None:
    """Check gold annotations against their conversations and count what they hold (docs/gold_format.md)."""
    from ..gold import check_against_conversation, find_gold_files, gold_stats, load_gold
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
