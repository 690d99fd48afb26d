"""Curation benchmark: review queue, 1,000 edits applied on load, diff of two stores. Prints a table,
asserts nothing. Targets (issue 13): review <= 2 s per LoCoMo conversation store, 1,000 edits on load
<= 200 ms, diff of two LoCoMo stores <= 3 s without measures.

Stores: ``runs/classic/<conv>`` and ``runs/ideal/<conv>`` when present (``build`` and ``build-ideal``
write them); else the two are built here from ``../shared/data/locomo10.json`` (classic, batch sizes
20 and 10). The edits: a mix of every kind on a copy of one store (types, renames, dates, relations
with evidence, field deletions, merges, splits, deletions), written to its ``edits.jsonl``; the
first load embeds the edited texts once (cached in ``edits.vectors.npz``), the timed loads are the
later ones, as in the app.

Usage: python benchmarks/curate.py [--conversations conv-26,conv-30] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRAVITY_HOME", tempfile.mkdtemp(prefix="gravity-curate-bench-"))

from gravity_engine.curate.diff import diff_stores  # noqa: E402
from gravity_engine.curate.edits import curation_of, load_raw, make_edit, write_log  # noqa: E402
from gravity_engine.anchor_keys import ref_of  # noqa: E402
from gravity_engine.curate.review import review  # noqa: E402
from gravity_engine.store import AnchorStore  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
RUNS = ROOT / "runs"


def stores_for(conv: str, tmp: Path) -> tuple[Path, Path]:
    a, b = RUNS / "classic" / conv, RUNS / "ideal" / conv
    if (a / "anchors.json").is_file() and (b / "anchors.json").is_file():
        return a, b
    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversations

    [c] = load_conversations(LOCOMO, conversation=conv)
    build_store(c, tmp / f"{conv}-20", batch_size=20)
    build_store(c, tmp / f"{conv}-10", batch_size=10)
    return tmp / f"{conv}-20", tmp / f"{conv}-10"


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), out


def thousand_edits(store: AnchorStore, n: int = 1000) -> list:
    """A mix of every kind that applies in order (each entity, event and topic edited many times)."""
    a = store.anchors
    ents = [e for e in a.entities if e.type != "person"] or a.entities
    persons = [e for e in a.entities if e.type == "person"] or a.entities
    out = []
    types = ["organization", "place", "product", "artifact"]
    i = 0
    while len(out) < n:
        e = ents[i % len(ents)]
        v = a.events[i % len(a.events)]
        t = a.topics[i % len(a.topics)] if a.topics else None
        p = persons[i % len(persons)]
        ref_e = ref_of("entities", e)
        out.append(make_edit("set_type", ref_e, type=types[i % 4], why="bench"))
        day = f"2023-{1 + i % 12:02d}-{1 + i % 28:02d}"
        out.append(make_edit("set_date", ref_of("events", v), date_start=day, when_text=v.when_text))
        v.date_start = v.date_end = day  # the next edit of this event names it by its new date
        out.append(make_edit("add_relation", ref_of("entities", p), predicate="knows", object=f"{e.name} {i}",
                             source_ids=e.source_ids[:1] or p.source_ids[:1]))
        out.append(make_edit("delete_field", ref_of("entities", p), field="relations", key="knows",
                             value=f"{e.name} {i}"))
        if t is not None:
            out.append(make_edit("rename", ref_of("topics", t), name=f"{t.label} ({i})"))
            t.label = f"{t.label} ({i})"
        i += 1
    # one merge, its split, and one deletion at the end
    if len(ents) > 2:
        out[-3:] = [make_edit("merge", ref_of("entities", ents[0]), into=ref_of("entities", ents[1]).model_dump()),
                    make_edit("split", ref_of("entities", ents[1]), alias=ents[0].name),
                    make_edit("delete", ref_of("events", a.events[-1]))]
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", default="conv-26,conv-30,conv-41,conv-42,conv-43,conv-44,conv-47,conv-48,"
                                                "conv-49,conv-50")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--edits", type=int, default=1000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gravity-curate-"))
    rows = []
    for conv in args.conversations.split(","):
        a_dir, b_dir = stores_for(conv, tmp)
        load_ms, (a, b) = timed(lambda: (AnchorStore.load(a_dir), AnchorStore.load(b_dir)), 1)
        review_ms, queue = timed(lambda: review(a), args.repeat)
        review_b_ms, queue_b = timed(lambda: review(b), args.repeat)
        diff_ms, d = timed(lambda: diff_stores(a, b), args.repeat)
        changed = sum(len(m.changed) for m in d.modules.values())
        rows.append((conv, sum(a.anchors.counts().values()), sum(b.anchors.counts().values()), review_ms,
                     len(queue.items), review_b_ms, len(queue_b.items), load_ms, diff_ms, changed))

    print(f"\nReview queue and diff ({a_dir.parent.name} vs {b_dir.parent.name}; median of {args.repeat} runs, ms)\n")
    print("| conversation | anchors A | anchors B | review A | queue A | review B | queue B | load A+B | diff A vs B | changed pairs |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]} | {r[5]:.1f} | {r[6]} | {r[7]:.0f} | {r[8]:.1f} | {r[9]} |")
    worst_review = max(max(r[3], r[5]) for r in rows)
    worst_diff = max(r[8] for r in rows)
    worst_load_diff = max(r[7] + r[8] for r in rows)
    print(f"\nworst review {worst_review:.1f} ms (target 2000), worst diff {worst_diff:.1f} ms, "
          f"loading both stores and diffing {worst_load_diff:.0f} ms (target 3000)")

    # 1,000 edits on load
    conv = args.conversations.split(",")[0]
    src, _ = stores_for(conv, tmp)
    work = tmp / "edited"
    shutil.copytree(src, work, ignore=shutil.ignore_patterns("edits.jsonl", "edits.vectors.npz", ".checkpoints"))
    edits = thousand_edits(load_raw(work), args.edits)
    write_log(work, edits)
    t = time.perf_counter()
    first = AnchorStore.load(work)
    first_ms = (time.perf_counter() - t) * 1000
    raw_ms, _ = timed(lambda: load_raw(work), args.repeat)
    edited_ms, store = timed(lambda: AnchorStore.load(work), args.repeat)
    cur = curation_of(store)
    status = ", ".join(f"{cur.count(s)} {s}" for s in ("applied", "already", "stale", "undone") if cur.count(s))
    print(f"\n{len(edits)} edits on load ({conv}; median of {args.repeat} loads, ms)\n")
    print("| load as built | load with the edits | edits applied on load | first load (embeds the edited texts once) | texts embedded then | outcomes |")
    print("|---|---|---|---|---|---|")
    print(f"| {raw_ms:.0f} | {edited_ms:.0f} | {edited_ms - raw_ms:.0f} | {first_ms:.0f} | {curation_of(first).embedded} "
          f"| {status} |")
    print(f"\nedits applied on load: {edited_ms - raw_ms:.0f} ms (target 200)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
