"""Equal-budget and additive measures over all of LoCoMo: host alone vs host + Gravity, per category.

For each anchor source (``classic``: the offline extractor; ``ideal``: LoCoMo's own annotations through
the real llm pipeline, ``python -m gravity_engine build-ideal --all``) and each query variant, prints
coverage (the gold answer inside the context), evidence recall@10 before and after expansion, temporal
grounding and time, per LoCoMo category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).
Stores are read from ``--runs`` (classic ones are built when missing). Asserts nothing.

Usage:
  python benchmarks/measure_locomo.py                       # classic + ideal, full and paper, equal + additive
  python benchmarks/measure_locomo.py --stores classic --variants full --set line_sigma=0.3 --set fusion_keep=5
  python benchmarks/measure_locomo.py --choices             # the measured options of the query path, one at a time
  python benchmarks/measure_locomo.py --variants full --modes equal --diagnose   # + where temporal questions are lost
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.embed import CachingEmbedder, get_embedder  # noqa: E402
from gravity_engine.hosts import get_host  # noqa: E402
from gravity_engine.loaders import load_conversations  # noqa: E402
from gravity_engine.build import ensure_store  # noqa: E402
from gravity_engine.eval.measure import MeasureSettings, measure_conversation, plan_questions  # noqa: E402
from gravity_engine.eval.summary import format_stages, stage_counts, stages_header, summarize  # noqa: E402
from gravity_engine.query.config import Budget, get_variant  # noqa: E402
from gravity_engine.query.pipeline import GravityQuery  # noqa: E402
from gravity_engine.store import AnchorStore  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
CATS = ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"]

# One option changed at a time from the default, on both anchor sources (the README's table of choices).
CHOICES = [
    ("default", {}),
    ("dense widening on", {"widen": True}),
    ("fusion rrf (the method's reading)", {"fusion_method": "rrf", "fusion_keep": 0}),
    ("fusion slots keeping 8", {"fusion_keep": 8}),
    ("no expansion (-exp)", {"expand": False}),
    ("expansions best lines first", {"expansion_merge": "score"}),
    ("stored line order (not question-aware)", {"question_aware": False}),
    ("whole anchors (no line packing)", {"packing": "anchors"}),
    ("line sigma 0.5", {"line_sigma": 0.5}),
    ("12 lines per anchor", {"lines_per_anchor": 12}),
    ("-rrk (the reranker out)", {"rerank": False}),
    ("anchors keep their share (no memory floor)", {"memory_floor": None}),
    ("events of a time question by compact text", {"temporal_event_lines": False}),
    ("temporal slots R 3", {"R": 3}),
]


def load_stores(kind: str, runs: Path, plan, embedder) -> dict[str, AnchorStore]:
    stores = {}
    for conv, _ in plan:
        path = runs / kind / conv.id
        if kind == "classic":
            store, _ = ensure_store(conv, runs / kind, embedder)
        elif (path / "anchors.json").is_file():
            store = AnchorStore.load(path)
        else:
            raise SystemExit(f"no {kind} store at {path}: run `python -m gravity_engine build-ideal "
                             f"{LOCOMO} --all --runs {runs / kind}` first")
        if store.conversation is None:
            store.conversation = conv
        store.line_matrix(embedder)  # stores written before lines were stored: embed them once, untimed
        stores[conv.id] = store
    return stores


def run(stores, plan, host_for, config, settings, embedder) -> tuple[list, float]:
    rows = []
    started = time.perf_counter()
    for conv, qs in plan:
        store = stores[conv.id]
        gq = GravityQuery(store, embedder, config)
        rows += measure_conversation(store, host_for(conv.id), qs, "locomo", settings, embedder, gravity=gq)
    return rows, time.perf_counter() - started


def pct(v) -> str:
    return "    -" if v is None else f"{100 * v:5.1f}"


def line(label: str, summary: list[dict], seconds: float) -> str:
    by = {s["category"]: s for s in summary}
    overall = by.get("overall (excl. 5)", {})
    cells = []
    for c in [*CATS, "overall (excl. 5)"]:
        s = by.get(c)
        if not s:
            cells.append(f"{'-':>17}")
            continue
        d = s["coverage_gravity"] - s["coverage_host"]
        cells.append(f"{pct(s['coverage_host'])}→{pct(s['coverage_gravity'])} {100 * d:+5.1f}")
    t = by.get("2 temporal", {}).get("temporal_grounding")
    return (f"{label:<44}" + " ".join(cells) + f"  {pct(overall.get('recall_host'))}→{pct(overall.get('recall_expanded'))}"
            f"  {pct(t)}  {seconds:5.0f}s")


def header() -> str:
    cols = " ".join(f"{c:>17}" for c in [*CATS, "overall"])
    return f"{'anchors / variant / mode':<44}{cols}  {'R@10 q→+exp':>13}  {'t-grnd':>6}  {'time':>6}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=LOCOMO)
    ap.add_argument("--runs", type=Path, default=ROOT / "runs", help="classic stores in RUNS/classic, ideal in RUNS/ideal")
    ap.add_argument("--stores", default="classic,ideal")
    ap.add_argument("--variants", default="full,paper")
    ap.add_argument("--modes", default="equal,additive")
    ap.add_argument("--conversations", default=None, help="comma-separated ids (default: all ten)")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--anchor-share", type=float, default=Budget().anchor_share)
    ap.add_argument("--set", action="append", default=[], help="a QueryConfig option, e.g. line_sigma=0.3 (repeatable)")
    ap.add_argument("--choices", action="store_true", help="measure each option of CHOICES (equal budget, full)")
    ap.add_argument("--diagnose", action="store_true", help="after each row, the stage that lost each temporal "
                    "question (no event, wrong date, not selected, not packed), overall and per conversation")
    args = ap.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"{args.data} not found (LoCoMo is read from ../shared/data at run time)")
    wanted = set(args.conversations.split(",")) if args.conversations else None
    convs = [c for c in load_conversations(args.data) if wanted is None or c.id in wanted]
    plan = plan_questions(convs)
    embedder = CachingEmbedder(get_embedder(), max_items=50_000)
    n = sum(len(qs) for _, qs in plan)
    print(f"LoCoMo: {len(plan)} conversations, {n} questions (categories 1-4 in 'overall'); dense host, k=10, "
          f"{args.budget} context tokens, anchors at most {args.anchor_share:.0%} of them")
    print("equal = the same total budget with and without Gravity; additive = the method's mode, the same memories "
          "on both sides and the anchors on top\ncells: coverage host → host+Gravity, and the gain in points\n")
    hosts: dict[str, object] = {}

    def host_for(cid: str):
        if cid not in hosts:
            hosts[cid] = get_host("dense", embedder=embedder)
        return hosts[cid]

    for kind in args.stores.split(","):
        t0 = time.perf_counter()
        stores = load_stores(kind, args.runs, plan, embedder)
        print(f"[{kind} stores loaded in {time.perf_counter() - t0:.0f}s]")
        print(header())
        if args.choices:
            jobs = [(name, get_variant("full").with_typed(args.set).with_(**opts), "equal") for name, opts in CHOICES]
        else:
            jobs = [(v, get_variant(v).with_typed(args.set), m) for v in args.variants.split(",")
                    for m in args.modes.split(",")]
        for name, config, mode in jobs:
            budget = Budget(total=args.budget, anchor_share=args.anchor_share, additive=mode == "additive")
            settings = MeasureSettings(budget=budget, config=config.with_(host_k=10))
            rows, secs = run(stores, plan, host_for, settings.run_config(), settings, embedder)
            print(line(f"{kind} / {name} / {mode}", summarize(rows), secs), flush=True)
            if args.diagnose:
                print("  temporal questions by the stage that lost them:\n  " + stages_header())
                print("  " + format_stages(stage_counts(rows), "all"))
                for conv, _ in plan:
                    print("  " + format_stages(stage_counts([r for r in rows if r.conversation == conv.id]), conv.id))
        print()


if __name__ == "__main__":
    main()
