"""DialogRE (Yu et al., ACL 2020) by its published protocol: the argument pairs are given, the relation is asked.

For each dev instance (a dialogue and a pair x, y that DialogRE's annotators chose), the shipped classic extractor
reads the dialogue as a ``Speaker N: text`` transcript: the rules propose (as training sees them), x and y are
added as entities where the rules did not name them, and the learned heads decide each turn where the two stand
together. The pair's prediction is the rules' relations between x and y and every predicate the relation head
gives at least the threshold in some turn; ``--thresholds`` prints a row per threshold, the shipped one marked.

Scored as DialogRE scores (micro F1 over instance and label), over the labels that map to one of our predicates
(the grouping of ``dialogre.py``: girlfriend and spouse are both "partner", parents and children one "parent"
read in their direction). Published systems are trained on DialogRE's train split and scored on all 36 labels
(BERT about 60 F1, the best in the low 70s); ours never saw DialogRE and can say only these groups, so the table
also prints how many gold labels no predicate of ours can say. Asserts nothing.

``--research`` is the like-for-like run, labelled as such: the same features (the relation head's rows of every
turn where x and y stand together, max- and mean-pooled, with no rules) and a one-vs-rest logistic regression over
all of DialogRE's labels, trained on DialogRE's train split and scored on dev by its micro F1 (every label but
"unanswerable"). Its weights stay in memory and are never written: DialogRE is for non-commercial research only.
The shipped heads are never trained on it; it is read from ``../shared/data/dialogre/`` at run time.

Usage: python benchmarks/dialogre_pairs.py [--split dev] [--limit N] [--thresholds 0.5,0.8] [--research]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dialogre import DATA, LABELS, OURS, SYMMETRIC, norm, one_speaker  # noqa: E402
from gravity_engine.anchors import AnchorSet  # noqa: E402
from gravity_engine.eval.train import rule_anchors  # noqa: E402
from gravity_engine.extract.learned.apply import decide, views  # noqa: E402
from gravity_engine.extract.learned.encoder import get_token_encoder  # noqa: E402
from gravity_engine.extract.learned.features import EntityView, Scene, canonical_predicate  # noqa: E402
from gravity_engine.extract.learned.heads import load_models  # noqa: E402
from gravity_engine.extract.learned.proposals import propose_names  # noqa: E402
from gravity_engine.loaders import load_conversation  # noqa: E402


def gold_items(inst: dict) -> tuple[set[tuple[str, str, str]], int]:
    """The instance's gold (subject, group, object) items in our groups, and how many of its labels have none."""
    items, unsaid = set(), 0
    for label in inst["r"]:
        if label not in LABELS:
            unsaid += label != "unanswerable"
            continue
        group, back = LABELS[label]
        s, o = (inst["y"], inst["x"]) if back else (inst["x"], inst["y"])
        items.add(_item(norm(s), group, norm(o)))
    return items, unsaid


def _item(s: str, group: str, o: str) -> tuple[str, str, str]:
    return (min(s, o), group, max(s, o)) if group in SYMMETRIC else (s, group, o)


def pair_scores(turns: list[str], instances: list[dict], work: Path, k: int, encoder, models) -> list[dict]:
    """For each instance: {(subject, group, object): best probability} (1.0 for what the rules said)."""
    transcript = work / f"d{k:03d}.txt"
    transcript.write_text("\n".join(map(one_speaker, turns)) + "\n", encoding="utf-8")
    conversation = load_conversation(transcript)
    anchors = rule_anchors(conversation)
    propose_names(anchors, conversation, encoder.vocabulary)
    utts, ents = views(anchors, conversation)
    speakers = {s.casefold() for s in conversation.speakers}
    index = {norm(n): i for i, e in enumerate(ents) for n in (e.name, *e.aliases)}
    for inst in instances:
        for arg in (inst["x"], inst["y"]):
            if norm(arg) not in index:
                index[norm(arg)] = len(ents)
                speaker = arg.casefold() in speakers
                ents.append(EntityView(arg, [], "person" if speaker else "other", speaker))
    decided = decide(Scene(utts, ents, encoder), models)
    best: dict[tuple[int, str, int], float] = {}
    for (src, predicate, dst), seen in decided.relations.items():
        best[(src, predicate, dst)] = max(p for _, p in seen)
    for i, e in enumerate(ents):
        for target, predicate, _ in e.rules:
            if (c := canonical_predicate(predicate)) is not None:
                src, dst = (target, i) if c[1] else (i, target)
                best[(src, c[0], dst)] = 1.0
    out = []
    for inst in instances:
        x, y = index[norm(inst["x"])], index[norm(inst["y"])]
        scores: dict[tuple[str, str, str], float] = {}
        for (src, predicate, dst), p in best.items():
            if {src, dst} != {x, y} or predicate not in OURS:
                continue
            s, o = (inst["x"], inst["y"]) if src == x else (inst["y"], inst["x"])
            item = _item(norm(s), OURS[predicate], norm(o))
            scores[item] = max(scores.get(item, 0.0), p)
        out.append(scores)
    return out


def research_rows(turns: list[str], instances: list[dict], work: Path, k: int, encoder) -> list:
    """For each instance: the relation head's rows of the turns where x and y stand together (no rules), max- and
    mean-pooled (None when they never do), and four flags (together at all, how often, x and y speakers)."""
    import numpy as np

    transcript = work / f"r{k:04d}.txt"
    transcript.write_text("\n".join(map(one_speaker, turns)) + "\n", encoding="utf-8")
    conversation = load_conversation(transcript)
    utts = views(AnchorSet(conversation_id=conversation.id), conversation)[0]
    speakers = {s.casefold() for s in conversation.speakers}
    raw = {norm(a): a for inst in instances for a in (inst["x"], inst["y"])}
    names = list(raw)
    ents = [EntityView(raw[n], [], "person" if raw[n].casefold() in speakers else "other",
                       raw[n].casefold() in speakers) for n in names]
    scene = Scene(utts, ents, encoder)
    types = [e.type for e in ents]
    out = []
    for inst in instances:
        x, y = names.index(norm(inst["x"])), names.index(norm(inst["y"]))
        rows = [scene.pair_rows(t, [pair], types)[0] for t in range(len(utts))
                for pair in [next(((a, b) for a, b in scene.pair_candidates(t) if (a.ent, b.ent) == (x, y)), None)]
                if pair is not None]
        flags = np.array([bool(rows), np.log1p(len(rows)), ents[x].speaker, ents[y].speaker], np.float32)
        pooled = np.concatenate([np.max(rows, axis=0), np.mean(rows, axis=0)]) if rows else None
        out.append((pooled, flags))
    return out


def research(limit: int | None) -> int:
    """Train on DialogRE's train split with our features, score on dev; nothing is written."""
    import warnings

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.preprocessing import MultiLabelBinarizer, StandardScaler

    shipped = load_models()
    encoder = get_token_encoder(layer=shipped.layer) if shipped else get_token_encoder()  # the heads' features
    work = Path(tempfile.mkdtemp(prefix="dialogre-research-"))
    started = time.perf_counter()
    data = {}
    for split in ("train", "dev"):
        dialogues = json.loads((DATA / f"{split}.json").read_text(encoding="utf-8"))[:limit]
        feats, labels = [], []
        for k, (turns, insts) in enumerate(dialogues):
            feats.extend(research_rows(turns, insts, work, k, encoder))
            labels.extend([[r for r in inst["r"] if r != "unanswerable"] for inst in insts])
        data[split] = (feats, labels)
        print(f"  {split}: {len(dialogues)} dialogues, {len(feats)} pairs ({time.perf_counter() - started:.0f} s)",
              flush=True)
    width = next(len(v) for v, _ in data["train"][0] if v is not None)

    def matrix(feats):
        return np.stack([np.concatenate([v if v is not None else np.zeros(width, np.float32), f]) for v, f in feats])

    binarizer = MultiLabelBinarizer().fit(data["train"][1] + data["dev"][1])
    x_train, x_dev = matrix(data["train"][0]), matrix(data["dev"][0])
    scaler = StandardScaler().fit(x_train)
    warnings.filterwarnings("ignore", message="Label not .* is present")  # a label dev has and train lacks
    model = OneVsRestClassifier(LogisticRegression(C=0.01, max_iter=2000), n_jobs=1)
    model.fit(scaler.transform(x_train), binarizer.transform(data["train"][1]))
    probs = model.predict_proba(scaler.transform(x_dev))
    gold = binarizer.transform(data["dev"][1]).astype(bool)
    print(f"\nResearch-only run: trained on DialogRE train ({len(x_train)} pairs), scored on dev ({len(x_dev)} pairs), "
          f"{len(binarizer.classes_)} labels, {time.perf_counter() - started:.0f} s; weights not kept\n")
    ours = np.array([label in LABELS for label in binarizer.classes_])  # the labels our predicates can say
    print(f"{'labels':6} | {'threshold':12} | predicted | right | precision | recall |   F1")
    print("-" * 69)
    for name, cols in (("all", np.ones_like(ours)), ("ours", ours)):
        for tau in (0.3, 0.4, 0.5):
            said = probs[:, cols] >= tau
            g = gold[:, cols]
            pred, right, n = int(said.sum()), int((said & g).sum()), int(g.sum())
            p, r = right / max(pred, 1), right / max(n, 1)
            mark = " (fixed)" if tau == 0.5 else ""  # set before the run; the others draw the curve
            f1 = 2 * p * r / (p + r) if p + r else 0.0
            print(f"{name:6} | {tau:<4.2f}{mark:8} | {pred:9} | {right:5} | {p:9.3f} | {r:6.3f} | {f1:.3f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "train"])
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--thresholds", default="0.5,0.8", help="more rows beside the shipped threshold")
    ap.add_argument("--research", action="store_true",
                    help="train a throwaway head on DialogRE's train split and score dev (like for like; not shipped)")
    args = ap.parse_args()
    if args.research:
        return research(args.limit)
    path = DATA / f"{args.split}.json"
    if not path.is_file():
        print(f"{path} not found (DialogRE is read from ../shared/data at run time)")
        return 1
    models = load_models()
    if models is None:
        print("no trained heads: run `python -m gravity_engine train` first")
        return 1
    encoder = get_token_encoder(layer=models.layer)
    shipped = models.thresholds["relation"]
    taus = sorted({shipped, *(float(t) for t in args.thresholds.split(",") if t.strip())})
    dialogues = json.loads(path.read_text(encoding="utf-8"))[:args.limit]
    work = Path(tempfile.mkdtemp(prefix="dialogre-pairs-"))
    started = time.perf_counter()
    golds, scored, unsaid, instances = [], [], 0, 0
    for k, (turns, insts) in enumerate(dialogues):
        for inst, scores in zip(insts, pair_scores(turns, insts, work, k, encoder, models)):
            items, n = gold_items(inst)
            golds.append(items)
            scored.append(scores)
            unsaid += n
            instances += 1
        if (k + 1) % 50 == 0:
            print(f"  {k + 1}/{len(dialogues)} dialogues ({time.perf_counter() - started:.0f} s)", flush=True)
    gold_n = sum(len(g) for g in golds)
    print(f"\nDialogRE {args.split}, argument pairs given ({len(dialogues)} dialogues, {instances} pairs, "
          f"{time.perf_counter() - started:.0f} s)")
    print(f"gold labels in our groups: {gold_n}; gold labels no predicate of ours can say: {unsaid}\n")
    print(f"{'threshold':16} | predicted | right | precision | recall |   F1")
    print("-" * 64)
    for tau in taus:
        pred = right = 0
        per = Counter()
        for items, scores in zip(golds, scored):
            said = {i for i, p in scores.items() if p >= tau}
            pred += len(said)
            right += len(said & items)
            for i in said & items:
                per[i[1]] += 1
        p = right / pred if pred else 0.0
        r = right / gold_n if gold_n else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        mark = " (shipped)" if tau == shipped else ""
        print(f"{tau:<4.2f}{mark:12} | {pred:9} | {right:5} | {p:9.3f} | {r:6.3f} | {f1:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
