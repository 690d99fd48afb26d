"""LoCoMo's token F1, written from its published rules.

Normalization: lowercase, drop commas and every other punctuation mark, drop the articles a/an/the
and the word "and" (LoCoMo's own scorer drops it too), Porter-stem each token. F1 is the usual
token-overlap F1 (multiset overlap). Per category, as LoCoMo scores it:

* 1 multi-hop: gold and prediction are split on commas; each gold part takes its best F1 against
  any prediction part, and the parts' scores are averaged;
* 3 open-domain: only the gold text before the first ';' counts (the rest is a rationale);
* 5 adversarial: 1 when the prediction says the information is not available, else 0;
* everything else (2, 4, LongMemEval, custom sets): plain token F1.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import lru_cache

_PUNCT = str.maketrans("", "", string.punctuation + "‘’“”–—…")
_DROP = re.compile(r"\b(a|an|the|and)\b")
_stemmer = None
# Phrases LoCoMo's scorer accepts for category 5, plus the usual ways a model says "not in the history".
_ABSTAIN = re.compile(r"no information available|not mentioned|not (?:stated|specified|provided|available|"
                      r"discussed|known)|(?:does|do|did)n[o']?t (?:mention|say|specify)|no (?:mention|record|"
                      r"information)|cannot be (?:answered|determined)|can't be (?:answered|determined)|unknown",
                      re.I)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    global _stemmer
    if _stemmer is None:
        # NLTK's Porter stemmer, as LoCoMo's own scorer uses; imported on first use because importing
        # nltk takes seconds and most commands never score F1.
        from nltk.stem import PorterStemmer

        _stemmer = PorterStemmer()
    return _stemmer.stem(word)


def normalize_tokens(text: str) -> list[str]:
    """The stemmed tokens F1 compares (see the module docstring)."""
    text = str(text).lower().translate(_PUNCT)
    return [_stem(w) for w in _DROP.sub(" ", text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token-overlap F1 of two texts after ``normalize_tokens``; 0 when either side is empty."""
    pred, ref = normalize_tokens(prediction), normalize_tokens(gold)
    if not pred or not ref:
        return 0.0
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_part_f1(prediction: str, gold: str) -> float:
    """Category 1: the mean over comma-separated gold parts of the best F1 against any prediction part."""
    preds = [p.strip() for p in str(prediction).split(",")] or [""]
    golds = [g.strip() for g in str(gold).split(",") if g.strip()]
    if not golds:
        return 0.0
    return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)


def says_not_available(prediction: str) -> bool:
    return bool(_ABSTAIN.search(str(prediction)))


def locomo_f1(prediction: str, gold: str | None, category: str) -> float | None:
    """F1 of one answer by LoCoMo's per-category rule; None when there is nothing to score against."""
    category = str(category)
    if category == "5":
        return 1.0 if says_not_available(prediction) else 0.0
    if gold is None or not str(gold).strip():
        return None
    if category == "1":
        return multi_part_f1(prediction, gold)
    if category == "3":
        gold = str(gold).split(";")[0]
    return token_f1(prediction, gold)
