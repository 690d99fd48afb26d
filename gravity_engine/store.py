"""The anchor store: one directory per build, readable by any host without the rest of the engine.

Layout::

    anchors.json        the three knowledge bases + schema version + what built them (AnchorSet)
    embeddings.npz      per module: "<module>" (n, dim) float32 L2-normalized, "<module>_ids" (n,) str;
                        "lines" (m, dim) and "lines_keys" (m,) str: every anchor line (attribute,
                        fact, relation, event, topic summary, key fact, arc state; lines.py);
                        "utterances" (u, dim) with "utterances_ids", "utterances_model" and
                        "utterances_fingerprint": the dense host's utterance memories, embedded at build
                        (``UtteranceVectors``; absent from older stores)
    conversation.json   the normalized utterances the anchors cite (Conversation)
    build_report.json   counts, timings, LLM calls and tokens, failed batches, verification

Any host can read ``anchors.json`` with ``json.load`` and ``embeddings.npz`` with ``numpy.load``;
the row order of each matrix is given by its ``_ids`` array.

These four files are written as a whole (``fileio.replace_file_group``): ``.lock`` is the write lock
(``store_lock``), ``.generation`` counts replacements so ``AnchorStore.load`` reads one complete version,
``.incoming/`` holds a write in progress. Anything else in the folder (``.checkpoints/``, ``edits.jsonl``)
belongs to others and survives every write.
"""

from __future__ import annotations

import io
import json
import zipfile
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from .anchors import ANCHORS_FILE, MODULES, SCHEMA_VERSION, AnchorSet, BuildInfo
from .conversation import Conversation
from .edits import apply_saved_edits
from .embed import Embedder
from .errors import StoreError
from .fileio import directory_lock, json_bytes, read_file_group, read_generation, replace_file_group
from .lines import LineTable
from .memories import conversation_memories, memories_fingerprint

EMBEDDINGS_FILE = "embeddings.npz"
CONVERSATION_FILE = "conversation.json"
REPORT_FILE = "build_report.json"
STORE_FILES = (ANCHORS_FILE, EMBEDDINGS_FILE, CONVERSATION_FILE, REPORT_FILE)  # what save() writes; the rest is left


def save_unless_changed(store: AnchorStore, path: str | Path, generation: int | None, advice: str) -> Path:
    """``store.save(path)``, unless another writer saved ``path`` after ``generation`` was read (``StoreError``
    ending in ``advice``): for a load-change-save that cannot hold the lock throughout (a build, the app)."""
    with store_lock(path):
        if generation is not None and read_generation(path) != generation:
            raise StoreError(f"{path} was saved by another writer after it was loaded here; {advice}")
        return store.save(path)


def store_lock(path: str | Path) -> AbstractContextManager[None]:
    """The store's write lock (``save`` takes it): hold it around a load-change-save, so that no other writer,
    the CLI's or the app's, slips in between. Readers never need it."""
    return directory_lock(path)


def embed_anchors(anchors: AnchorSet, embedder: Embedder) -> dict[str, np.ndarray]:
    """Embed every anchor's compact text and every anchor line (``lines.py``) once, in one encoder call.

    Returns one matrix per module, plus "lines" and "lines_keys" (the lines' row order)."""
    table = LineTable.build(anchors)
    texts: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    for module in MODULES:
        items = anchors.module(module)
        spans[module] = (len(texts), len(texts) + len(items))
        texts += [a.compact_text() for a in items]
    spans["lines"] = (len(texts), len(texts) + len(table.lines))
    texts += table.search_texts()
    vectors = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    out = {m: np.asarray(vectors[a:b], dtype=np.float32).reshape(b - a, embedder.dim) for m, (a, b) in spans.items()}
    out["lines_keys"] = np.array(table.keys(), dtype=str)
    return out


@dataclass(frozen=True)
class UtteranceVectors:
    """The conversation's utterance memories (``memories.conversation_memories(conv, "utterance")``), as
    embedded by the build with ``model``: a dense host on the same model takes them instead of encoding the
    conversation again. ``fingerprint`` (``memories_fingerprint``) says which texts, so an edited conversation
    or another memory rendering is never served stale vectors."""

    model: str
    fingerprint: str
    ids: tuple[str, ...]  # one utterance id per row
    matrix: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        return {"utterances": np.asarray(self.matrix, dtype=np.float32),
                "utterances_ids": np.array(self.ids, dtype=str),
                "utterances_model": np.array(self.model), "utterances_fingerprint": np.array(self.fingerprint)}

    @classmethod
    def from_npz(cls, npz) -> UtteranceVectors | None:
        if not all(k in npz for k in ("utterances", "utterances_ids", "utterances_model", "utterances_fingerprint")):
            return None
        matrix = np.asarray(npz["utterances"], dtype=np.float32)
        ids = tuple(str(x) for x in npz["utterances_ids"])
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            return None  # not usable; the host encodes for itself
        return cls(model=str(npz["utterances_model"]), fingerprint=str(npz["utterances_fingerprint"]), ids=ids,
                   matrix=matrix)


def embed_utterances(conversation: Conversation, embedder: Embedder) -> UtteranceVectors:
    """Embed the dense host's utterance memories of ``conversation`` (one encoder call; a ``CachingEmbedder``
    that already saw the texts answers from its cache)."""
    memories = conversation_memories(conversation, "utterance")
    texts = [m.text for m in memories]
    matrix = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
    return UtteranceVectors(model=embedder.name, fingerprint=memories_fingerprint(memories),
                            ids=tuple(m.utterance_ids[0] for m in memories),
                            matrix=np.asarray(matrix, dtype=np.float32).reshape(len(texts), embedder.dim))


def read_build_info(path: str | Path) -> BuildInfo:
    """What built the store in ``path`` (``anchors.json``'s ``built_with``), without loading the store."""
    anchors_path = Path(path) / ANCHORS_FILE
    try:
        raw = json.loads(anchors_path.read_text(encoding="utf-8"))
        return BuildInfo.model_validate(raw.get("built_with") or {})
    except FileNotFoundError:
        raise StoreError(f"{path}: no {ANCHORS_FILE} here; is this an anchor store (a build's --out folder)?") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError, AttributeError, ValidationError) as err:
        raise StoreError(f"{anchors_path}: cannot read what built this store ({type(err).__name__})") from None


def check_built_with(info: BuildInfo, where: str | Path, advice: str = "", **expected: Any) -> None:
    """Raise ``StoreError`` naming every ``BuildInfo`` field that differs from ``expected`` (None: any value).
    A version the store did not record ("" or {}: written before versions were kept) is not held against it."""
    diffs = []
    for name, want in expected.items():
        have = getattr(info, name)
        if want is None or have == want or (name != "backend" and have in ("", {}, None)):
            continue
        diffs.append(f"{name} {have!r} (asked for {want!r})")
    if diffs:
        raise StoreError(f"{where} was built with {', '.join(diffs)}" + (f"; {advice}" if advice else ""))


def check_store_backend(folder: Path, backend: str | None) -> None:
    """Refuse a store in ``folder`` that another backend than ``backend`` built (None: any backend)."""
    if backend is None:
        return
    info = read_build_info(folder)
    check_built_with(info, folder, f"score it with --backend {info.backend}, or give another stores folder "
                     f"(--stores) to build {backend} stores in", backend=backend)


def load_conversation_store(conversation: Conversation, stores_dir: str | Path, backend: str | None = None) -> AnchorStore:
    """The store of ``conversation`` under ``stores_dir/<conversation id>``, its conversation attached; measuring and
    evaluating read stores this way and never build one (``build.ensure_stores`` does, before they start)."""
    folder = Path(stores_dir) / conversation.id
    if not (folder / ANCHORS_FILE).is_file():
        raise StoreError(f"{folder}: no anchor store for {conversation.id}; build it first (gravity build-all, or the "
                         "measure and evaluate commands, which build missing stores before they start)")
    check_store_backend(folder, backend)
    store = AnchorStore.load(folder)
    if store.conversation is None:
        store.conversation = conversation
    return store


@dataclass
class AnchorStore:
    anchors: AnchorSet
    embeddings: dict[str, np.ndarray] = field(default_factory=dict)
    conversation: Conversation | None = None
    report: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    line_keys: list[str] | None = None  # row order of embeddings["lines"]
    generation: int | None = None  # of the files in ``path`` when loaded (fileio.read_generation)
    utterance_vectors: UtteranceVectors | None = None  # the dense host's memories, embedded at build

    def __post_init__(self) -> None:
        self.set_embeddings(self.embeddings)

    def set_embeddings(self, embeddings: dict[str, np.ndarray]) -> None:
        """Replace the matrices (``embed_anchors``' output: "lines_keys" gives the lines' row order)."""
        embeddings = dict(embeddings)
        keys = embeddings.pop("lines_keys", None)
        self.embeddings = embeddings
        if keys is not None:
            self.line_keys = [str(k) for k in keys]
        elif "lines" not in embeddings:
            self.line_keys = None

    def matrix(self, module: str) -> np.ndarray:
        """The embedding matrix of a module, rows in the order of ``anchors.<module>``."""
        return self.embeddings[module]

    def line_table(self):
        """The anchor lines (``lines.LineTable``) of the current anchors, built once per store object
        (rebuilt when a module's list is replaced or changes length or ends, as the anchor index is)."""
        sig = self.anchors.signature()
        cached = getattr(self, "_line_table", None)
        if cached is None or cached[0] != sig:
            cached = (sig, LineTable.build(self.anchors))
            self._line_table = cached
        return cached[1]

    def line_matrix(self, embedder: Embedder) -> np.ndarray:
        """Embeddings of every line in ``line_table()`` order: the stored ones when their keys match the
        current anchors, else computed once with ``embedder`` and kept on this object (stores written
        before lines were stored, or edited since). Checked once per line table, not per query."""
        table = self.line_table()
        if getattr(self, "_lines_checked", None) is table and "lines" in self.embeddings:
            return self.embeddings["lines"]
        keys = table.keys()
        stored = self.embeddings.get("lines")
        if stored is None or self.line_keys != keys:
            texts = table.search_texts()
            matrix = embedder.encode(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
            self.embeddings["lines"] = np.asarray(matrix, dtype=np.float32).reshape(len(texts), embedder.dim)
            self.line_keys = keys
        self._lines_checked = table
        return self.embeddings["lines"]

    def check_embeddings(self) -> None:
        for module in MODULES:
            n = len(self.anchors.module(module))
            m = self.embeddings.get(module)
            if m is None or m.shape[0] != n:
                got = "missing" if m is None else f"{m.shape[0]} rows"
                raise StoreError(f"{self.path or 'store'}: embeddings for {module} are {got}, expected {n} rows; rebuild or re-embed")

    def save(self, path: str | Path) -> Path:
        """Write the store into ``path`` as a whole (``fileio.replace_file_group``, under the store's lock):
        a reader or a crash sees the old store or this one, never a mix; other files in ``path`` stay."""
        path = Path(path)
        files: dict[str, bytes] = {}
        if self.conversation is not None:
            files[CONVERSATION_FILE] = self.conversation.model_dump_json(indent=1).encode()
        arrays: dict[str, np.ndarray] = {}
        for module in MODULES:
            items = self.anchors.module(module)
            arrays[module] = np.asarray(self.embeddings.get(module, np.zeros((0, 0))), dtype=np.float32)
            arrays[f"{module}_ids"] = np.array([a.id for a in items], dtype=str)
        if "lines" in self.embeddings and self.line_keys is not None:
            arrays["lines"] = np.asarray(self.embeddings["lines"], dtype=np.float32)
            arrays["lines_keys"] = np.array(self.line_keys, dtype=str)
        if self.utterance_vectors is not None:
            arrays.update(self.utterance_vectors.arrays())
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        files[EMBEDDINGS_FILE] = buf.getvalue()
        files[REPORT_FILE] = json_bytes(self.report)
        # anchors.json last: its presence marks a complete store for readers that do not read the generation.
        files[ANCHORS_FILE] = self.anchors.model_dump_json(indent=1).encode()
        replace_file_group(path, files, STORE_FILES)
        self.path = path
        return path

    @classmethod
    def load(cls, path: str | Path, *, edits: bool = True) -> AnchorStore:
        """The store in ``path``: one complete version of it even while a writer replaces it
        (``fileio.read_file_group``), with the human edits kept beside it (``edits.jsonl``) applied, unless
        ``edits`` is false (the store as built)."""
        store, generation = read_file_group(Path(path), cls._read)
        store.generation = generation
        return apply_saved_edits(store) if edits else store

    @classmethod
    def _read(cls, path: Path) -> AnchorStore:
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
        line_keys: list[str] | None = None
        utterance_vectors: UtteranceVectors | None = None
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
                    if "lines" in npz and "lines_keys" in npz:
                        embeddings["lines"] = np.asarray(npz["lines"], dtype=np.float32)
                        line_keys = [str(x) for x in npz["lines_keys"]]
                    utterance_vectors = UtteranceVectors.from_npz(npz)
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
        return cls(anchors=anchors, embeddings=embeddings, conversation=conversation, report=report, path=path,
                   line_keys=line_keys, utterance_vectors=utterance_vectors)
