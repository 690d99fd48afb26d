"""CLI commands of the build phase: build, show, verify.

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from ..anchors import MODULES
from .app import app, friendly_errors


def _load_one(input_path: Path, conversation: Optional[str]):
    from ..loaders import load_conversations

    convs = load_conversations(input_path, conversation=conversation)
    if len(convs) > 1:
        ids = ", ".join(c.id for c in convs[:12]) + (" ..." if len(convs) > 12 else "")
        raise typer.BadParameter(f"{input_path} holds {len(convs)} conversations; pick one with --conversation ({ids})")
    return convs[0]


@contextmanager
def _ctrl_c_cancels() -> Iterator[threading.Event]:
    """The first Ctrl-C cancels the build (the batches in flight finish and are checkpointed, nothing new
    starts); a second one stops at once."""
    cancel = threading.Event()
    if threading.current_thread() is not threading.main_thread():  # signal handlers live in the main thread
        yield cancel
        return

    def on_interrupt(signum, frame) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        typer.secho("\ncancelling: waiting for the batches in flight (Ctrl-C again to stop at once)",
                    fg=typer.colors.YELLOW, err=True)

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)


@app.command()
@friendly_errors
def build(
    input_path: Path = typer.Argument(..., help="Conversation file: LoCoMo or LongMemEval JSON, JSON/JSONL/CSV, a text transcript or a ChatGPT export."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Store directory to write (default: runs/<conversation id>)."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c", help="Which conversation of a multi-conversation file (e.g. conv-26)."),
    backend: str = typer.Option("classic", help="classic (offline, default) or llm (any OpenAI-compatible endpoint)."),
    batch_size: int = typer.Option(20, min=1, max=500, help="Utterances per extraction batch."),
    modules: str = typer.Option(",".join(MODULES), help="Comma-separated anchor modules to build."),
    fused: bool = typer.Option(True, "--fused/--separate", help="llm: one call per batch for all modules, or one per module."),
    model: Optional[str] = typer.Option(None, help="llm: model name (default: $GRAVITY_LLM_MODEL)."),
    embedding_model: str = typer.Option("all-MiniLM-L6-v2", help="sentence-transformers model name or local path."),
    update: Optional[Path] = typer.Option(None, "--update", help="Extend this existing store with the conversation's new sessions."),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Check every anchor field against its sources."),
    drop_unsupported: bool = typer.Option(False, help="Drop fields that verification does not support."),
) -> None:
    """Extract entity, event and topic anchors from a conversation and save them as a store."""
    from tqdm import tqdm

    from ..build import BuildCancelled, BuildProgress, build_store, estimate_build

    conv = _load_one(input_path, conversation)
    for w in conv.warnings[:5]:
        typer.secho(f"warning: {w}", fg=typer.colors.YELLOW, err=True)
    if len(conv.warnings) > 5:
        typer.secho(f"warning: ... {len(conv.warnings) - 5} more loader warnings (see build_report.json)", fg=typer.colors.YELLOW, err=True)
    target = update or out or Path("runs") / conv.id
    llm_config = None
    if backend == "llm":
        from ..llm import LLMConfig

        llm_config = LLMConfig.from_env()
        if model:
            llm_config = llm_config.model_copy(update={"model": model})
        est = estimate_build(conv, "llm", batch_size, fused, llm_config.model, modules.split(","))
        typer.echo(f"plan: {est['batches']} batches, {est['calls']} calls, ~{est['prompt_tokens']:,} prompt tokens "
                   f"(transcript {est['transcript_tokens']:,}) with {llm_config.model}")
    bar = tqdm(total=1, unit="batch", desc="extract", leave=True)

    def on_progress(p: BuildProgress) -> None:
        if bar.total != p.total:
            bar.total = p.total
        bar.set_description(p.stage)
        bar.n = p.done
        if p.counts:
            bar.set_postfix({k[:3]: v for k, v in p.counts.items()} | ({"failed": p.failed} if p.failed else {}))
        bar.refresh()

    try:
        with _ctrl_c_cancels() as cancel:
            store = build_store(conv, target, backend=backend, batch_size=batch_size, modules=modules.split(","),
                                fused=fused, llm_config=llm_config, embedding_model=embedding_model,
                                update=update is not None, progress=on_progress, cancel=cancel, verify=verify,
                                drop_unsupported=drop_unsupported)
    except BuildCancelled as err:
        typer.secho(str(err), fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=130) from None
    finally:
        bar.close()
    rep = store.report
    c = rep["counts"]
    typer.echo(f"wrote {target}: {c['entities']} entities, {c['events']} events, {c['topics']} topics "
               f"from {rep['utterances']} utterances in {rep['timings_s']['total']:.1f} s")
    ver = rep.get("verification") or {}
    if ver.get("share") is not None:
        typer.echo(f"verified: {ver['supported']}/{ver['fields']} fields supported by their sources ({ver['share']:.1%})")
    if rep["batches"]["from_checkpoint"]:
        typer.echo(f"resumed: {rep['batches']['from_checkpoint']} batches from checkpoints")
    if "llm" in rep:
        from ..llm.usage import usage_summary

        typer.echo("llm: " + usage_summary(rep["llm"].get("total", rep["llm"])))  # every request, failed ones too
    failed = rep["batches"]["failed"]
    if failed:
        typer.secho(f"{len(failed)} batches failed (first: {failed[0]['error']}); run the same command again to retry them",
                    fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=1)


@app.command()
@friendly_errors
def show(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
         top: int = typer.Option(10, help="How many entities, events and topics to list.")) -> None:
    """Print a readable summary of a store: counts, top entities, first events, topics."""
    from ..store import AnchorStore

    store = AnchorStore.load(store_dir)
    a = store.anchors
    info = a.built_with
    typer.secho(f"{a.conversation_id} — {store_dir}", bold=True)
    typer.echo(f"built by {info.backend}{' / ' + info.llm_model if info.llm_model else ''} at {info.built_at} "
               f"in {info.duration_s:.1f} s; embeddings {info.embedding_model} ({info.embedding_dim}d); "
               f"{len(info.sessions)} sessions")
    c = a.counts()
    typer.echo(f"{c['entities']} entities, {c['events']} events, {c['topics']} topics")
    ver = store.report.get("verification") or {}
    if ver.get("share") is not None:
        typer.echo(f"verified fields: {ver['supported']}/{ver['fields']} ({ver['share']:.1%})")
    typer.secho("\nTop entities (by mentions)", bold=True)
    for e in sorted(a.entities, key=lambda e: -e.mentions)[:top]:
        facts = "; ".join(f"{x.key}: {x.value}" for x in e.attributes[:3])
        rels = "; ".join(f"{r.predicate} {r.target}" for r in e.relations[:2])
        typer.echo(f"  {e.name} [{e.type}] x{e.mentions}" + (f" — {facts}" if facts else "") + (f" | {rels}" if rels else ""))
    typer.secho("\nFirst events", bold=True)
    dated = sorted(a.events, key=lambda v: (v.date_start or "9999", v.id))
    for v in dated[:top]:
        when = v.date_label() + (f' ("{v.when_text}")' if v.when_text else "")
        typer.echo(f"  {when}: {v.what}")
    typer.secho("\nTopics", bold=True)
    for t in sorted(a.topics, key=lambda t: -len(t.source_ids))[:top]:
        typer.echo(f"  {t.label} — {len(t.sessions)} sessions, {t.status}; {', '.join(t.keywords[:5])}")


@app.command("verify")
@friendly_errors
def verify_cmd(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
               show_unsupported: int = typer.Option(10, help="How many unsupported fields to list."),
               drop: bool = typer.Option(False, help="Drop unsupported fields and rewrite the store.")) -> None:
    """Check every anchor field against the utterances it cites and report the share supported."""
    from ..embed import get_embedder
    from ..errors import StoreError
    from ..store import AnchorStore, embed_anchors, store_lock
    from ..build.verify import drop_unsupported_fields, verify_anchors

    with store_lock(store_dir):  # load, check (and drop) and save as one step: no other writer slips in between
        store = AnchorStore.load(store_dir)
        if store.conversation is None:
            raise StoreError(f"{store_dir}: no conversation.json, so there is nothing to verify against")
        embedder = get_embedder(store.anchors.built_with.embedding_model or "all-MiniLM-L6-v2")
        summary = verify_anchors(store.anchors, store.conversation, embedder)
        for module, s in summary["by_module"].items():
            share = f"{s['share']:.1%}" if s["share"] is not None else "-"
            typer.echo(f"{module:9s} {s['supported']:5d}/{s['fields']:<5d} supported ({share})")
        typer.echo(f"{'all':9s} {summary['supported']:5d}/{summary['fields']:<5d} supported "
                   f"({summary['share'] or 0:.1%})")
        shown = 0
        for anchor in (*store.anchors.entities, *store.anchors.events, *store.anchors.topics):
            for c in anchor.checks:
                if not c.supported and shown < show_unsupported:
                    typer.echo(f"  unsupported {anchor.id}.{c.field}: {c.note}")
                    shown += 1
        if drop:
            summary["dropped"] = drop_unsupported_fields(store.anchors)
            typer.echo("dropped: " + ", ".join(f"{n} {what}" for what, n in summary["dropped"].items()))
            store.set_embeddings(embed_anchors(store.anchors, embedder))
        store.report["verification"] = summary
        store.save(store_dir)


@app.command()
@friendly_errors
def unmerge(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
            entity_id: str = typer.Argument(..., help="The profile the alias was merged into (e.g. ent-priya-raman)."),
            alias: str = typer.Argument(..., help="The merged name to split off again."),
            out: Optional[Path] = typer.Option(None, help="Write the edited store here instead of in place.")) -> None:
    """Undo one recorded merge: the alias gets its own profile back."""
    from ..build.consolidate import unmerge_store
    from ..embed import get_embedder
    from ..errors import StoreError
    from ..store import AnchorStore, store_lock

    with store_lock(store_dir):  # load, split and save as one step (in place, the usual case)
        store = AnchorStore.load(store_dir)
        try:
            edited = unmerge_store(store, entity_id, alias,
                                   get_embedder(store.anchors.built_with.embedding_model or "all-MiniLM-L6-v2"))
        except KeyError as err:
            raise StoreError(f"{store_dir}: {err.args[0]}") from None
        edited.save(out or store_dir)
    typer.echo(f"split {alias!r} off {entity_id}; wrote {out or store_dir}")
