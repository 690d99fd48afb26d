"""Extraction quality against our own gold annotations: prints tables, asserts nothing.

Builds every gold conversation of a set (``<name>.jsonl`` + ``<name>.gold.json``, format in
``docs/gold_format.md``) with a backend into a temporary directory, scores the anchors with
``gravity_engine.eval.gold.score_store`` and prints, per set, one row per conversation plus the mean:

  entity recall, entity-type accuracy, junk share (lower is better), relation recall and precision
  (n = store relations between two gold entities), fact recall, share of store events with a date,
  relative-date accuracy (n = gold events said relatively; matched = how many a store event cites).

Sets: ``test`` (``sample_data/gold/``, the default) is HELD OUT: it measures and is never tuned on;
``dev`` (``sample_data/gold/dev/``) is where extraction rules may be tuned; ``all`` prints both tables.

``--sample`` adds the sample conversation's benchmark questions (``sample_data/medllm_project.jsonl`` +
``.questions.json``): built with the backend, measured as the app's Evaluation page measures them (dense
host, ``full`` variant, 1,000 tokens shared by memories and anchors, anchors at most 0.4 of them), it
prints how many questions have every part of their gold answer in the context, host alone and + Gravity.

Usage: python benchmarks/extraction_quality.py [--set test|dev|all] [--backend classic|llm] [--show-misses]
       [--keep DIR] [--fact-similarity] [--sample] [gold files ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.build import BACKENDS, build_store  # noqa: E402
from gravity_engine.embed import DEFAULT_MODEL, get_embedder  # noqa: E402
from gravity_engine.eval.gold import (  # noqa: E402
    GoldScore,
    check_against_conversation,
    find_gold_files,
    load_gold,
    score_store,
)
from gravity_engine.loaders import load_conversation  # noqa: E402

GOLD_DIR = ROOT / "sample_data" / "gold"
SETS = {"test": GOLD_DIR, "dev": GOLD_DIR / "dev"}
SAMPLE = ROOT / "sample_data" / "medllm_project.jsonl"
COLUMNS = ["conversation", "entity recall", "type acc", "junk share", "rel recall", "rel precision (n)",
           "fact recall", "events dated", "rel-date acc (n, matched)", "build s"]
MISS_LISTS = [
    ("missed_entities", "gold entities not found"),
    ("wrong_types", "entities typed wrong"),
    ("duplicate_entities", "gold entities split over several profiles"),
    ("junk_listed", "junk present (named in junk_names)"),
    ("junk_unlisted", "other store entities that are no gold entity nor speaker"),
    ("missed_relations", "gold relations missed"),
    ("wrong_relations", "store relations between gold entities that match no gold relation"),
    ("missed_facts", "gold facts not found"),
    ("undated_events", "store events without a date"),
    ("wrong_dates", "relative dates missed or wrong"),
]


def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(h) for h in headers]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def row(name: str, s: GoldScore, seconds: float) -> list:
    return [name, _f(s.entity_recall.value), _f(s.type_accuracy.value), _f(s.junk_share.value),
            _f(s.relation_recall.value), f"{_f(s.relation_precision.value)} ({s.relation_precision.n})",
            _f(s.fact_recall.value), _f(s.events_dated.value),
            f"{_f(s.relative_date_accuracy.value)} ({s.relative_date_accuracy.n}, {s.relative_date_matched})",
            f"{seconds:.1f}"]


def mean_row(scores: list[GoldScore]) -> list:
    def mean(key: str) -> str:
        values = [v for s in scores if (v := s.metrics()[key]) is not None]
        return _f(sum(values) / len(values)) if values else "n/a"

    return ["mean", mean("entity_recall"), mean("type_accuracy"), mean("junk_share"), mean("relation_recall"),
            f"{mean('relation_precision')} ({sum(s.relation_precision.n for s in scores)})", mean("fact_recall"),
            mean("events_dated"),
            f"{mean('relative_date_accuracy')} ({sum(s.relative_date_accuracy.n for s in scores)}, "
            f"{sum(s.relative_date_matched for s in scores)})", ""]


def print_misses(name: str, s: GoldScore) -> None:
    print(f"\n=== {name}: misses ===")
    for key, title in MISS_LISTS:
        items = getattr(s.misses, key)
        print(f"-- {title}: {len(items)}")
        for item in items:
            print(f"   {item}")


def score_set(files: list[Path], backend: str, out_root: Path, embedder, fact_similarity: bool):
    """(table rows with the mean, [(conversation id, score)]) of the gold files, each built with ``backend``."""
    rows, scored = [], []
    for path in files:
        gold = load_gold(path)
        conv = load_conversation(gold.conversation_path())
        problems = check_against_conversation(gold, conv)
        if problems:
            sys.exit(f"{path}: " + "; ".join(problems[:5]))
        started = time.perf_counter()
        store = build_store(conv, out_root / conv.id, backend=backend, embedder=embedder)
        seconds = time.perf_counter() - started
        s = score_store(store.anchors, gold, embedder=embedder if fact_similarity else None)
        rows.append(row(conv.id, s, seconds))
        scored.append((conv.id, s))
    rows.append(mean_row([s for _, s in scored]))
    return rows, scored


def sample_coverage(backend: str, out_root: Path, embedder) -> tuple[list[list], list[str]]:
    """The sample's benchmark questions measured like the Evaluation page: rows per category and the misses."""
    from gravity_engine.eval.evaluate.items import read_questions_file
    from gravity_engine.hosts import get_host
    from gravity_engine.eval.measure import MeasureSettings, measure_conversation
    from gravity_engine.query.config import get_variant

    conv = load_conversation(SAMPLE)
    questions = [q for q in read_questions_file(SAMPLE.with_suffix(".questions.json")) if q.answer]
    store = build_store(conv, out_root / "sample", backend=backend, embedder=embedder)
    host = get_host("dense")
    host.ingest(conv)
    settings = MeasureSettings(config=get_variant("full"))
    measured = measure_conversation(store, host, questions, "custom", settings, embedder=embedder)
    by_cat: dict[str, list] = {}
    for r in measured:
        by_cat.setdefault(r.category or "-", []).append(r)
    rows = []
    for cat, items in [*sorted(by_cat.items()), ("all", measured)]:
        rows.append([cat, len(items), sum(bool(r.covered_host) for r in items),
                     sum(bool(r.covered_gravity) for r in items),
                     f"{sum(bool(r.covered_gravity) for r in items) / len(items):.2f}"])
    misses = [f"{r.question_id} [{r.category}] {r.question} -> {r.gold}" for r in measured if not r.covered_gravity]
    return rows, misses


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gold", nargs="*", help="gold files (default: every *.gold.json of the set)")
    ap.add_argument("--set", dest="which", default="test", choices=["test", "dev", "all"],
                    help="test: sample_data/gold/ (held out, never tuned on); dev: sample_data/gold/dev/; all: both")
    ap.add_argument("--backend", default="classic", choices=BACKENDS)
    ap.add_argument("--show-misses", action="store_true", help="print what each score missed")
    ap.add_argument("--keep", help="build the stores here instead of a temporary directory")
    ap.add_argument("--fact-similarity", action="store_true",
                    help="also count a fact found when a profile field is similar to it (MiniLM cosine >= 0.6)")
    ap.add_argument("--sample", action="store_true",
                    help="also measure the sample's benchmark questions (gold answer in the Gravity context)")
    args = ap.parse_args()

    if args.gold:
        sets = {"given": [Path(p) for p in args.gold]}
    else:
        names = ["test", "dev"] if args.which == "all" else [args.which]
        sets = {name: find_gold_files(SETS[name]) for name in names}
    for name, files in sets.items():
        if not files:
            sys.exit(f"no gold files for the {name} set ({SETS.get(name, '')})")
    embedder = get_embedder(DEFAULT_MODEL)
    embedder.encode(["warm up"])  # model loading is not build time
    with tempfile.TemporaryDirectory() as tmp:
        out_root = Path(args.keep) if args.keep else Path(tmp)
        for name, files in sets.items():
            rows, scored = score_set(files, args.backend, out_root / name, embedder, args.fact_similarity)
            print(f"\nExtraction quality vs gold, {name} set, backend {args.backend} ({len(files)} conversations; "
                  "junk share: lower is better)\n")
            print(table(COLUMNS, rows))
            if args.show_misses:
                for conv_id, s in scored:
                    print_misses(f"{name}/{conv_id}", s)
        if args.sample:
            rows, misses = sample_coverage(args.backend, out_root, embedder)
            print(f"\nSample questions with the gold answer in the context ({SAMPLE.name}, dense host, full, "
                  "1,000 tokens, anchor share 0.4)\n")
            print(table(["category", "n", "host alone", "+ Gravity", "share + Gravity"], rows))
            if args.show_misses:
                print("\n-- not covered with Gravity:")
                for m in misses:
                    print(f"   {m}")


if __name__ == "__main__":
    main()
