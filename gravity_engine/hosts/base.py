"""The host protocols: the smallest interface a memory system needs to sit under Gravity, and the ones it may add.

A host ingests a conversation with its own machinery, searches its own memory, and owns the
prompt its answers are generated from. Gravity never looks inside: it adds expansion queries to
``search`` and anchor blocks to the answer prompt. What a host can do beyond that is declared here,
not guessed at by the query path: ``query_independent`` (a flag every host sets), ``VectorHost``
(search by vector with the store's embeddings) and ``BatchHost`` (several searches in one call).
``tests/test_host_conformance.py`` holds every registered host to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..conversation import Conversation
from ..embed import Embedder, get_embedder
from ..memories import Memory  # what a host returns; the host API names it from here too

if TYPE_CHECKING:  # annotations only: the hosts' protocols need not load the store
    import numpy as np

    from ..store import UtteranceVectors


@runtime_checkable
class Host(Protocol):
    name: str
    # True when ``search`` returns the same memories whatever the query (``fullcontext``): Gravity then runs
    # no expansion searches, which could not change the result.
    query_independent: bool

    def ingest(self, conversation: Conversation) -> None:
        """Load a conversation into the host's memory (idempotent: ingesting it again changes nothing)."""
        ...

    def search(self, query: str, k: int = 10) -> list[Memory]:
        """The host's own retrieval: at most ``k`` memories, best first."""
        ...

    def format_memories(self, memories: list[Memory]) -> str:
        """The host's own rendering of retrieved memories inside its answer prompt."""
        ...


@runtime_checkable
class VectorHost(Host, Protocol):
    """A host that embeds with a sentence-embedding model and can take that model's vectors instead of text.

    When ``vector_model`` equals the store's embedding model, Gravity hands it the store's utterance embeddings
    at ingest and searches it with the question's and the expansion queries' embeddings, so nothing is
    encoded twice (``query/session.py``)."""

    @property
    def vector_model(self) -> str | None:
        """The name of the model whose vectors ``search_vectors`` compares; None while not yet known."""
        ...

    def ingest(self, conversation: Conversation, vectors: UtteranceVectors | None = None) -> None:
        """``Host.ingest``; ``vectors`` (a store's ``utterance_vectors``) are used when they are this host's
        memories embedded by ``vector_model``, and ignored otherwise."""
        ...

    def search_vectors(self, vectors: np.ndarray, k: int = 10) -> list[list[Memory]]:
        """One search per row of ``vectors`` (embeddings by ``vector_model``): at most ``k`` memories each."""
        ...


@runtime_checkable
class BatchHost(Host, Protocol):
    """A host that runs several searches in one call (one encoder call for a question's expansion queries)."""

    def search_many(self, queries: list[str], k: int = 10) -> list[list[Memory]]:
        """``[search(q, k) for q in queries]``, in one call."""
        ...


def ingest_with_vectors(host: Host, conversation: Conversation, vectors: UtteranceVectors | None) -> None:
    """``host.ingest(conversation)``, handing ``vectors`` (a store's ``utterance_vectors``) to a ``VectorHost``:
    the one way callers that hold a store ingest its conversation."""
    if vectors is not None and isinstance(host, VectorHost):
        host.ingest(conversation, vectors=vectors)
    else:
        host.ingest(conversation)


class UsesEmbedder:
    """For hosts that embed with the engine's model: it is the one given, else the default, loaded on first use."""

    _embedder: Embedder | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder
