"""How well the learned heads generalise to a conversation they were not fitted on, measured on the training chats
alone (grouped k-fold cross-validation: each fold's conversations are held out whole), so a change to the heads'
features or fitting can be judged without reading DEV or TEST. Prints tables, asserts nothing.

* typing: accuracy over every proposed entity (junk included) and over real ones, and recall and precision of
  the main types, the head alone (no rules' type to fall back on, no threshold);
* relations, pair level: per held-out conversation, each pair of entities gets per predicate the highest
  probability any of its turns gave (what a build keeps); a (pair, predicate) is predicted when that clears the
  threshold and is the pair's strongest, right when the pair's turns carry that gold relation;
* with ``--ties``: the tie head (what two speakers are to each other, from the relation head's readings over the
  whole chat) held out, against the relation head's best single turn;
* with ``--curve 0.25,0.5,1``: the relation head's learning curve, each fold's head fitted on that share of the
  other folds' conversations (a seeded choice), scored on the same held-out folds: how much more data would buy.

Usage: python benchmarks/heads_cv.py [--folds 4] [--layer 4] [--seed 13] [--limit N] [--curve 0.25,0.5,1] [--ties]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gravity_engine.eval.train import (TRAIN_DIR, Examples, _load, conversation_examples, fit_head,  # noqa: E402
                                       fit_ties, rule_anchors, tie_examples)
from gravity_engine.eval.gold import find_gold_files  # noqa: E402
from gravity_engine.extract.learned.encoder import DEFAULT_LAYER, get_token_encoder  # noqa: E402
from gravity_engine.extract.learned.features import LABELS, SYMMETRIC, TYPE_LABELS  # noqa: E402

THRESHOLDS = (0.3, 0.5, 0.7, 0.9, 0.95)
MAIN_TYPES = ("person", "pet", "place", "organization", "junk")


def held_out(head: str, ex: Examples, labels: tuple[str, ...], folds: int, seed: int, share: float = 1.0) -> np.ndarray:
    """Each row's probabilities from a head fitted on the other folds' conversations (``share`` of them)."""
    x = np.stack(ex.x[head])
    y = np.asarray(ex.y[head])
    conv = np.asarray([k[0] for k in ex.keys[head]])
    group = conv % folds
    rng = np.random.default_rng(seed)
    out = np.zeros((len(y), len(labels)), np.float32)
    for f in range(folds):
        test = group == f
        others = np.unique(conv[~test])
        fit = ~test & np.isin(conv, rng.choice(others, max(1, round(len(others) * share)), replace=False))
        fitted = fit_head(head, list(x[fit]), list(y[fit]), labels, seed)
        out[test] = fitted.predict_proba(x[test])
    return out


def typing_table(ex: Examples, p: np.ndarray) -> None:
    y = np.asarray(ex.y["typing"])
    pred = p.argmax(axis=1)
    real = y != TYPE_LABELS.index("junk")
    print(f"\ntyping, held out: accuracy {np.mean(pred == y):.3f} over {len(y)} entities (junk included), "
          f"{np.mean(pred[real] == y[real]):.3f} over the {int(real.sum())} real ones\n")
    print(f"{'type':13} | {'n':>5} | recall | precision")
    for t in MAIN_TYPES:
        j = TYPE_LABELS.index(t)
        n = int(np.sum(y == j))
        said = pred == j
        print(f"{t:13} | {n:5} | {np.mean(pred[y == j] == j) if n else 0:.3f}  | "
              f"{np.mean(y[said] == j) if said.any() else 0:.3f}")


def _pairs(ex: Examples, p: np.ndarray) -> tuple[set, dict]:
    """The gold (conversation, subject, predicate, object) keys, and each pair's strongest prediction."""
    y = np.asarray(ex.y["relations"])
    gold, best = set(), defaultdict(float)
    for (conv, a, b), label, probs in zip(ex.keys["relations"], y, p):
        for j in range(1, len(LABELS)):
            src, dst = (min(a, b), max(a, b)) if LABELS[j] in SYMMETRIC else (a, b)
            key = (conv, src, j, dst)
            if j == label:
                gold.add(key)
            best[key] = max(best[key], float(probs[j]))
    strongest: dict[tuple, tuple] = {}  # one predicate per pair, as a build keeps it
    for key, prob in best.items():
        pair = (key[0], frozenset((key[1], key[3])))
        if prob > strongest.get(pair, (None, 0.0))[1]:
            strongest[pair] = (key, prob)
    return gold, strongest


def relation_table(ex: Examples, p: np.ndarray) -> None:
    y = np.asarray(ex.y["relations"])
    gold, strongest = _pairs(ex, p)
    print(f"\nrelations, held out, pair level ({len(gold)} related (pair, predicate) of {len(y)} rows, "
          f"{int(np.sum(y > 0))} related rows)\n")
    print("threshold | predicted | right | precision | recall | F1")
    for tau in THRESHOLDS:
        said = [k for k, prob in strongest.values() if prob >= tau]
        right = sum(k in gold for k in said)
        prec, rec = right / max(len(said), 1), right / max(len(gold), 1)
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        print(f"{tau:9} | {len(said):9} | {right:5} | {prec:9.3f} | {rec:6.3f} | {f1:.3f}")


def curve_table(ex: Examples, shares: list[float], folds: int, seed: int) -> None:
    conversations = len({k[0] for k in ex.keys["relations"]})
    print(f"\nrelation head learning curve, held out ({folds} folds; each fold's head fitted on a share of the "
          f"other folds' conversations)\n")
    print("share | conversations fitted on | recall at precision 0.7 | at 0.8 | best F1")
    for share in shares:
        gold, strongest = _pairs(ex, held_out("relations", ex, LABELS, folds, seed, share))
        ranked = sorted(((prob, key in gold) for key, prob in strongest.values()), reverse=True)
        right = np.cumsum([hit for _, hit in ranked])
        prec, rec = right / np.arange(1, len(ranked) + 1), right / max(len(gold), 1)
        at = [float(rec[np.flatnonzero(prec >= t)].max()) if (prec >= t).any() else 0.0 for t in (0.7, 0.8)]
        f1 = float(np.max(2 * prec * rec / np.maximum(prec + rec, 1e-9)))
        print(f"{share:5} | {round(conversations * (folds - 1) / folds * share):23} | {at[0]:23.3f} | {at[1]:6.3f} | "
              f"{f1:.3f}")


def ties_table(ex: Examples, folds: int, seed: int) -> None:
    """The tie head held out twice: each pair of speakers read by a relation head fitted without its conversation,
    then judged by a tie head fitted on the other folds' pairs; against the relation head's best single turn."""
    x, y, conv = tie_examples(ex, folds, seed)
    p = np.zeros((len(y), len(LABELS)), np.float32)
    for f in range(folds):
        test = conv % folds == f
        p[test] = fit_ties(x[~test], y[~test]).predict_proba(x[test])
    best_turn = x[:, :len(LABELS) - 1]  # tie_row's first block: each predicate's highest probability on one turn
    two = x[:, -2] > 0.5
    print(f"\nties of speakers, held out ({len(y)} pairs of speakers, {int(np.sum(y > 0))} with a tie, "
          f"{int(np.sum(y < 0))} with only optional ones left out; two-person chats: {int(np.sum(two))})\n")
    print("reading | threshold | pairs | said | right | precision | recall")
    for name, probs in (("tie head", p[:, 1:]), ("best turn", best_turn)):
        for tau in (0.3, 0.5, 0.7, 0.9, 0.95):
            for where, sel in (("all", y >= 0), ("two", two & (y >= 0))):
                j = probs[sel].argmax(axis=1) + 1
                said = probs[sel].max(axis=1) >= tau
                right = said & (j == y[sel])
                print(f"{name:9} | {tau:9} | {where:5} | {int(said.sum()):4} | {int(right.sum()):5} | "
                      f"{right.sum() / max(said.sum(), 1):9.3f} | {right.sum() / max(np.sum(y[sel] > 0), 1):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--layer", type=int, default=DEFAULT_LAYER, help="encoder layer the features are read from")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--limit", type=int, default=0, help="only the first N training conversations")
    ap.add_argument("--curve", help="comma-separated shares of the training folds for the relation head's "
                    "learning curve (e.g. 0.25,0.5,1); the other tables are skipped")
    ap.add_argument("--ties", action="store_true", help="only the tie head's table (what two speakers are)")
    ap.add_argument("--cache", default=str(ROOT / ".gravity_cache" / "train"), help="the rules' proposals, cached")
    args = ap.parse_args()
    started = time.perf_counter()
    encoder = get_token_encoder(layer=args.layer)
    files = find_gold_files(TRAIN_DIR)[:args.limit or None]
    ex = Examples()
    for k, f in enumerate(files):
        gold, conv = _load(f)
        ex.conversation = k
        conversation_examples(gold, conv, rule_anchors(conv, Path(args.cache)), encoder, ex)
    print(f"{len(files)} training conversations, encoder layer {args.layer}, {args.folds} folds by conversation, "
          f"seed {args.seed} (features in {time.perf_counter() - started:.0f} s)")
    if args.ties:
        ties_table(ex, args.folds, args.seed)
        print(f"\n{time.perf_counter() - started:.0f} s")
        return 0
    if args.curve:
        curve_table(ex, [float(s) for s in args.curve.split(",")], args.folds, args.seed)
        print(f"\n{time.perf_counter() - started:.0f} s")
        return 0
    typing_table(ex, held_out("typing", ex, TYPE_LABELS, args.folds, args.seed))
    relation_table(ex, held_out("relations", ex, LABELS, args.folds, args.seed))
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
