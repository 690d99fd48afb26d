"""CLI commands of the query phase: ask (one question, with and without Gravity), measure (LLM-free table,
one or several hosts) and hosts (what can sit under Gravity here).

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .app import app, friendly_errors


_SET_HELP = ("A query option changed, NAME=VALUE (repeatable), e.g. --set line_sigma=0.3 --set memory_floor=none; "
             "every option: docs/query-settings.md.")


def _config(variant: str, no_gravity: bool, k: Optional[int], options: Optional[list[str]] = None):
    from ..query.config import BASELINE, get_variant

    config = (BASELINE if no_gravity else get_variant(variant)).with_typed(options or [])
    return config.with_(host_k=k) if k else config


def _host(name: str, host_config: Optional[Path], embedder=None):
    """A host by name; ``mcp`` takes its server settings from ``--host-config``."""
    from ..errors import ConfigError
    from ..hosts import get_host

    if name.strip().lower() == "mcp":
        if host_config is None:
            raise ConfigError("host 'mcp' needs a server configuration: --host-config FILE.json "
                              "(see docs/hosts.md, 'mcp: attaching any memory server')")
        return get_host("mcp", config=str(host_config))
    if host_config is not None:
        raise ConfigError(f"--host-config configures the mcp host only, not {name!r}")
    return get_host(name, embedder=embedder)


def _llm_or_none():
    """A client when an endpoint is configured, else None (answers are then marked unavailable)."""
    from ..errors import ConfigError
    from ..llm import make_client

    try:
        return make_client()
    except ConfigError:
        return None


def _print_result(result, show_prompt: bool) -> None:
    tr = result.trace
    typer.secho(f"\nHost '{tr.host}' memories for the question (k={tr.host_k}):", bold=True)
    for m in result.host_memories:
        typer.echo(f"  {m.score:6.3f}  [{', '.join(m.utterance_ids)}] {m.text[:140]}")
    if tr.variant != "baseline":
        t = tr.temporal
        spans = ", ".join(f"{s['text']} -> {s['start'] or '…'}..{s['end'] or '…'}" for s in t["spans"]) or "none"
        typer.secho(f"\nTemporal: reference {t['reference'] or 'unknown'}; expressions: {spans}"
                    f"{'; asks when' if t['asks_when'] else ''}", bold=True)
        for module, mt in tr.modules.items():
            typer.secho(f"\n{module}: {mt.n_candidates} candidates ({mt.n_native} native, {mt.n_widened} dense widening, "
                        f"{mt.n_temporal} temporal), K={mt.k}, kept {len(mt.kept_ids)}", bold=True)
            for c in mt.candidates[:max(mt.k + 3, 5)]:
                cos = "  n/a " if c.cosine is None else f"{c.cosine:6.3f}"
                mark = "*" if c.kept else " "
                typer.echo(f"  {mark} {c.rank:>3} {cos}  {c.anchor_id:<14} {c.label[:60]:<60}  [{c.native_reason[:40]}] {c.status}")
        typer.secho(f"\nExpansion queries ({len(tr.expansions)}):", bold=True)
        for i, e in enumerate(tr.expansions, 1):
            typer.echo(f"  {i}. [{e.module} {e.anchor_id}] {e.query}")
        typer.secho("\nInjected blocks: " + ", ".join(f"{b.title} {b.tokens} tok" for b in tr.blocks)
                    + f" (total {tr.injected_tokens})", bold=True)
    if show_prompt:
        typer.secho("\nFinal prompt" + (" (with Gravity):" if tr.variant != "baseline" else ":"), bold=True)
        typer.echo(tr.prompt_with.text)
    typer.secho("\nAnswers:", bold=True)
    if tr.answers.status == "answered":
        typer.echo(f"  host alone  : {tr.answers.without}")
        if tr.variant != "baseline":
            typer.echo(f"  with Gravity: {tr.answers.with_}")
    else:
        typer.echo("  no endpoint configured: set GRAVITY_LLM_API_KEY or GRAVITY_LLM_BASE_URL to get answers "
                   "(everything above works offline)")
    ms = tr.timings_ms
    typer.echo(f"\nTimings: Gravity query path {ms.get('query_path', 0):.1f} ms, host search {ms.get('host_search', 0):.1f} ms, "
               f"expanded host search {ms.get('host_expanded_search', 0):.1f} ms")


@app.command()
@friendly_errors
def ask(
    store_dir: Path = typer.Argument(..., help="Anchor store directory (a build's --out, e.g. runs/conv-26)."),
    question: str = typer.Argument(..., help="The question to answer."),
    host: str = typer.Option("dense", help="Memory system to sit beside (see the hosts command): dense, bm25, "
                                           "fullcontext, mem0, graphiti, amem, mcp."),
    host_config: Optional[Path] = typer.Option(None, "--host-config", help="JSON settings of the mcp host's server "
                                                                           "(command or url, tool names, field mapping)."),
    variant: str = typer.Option("full", help="full, +E, +V, +T, +EV, +ET, +VT, -rrk, -exp, +Sum, baseline."),
    no_gravity: bool = typer.Option(False, "--no-gravity", help="The host alone (no anchors, no expansion)."),
    question_date: Optional[str] = typer.Option(None, help="Date the question is asked (default: the last session's)."),
    k: Optional[int] = typer.Option(None, min=1, help="Memories the host returns (default 10)."),
    options: Optional[list[str]] = typer.Option(None, "--set", help=_SET_HELP),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write the full JSON trace to this file."),
    prompt: bool = typer.Option(True, "--prompt/--no-prompt", help="Print the final prompt."),
) -> None:
    """Answer one question with a host alone and with Gravity's anchors, showing every step."""
    from ..fileio import atomic_write_text
    from ..query import ask as run_ask
    from ..store import AnchorStore

    config = _config(variant, no_gravity, k, options)
    store = AnchorStore.load(store_dir)
    memory = _host(host, host_config)
    try:
        result = run_ask(store, memory, question, config, question_date=question_date, llm=_llm_or_none())
    finally:
        close = getattr(memory, "close", None)
        if callable(close):
            close()
    _print_result(result, prompt)
    if trace:
        atomic_write_text(trace, result.trace.to_json())
        typer.echo(f"trace written to {trace}")


@app.command()
@friendly_errors
def measure(
    dataset: str = typer.Argument(..., help="locomo or longmemeval."),
    path: Path = typer.Argument(..., help="The dataset file (e.g. ../shared/data/locomo10.json)."),
    host: str = typer.Option("dense", help="One host, several comma-separated (dense,bm25,mem0,graphiti) or 'all' "
                                           "(every installed host); see the hosts command."),
    host_config: Optional[Path] = typer.Option(None, "--host-config", help="JSON settings of the mcp host's server."),
    scripted_llm: bool = typer.Option(False, "--scripted-llm", help="Hosts that call an LLM at ingest (amem, "
                                      "mem0-extract, graphiti-episodes) talk to a scripted local server: tests the "
                                      "plumbing only, says nothing about the library's quality."),
    runs: Path = typer.Option(Path("runs"), "--runs", help="Where stores live (built with the classic backend when missing) and CSVs go."),
    conversation: Optional[str] = typer.Option(None, "--conversation", "-c", help="Only this conversation (e.g. conv-26)."),
    limit: Optional[int] = typer.Option(None, min=1, help="Only the first N questions."),
    variant: str = typer.Option("full", help="Query variant (see ask --help)."),
    options: Optional[list[str]] = typer.Option(None, "--set", help=_SET_HELP),
    budget: int = typer.Option(1000, min=50, help="Total context tokens, the same for host alone and host + anchors."),
    k: int = typer.Option(10, min=1, help="k of evidence recall@k."),
    anchor_share: Optional[float] = typer.Option(None, min=0.0, max=1.0, help="Most of the budget the anchor blocks "
                                                 "may take (default: the query settings')."),
    additive: bool = typer.Option(False, "--additive", help="The method's mode: BUDGET tokens of memories on both "
                                  "sides, the anchors on top (at most anchor-share x budget)."),
    workers: Optional[int] = typer.Option(None, min=0, help="Build missing stores first with N worker processes "
                                          "(0 = one per core); see build-all."),
) -> None:
    """LLM-free measures per question category and host: evidence recall@k, answer coverage, temporal grounding,
    and Gravity's query-path time beside each host's own search time."""
    from tqdm import tqdm

    from ..eval.measure import MeasureSettings, load_plan
    from ..eval.measure_hosts import measure_hosts, parse_hosts
    from ..query.config import get_variant
    from ..scale.run import build_stores_first
    from ..testing.host_llm_routes import scripted_host_server

    config = get_variant(variant).with_typed(options or []).with_(host_k=k, total=budget, additive=additive,
                                       **({} if anchor_share is None else {"anchor_share": anchor_share}))
    settings = MeasureSettings(k=k, config=config, budget=config.budget)
    parse_hosts(host, host_config)  # an unknown host is refused before anything is read or built
    plan = load_plan(dataset, path, conversation, limit)
    build_stores_first([conv for conv, _ in plan[1]], runs, workers, status=typer.echo)
    bar = tqdm(total=0, unit="q", desc="measuring")

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        report = measure_hosts(dataset, path, host, runs, conversation, limit, settings, progress=progress,
                               status=bar.write, scripted_llm=scripted_host_server if scripted_llm else None,
                               host_config=host_config, plan=plan)
    finally:
        bar.close()
    if dataset.lower() == "locomo":
        typer.echo("\nCategories: LoCoMo JSON numbers with our names (1 multi-hop, 2 temporal, 3 open-domain, "
                   "4 single-hop, 5 adversarial, left out of 'overall').")
    else:
        typer.echo("\nCategories: LongMemEval question types (SSU single-session-user, SSA single-session-assistant, "
                   "SSP single-session-preference, MS multi-session, KU knowledge-update, TR temporal-reasoning).")
    if additive:
        typer.echo(f"Coverage: all gold-answer tokens in {budget} tokens of memories, with Gravity's anchors on top "
                   f"(additive, at most {config.budget.anchor_cap()} tokens).\n")
    else:
        typer.echo(f"Coverage: all gold-answer tokens in a {budget}-token context, the same for host alone and host "
                   f"+ anchors (equal budget; anchors at most {config.budget.anchor_cap()} tokens).\n")
    if report.any_scripted:
        typer.secho("SCRIPTED LLM: hosts marked * ingested through heuristic scripted answers on 127.0.0.1; their "
                    "numbers say nothing about the library's real quality.\n", fg=typer.colors.YELLOW, bold=True)
    typer.echo(report.text())
    typer.echo(f"\n{report.n_questions} questions x {len(report.results)} hosts in {report.seconds:.0f} s")
    for r in report.results:
        typer.echo(f"  {r.name}: rows {r.csv_path}; per category {r.summary_csv_path}")
    if report.summary_csv_path:
        typer.echo(f"  summary (one row per host): {report.summary_csv_path}; per host and category: "
                   f"{report.categories_csv_path}")
    if report.failed:
        for name, err in report.failed.items():
            typer.secho(f"error: host {name}: {err}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=1)


@app.command("hosts")
@friendly_errors
def hosts_cmd() -> None:
    """Every registered host (entry point group gravity_engine.hosts): whether it can run here, what it needs."""
    from ..hosts import WITHOUT_ADAPTER, available_hosts
    from ..eval.measure_hosts import PRESETS

    infos = available_hosts()
    width = max(len(n) for n in [*(h.name for h in infos), *PRESETS, *WITHOUT_ADAPTER]) + 2
    for h in infos:
        mark = "installed" if h.installed else "broken   " if h.error else "missing  "
        notes = [] if h.builtin else [f"from {h.package}"]
        notes += [f"also: {', '.join(h.aliases)}"] if h.aliases else []
        notes += ["LLM at ingest"] if h.llm_at_ingest else []
        typer.echo(f"{h.name:<{width}}{mark}  {h.description}" + (f"  [{'; '.join(notes)}]" if notes else ""))
        if h.error and h.description != h.error:
            typer.echo(f"{'':<{width}}           error: {h.error}")
        elif not h.installed and h.install_hint:
            typer.echo(f"{'':<{width}}           install: {h.install_hint}")
    typer.echo("\nmeasure also takes these names (a host library run another way):")
    for p in PRESETS.values():
        typer.echo(f"{p.name:<{width}}{'':11}{p.description}" + ("  [LLM at ingest]" if p.llm_at_ingest else ""))
    typer.echo("\nno adapter of their own; attach their MCP server with --host mcp:")
    for name, (description, hint) in WITHOUT_ADAPTER.items():
        typer.echo(f"{name:<{width}}{'':11}{description} ({hint})")
    typer.echo("\nmcp needs --host-config FILE.json; amem calls an LLM at ingest (GRAVITY_LLM_* or, for measure, "
               "--scripted-llm). A package adds a host through the entry point group gravity_engine.hosts "
               "(docs/hosts.md, 'Add a host').")
