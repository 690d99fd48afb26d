"""What the classic stores of LoCoMo's ten conversations say about who relates to whom: counts, the two speakers,
pets, and a seeded random sample of relations for a person to judge blind.

Reads the stores ``measure_locomo.py`` builds (``--runs DIR/classic/<conv>``). Prints, per conversation: the
relations (a relation and its inverse count once; a taste only with a named target, i.e. a target that is an
entity), whether the two speakers are related and how, the entities typed pet and whether each has an owner; then
totals. ``--sample N --sheet FILE`` writes N relations chosen with ``--seed`` to FILE (outside the repository:
LoCoMo text never goes into it) with the utterances each cites, for a judge who did not build them; ``--key`` keeps
which store each row came from. Asserts nothing.

Usage: python benchmarks/locomo_relations.py --runs runs [--sample 50 --seed 7 --sheet /tmp/sheet.md --key /tmp/key.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.extract.learned.features import SYMMETRIC, canonical_predicate  # noqa: E402
from gravity_engine.store import AnchorStore  # noqa: E402

TASTES = ("likes", "dislikes")


def relations(store: AnchorStore, text_tastes: bool = False) -> list[dict]:
    """Each relation once: (subject, predicate, object) with symmetric and inverse readings folded together; tastes
    only with an entity as target, or with ``text_tastes`` any named thing ("pottery")."""
    ents = store.anchors.entities
    by_id = {e.id: e for e in ents}
    by_name = {n.casefold(): e for e in ents for n in (e.name, *e.aliases)}
    seen: dict[tuple, dict] = {}
    for e in ents:
        for r in e.relations:
            target = by_id.get(r.target_id) if r.target_id else by_name.get(r.target.casefold())
            c = canonical_predicate(r.predicate)
            pred, back = c if c else (r.predicate, False)
            if pred in TASTES and target is None and not text_tastes:
                continue  # a taste counts only with a named target
            subj, obj = (target.name if target else r.target, e.name) if back else (e.name, target.name if target else r.target)
            key = (min(subj, obj), pred, max(subj, obj)) if pred in SYMMETRIC else (subj, pred, obj)
            seen.setdefault(key, {"subject": subj, "predicate": pred, "object": obj, "stored_as": r.predicate,
                                  "confidence": r.confidence, "sources": list(r.source_ids)})
    return list(seen.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=Path, default=ROOT / "runs")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sheet", type=Path, default=None)
    ap.add_argument("--key", type=Path, default=None)
    args = ap.parse_args()
    folder = args.runs / "classic"
    stores = sorted(p for p in folder.iterdir() if (p / "anchors.json").exists()) if folder.is_dir() else []
    if not stores:
        print(f"no classic stores under {folder} (build them with benchmarks/measure_locomo.py --runs {args.runs})")
        return 1
    print(f"{'conversation':13} | relations | + text tastes | speakers related | pets (with owner)")
    print("-" * 78)
    total = total_tastes = 0
    every = []
    for path in stores:
        store = AnchorStore.load(path)
        rels = relations(store)
        with_tastes = len(relations(store, text_tastes=True))
        total += len(rels)
        total_tastes += with_tastes
        speakers = store.conversation.speakers
        between = [f"{r['predicate']}" for r in rels if {r["subject"], r["object"]} == set(speakers)]
        pets = [e for e in store.anchors.entities if e.type == "pet"]
        owned = {r["object"] for r in rels if r["predicate"] == "owns_pet"}
        pet_text = ", ".join(f"{p.name}{'' if p.name in owned else ' (no owner)'}" for p in pets) or "-"
        print(f"{path.name:13} | {len(rels):9} | {with_tastes:13} | {', '.join(between) or 'no':16} | {pet_text[:50]}")
        every += [(path.name, r) for r in rels]
    print("-" * 78)
    print(f"{'all':13} | {total:9} | {total_tastes:13}")
    if args.sample and args.sheet:
        rng = random.Random(args.seed)
        picked = rng.sample(every, min(args.sample, len(every)))
        lines = ["# Relations to judge", "", "For each row: is the relation right, as the cited utterances (and common "
                 "sense about the two speakers) say? Answer `yes` or `no` per row, with a few words when `no`.", ""]
        key = []
        for k, (conv, r) in enumerate(picked, 1):
            store = AnchorStore.load(folder / conv)
            index = store.conversation.utterance_index()
            said = [f"    - {i} {index[i].speaker}: {index[i].text}" for i in r["sources"][:3] if i in index]
            lines += [f"{k}. **{r['subject']} {r['predicate']} {r['object']}**", *said, ""]
            key.append({"row": k, "conversation": conv, **r})
        args.sheet.write_text("\n".join(lines), encoding="utf-8")
        if args.key:
            args.key.write_text(json.dumps(key, indent=1), encoding="utf-8")
        print(f"wrote {len(picked)} rows to {args.sheet}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
