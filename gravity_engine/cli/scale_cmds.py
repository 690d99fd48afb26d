"""CLI command of corpus scale: build-all (many conversations, local workers or Ray, batch API).

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..anchors import MODULES
from .app import app, friendly_errors


@app.command("build-all")
@friendly_errors
def build_all(
    input_path: Path = typer.Argument(..., help="A dataset file with many conversations (LoCoMo, LongMemEval, ...) or a "
                                                "folder of conversation files."),
    out: Path = typer.Option(Path("runs"), "--out", "-o", help="One store per conversation goes to OUT/<conversation id>."),
    conversation: Optional[List[str]] = typer.Option(None, "--conversation", "-c", help="Only these conversations "
                                                     "(repeat the option)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N conversations."),
    workers: Optional[int] = typer.Option(None, min=0, help="Local worker processes (0 = one per core; default 1, "
                                          "this process). With --ray local: the CPUs Ray gets (default: all)."),
    ray: Optional[str] = typer.Option(None, "--ray", help="Run on Ray instead: local (start Ray on this machine), "
                                      "auto (the cluster this node joined) or a cluster ADDRESS (ray://head:10001)."),
    backend: str = typer.Option("classic", help="classic (offline, default) or llm (any OpenAI-compatible endpoint)."),
    batch_api: bool = typer.Option(False, "--batch-api", help="llm: send every extraction request through the "
                                   "endpoint's batch API (/v1/files + /v1/batches) first; rerun to resume a submitted batch."),
    poll_seconds: float = typer.Option(30.0, min=0.0, help="--batch-api: seconds between two status checks."),
    batch_size: int = typer.Option(20, min=1, max=500, help="Utterances per extraction batch."),
    modules: str = typer.Option(",".join(MODULES), help="Comma-separated anchor modules to build."),
    fused: bool = typer.Option(True, "--fused/--separate", help="llm: one call per batch for all modules, or one per module."),
    model: Optional[str] = typer.Option(None, help="llm: model name (default: $GRAVITY_LLM_MODEL)."),
    embedding_model: str = typer.Option("all-MiniLM-L6-v2", help="sentence-transformers model name or local path."),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Check every anchor field against its sources."),
    force: bool = typer.Option(False, "--force", help="Rebuild stores that are already complete (checkpoints still apply)."),
) -> None:
    """Build one anchor store per conversation of a dataset or folder, in parallel; run it again to resume
    (complete stores are skipped, unfinished ones continue from their checkpoints)."""
    from tqdm import tqdm

    from ..scale import BuildOptions, build_corpus, load_corpus, write_summary

    module_list = tuple(m.strip() for m in modules.split(",") if m.strip())
    unknown = sorted(set(module_list) - set(MODULES))
    if unknown or not module_list:
        raise typer.BadParameter(f"unknown or no modules {unknown or modules!r}; choose from {', '.join(MODULES)}",
                                 param_hint="--modules")
    if backend not in ("classic", "llm"):
        raise typer.BadParameter(f"unknown backend {backend!r}; choose classic or llm", param_hint="--backend")
    if batch_api and backend != "llm":
        raise typer.BadParameter("--batch-api sends llm extraction requests: add --backend llm", param_hint="--batch-api")
    llm_config = None
    if backend == "llm":
        from ..llm import LLMConfig

        llm_config = LLMConfig.from_env(**({"model": model} if model else {}))
    if ray is None and input_path.exists():  # (a path that is not there is reported at once, without it)
        from ..scale.workers import start_forkserver

        start_forkserver(workers, backend)  # its imports run while this process reads the corpus
    corpus = load_corpus(input_path, conversation, limit)
    for file, error in corpus.unreadable:
        typer.secho(f"skipped unreadable file: {error}", fg=typer.colors.YELLOW, err=True)
    options = BuildOptions(backend=backend, batch_size=batch_size, modules=module_list, fused=fused,
                           embedding_model=embedding_model, verify=verify, llm_config=llm_config)
    bar = tqdm(total=len(corpus.conversations), unit="conv", desc="build-all")
    failed = 0

    def planned(todo: int, skipped: int) -> None:
        bar.update(skipped)
        if skipped:
            bar.write(f"{skipped} complete stores skipped, {todo} to build")

    def progress(row) -> None:
        nonlocal failed
        failed += row.status in ("failed", "partial")
        bar.update(1)
        bar.set_postfix_str(f"last {row.conversation_id} {row.status}" + (f", {failed} failed" if failed else ""))

    try:
        summary = build_corpus(corpus.conversations, out, options, workers=workers, ray=ray, batch_api=batch_api,
                               poll_s=poll_seconds, force=force, progress=progress, status=bar.write, planned=planned)
    finally:
        bar.close()
    summary.unreadable = corpus.unreadable
    path = write_summary(summary, out)
    typer.echo(summary.table())
    typer.echo(f"summary written to {path}")
    if summary.failed() or summary.unreadable:
        typer.secho("some conversations did not build; run the same command again to retry them "
                    "(finished stores and batches are kept)", fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=1)
