"""The anchor store: one directory per build, readable by any host without the rest of the engine.

Layout::

    anchors.json        the three knowledge bases + schema version + what built them (AnchorSet)
    embeddings.npz      per module: "<module>" (n, dim) float32 L2-normalized, "<module>_ids" (n,) str
    conversation.json   the normalized utterances the anchors cite (Conversation)
    build_report.json   counts, timings, LLM calls and tokens, failed batches, verification

Any host can read ``anchors.json`` with ``json.load`` and ``embeddings.npz`` with ``numpy.load``;
the row order of each matrix is given by its ``_ids`` array.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from .anchors import MODULES, SCHEMA_VERSION, AnchorSet
from .conversation import Conversation
from .embed import Embedder
from .errors import StoreError
from .fileio import atomic_write_bytes, atomic_write_json

ANCHORS_FILE = "anchors.json"
EMBEDDINGS_FILE = "embeddings.npz"
CONVERSATION_FILE = "conversation.json"
REPORT_FILE = "build_report.json"


def embed_anchors(anchors: AnchorSet, embedder: Embedder) -> dict[str, np.ndarray]:
    """Embed every anchor's compact text once; one encoder call for all modules."""
    texts: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for module in MODULES:
        items = anchors.module(module)
        spans[module] = (len(texts), len(texts) + len(items))
        texts += [a.compact_text() for a in items]
    vectors = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    return {m: np.asarray(vectors[a:b], dtype=np.float32).reshape(b - a, embedder.dim) for m, (a, b) in spans.items()}


@dataclass
class AnchorStore:
    anchors: AnchorSet
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    conversation: Conversation | None = None
    report: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def matrix(self, module: str) -> np.ndarray:
        """The embedding matrix of a module, rows in the order of ``anchors.<module>``."""
        return self.embeddings[module]

    def check_embeddings(self) -> None:
        for module in MODULES:
            n = len(self.anchors.module(module))
            m = self.embeddings.get(module)
            if m is None or m.shape[0] != n:
                got = "missing" if m is None else f"{m.shape[0]} rows"
                raise StoreError(f"{self.path or 'store'}: embeddings for {module} are {got}, expected {n} rows; rebuild or re-embed")

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        if self.conversation is not None:
            atomic_write_bytes(path / CONVERSATION_FILE, self.conversation.model_dump_json(indent=1).encode())
        arrays: dict[str, np.ndarray] = {}
        for module in MODULES:
            items = self.anchors.module(module)
            arrays[module] = np.asarray(self.embeddings.get(module, np.zeros((0, 0))), dtype=np.float32)
            arrays[f"{module}_ids"] = np.array([a.id for a in items], dtype=str)
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        atomic_write_bytes(path / EMBEDDINGS_FILE, buf.getvalue())
        atomic_write_json(path / REPORT_FILE, self.report)
        # anchors.json last: its presence marks a complete store.
        atomic_write_bytes(path / ANCHORS_FILE, self.anchors.model_dump_json(indent=1).encode())
        self.path = path
        return path

    @classmethod
    def load(cls, path: str | Path) -> AnchorStore:
        path = Path(path)
        anchors_path = path / ANCHORS_FILE
        if not anchors_path.is_file():
            raise StoreError(f"{path}: no {ANCHORS_FILE} here; is this an anchor store (a build's --out folder)?")
        try:
            raw = json.loads(anchors_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise StoreError(f"{anchors_path}: not valid JSON ({err})") from err
        except RecursionError:
            raise StoreError(f"{anchors_path}: nested too deeply to be an anchor file") from None
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if version != SCHEMA_VERSION:
            raise StoreError(f"{anchors_path}: schema_version {version!r}, this engine reads {SCHEMA_VERSION}")
        try:
            anchors = AnchorSet.model_validate(raw)
        except ValidationError as err:
            first = err.errors()[0]
            where = "/".join(str(p) for p in first["loc"])
            raise StoreError(f"{anchors_path} ({where}): {first['msg']}") from err
        embeddings: dict[str, np.ndarray] = {}
        emb_path = path / EMBEDDINGS_FILE
        if emb_path.is_file():
            try:
                with np.load(emb_path, allow_pickle=False) as npz:
                    for module in MODULES:
                        if module in npz:
                            ids = [str(x) for x in npz[f"{module}_ids"]]
                            expected = [a.id for a in anchors.module(module)]
                            if ids != expected:
                                raise StoreError(f"{emb_path}: {module} rows do not match anchors.json; re-embed the store")
                            embeddings[module] = np.asarray(npz[module], dtype=np.float32)
            except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as err:
                raise StoreError(f"{emb_path}: unreadable ({err})") from err
        conversation = None
        conv_path = path / CONVERSATION_FILE
        if conv_path.is_file():
            try:
                conversation = Conversation.model_validate_json(conv_path.read_bytes())
            except ValidationError as err:
                raise StoreError(f"{conv_path}: not a conversation file ({err.errors()[0]['msg']})") from err
            except RecursionError:
                raise StoreError(f"{conv_path}: nested too deeply to be a conversation file") from None
        report: dict[str, Any] = {}
        rep_path = path / REPORT_FILE
        if rep_path.is_file():
            try:
                report = json.loads(rep_path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                report = {"error": f"{REPORT_FILE} is unreadable"}
            if not isinstance(report, dict):  # pages read it with .get: anything else is as good as unreadable
                report = {"error": f"{REPORT_FILE} is not a JSON object"}
        return cls(anchors=anchors, embeddings=embeddings, conversation=conversation, report=report, path=path)
