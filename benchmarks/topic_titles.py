"""Topic titles before and after, as a blind sheet for a person to judge (issue 30).

    .venv/bin/python benchmarks/topic_titles.py [--conversations conv-26,conv-43,conv-41] [--seed 0]
        [--before-rev 6d98486] [--out /tmp/topic_titles]

For each conversation it builds a store with the code of ``--before-rev`` (a ``git archive`` of that revision,
run from its own folder) and one with the working tree, takes the titles the app shows (``viz.topics.topic_titles``
of each tree), pairs the topics of the two builds by their utterances (the clustering is the same code in both:
a topic whose utterances differ is left out), and picks ``--per`` topics per conversation with a seeded random
choice. It writes, outside the repository (LoCoMo text never enters it):

* ``sheet.md`` and ``sheet.csv``: one row per title, before and after shuffled together, each with the topic's
  most central utterances; the judge marks each row fitting or not, without knowing which code wrote it;
* ``key.json``: row id -> conversation, topic and before/after (for whoever tallies, not for the judge).

The committed judgements hold row ids and verdicts only. ``--tally FILE`` (a CSV of ``row,fitting`` with yes/no)
prints the share judged fitting before and after.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
BEFORE_REV = "6d98486"  # the last revision whose titles were re-derived from key facts at display time

_TITLES = """
import json, sys
from gravity_engine.store import AnchorStore
from gravity_engine.viz.topics import topic_titles
s = AnchorStore.load(sys.argv[1])
t = topic_titles(s.anchors)
print(json.dumps([{"id": x.id, "title": t[x.id], "source_ids": x.source_ids} for x in s.anchors.topics]))
"""


def _python() -> str:
    return str(ROOT / ".venv" / "bin" / "python")


def _tree(rev: str, out: Path) -> Path:
    """The code of ``rev`` in a folder of its own (run from there, its package shadows the working tree's)."""
    tree = out / f"tree-{rev}"
    if not (tree / "gravity_engine").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def _build(tree: Path, conversation: str, store: Path) -> None:
    if (store / "anchors.json").is_file():
        return
    print(f"building {conversation} with {tree.name} -> {store}", file=sys.stderr)
    subprocess.run([_python(), "-m", "gravity_engine", "build", str(LOCOMO), "--conversation", conversation,
                    "--out", str(store)], cwd=tree, check=True, capture_output=True)


def _titles(tree: Path, store: Path) -> list[dict]:
    done = subprocess.run([_python(), "-c", _TITLES, str(store)], cwd=tree, check=True, capture_output=True,
                          text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _pairs(before: list[dict], after: list[dict], min_overlap: float = 0.8) -> list[tuple[dict, dict]]:
    """Topics of the two builds that hold (nearly) the same utterances."""
    out = []
    for a in after:
        ids = set(a["source_ids"])
        best = max(before, key=lambda b: len(ids & set(b["source_ids"])) / max(1, len(ids | set(b["source_ids"]))),
                   default=None)
        if best is not None and len(ids & set(best["source_ids"])) / max(1, len(ids | set(best["source_ids"]))) \
                >= min_overlap:
            out.append((best, a))
    return out


def _central(store_path: Path, source_ids: list[str], embedder, n: int = 6) -> list[str]:
    """The topic's ``n`` utterances closest to the mean of its utterances, in conversation order."""
    import numpy as np

    from gravity_engine.store import AnchorStore

    store = AnchorStore.load(store_path)
    by_id = {u.id: u for u in store.conversation.utterances()}
    utts = [by_id[i] for i in source_ids if i in by_id]
    if not utts:
        return []
    vecs = np.asarray(embedder.encode([u.text for u in utts]))
    centre = vecs.mean(axis=0)
    best = sorted(np.argsort(-(vecs @ centre))[:n])
    return [f"{utts[i].speaker}: {' '.join(utts[i].text.split())}" for i in best]


def make_sheet(args) -> None:
    from gravity_engine.embed import embedder_for

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    before_tree = _tree(args.before_rev, out)
    embedder = embedder_for("all-MiniLM-L6-v2", 384)
    rng = random.Random(args.seed)
    rows = []
    for conv in args.conversations.split(","):
        before_store, after_store = out / f"before-{conv}", out / f"after-{conv}"
        _build(before_tree, conv, before_store)
        _build(ROOT, conv, after_store)
        pairs = _pairs(_titles(before_tree, before_store), _titles(ROOT, after_store))
        chosen = rng.sample(pairs, min(args.per, len(pairs)))
        print(f"{conv}: {len(pairs)} topics paired, {len(chosen)} chosen", file=sys.stderr)
        for b, a in chosen:
            said = _central(after_store, a["source_ids"], embedder)
            for version, topic in (("before", b), ("after", a)):
                rows.append({"conversation": conv, "topic": a["id"], "version": version, "title": topic["title"],
                             "utterances": said})
    rng.shuffle(rows)
    key = {}
    with open(out / "sheet.csv", "w", newline="", encoding="utf-8") as fh, \
            open(out / "sheet.md", "w", encoding="utf-8") as md:
        writer = csv.writer(fh)
        writer.writerow(["row", "title", "key utterances", "fitting (yes/no)"])
        md.write("# Topic titles, judged blind\n\nFor each row: does the title say what these utterances are about "
                 "(a person would agree with it)? Answer yes or no in sheet.csv.\n\n")
        for i, r in enumerate(rows, start=1):
            rid = f"T{i:02d}"
            key[rid] = {k: r[k] for k in ("conversation", "topic", "version")}
            writer.writerow([rid, r["title"], " | ".join(r["utterances"]), ""])
            md.write(f"## {rid}: {r['title']}\n\n" + "\n".join(f"- {u}" for u in r["utterances"]) + "\n\n")
    (out / "key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"{len(rows)} rows: {out / 'sheet.md'} (and sheet.csv); key: {out / 'key.json'}")


def tally(path: Path, key_path: Path) -> None:
    key = json.loads(key_path.read_text(encoding="utf-8"))
    counts = {"before": [0, 0], "after": [0, 0]}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            verdict = (row.get("fitting") or row.get("fitting (yes/no)") or "").strip().lower()
            if row["row"] in key and verdict in ("yes", "no"):
                c = counts[key[row["row"]]["version"]]
                c[0] += verdict == "yes"
                c[1] += 1
    print(f"{'titles':8} {'judged':>7} {'fitting':>8} {'share':>6}")
    for version, (yes, n) in counts.items():
        print(f"{version:8} {n:>7} {yes:>8} {yes / n if n else 0:>6.0%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--conversations", default="conv-26,conv-43,conv-41")
    ap.add_argument("--per", type=int, default=10, help="topics per conversation")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--before-rev", default=BEFORE_REV)
    ap.add_argument("--out", default="/tmp/topic_titles", help="a folder outside the repository")
    ap.add_argument("--tally", help="a judged sheet (CSV with row and fitting columns): print the shares")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    if out.is_relative_to(ROOT):
        sys.exit(f"--out {out} is inside the repository; LoCoMo text must stay out of it")
    if args.tally:
        tally(Path(args.tally), out / "key.json")
        return
    if not LOCOMO.is_file():
        sys.exit(f"LoCoMo is not at {LOCOMO}")
    make_sheet(args)


if __name__ == "__main__":
    main()
