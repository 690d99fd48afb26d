"""``gravity train``: the learned heads of the classic extractor, from conversations the project wrote and owns.

Training reads ``sample_data/train/`` (gold format, ``docs/gold_format.md``): each conversation is built by the
rules alone (what the heads will be asked to decide at build time), every proposed entity, pronoun or kin word and
pair of entities is labelled from the annotation, and three small heads are fitted on the encoder's features
(``extract/learned``), then a fourth on what relation heads fitted without each chat read of its pairs of speakers
(:func:`tie_examples`). The DEV conversations (``sample_data/gold/dev/``) only set the thresholds and report the
calibration; TEST is never read. Seeded: the same data and seed give the same weights.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import __version__
from ..anchors import AnchorSet
from ..build.consolidate import consolidate_entities  # a pure step of the build: training never writes a store
from ..conversation import Conversation
from ..extract.base import make_batches
from ..extract.classic import EXTRACTOR_VERSION, ClassicExtractor
from ..extract.learned.apply import Decisions, decide, views, write_back
from ..extract.learned.encoder import TokenEncoder, get_token_encoder
from ..extract.learned.features import LABELS, SYMMETRIC, TYPE_LABELS, Scene, canonical_predicate, tie_row
from ..extract.learned.heads import HEADS, TIES, WEIGHTS, Head, Models
from ..extract.learned.proposals import propose_names
from ..fileio import atomic_write_text
from .gold import Gold, GoldIndex, find_gold_files, load_gold, mention_spans, normalize_type, score_store
from ..loaders import load_conversation

ROOT = Path(__file__).resolve().parents[2]  # the project: gravity_engine/eval/train.py
TRAIN_DIR = ROOT / "sample_data" / "train"
DEV_DIR = ROOT / "sample_data" / "gold" / "dev"
NEGATIVES_PER_POSITIVE = 20  # nearly all: fewer would shift the probabilities up
HIDDEN = {"typing": (128,), "reference": (64,), "relations": (192,)}
MAX_EPOCHS = 40
PATIENCE = 4
BATCH = 256
# The tie head: its regularisation and threshold, chosen held out on the training chats (benchmarks/heads_cv.py
# --ties, 290 chats; DEV has too few pairs of speakers to set them): at 0.7, precision 0.85 and recall 0.12 over all
# pairs of speakers, 0.86 and 0.27 in two-person chats (at 0.5: 0.76 and 0.24, 0.74 and 0.56), where the relation
# head's best single turn gave 0.59 and 0.09, 0.69 and 0.33 at 0.95.
TIE_C = 0.5
TIE_THRESHOLD = 0.7
TIE_FOLDS = 4


def _log(msg: str) -> None:
    print(msg, flush=True)


# ------------------------------------------------------------------------------------------------- rules

def rule_anchors(conversation: Conversation, cache: Path | None = None) -> AnchorSet:
    """What the rules alone propose for a conversation's entities (no heads), cached by its text."""
    key = hashlib.sha256((conversation.model_dump_json() + EXTRACTOR_VERSION + __version__ + "lenient").encode()
                         ).hexdigest()
    path = cache / f"{key[:24]}.json" if cache else None
    if path is not None and path.exists():
        return AnchorSet.model_validate_json(path.read_text(encoding="utf-8"))

    extractor = ClassicExtractor(learned=False)
    results = []
    for batch, result in extractor.extract_batches(make_batches(conversation)):
        if isinstance(result, Exception):
            raise result
        results.append(result)
    anchors = AnchorSet(conversation_id=conversation.id,
                        entities=consolidate_entities((r.entities for r in results), conversation.speakers, []))
    extractor.propose_entities(conversation, anchors, lenient=True)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, anchors.model_dump_json())
    return anchors


# ------------------------------------------------------------------------------------------------- examples

@dataclass
class Examples:
    x: dict[str, list[np.ndarray]] = field(default_factory=lambda: {h: [] for h in HEADS})
    y: dict[str, list[int]] = field(default_factory=lambda: {h: [] for h in HEADS})
    # per row: (conversation, *what the row is about), so held-out scores can group by conversation and by pair
    keys: dict[str, list[tuple]] = field(default_factory=lambda: {h: [] for h in HEADS})
    # per pair of speakers: (conversation, its relation rows on every turn where the two stand together, the label
    # of their tie (-1: only optional ties, left out), how many speakers the chat has)
    ties: list[tuple[int, np.ndarray, int, int]] = field(default_factory=list)
    conversation: int = 0

    def add(self, head: str, rows: np.ndarray, labels: list[int], keys: list[tuple] | None = None) -> None:
        self.x[head].extend(rows)
        self.y[head].extend(labels)
        self.keys[head].extend((self.conversation, *k) for k in (keys or [()] * len(labels)))


def _gold_relations(gold: Gold, index: GoldIndex) -> dict[frozenset[int], list[tuple[int, str, int, set[str], bool]]]:
    """Gold relations between two gold entities by their pair: (subject, predicate, object, evidence, optional)."""
    out: dict[frozenset[int], list] = {}
    for r in gold.relations:
        s, o = index.find(r.subject), index.find(r.object)
        c = canonical_predicate(r.predicate)
        if s is None or o is None or c is None or s == o:
            continue
        pred, flipped = c
        if flipped:
            s, o = o, s
        out.setdefault(frozenset((s, o)), []).append((s, pred, o, set(r.evidence), r.optional))
    return out


def _pair_label(a: int | None, b: int | None, uids: set[str], rels) -> int | None:
    """The label of gold entities (a, b) at utterances ``uids``: a predicate whose evidence is there, "none" when
    they are not related (or only the other way round there), None when it is unclear (say it elsewhere)."""
    if a is None or b is None or a == b:
        return 0
    here = rels.get(frozenset((a, b)), [])
    if not here:
        return 0
    said = [r for r in here if r[3] & uids]
    forward = [r for r in said if r[0] == a or r[1] in SYMMETRIC]
    if forward and not all(r[4] for r in forward):
        return LABELS.index(next(r[1] for r in forward if not r[4]))
    if said and not forward:
        return 0
    return None


def conversation_examples(gold: Gold, conversation: Conversation, anchors: AnchorSet, encoder: TokenEncoder,
                          ex: Examples) -> Counter:
    index = GoldIndex(gold)
    anchors = anchors.model_copy(deep=True)
    propose_names(anchors, conversation, encoder.vocabulary)
    utts, ents = views(anchors, conversation)
    scene = Scene(utts, ents, encoder)
    match = [index.match_entity(e)[0] for e in anchors.entities]
    counts: Counter = Counter()
    # typing
    rows = scene.type_rows()
    for i, e in enumerate(ents):
        if e.speaker:
            continue
        label = normalize_type(gold.entities[match[i]].type) if match[i] is not None else "junk"
        ex.add("typing", rows[i:i + 1], [TYPE_LABELS.index(label)], [(i,)])
        counts["typed entities"] += 1
    types = [normalize_type(e.type) for e in ents]
    types = [t if t in TYPE_LABELS else "other" for t in types]
    for i, m in enumerate(match):  # the gold type where known: relations are learned on right types
        if m is not None:
            types[i] = normalize_type(gold.entities[m].type)
    # references, from the annotated mentions; then they stand where they point, as at build time
    for k, u in enumerate(utts):
        gold_here = [(span, index.find(m.entity)) for m in gold.mentions if m.utterance == u.id
                     for span in mention_spans(u.text, m.text)]
        for span, cands in scene.reference_candidates(k, types):
            target = next((g for (s, e), g in gold_here if s < span[1] and e > span[0]), None)
            if target is None:
                continue
            labels = [int(match[o.ent] == target) for o in cands]
            if any(labels):
                ex.add("reference", scene.reference_rows(k, span, cands, types), labels)
                counts["reference links"] += 1
                scene.add_resolved(k, span[:2], cands[labels.index(1)].ent)
    # relations
    rels = _gold_relations(gold, index)
    for k, u in enumerate(utts):
        pairs = scene.pair_candidates(k)
        if not pairs:
            continue
        labelled = []
        for a, b in pairs:
            uids = {u.id} | ({utts[k - 1].id} if a.utt != k or b.utt != k else set())
            label = _pair_label(match[a.ent], match[b.ent], uids, rels)
            if label is not None:
                labelled.append(((a, b), label))
        if labelled:
            rows = scene.pair_rows(k, [p for p, _ in labelled], types)
            ex.add("relations", rows, [lab for _, lab in labelled], [(a.ent, b.ent) for (a, b), _ in labelled])
            counts["relation instances"] += sum(lab > 0 for _, lab in labelled)
            counts["pairs"] += len(labelled)
    # the speakers' ties: every turn where two speakers stand together, labelled or not (a build reads them all)
    between: dict[tuple[int, int], list[np.ndarray]] = {}
    for k in range(len(utts)):
        pairs = scene.speaker_pairs(k)
        if pairs:
            for (a, b), row in zip(pairs, scene.pair_rows(k, pairs, types)):
                between.setdefault((min(a.ent, b.ent), max(a.ent, b.ent)), []).append(row)
    for (a, b), rows in between.items():
        ties = rels.get(frozenset((match[a], match[b])), []) if None not in (match[a], match[b]) else []
        said = {r[1] for r in ties if not r[4]}
        label = next((j for j, lab in enumerate(LABELS) if lab in said), -1 if ties else 0)
        ex.ties.append((ex.conversation, np.stack(rows), label, len(scene.speaker_ent)))
        counts["speaker pairs"] += 1
    return counts


# ------------------------------------------------------------------------------------------------- fitting

def fit_head(name: str, x: list[np.ndarray], y: list[int], labels: tuple[str, ...], seed: int) -> Head:
    """One relu layer and a softmax over ``labels``, fitted with Adam on standardized features; a tenth of the
    rows (seeded) stops training when their loss stops falling. Torch, because the encoder already needs it."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    X = np.stack(x).astype(np.float32)
    Y = np.asarray(y, dtype=np.int64)
    if name == "relations":  # most pairs are unrelated: keep a sample of them, seeded
        neg = np.flatnonzero(Y == 0)
        pos = np.flatnonzero(Y != 0)
        keep = rng.choice(neg, size=min(len(neg), NEGATIVES_PER_POSITIVE * len(pos)), replace=False)
        sel = np.sort(np.concatenate([pos, keep]))
        X, Y = X[sel], Y[sel]
    mean = X.mean(axis=0)
    scale = X.std(axis=0) + 1e-3
    order = rng.permutation(len(X))
    n_val = max(1, len(X) // 10)
    val, fit = order[:n_val], order[n_val:]
    Xt = torch.from_numpy((X - mean) / scale)
    Yt = torch.from_numpy(Y)
    model = torch.nn.Sequential(torch.nn.Dropout(0.1), torch.nn.Linear(X.shape[1], HIDDEN[name][0]),
                                torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(HIDDEN[name][0], len(labels)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
    loss_fn = torch.nn.CrossEntropyLoss()
    best, best_state, stale = float("inf"), None, 0
    for _epoch in range(MAX_EPOCHS):
        model.train()
        perm = fit[rng.permutation(len(fit))]
        for k in range(0, len(perm), BATCH):
            idx = torch.from_numpy(perm[k:k + BATCH])
            opt.zero_grad()
            loss_fn(model(Xt[idx]), Yt[idx]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            v = float(loss_fn(model(Xt[torch.from_numpy(val)]), Yt[torch.from_numpy(val)]))
        if v < best - 1e-4:
            best, stale = v, 0
            best_state = {k: t.clone() for k, t in model.state_dict().items()}
        else:
            stale += 1
            if stale >= PATIENCE:
                break
    model.load_state_dict(best_state)
    layers = [m for m in model if isinstance(m, torch.nn.Linear)]
    return Head(labels=labels, mean=mean.astype(np.float32), scale=scale.astype(np.float32),
                weights=[m.weight.detach().numpy().T.copy() for m in layers],
                biases=[m.bias.detach().numpy().copy() for m in layers])


def tie_examples(ex: Examples, folds: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tie head's rows (features.tie_row), labels and conversations: each pair of speakers read by a relation
    head fitted without its conversation (``folds`` folds by conversation), as a build reads a chat it never saw."""
    x = np.stack(ex.x["relations"])
    y = np.asarray(ex.y["relations"])
    group = np.asarray([k[0] for k in ex.keys["relations"]]) % folds
    rows: list[np.ndarray | None] = [None] * len(ex.ties)
    for f in range(folds):
        head = fit_head("relations", list(x[group != f]), list(y[group != f]), LABELS, seed)
        for i, (conv, pair_rows, _, speakers) in enumerate(ex.ties):
            if conv % folds == f:
                rows[i] = tie_row(head.predict_proba(pair_rows), speakers)
    return np.stack(rows), np.asarray([t[2] for t in ex.ties]), np.asarray([t[0] for t in ex.ties])


def fit_ties(x: np.ndarray, y: np.ndarray) -> Head:
    """A multinomial logistic regression over the tie rows (pairs with only optional ties left out), as a
    :class:`Head` of one layer over :data:`LABELS` (a label never seen gets no chance)."""
    from sklearn.linear_model import LogisticRegression

    keep = y >= 0
    model = LogisticRegression(C=TIE_C, max_iter=5000).fit(x[keep], y[keep])
    coef = model.coef_ if len(model.classes_) > 2 else np.vstack([np.zeros_like(model.coef_), model.coef_])
    bias = model.intercept_ if len(model.classes_) > 2 else np.array([0.0, model.intercept_[0]])
    w = np.zeros((x.shape[1], len(LABELS)), np.float32)
    b = np.full(len(LABELS), -30.0, np.float32)
    w[:, model.classes_] = coef.T
    b[model.classes_] = bias
    return Head(labels=LABELS, mean=np.zeros(x.shape[1], np.float32), scale=np.ones(x.shape[1], np.float32),
                weights=[w], biases=[b])


def _load(path: Path) -> tuple[Gold, Conversation]:
    gold = load_gold(path)
    return gold, load_conversation(gold.conversation_path())


def score_dev(decided: list[tuple[Gold, Conversation, AnchorSet, Decisions]], thresholds: dict[str, float]) -> dict:
    """Relation recall and precision, type accuracy and junk over DEV, with these decisions and thresholds."""
    hit = need = right = n = typed = typed_ok = junk = ents = 0
    for gold, conv, anchors, d in decided:
        a = anchors.model_copy(deep=True)
        write_back(a, d, thresholds)
        s = score_store(a, gold, speakers=conv.speakers)
        hit += s.relation_recall.hit
        need += s.relation_recall.n
        right += s.relation_precision.hit
        n += s.relation_precision.n
        typed_ok += s.type_accuracy.hit
        typed += s.type_accuracy.n
        junk += s.junk_share.hit
        ents += s.junk_share.n
    return {"relation_recall": hit / max(need, 1), "relation_precision": right / max(n, 1), "n": n,
            "type_accuracy": typed_ok / max(typed, 1), "junk_share": junk / max(ents, 1)}


def _decide(anchors: AnchorSet, conversation: Conversation, models: Models, encoder: TokenEncoder) -> Decisions:
    propose_names(anchors, conversation, encoder.vocabulary)
    utts, ents = views(anchors, conversation)
    return decide(Scene(utts, ents, encoder), models)


def calibration(models: Models, dev: list[tuple[Gold, Conversation, AnchorSet]], encoder: TokenEncoder,
                bins: int = 10) -> dict:
    """How the relation head's top probability compares with how often it is right, on DEV pairs (reliability
    table and expected calibration error)."""
    ex = Examples()
    for gold, conv, anchors in dev:
        conversation_examples(gold, conv, anchors, encoder, ex)
    X = np.stack(ex.x["relations"])
    Y = np.asarray(ex.y["relations"])
    P = models.relations.predict_proba(X)
    top = P.argmax(axis=1)
    conf = P.max(axis=1)
    ok = top == Y
    table = []
    ece = 0.0
    for lo in np.linspace(0, 1, bins, endpoint=False):
        sel = (conf >= lo) & (conf < lo + 1 / bins)
        if sel.any():
            table.append({"bin": f"{lo:.1f}-{lo + 1 / bins:.1f}", "n": int(sel.sum()),
                          "confidence": round(float(conf[sel].mean()), 3), "accuracy": round(float(ok[sel].mean()), 3)})
            ece += sel.mean() * abs(conf[sel].mean() - ok[sel].mean())
    related = Y != 0
    return {"pairs": int(len(Y)), "related_pairs": int(related.sum()), "ece": round(float(ece), 4), "table": table}


def _f1(recall: float, precision: float) -> float:
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def tune_thresholds(heads: dict[str, Head], dev: list[tuple[Gold, Conversation, AnchorSet]], encoder: TokenEncoder,
                    log: Callable[[str], None] = _log) -> tuple[dict[str, float], list[dict], dict]:
    """The thresholds with the best DEV relation F1 at junk <= 0.05 (else the most precise), then the best types;
    returns them, the whole grid and the chosen row. F1, not recall at a precision floor: DEV's 114 relations make
    one more found relation worth less than four points of precision, which the floor traded it for."""
    thresholds = {"type": 0.5, "junk": 0.6, "reference": 0.5, "relation": 0.5, "relation_ruled": 0.5}
    grid = []
    for tau_type, tau_junk in itertools.product((0.5, 0.7, 0.9), (0.4, 0.6, 0.8)):
        models = Models(**heads, thresholds={**thresholds, "type": tau_type, "junk": tau_junk}, version="dev",
                        layer=encoder.layer)
        decided = [(g, c, a, _decide(a, c, models, encoder)) for g, c, a in
                   ((g, c, a.model_copy(deep=True)) for g, c, a in dev)]
        for tau, tau_ruled in itertools.product((0.5, 0.6, 0.7, 0.8, 0.9, 0.95), (0.1, 0.2, 0.3, 0.5)):
            th = {**models.thresholds, "relation": tau, "relation_ruled": min(tau, tau_ruled)}
            s = score_dev(decided, th)
            grid.append({**th, **{k: round(v, 3) for k, v in s.items()}})
    for g in grid:
        g["relation_f1"] = round(_f1(g["relation_recall"], g["relation_precision"]), 3)
    ok = [g for g in grid if g["junk_share"] <= 0.05]
    best = max(ok, key=lambda g: (g["relation_f1"], g["type_accuracy"], g["relation_precision"])) if ok else \
        max(grid, key=lambda g: (g["relation_precision"] - g["junk_share"], g["relation_recall"]))
    thresholds = {k: best[k] for k in thresholds}
    log(f"  DEV at the chosen thresholds {thresholds}: recall {best['relation_recall']:.3f} precision "
        f"{best['relation_precision']:.3f} (n {best['n']}), types {best['type_accuracy']:.3f}, junk "
        f"{best['junk_share']:.3f}")
    return thresholds, grid, best


def retune(folder: Path = WEIGHTS, dev_dir: Path = DEV_DIR, cache: Path | None = None,
           log: Callable[[str], None] = _log) -> dict:
    """Set the thresholds of the heads in ``folder`` again on DEV (after a change to how their decisions are used),
    keeping the weights; updates ``thresholds.json`` and ``metrics.json``."""
    models = Models.load(folder)
    encoder = get_token_encoder(layer=models.layer)
    heads = {h: getattr(models, h) for h in HEADS}
    dev = [(g, c, rule_anchors(c, cache)) for g, c in map(_load, find_gold_files(dev_dir))]
    thresholds, grid, best = tune_thresholds(heads, dev, encoder, log)
    if models.ties is not None:
        thresholds["tie"] = TIE_THRESHOLD
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    metrics.update({"thresholds": thresholds, "dev_grid": grid, "dev": best})
    atomic_write_text(folder / "thresholds.json", json.dumps(
        {"version": models.version, "thresholds": thresholds, "encoder_layer": models.layer}, indent=1))
    atomic_write_text(folder / "metrics.json", json.dumps(metrics, indent=1))
    return metrics


def train(train_dir: Path = TRAIN_DIR, dev_dir: Path = DEV_DIR, out: Path = WEIGHTS, seed: int = 13,
          cache: Path | None = None, log: Callable[[str], None] = _log) -> dict:
    """Fit the heads on ``train_dir``, set thresholds on ``dev_dir``, write weights, thresholds and metrics."""
    random.seed(seed)
    np.random.seed(seed)
    started = time.perf_counter()
    encoder = get_token_encoder()
    files = find_gold_files(train_dir)
    if not files:
        raise FileNotFoundError(f"no *.gold.json training files in {train_dir}")
    ex = Examples()
    totals: Counter = Counter()
    for k, f in enumerate(files, 1):
        gold, conv = _load(f)
        ex.conversation = k
        counts = conversation_examples(gold, conv, rule_anchors(conv, cache), encoder, ex)
        totals.update(counts)
        if k % 10 == 0 or k == len(files):
            log(f"  {k}/{len(files)} training conversations read ({time.perf_counter() - started:.0f} s)")
    log(f"examples: {dict(totals)}")
    heads = {h: fit_head(h, ex.x[h], ex.y[h], lab, seed)
             for h, lab in (("typing", TYPE_LABELS), ("reference", ("other", "same")), ("relations", LABELS))}
    log(f"heads fitted ({time.perf_counter() - started:.0f} s)")
    ties = fit_ties(*tie_examples(ex, TIE_FOLDS, seed)[:2])
    log(f"tie head fitted on {len(ex.ties)} pairs of speakers ({time.perf_counter() - started:.0f} s)")
    dev = [(g, c, rule_anchors(c, cache)) for g, c in map(_load, find_gold_files(dev_dir))]
    thresholds, grid, best = tune_thresholds(heads, dev, encoder, log)
    thresholds["tie"] = TIE_THRESHOLD
    version = hashlib.sha256(b"".join(h.mean.tobytes() + h.weights[-1].tobytes() for h in [*heads.values(), ties])) \
        .hexdigest()[:12]
    models = Models(**heads, thresholds=thresholds, version=version, layer=encoder.layer, ties=ties)
    metrics = {"version": version, "seed": seed, "thresholds": thresholds, "encoder_layer": encoder.layer,
               "train_files": len(files),
               "examples": dict(totals), "dev_grid": grid, "dev": best,
               "calibration_dev": calibration(models, dev, encoder), "seconds": round(time.perf_counter() - started)}
    out.mkdir(parents=True, exist_ok=True)
    for h, head in [*heads.items(), (TIES, ties)]:
        head.save(out / f"{h}.npz")
    atomic_write_text(out / "thresholds.json", json.dumps(
        {"version": version, "thresholds": thresholds, "encoder_layer": encoder.layer}, indent=1))
    atomic_write_text(out / "metrics.json", json.dumps(metrics, indent=1))
    log(f"wrote {out} (version {version}) in {metrics['seconds']} s")
    return metrics
