"""The ``graphiti`` host: Graphiti (Zep's temporal knowledge graph, ``graphiti-core``) on embedded Kuzu.

Two ways in:

* ``mode="direct"`` (default, no LLM): per utterance an episode, its speaker nodes and one fact edge
  (the turn, verbatim) are written with Graphiti's own bulk writer ``add_nodes_and_edges_bulk``;
* ``mode="episodes"``: Graphiti's full ``add_episode`` pipeline (entity and fact extraction,
  deduplication, temporal invalidation) through the configured OpenAI-compatible endpoint.

Search is Graphiti's hybrid edge search (BM25 on Kuzu FTS + cosine, reciprocal-rank fusion) with
``sim_min_score=0``: the default 0.6 cosine cut drops most MiniLM hits. Results map back to
utterances through each edge's ``episodes`` (Graphiti's provenance) and the episode's name.

Workarounds (each asserted to be still needed in ``tests/test_hosts_real.py``):
1. graphiti-core imports ``httpx`` without declaring it: pinned in requirements-hosts.txt;
2. ``KuzuDriver.build_indices_and_constraints`` is a no-op, so the FTS indexes BM25 needs are
   created here from ``get_fulltext_indices``;
3. ``KuzuDriver`` has no ``_database``, which ``add_episode(group_id=...)`` reads: set here;
4. Kuzu FTS queries crash now and then with ``RuntimeError: unordered_map::at``: retried once;
5. the cosine cut ``sim_min_score`` defaults to 0.6: set to 0.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
import warnings
from datetime import datetime, timezone
from typing import Any

from ..conversation import Conversation, Utterance
from ..embed import Embedder
from ..errors import ConfigError, GravityError
from ..llm.config import LLMConfig
from ..llm.guard import check_model_request
from ..timeparse import parse_datetime
from ._aio import LoopThread
from ._optional import LIBRARIES, require
from ._optional import install_hint as _hint
from .base import Memory, UsesEmbedder
from .memories import conversation_memories, memories_fingerprint

_NAMESPACE = uuid.UUID("6f1d9b1e-55b5-4c4e-9a39-0c2f5f6a1a10")
_DEAD_URL = "http://127.0.0.1:9/v1"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
FTS_CRASH = "unordered_map::at"  # the intermittent Kuzu FTS failure's message


def _import_graphiti():
    import os

    # Graphiti sends anonymous usage events unless told not to.
    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
    require("graphiti", "httpx")
    require("graphiti", "kuzu")
    return require("graphiti", "graphiti_core")


def group_id_for(conversation_id: str) -> str:
    """Graphiti accepts letters, digits, ``-`` and ``_`` in group ids."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", conversation_id or "conversation")[:64] or "conversation"


def _when(u: Utterance, fallback: datetime) -> datetime:
    dt = parse_datetime(u.timestamp) if u.timestamp else None
    if dt is None:
        return fallback
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _clients(embedder: Embedder):
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.embedder.client import EmbedderClient

    class LocalEmbedder(EmbedderClient):
        async def create(self, input_data):
            texts = [input_data] if isinstance(input_data, str) else list(input_data)
            return embedder.encode(texts)[0].tolist()

        async def create_batch(self, input_data_list):
            return embedder.encode(list(input_data_list)).tolist()

    class KeepOrder(CrossEncoderClient):
        """Graphiti's default reranker calls OpenAI; RRF search never asks it, other configs keep search order."""

        async def rank(self, query, passages):
            return [(p, 1.0 / (i + 1)) for i, p in enumerate(passages)]

    return LocalEmbedder(), KeepOrder()


def create_fulltext_indexes(driver) -> None:
    """Workaround 2: the FTS indexes Graphiti's BM25 search expects on Kuzu (async, run on the host loop)."""
    from graphiti_core.driver.driver import GraphProvider
    from graphiti_core.graph_queries import get_fulltext_indices

    async def run():
        for query in get_fulltext_indices(GraphProvider.KUZU):
            await driver.execute_query(query)

    return run()


class GraphitiHost(UsesEmbedder):
    """Graphiti over one conversation in an embedded Kuzu database (in memory unless ``db`` is a path)."""

    name = "graphiti"
    description = "Graphiti (Zep's temporal knowledge graph) on embedded Kuzu, hybrid BM25 + cosine edge search"
    requires = LIBRARIES["graphiti"][0]
    install_hint = _hint("graphiti")
    aliases = ("zep",)
    query_independent = False

    def __init__(self, embedder: Embedder | None = None, mode: str = "direct", llm: LLMConfig | None = None,
                 db: str = ":memory:", search_methods: tuple[str, ...] = ("bm25", "cosine_similarity"),
                 sim_min_score: float = 0.0, timeout: float = 600.0):
        if mode not in ("direct", "episodes"):
            raise ConfigError(f"graphiti host: mode must be 'direct' or 'episodes', not {mode!r}")
        _import_graphiti()
        from graphiti_core.search.search_config import EdgeSearchMethod

        try:
            self.search_methods = [EdgeSearchMethod(m) for m in search_methods]
        except ValueError as err:
            raise ConfigError(f"graphiti host: {err}; choose from {[m.value for m in EdgeSearchMethod]}") from None
        self._embedder = embedder
        self.mode = mode
        self.llm = llm
        self.db = db
        self.sim_min_score = sim_min_score
        self.timeout = timeout
        self.fts_retries = 0  # how often workaround 4 fired (shown in the benchmark)
        self.graphiti = None
        self.group_id = ""
        self._episodes: dict[str, tuple[list[str], str | None, str | None]] = {}  # uuid -> ids, time, session
        self._fingerprint = ""
        self._loop: LoopThread | None = None
        self._lock = threading.Lock()

    def _run(self, coro):
        if self._loop is None:
            self._loop = LoopThread("graphiti-host")
        return self._loop.run(coro, self.timeout)

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None

    def __del__(self):  # the loop thread is a daemon; stopping it frees the Kuzu database sooner
        try:
            self.close()
        except Exception:
            pass

    def _llm_client(self):
        from graphiti_core.llm_client.config import LLMConfig as GraphitiLLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient

        if self.mode == "episodes":
            cfg = self.llm or LLMConfig.from_env()
            check_model_request(cfg.base_url)
            return OpenAIGenericClient(GraphitiLLMConfig(api_key=cfg.api_key.get_secret_value(), base_url=cfg.base_url,
                                                         model=cfg.model, small_model=cfg.model,
                                                         temperature=cfg.temperature))
        # Direct ingest never calls the LLM; Graphiti still wants a client object.
        return OpenAIGenericClient(GraphitiLLMConfig(api_key="sk-offline", base_url=_DEAD_URL, model="none"))

    def _new_graphiti(self, group_id: str):
        from graphiti_core import Graphiti
        from graphiti_core.driver.kuzu_driver import KuzuDriver

        with warnings.catch_warnings():
            # Graphiti warns that Kuzu is deprecated upstream (no longer maintained); said in docs/hosts.md.
            warnings.simplefilter("ignore", DeprecationWarning)
            driver = KuzuDriver(db=self.db)
        if not hasattr(driver, "_database"):
            driver._database = group_id  # workaround 3
        embedder, reranker = _clients(self.embedder)
        graphiti = Graphiti(graph_driver=driver, embedder=embedder, cross_encoder=reranker,
                            llm_client=self._llm_client())
        self._run(create_fulltext_indexes(driver))  # workaround 2
        return graphiti

    def ingest(self, conversation: Conversation) -> None:
        memories = conversation_memories(conversation, "utterance")
        fingerprint = memories_fingerprint(memories) + "-" + self.mode
        with self._lock:
            if fingerprint == self._fingerprint:
                return
            group_id = group_id_for(conversation.id)
            # A fresh graph per conversation version: re-ingest never duplicates nodes or edges.
            graphiti = self._new_graphiti(group_id)
            try:
                if self.mode == "direct":
                    episodes = self._run(self._write_direct(graphiti, conversation, group_id))
                else:
                    episodes = self._run(self._add_episodes(graphiti, conversation, group_id))
            except GravityError:
                raise
            except Exception as err:  # graphiti, kuzu and the LLM client raise their own classes
                raise GravityError(f"graphiti host: ingest of {conversation.id!r} failed: {err}") from err
            self.graphiti, self.group_id, self._episodes, self._fingerprint = graphiti, group_id, episodes, fingerprint

    async def _write_direct(self, graphiti, conversation: Conversation, group_id: str):
        from graphiti_core.edges import EntityEdge, EpisodicEdge
        from graphiti_core.nodes import EntityNode, EpisodeType, EpisodicNode
        from graphiti_core.utils.bulk_utils import add_nodes_and_edges_bulk

        fallback = conversation.last_time() or _EPOCH
        fallback = fallback if fallback.tzinfo else fallback.replace(tzinfo=timezone.utc)
        cid = conversation.id

        def key(*parts: str) -> str:
            return str(uuid.uuid5(_NAMESPACE, "\x1f".join((cid, *parts))))

        first = min((_when(u, fallback) for u in conversation.utterances()), default=fallback)
        speakers = {s: EntityNode(uuid=key("speaker", s), name=s, group_id=group_id, labels=["Entity"],
                                  summary=f"{s}, a participant in the conversation", created_at=first)
                    for s in dict.fromkeys(u.speaker for u in conversation.utterances())}
        texts = [f"{u.speaker}: {u.display_text()}" for u in conversation.utterances()]
        vectors = self.embedder.encode(texts).tolist() if texts else []  # one batch instead of one call per edge
        episodes, ep_edges, edges, index = [], [], [], {}
        i = 0
        for session in conversation.sessions:
            for j, u in enumerate(session.utterances):
                when = _when(u, fallback)
                ep = EpisodicNode(uuid=key("episode", u.id), name=u.id, group_id=group_id, source=EpisodeType.message,
                                  source_description=f"{cid} {session.id}", content=texts[i], valid_at=when,
                                  created_at=when)
                # The turn as one fact from its speaker to the next speaker in the session (the addressee).
                other = next((v.speaker for v in session.utterances[j + 1:] if v.speaker != u.speaker), u.speaker)
                edge = EntityEdge(uuid=key("fact", u.id), source_node_uuid=speakers[u.speaker].uuid,
                                  target_node_uuid=speakers[other].uuid, name="SAID", fact=texts[i],
                                  fact_embedding=vectors[i], group_id=group_id, episodes=[ep.uuid], created_at=when,
                                  valid_at=when, reference_time=when,
                                  attributes={"utterance_id": u.id, "session_id": session.id})
                ep.entity_edges = [edge.uuid]
                episodes.append(ep)
                edges.append(edge)
                for s in dict.fromkeys((u.speaker, other)):
                    ep_edges.append(EpisodicEdge(uuid=key("mentions", u.id, s), source_node_uuid=ep.uuid,
                                                 target_node_uuid=speakers[s].uuid, group_id=group_id, created_at=when))
                index[ep.uuid] = ([u.id], u.timestamp or session.timestamp, session.id)
                i += 1
        await add_nodes_and_edges_bulk(graphiti.driver, episodes, ep_edges, list(speakers.values()), edges,
                                       graphiti.embedder)
        return index

    async def _add_episodes(self, graphiti, conversation: Conversation, group_id: str):
        from graphiti_core.nodes import EpisodeType

        fallback = conversation.last_time() or _EPOCH
        fallback = fallback if fallback.tzinfo else fallback.replace(tzinfo=timezone.utc)
        index = {}
        for session in conversation.sessions:
            for u in session.utterances:
                result = await graphiti.add_episode(
                    name=u.id, episode_body=f"{u.speaker}: {u.display_text()}",
                    source_description=f"{conversation.id} {session.id}", reference_time=_when(u, fallback),
                    source=EpisodeType.message, group_id=group_id)
                index[result.episode.uuid] = ([u.id], u.timestamp or session.timestamp, session.id)
        return index

    def _config(self, k: int):
        from graphiti_core.search.search_config import EdgeReranker, EdgeSearchConfig, SearchConfig

        return SearchConfig(limit=k, edge_config=EdgeSearchConfig(search_methods=self.search_methods,
                                                                   reranker=EdgeReranker.rrf,
                                                                   sim_min_score=self.sim_min_score))

    def search(self, query: str, k: int = 10) -> list[Memory]:
        if self.graphiti is None or not query.strip() or k <= 0:
            return []
        config = self._config(k)
        try:
            results = self._run(self.graphiti.search_(query, config=config, group_ids=[self.group_id]))
        except RuntimeError as err:
            if FTS_CRASH not in str(err):
                raise GravityError(f"graphiti host: search failed: {err}") from err
            self.fts_retries += 1  # workaround 4: the crash is intermittent, a second try succeeds
            results = self._run(self.graphiti.search_(query, config=config, group_ids=[self.group_id]))
        scores = list(results.edge_reranker_scores) + [0.0] * len(results.edges)
        return [self._to_memory(edge, score) for edge, score in zip(results.edges[:k], scores)]

    def _to_memory(self, edge, score: float) -> Memory:
        ids: list[str] = []
        when = session = None
        for ep in edge.episodes:
            if ep not in self._episodes:
                self._episodes.update(self._lookup_episodes(edge.episodes))
            got = self._episodes.get(ep)
            if got:
                ids += [i for i in got[0] if i not in ids]
                when, session = when or got[1], session or got[2]
        return Memory(text=edge.fact, utterance_ids=ids, score=float(score), timestamp=when, session_id=session)

    def _lookup_episodes(self, uuids: list[str]) -> dict[str, tuple[list[str], str | None, str | None]]:
        """Episodes not written by this host (a persistent ``db``): their names are the utterance ids."""
        from graphiti_core.nodes import EpisodicNode

        try:
            nodes = self._run(EpisodicNode.get_by_uuids(self.graphiti.driver, list(uuids)))
        except Exception as err:  # a missing episode is not fatal: the memory keeps its text
            logging.getLogger(__name__).warning("graphiti host: episode lookup failed: %s", err)
            return {}
        return {n.uuid: ([n.name], n.valid_at.isoformat() if n.valid_at else None, None) for n in nodes}

    def format_memories(self, memories: list[Memory]) -> str:
        # Zep's context string: one fact per line with the date range it held true.
        return "\n".join(f"- {m.text} (Date range: {_date(m.timestamp)} - present)" for m in memories)


def _date(timestamp: str | None) -> str:
    dt = parse_datetime(timestamp) if timestamp else None
    return dt.strftime("%Y-%m-%d %H:%M") if dt else "unknown"


def search_edges_raw(host: GraphitiHost, query: str, k: int = 10) -> Any:
    """Graphiti's own ``SearchResults`` for ``query`` (tests and the benchmark look inside)."""
    return host._run(host.graphiti.search_(query, config=host._config(k), group_ids=[host.group_id]))
