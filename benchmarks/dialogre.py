"""DialogRE (Yu et al., ACL 2020) end to end: relations our extractor finds in real dialogue, against human labels.

Nothing is given: each dev dialogue is written as a ``Speaker N: text`` transcript and built with the default
(classic) backend, as ``build-all`` builds a folder; the store's relations are mapped to DialogRE's labels and
matched with the gold triples by name (entity name or alias, case-insensitive). Recall is over the gold triples
whose label maps to one of our predicates; precision over the predicted relations whose predicate maps to a label.
A relation and its inverse (``per:parents`` / ``per:children``, ``per:place_of_residence`` /
``gpe:residents_of_place``) count once. Prints a table per label group and the totals; asserts nothing.

DialogRE is for non-commercial research only: it is read from ``../shared/data/dialogre/`` at run time, measured
here, and never used to train the weights the project ships.

Usage: python benchmarks/dialogre.py [--split dev] [--limit N] [--keep DIR] [--show N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.build import build_store  # noqa: E402
from gravity_engine.embed import get_embedder  # noqa: E402
from gravity_engine.extract.learned.features import canonical_predicate  # noqa: E402
from gravity_engine.loaders import load_conversation  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "dialogre"

# DialogRE label -> (our predicate group, the pair runs backwards: DialogRE's x is our object)
LABELS = {
    "per:girl/boyfriend": ("partner", False), "per:spouse": ("partner", False), "per:friends": ("friend", False),
    "per:siblings": ("sibling", False), "per:parents": ("parent", True), "per:children": ("parent", False),
    "per:roommate": ("flatmate", False), "per:neighbor": ("neighbour", False),
    "per:other_family": ("other family", False), "per:positive_impression": ("likes", False),
    "per:negative_impression": ("dislikes", False), "per:boss": ("manager", True),
    "per:subordinate": ("manager", False), "per:place_of_residence": ("lives in", False),
    "gpe:residents_of_place": ("lives in", True), "per:employee_or_member_of": ("works at / member of", False),
    "org:employees_or_members": ("works at / member of", True), "per:place_of_work": ("works at / member of", False),
    "per:pet": ("pet", False), "per:schools_attended": ("studies at", False), "org:students": ("studies at", True),
    "per:works": ("works on", False),
}
OURS = {"partner_of": "partner", "friend_of": "friend", "sibling_of": "sibling", "parent_of": "parent",
        "flatmate_of": "flatmate", "neighbour_of": "neighbour", "cousin_of": "other family",
        "grandparent_of": "other family", "likes": "likes", "dislikes": "dislikes", "manager_of": "manager",
        "lives_in": "lives in", "works_at": "works at / member of", "member_of": "works at / member of",
        "owns_pet": "pet", "studies_at": "studies at", "works_on": "works on"}
SYMMETRIC = {"partner", "friend", "sibling", "flatmate", "neighbour", "other family"}


def one_speaker(turn: str) -> str:
    """"Speaker 1, Speaker 2: Hi" (said together) as the first speaker's turn: a transcript turn has one name;
    "Speaker 1:Check it out" (no space, in the train split) as a turn too."""
    turn = re.sub(r"^(Speaker \d+)(?:\s*(?:,|and)\s*Speaker \d+)+:", r"\1:", turn)
    return re.sub(r"^(Speaker \d+):(?=\S)", r"\1: ", turn)


def norm(name: str) -> str:
    return " ".join(re.sub(r"[^\w ]+", " ", name.casefold()).split())


def gold_triples(instances: list[dict]) -> set[tuple[str, str, str]]:
    out = set()
    for inst in instances:
        for label in inst["r"]:
            if label in LABELS:
                group, back = LABELS[label]
                s, o = (inst["y"], inst["x"]) if back else (inst["x"], inst["y"])
                out.add(_key(norm(s), group, norm(o)))
    return out


def _key(s: str, group: str, o: str) -> tuple[str, str, str]:
    return (min(s, o), group, max(s, o)) if group in SYMMETRIC else (s, group, o)


def predicted(anchors) -> list[tuple[set[str], str, set[str], str]]:
    """(subject names, group, object names, readable) for each store relation whose predicate maps to a label."""
    names = {e.id: {norm(n) for n in (e.name, *e.aliases)} for e in anchors.entities}
    by_name = {norm(n): e.id for e in anchors.entities for n in (e.name, *e.aliases)}
    out = []
    for e in anchors.entities:
        for r in e.relations:
            c = canonical_predicate(r.predicate)
            if c is None or c[0] not in OURS:
                continue
            target = r.target_id or by_name.get(norm(r.target))
            obj = names.get(target, {norm(r.target)})
            subj = names[e.id]
            if c[1]:
                subj, obj = obj, subj
            out.append((subj, OURS[c[0]], obj, f"{e.name} {r.predicate} {r.target}"))
    return out


def matches(pred: tuple[set[str], str, set[str], str], gold: tuple[str, str, str]) -> bool:
    subj, group, obj, _ = pred
    if group != gold[1]:
        return False
    if gold[0] in subj and gold[2] in obj:
        return True
    return group in SYMMETRIC and gold[2] in subj and gold[0] in obj


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "train"])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--keep", type=Path, default=None, help="keep the transcripts and stores here")
    ap.add_argument("--show", type=int, default=0, help="print N wrong and N missed triples")
    args = ap.parse_args()
    path = DATA / f"{args.split}.json"
    if not path.is_file():
        print(f"{path} not found (DialogRE is read from ../shared/data at run time)")
        return 1
    dialogues = json.loads(path.read_text(encoding="utf-8"))[:args.limit]
    work = args.keep or Path(tempfile.mkdtemp(prefix="dialogre-"))
    work.mkdir(parents=True, exist_ok=True)
    embedder = get_embedder()
    per = Counter()
    wrong, missed = [], []
    started = time.perf_counter()
    for k, (turns, instances) in enumerate(dialogues):
        transcript = work / f"d{k:03d}.txt"
        transcript.write_text("\n".join(map(one_speaker, turns)) + "\n", encoding="utf-8")
        store = build_store(load_conversation(transcript), work / f"d{k:03d}", embedder=embedder)
        gold = gold_triples(instances)
        preds = predicted(store.anchors)
        for g in gold:
            hit = any(matches(p, g) for p in preds)
            per[(g[1], "gold")] += 1
            per[(g[1], "found")] += hit
            if not hit:
                missed.append((k, g))
        for p in preds:
            ok = any(matches(p, g) for g in gold)
            per[(p[1], "pred")] += 1
            per[(p[1], "right")] += ok
            if not ok:
                wrong.append((k, p[3]))
        if (k + 1) % 50 == 0:
            print(f"  {k + 1}/{len(dialogues)} dialogues built ({time.perf_counter() - started:.0f} s)", flush=True)
    groups = sorted({g for g, _ in per})
    print(f"\nDialogRE {args.split}, end to end ({len(dialogues)} dialogues, classic backend, "
          f"{time.perf_counter() - started:.0f} s)\n")
    print(f"{'label group':22} | gold | found | recall | predicted | right | precision")
    print("-" * 78)
    for g in groups:
        gold_n, found, pred, right = (per[(g, s)] for s in ("gold", "found", "pred", "right"))
        print(f"{g:22} | {gold_n:4} | {found:5} | {found / gold_n if gold_n else 0:6.2f} | {pred:9} | {right:5} | "
              f"{right / pred if pred else 0:9.2f}")
    gold_n = sum(per[(g, "gold")] for g in groups)
    found = sum(per[(g, "found")] for g in groups)
    pred = sum(per[(g, "pred")] for g in groups)
    right = sum(per[(g, "right")] for g in groups)
    r = found / gold_n if gold_n else 0.0
    p = right / pred if pred else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    print("-" * 78)
    print(f"{'all':22} | {gold_n:4} | {found:5} | {r:6.3f} | {pred:9} | {right:5} | {p:9.3f}   F1 {f1:.3f}")
    for k, line in wrong[:args.show]:
        print(f"  wrong  d{k:03d}: {line}")
    for k, g in missed[:args.show]:
        print(f"  missed d{k:03d}: {g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
