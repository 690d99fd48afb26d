"""The learned heads: small multi-layer perceptrons over the encoder's features, run with numpy.

Trained by ``gravity train`` (``eval/train.py``, torch), saved as plain ``.npz`` arrays (no pickle) beside a
``thresholds.json`` set on the DEV conversations (with the encoder layer the heads read) and a model card. Loading
needs numpy only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .encoder import LAST_LAYER

WEIGHTS = Path(__file__).parent / "weights"
HEADS = ("typing", "reference", "relations")
TIES = "ties"  # fitted on the relation head's held-out readings, after the three


@dataclass
class Head:
    """Standardize, then relu layers, then softmax (or one logistic unit for two classes)."""

    labels: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: list[np.ndarray]
    biases: list[np.ndarray]

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros((0, len(self.labels)), np.float32)
        h = (np.asarray(x, np.float32) - self.mean) / self.scale
        for w, b in zip(self.weights[:-1], self.biases[:-1]):
            h = np.maximum(h @ w + b, 0.0)
        z = h @ self.weights[-1] + self.biases[-1]
        if z.shape[1] == 1:
            p = 1.0 / (1.0 + np.exp(-z[:, 0]))
            return np.stack([1.0 - p, p], axis=1)
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        arrays = {"mean": self.mean, "scale": self.scale, "labels": np.array(self.labels)}
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            # half precision keeps the heads well under the 10 MB the repository allows
            arrays[f"w{i}"] = w.astype(np.float16)
            arrays[f"b{i}"] = b.astype(np.float32)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, **arrays)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Head:
        with np.load(path, allow_pickle=False) as z:
            n = sum(1 for k in z.files if k.startswith("w"))
            return cls(labels=tuple(str(x) for x in z["labels"]), mean=z["mean"].astype(np.float32),
                       scale=z["scale"].astype(np.float32),
                       weights=[z[f"w{i}"].astype(np.float32) for i in range(n)],
                       biases=[z[f"b{i}"].astype(np.float32) for i in range(n)])


@dataclass
class Models:
    """The heads and the thresholds they are used with."""

    typing: Head
    reference: Head
    relations: Head
    thresholds: dict[str, float]
    version: str
    layer: int = LAST_LAYER  # the encoder layer whose token vectors the heads were trained on
    # what two speakers are to each other, from the relation head's readings over the whole chat (features.tie_row);
    # heads trained before it have none, and then speakers keep the rules' word only
    ties: Head | None = None

    @classmethod
    def load(cls, folder: Path = WEIGHTS) -> Models:
        meta = json.loads((folder / "thresholds.json").read_text(encoding="utf-8"))
        ties = Head.load(folder / f"{TIES}.npz") if (folder / f"{TIES}.npz").exists() else None
        return cls(*(Head.load(folder / f"{h}.npz") for h in HEADS), thresholds=meta["thresholds"],
                   version=str(meta["version"]), layer=int(meta.get("encoder_layer", LAST_LAYER)), ties=ties)


@lru_cache(maxsize=2)
def load_models(folder: str = str(WEIGHTS)) -> Models | None:
    """The shipped heads, or None when they have not been trained (a fresh ``gravity train`` writes them)."""
    path = Path(folder)
    if not (path / "thresholds.json").exists():
        return None
    return Models.load(path)
