"""CLI commands of curation: review, edit, edits, undo, diff.

Each command imports the engine in its own body (lazily on purpose: see ``cli/__init__``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .app import app, friendly_errors

KINDS_HELP = ("set_type ANCHOR TYPE | rename ANCHOR NEW_NAME | merge ANCHOR INTO | split ANCHOR ALIAS | delete ANCHOR "
              "| delete_field ANCHOR FIELD | set_date EVENT DATE | add_relation ENTITY PREDICATE --object X --source ID")


def _resolve_target(store, kind: str, anchor: str, module: Optional[str]):
    """The anchor's stable key: by id in any module, else by name in the given (or the kind's usual) module."""
    from ..anchors import MODULES
    from ..curate.edits import find_ref
    from ..anchor_keys import ref_of

    if module is None:
        for m in MODULES:
            hit = [a for a in store.anchors.module(m) if a.id == anchor]
            if hit:
                return ref_of(m, hit[0])
        module = "events" if kind == "set_date" else "entities"
    return find_ref(store, module, anchor)


@app.command()
@friendly_errors
def review(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
           gold: Optional[Path] = typer.Option(None, help="A gold annotation file (docs/gold_format.md): score the store and list each miss."),
           top: int = typer.Option(25, min=1, help="How many queue items to print."),
           as_json: bool = typer.Option(False, "--json", help="Print the whole queue (and gold score) as JSON.")) -> None:
    """The anchors most likely wrong, ranked, with the reasons and the utterances they cite."""
    from ..curate.review import gold_miss_lines
    from ..curate.review import review as review_queue
    from ..eval.gold import load_gold
    from ..store import AnchorStore

    store = AnchorStore.load(store_dir)
    gold_doc = load_gold(gold) if gold else None
    queue = review_queue(store, gold_doc)
    if as_json:
        out = {"items": [{**row, "reasons": [r.__dict__ for r in item.reasons]}
                         for row, item in zip(queue.rows(), queue.items)], "counts": queue.counts}
        if queue.gold is not None:
            out["gold"] = queue.gold.to_dict()
        typer.echo(json.dumps(out, ensure_ascii=False, indent=1))
        return
    typer.secho(f"{len(queue.items)} anchors to review in {store_dir} "
                f"({', '.join(f'{n} {k}' for k, n in sorted(queue.counts.items()))})", bold=True)
    for item in queue.top(top):
        typer.echo(f"{item.score:4.2f}  {item.module[:-1] if item.module != 'entities' else 'entity'} {item.anchor_id} "
                   f"{item.name[:70]!r} [{item.detail[:30]}]")
        for r in item.reasons:
            src = f" [{', '.join(r.source_ids[:4])}]" if r.source_ids else ""
            typer.echo(f"        - {r.kind}: {r.text}{src}")
    if queue.gold is not None:
        typer.secho("\nGold score", bold=True)
        s = queue.gold
        for name in ("entity_recall", "type_accuracy", "junk_share", "relation_recall", "relation_precision",
                     "fact_recall", "events_dated", "event_recall", "relative_date_accuracy"):
            typer.echo(f"  {name:24s} {getattr(s, name)}")
        misses = gold_miss_lines(s)
        typer.secho(f"\n{len(misses)} misses", bold=True)
        for kind, line in misses:
            typer.echo(f"  {kind}: {line}")


@app.command()
@friendly_errors
def edit(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
         kind: str = typer.Argument(..., help=KINDS_HELP),
         anchor: str = typer.Argument(..., help="The anchor: its id, or an entity name, event text or topic label."),
         value: Optional[str] = typer.Argument(None, help="type, new name, merge target, alias, field, date (YYYY-MM-DD) or predicate."),
         module: Optional[str] = typer.Option(None, help="entities, events or topics (default: from the id, else entities; events for set_date)."),
         key: str = typer.Option("", help="delete_field: the attribute key or relation predicate of the item."),
         item: str = typer.Option("", "--item", help="delete_field: the item's value, target or text (list fields)."),
         end: Optional[str] = typer.Option(None, help="set_date: last day of the range (inclusive)."),
         granularity: Optional[str] = typer.Option(None, help="set_date: day, week, month, season, year, range, before, after."),
         when: Optional[str] = typer.Option(None, help="set_date: the expression as said."),
         obj: Optional[str] = typer.Option(None, "--object", help="add_relation: the relation's target."),
         source: list[str] = typer.Option([], "--source", help="add_relation: an utterance id that says it (repeat)."),
         drop_alias: bool = typer.Option(False, help="rename: do not keep the old name as an alias."),
         who: Optional[str] = typer.Option(None, help="Who makes the edit (default: the user name)."),
         why: str = typer.Option("", help="Why: kept with the edit."),
         ) -> None:
    """Record one edit in <store>/edits.jsonl; it is applied on every load and after rebuilds."""
    from ..curate.edits import CurationError, describe, make_edit, record_edit
    from ..store import AnchorStore

    kind = kind.replace("-", "_")
    store = AnchorStore.load(store_dir)
    target = _resolve_target(store, kind, anchor, module)

    def need(what: str) -> str:
        if not value:
            raise CurationError(f"{kind} needs {what} after the anchor")
        return value

    fields: dict = {"why": why, **({"who": who} if who else {})}
    if kind == "set_type":
        fields["type"] = need("the new type")
    elif kind == "rename":
        fields.update(name=need("the new name"), keep_alias=not drop_alias)
    elif kind == "merge":
        fields["into"] = _resolve_target(store, kind, need("the entity to merge into"), "entities").model_dump()
    elif kind == "split":
        fields["alias"] = need("the name to split off")
    elif kind == "delete_field":
        fields.update(field=need("the field"), key=key, value=item)
    elif kind == "set_date":
        start = None if need("the date (YYYY-MM-DD, or 'none')").lower() in ("none", "unknown") else value
        fields.update(date_start=start, date_end=end, granularity=granularity, when_text=when)
    elif kind == "add_relation":
        if not obj or not source:
            raise CurationError("add_relation needs --object and at least one --source utterance id (the evidence)")
        fields.update(predicate=need("the predicate"), object=obj, source_ids=source)
    the_edit = make_edit(kind, target, **fields)
    outcome = record_edit(store_dir, the_edit)
    note = f" ({outcome.note})" if outcome.note else ""
    typer.echo(f"{the_edit.id}: {describe(the_edit)} — {outcome.status}{note}")


@app.command("edits")
@friendly_errors
def edits_cmd(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
              as_json: bool = typer.Option(False, "--json", help="Print the records and their status as JSON.")) -> None:
    """List the edits of a store and what each does on this build (applied, already, stale, undone)."""
    from ..curate.edits import curation_of
    from ..store import AnchorStore

    cur = curation_of(AnchorStore.load(store_dir))
    if as_json:
        typer.echo(json.dumps([{**json.loads(o.edit.model_dump_json()), "status": o.status, "note": o.note}
                               for o in cur.outcomes], ensure_ascii=False, indent=1))
        return
    if not cur.outcomes:
        typer.echo(f"no edits in {store_dir}")
        return
    for o in cur.outcomes:
        e = o.edit
        why = f" — why: {e.why}" if e.why else ""
        note = f" ({o.note})" if o.note else ""
        colour = typer.colors.RED if o.status == "stale" else None
        typer.secho(f"{e.id}  {o.status:8s} {e.at} {e.who}: {o.describe()}{why}{note}", fg=colour)
    counts = ", ".join(f"{cur.count(s)} {s}" for s in ("applied", "already", "stale", "undone") if cur.count(s))
    typer.echo(counts)


@app.command()
@friendly_errors
def undo(store_dir: Path = typer.Argument(..., help="A store directory written by build."),
         edit_id: str = typer.Argument(..., help="The edit to undo (ids are listed by `edits`)."),
         who: Optional[str] = typer.Option(None, help="Who undoes it (default: the user name)."),
         why: str = typer.Option("", help="Why: kept with the undo record.")) -> None:
    """Undo one edit; the other edits stay."""
    from ..curate.edits import undo_edit

    record, warning = undo_edit(store_dir, edit_id, who, why)
    typer.echo(f"{record.id}: undid {edit_id}")
    if warning:
        typer.secho(f"note: {warning}", fg=typer.colors.YELLOW)


@app.command()
@friendly_errors
def diff(store_a: Path = typer.Argument(..., help="The first store (A)."),
         store_b: Path = typer.Argument(..., help="The second store (B) of the same conversation."),
         a_raw: bool = typer.Option(False, "--a-raw", help="Read A as built, without its edits (diff B against it to see what the edits changed)."),
         measure: Optional[str] = typer.Option(None, help="locomo: also measure both stores on the conversation's questions."),
         host: str = typer.Option("dense", help="Host for --measure."),
         limit: Optional[int] = typer.Option(None, help="--measure: at most this many questions."),
         question: list[str] = typer.Option([], "--question", "-q", help="Show the anchors each store injects for this question (repeat)."),
         show: int = typer.Option(10, min=0, help="How many added, removed and changed anchors to list per module."),
         as_json: bool = typer.Option(False, "--json", help="Print the whole diff as JSON.")) -> None:
    """Anchors added, removed and changed per module from A to B (matched by stable keys), with sources."""
    from dataclasses import asdict

    from ..curate.diff import compare_measures, compare_prompts, diff_stores
    from ..curate.edits import load_raw
    from ..errors import ConfigError
    from ..store import AnchorStore

    a = load_raw(store_a) if a_raw else AnchorStore.load(store_a)
    b = AnchorStore.load(store_b)
    result = diff_stores(a, b, a_label=str(store_a) + (" (as built)" if a_raw else ""), b_label=str(store_b))
    if measure:
        if measure != "locomo":
            raise ConfigError(f"--measure {measure!r}: only locomo is measured here")
        result.measures = compare_measures(a, b, "locomo", host, limit=limit)
    if question:
        result.prompts = compare_prompts(a, b, list(question))
    if as_json:
        typer.echo(json.dumps(asdict(result), ensure_ascii=False, indent=1, default=str))
        return
    typer.secho(f"A = {result.a_label}\nB = {result.b_label}", bold=True)
    for note in result.notes:
        typer.secho(f"note: {note}", fg=typer.colors.YELLOW)
    typer.echo(f"{'module':9s} {'added':>6s} {'removed':>8s} {'changed':>8s} {'unchanged':>10s}")
    for row in result.summary_rows():
        typer.echo(f"{row['module']:9s} {row['added']:6d} {row['removed']:8d} {row['changed']:8d} {row['unchanged']:10d}")
    for module, md in result.modules.items():
        if not (md.added or md.removed or md.changed) or not show:
            continue
        typer.secho(f"\n{module}", bold=True)
        for s in md.added[:show]:
            typer.echo(f"  + {s.name[:80]!r} [{s.detail}] {', '.join(s.source_ids[:3])}")
        for s in md.removed[:show]:
            typer.echo(f"  - {s.name[:80]!r} [{s.detail}] {', '.join(s.source_ids[:3])}")
        for c in md.changed[:show]:
            typer.echo(f"  ~ {c.a.name[:60]!r} ({c.matched_by}) {', '.join(c.b.source_ids[:3])}")
            for f in c.changes:
                typer.echo(f"      {f.field}: {f.before[:70]!r} -> {f.after[:70]!r}")
    if result.measures:
        typer.secho("\nmeasures (host + Gravity), A -> B", bold=True)
        typer.echo(f"{'category':22s} {'n':>4s} {'coverage':>18s} {'recall@k':>18s} {'grounding':>18s}")

        def cell(row: dict, key: str) -> str:
            a_, b_ = row[f"{key}_a"], row[f"{key}_b"]
            return "-" if a_ is None or b_ is None else f"{a_:.1%} -> {b_:.1%}"

        for row in result.measures:
            typer.echo(f"{row['category'][:22]:22s} {row['n']:4d} {cell(row, 'coverage_gravity'):>18s} "
                       f"{cell(row, 'recall_expanded'):>18s} {cell(row, 'temporal_grounding'):>18s}")
    for p in result.prompts:
        typer.secho(f"\nquestion: {p['question']}" + (" (same anchors)" if p["same"] else ""), bold=True)
        if not p["same"]:
            typer.echo("A injects:\n" + (p["a"] or "(nothing)") + "\n\nB injects:\n" + (p["b"] or "(nothing)"))
