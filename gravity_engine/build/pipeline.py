"""The build phase: conversation -> batches -> extractor -> consolidation -> embeddings -> store.

Each finished batch is checkpointed in ``<out>/.checkpoints/`` before the next one starts, so an
interrupted or failed build resumes where it stopped, and a rerun retries only failed batches.
``update=True`` extends an existing store with the sessions it does not cover yet.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from .. import __version__
from ..anchors import MODULES, AnchorSet, BuildInfo
from .consolidate import (
    consolidate_entities,
    consolidate_events,
    consolidate_topics,
    drop_unknown_sources,
    set_seen_times,
)
from ..conversation import Conversation
from ..embed import DEFAULT_MODEL, CachingEmbedder, Embedder, get_embedder, normalize
from ..errors import ConfigError, GravityError, StoreError
from ..extract.base import DEFAULT_BATCH_SIZE, Batch, BatchAnchors, Extractor, make_batches
from ..extract.classic import ClassicExtractor
from ..extract.llm import LLMExtractor
from ..fileio import atomic_write_json
from ..llm import LLMConfig, OpenAIClient
from ..llm.tokens import count_tokens
from ..places import add_locations
from ..places import warm as warm_places
from ..store import (ANCHORS_FILE, AnchorStore, UtteranceVectors, check_built_with, embed_anchors, embed_utterances,
                    save_unless_changed)
from .verify import verify_anchors

CHECKPOINT_DIR = ".checkpoints"
BACKENDS = ("classic", "llm")


class BuildCancelled(GravityError):
    """The build was cancelled; finished batches are checkpointed and a rerun resumes."""

    def __init__(self, done: int, failed: int, cancelled: int, total: int):
        self.done, self.failed, self.cancelled, self.total = done, failed, cancelled, total
        super().__init__(f"build cancelled: {done} of {total} batches done and checkpointed"
                         + (f", {failed} failed" if failed else "")
                         + f", {cancelled} cancelled before they started; run it again to resume from the checkpoints")


@dataclass
class BuildProgress:
    stage: str  # "extract" | "finalize" | "embed" | "verify" | "save" | "done"
    done: int
    total: int
    failed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    message: str = ""


ProgressFn = Callable[[BuildProgress], None]


def make_extractor(backend: str, *, embedder: Embedder | None = None, llm_config: Any = None,
                   fused: bool = True, modules: Iterable[str] = MODULES, llm_client: Any = None) -> Extractor:
    """The extractor for a backend name; ``llm`` reads its endpoint from ``llm_config`` or the environment."""
    if backend == "classic":
        return ClassicExtractor(embedder=embedder)
    if backend == "llm":
        client = llm_client or OpenAIClient(llm_config or LLMConfig.from_env())
        return LLMExtractor(client=client, fused=fused, modules=tuple(modules))
    raise ConfigError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")


def _checkpoint_key(extractor: Extractor, batch_size: int) -> dict[str, Any]:
    """Everything that decides what a batch extracts: engine and extractor versions, prompt versions, backend,
    model and options (``describe()``) and the batch size. Any change gives new checkpoints."""
    return {"engine_version": __version__, "extractor": extractor.describe(), "batch_size": batch_size}


class _Checkpoints:
    """One JSON file per finished batch, named by the batch's content hash, in a folder per ``_checkpoint_key``
    (whose ``built_with.json`` says what wrote them)."""

    def __init__(self, root: Path, key: dict[str, Any]):
        self.key = json.loads(json.dumps(key, default=str))
        fingerprint = hashlib.sha256(json.dumps(self.key, sort_keys=True).encode()).hexdigest()[:16]
        self.dir = root / CHECKPOINT_DIR / fingerprint

    def path(self, batch: Batch) -> Path:
        return self.dir / f"batch-{batch.key()}.json"

    def load(self, batch: Batch) -> BatchAnchors | None:
        p = self.path(batch)
        if not p.is_file():
            return None
        try:
            return BatchAnchors.model_validate_json(p.read_bytes())
        except (ValidationError, OSError, UnicodeDecodeError):
            return None  # a damaged checkpoint is simply redone

    def save(self, batch: Batch, result: BatchAnchors) -> None:
        if not (self.dir / "built_with.json").is_file():
            atomic_write_json(self.dir / "built_with.json", self.key)
        atomic_write_json(self.path(batch), result.model_dump(mode="json"))


def _run_batches(extractor: Extractor, batches: list[Batch],
                 cancel: threading.Event | None) -> Iterator[tuple[Batch, BatchAnchors | Exception]]:
    """(batch, anchors or the exception) as each batch finishes; stops starting batches once ``cancel`` is set.

    An extractor whose ``extract_batches`` takes ``cancel`` stops itself and still hands back the batches it
    had in flight (so they are checkpointed); any other is stopped by closing its generator."""
    cancelled = cancel.is_set if cancel is not None else (lambda: False)
    many = getattr(extractor, "extract_batches", None)
    if many is not None and "cancel" in inspect.signature(many).parameters:
        yield from many(batches, cancel=cancel)
        return
    stream = many(batches) if many is not None else _one_by_one(extractor, batches)
    for item in stream:
        yield item
        if cancelled():
            stream.close()
            return


def _one_by_one(extractor: Extractor, batches: list[Batch]) -> Iterator[tuple[Batch, BatchAnchors | Exception]]:
    for batch in batches:
        try:
            yield batch, extractor.extract_batch(batch)
        except Exception as err:  # one bad batch must not end the build: it is reported and retried on rerun
            yield batch, err


def _prefetch(embedder: CachingEmbedder, conversation: Conversation) -> None:
    """Encode the conversation once, as the dense host's memories ("Speaker: words", kept in the store), and
    give topic clustering and verification the same vectors with the speaker taken out (``speaker_neutral``)
    instead of encoding every utterance a second time: a third of a classic build's encoder work."""
    # Torch threads are left as the process set them at start (gravity_engine.threads): setting and
    # restoring them from this thread raced with other threads and could leave the process on one core.
    try:
        vectors = embed_utterances(conversation, embedder)
        texts, neutral = speaker_neutral(vectors, conversation, embedder)
        embedder.prime(texts, neutral)
    except Exception:  # an optimisation only: the same texts are encoded again when needed
        pass


def speaker_neutral(vectors: UtteranceVectors, conversation: Conversation,
                    embedder: Embedder) -> tuple[list[str], np.ndarray]:
    """Each utterance's words (``display_text``) with a vector made from its "Speaker: words" vector: the
    direction of "Speaker:" projected out, then each speaker's mean moved onto the conversation's, so that
    utterances cluster by what is said, not by who says it. Measured against encoding the words alone
    (docs/build-speed.md): LoCoMo coverage within 0.2 points, grounding equal, gold scores equal but one
    TEST fact, topic labels as readable; a classic build 28% faster."""
    by_id = {u.id: u for u in conversation.utterances()}
    utts = [by_id[i] for i in vectors.ids]
    speakers = sorted({u.speaker for u in utts})
    if not utts:
        return [], np.zeros((0, vectors.matrix.shape[1]), dtype=np.float32)
    names = dict(zip(speakers, embedder.encode([f"{s}:" for s in speakers])))
    who = np.array([u.speaker for u in utts])
    direction = np.stack([names[s] for s in who])
    out = normalize(vectors.matrix - np.sum(vectors.matrix * direction, axis=1, keepdims=True) * direction)
    overall = out.mean(axis=0)
    for s in speakers:
        mine = who == s
        out[mine] += overall - out[mine].mean(axis=0)
    return [u.display_text() for u in utts], normalize(out)


@dataclass
class _Plan:
    """What a build will do: its settings checked, the store it extends (``update``), its extractor and batches."""

    conversation: Conversation
    out: Path
    modules: tuple[str, ...]
    batch_size: int
    existing: AnchorStore | None
    base_embedder: Embedder
    embedder: CachingEmbedder  # shared by extraction, topics, verification and the anchors' embeddings
    extractor: Extractor
    covered: set[str]  # sessions the existing store holds
    new_sessions: list[str]
    batches: list[Batch]


@dataclass
class _Extraction:
    results: dict[int, BatchAnchors]
    failures: list[dict[str, Any]]
    from_checkpoint: int
    seconds: float


@dataclass
class _Anchors:
    """The consolidated, finalized anchors, with what the step counted on the way."""

    anchors: AnchorSet
    stats: Counter[str]
    done_sessions: list[str]
    failed_sessions: set[str]
    dropped: int
    located: int
    seconds: float


def build_store(conversation: Conversation, out_dir: str | Path, *, backend: str = "classic",
                extractor: Extractor | None = None, embedder: Embedder | None = None,
                embedding_model: str = DEFAULT_MODEL, batch_size: int = DEFAULT_BATCH_SIZE,
                modules: Iterable[str] = MODULES, fused: bool = True, llm_config: Any = None, llm_client: Any = None,
                update: bool = False, progress: ProgressFn | None = None, cancel: threading.Event | None = None,
                verify: bool = True, drop_unsupported: bool = False) -> AnchorStore:
    """Build (or, with ``update``, extend) the anchor store of one conversation in ``out_dir``: plan, extract,
    consolidate, embed, verify, report and save, each a step below that returns its data and its time."""
    started = time.perf_counter()
    notify = progress or (lambda p: None)
    plan = _plan(conversation, Path(out_dir), backend=backend, extractor=extractor, embedder=embedder,
                 embedding_model=embedding_model, batch_size=batch_size, modules=modules, fused=fused,
                 llm_config=llm_config, llm_client=llm_client, update=update)
    extraction = _extract(plan, notify, cancel)
    built = _consolidate(plan, extraction, notify)
    anchors = built.anchors
    nfail = len(extraction.failures)
    notify(BuildProgress("embed", 0, 1, failed=nfail, message="embedding anchors"))
    t_embed = time.perf_counter()
    embeddings = embed_anchors(anchors, plan.embedder)
    utterance_vectors = embed_utterances(conversation, plan.embedder)
    embed_s = time.perf_counter() - t_embed
    verification: dict[str, Any] = {}
    t_verify = time.perf_counter()
    if verify:
        notify(BuildProgress("verify", 0, 1, failed=nfail, message="checking fields against their sources"))
        verification = verify_anchors(anchors, conversation, plan.embedder, drop_unsupported=drop_unsupported)
        if drop_unsupported:
            embeddings = embed_anchors(anchors, plan.embedder)
    timings = {"extract": extraction.seconds, "finalize": built.seconds, "embed": embed_s,
               "verify": time.perf_counter() - t_verify}
    report = _report(plan, extraction, built, verification, timings, started)
    notify(BuildProgress("save", 0, 1, failed=nfail, message="writing the store"))
    store = AnchorStore(anchors=anchors, embeddings=embeddings, conversation=conversation, report=report,
                        utterance_vectors=utterance_vectors)
    if plan.existing is None:
        store.save(plan.out)
    else:  # not over another writer's change made while this ran (an unmerge in the app)
        save_unless_changed(store, plan.out, plan.existing.generation, "run the update again (every extracted batch "
                                                                       "is checkpointed, so that costs no extraction)")
    notify(BuildProgress("done", 1, 1, failed=nfail, counts=anchors.counts(),
                         message=f"built in {report['timings_s']['total']:.1f} s"))
    return store


def _plan(conversation: Conversation, out: Path, *, backend: str, extractor: Extractor | None,
          embedder: Embedder | None, embedding_model: str, batch_size: int, modules: Iterable[str], fused: bool,
          llm_config: Any, llm_client: Any, update: bool) -> _Plan:
    """The build's settings checked, the store it extends read, its extractor made and its batches cut."""
    modules = tuple(m for m in MODULES if m in set(modules))
    if not modules:
        raise ConfigError("choose at least one module: entities, events, topics")
    if conversation.n_utterances() == 0:
        raise GravityError(f"conversation {conversation.id!r} has no utterances to build from")
    existing: AnchorStore | None = None
    if update:
        if not (out / ANCHORS_FILE).is_file():
            raise StoreError(f"{out}: nothing to update (no {ANCHORS_FILE}); run a full build first")
        existing = AnchorStore.load(out)
        if existing.anchors.conversation_id and existing.anchors.conversation_id != conversation.id:
            raise StoreError(f"{out} holds conversation {existing.anchors.conversation_id!r}, not {conversation.id!r}")
        backend = existing.anchors.built_with.backend
        embedding_model = existing.anchors.built_with.embedding_model or embedding_model
    base_embedder = embedder or get_embedder(embedding_model)
    shared_embedder = CachingEmbedder(base_embedder)
    extractor = extractor or make_extractor(backend, embedder=shared_embedder, llm_config=llm_config, fused=fused,
                                            modules=modules, llm_client=llm_client)
    if existing is not None:
        # New sessions from another extractor, prompt or model would sit beside old ones under one label.
        desc = extractor.describe()
        check_built_with(existing.anchors.built_with, out, "rebuild it in full (build without --update)",
                         extractor_version=desc.get("version"), prompt_versions=desc.get("prompt_versions"),
                         llm_model=desc.get("llm_model"))
    covered = set(existing.anchors.built_with.sessions) if existing else set()
    new_sessions = [s.id for s in conversation.sessions if s.id not in covered]
    return _Plan(conversation=conversation, out=out, modules=modules, batch_size=batch_size, existing=existing,
                 base_embedder=base_embedder, embedder=shared_embedder, extractor=extractor, covered=covered,
                 new_sessions=new_sessions,
                 batches=make_batches(conversation, batch_size, session_ids=new_sessions))


def _extract(plan: _Plan, notify: ProgressFn, cancel: threading.Event | None) -> _Extraction:
    """Every batch not in a checkpoint extracted (each checkpointed as it finishes); failures kept, not raised."""
    batches = plan.batches
    checkpoints = _Checkpoints(plan.out, _checkpoint_key(plan.extractor, plan.batch_size))
    results: dict[int, BatchAnchors] = {}
    failures: list[dict[str, Any]] = []
    todo: list[Batch] = []
    for batch in batches:
        cached = checkpoints.load(batch)
        if cached is None:
            todo.append(batch)
        else:
            results[batch.index] = cached
    from_checkpoint = len(results)
    counts: Counter[str] = Counter()
    notify(BuildProgress("extract", len(results), len(batches), message=f"{from_checkpoint} batches from checkpoints"))
    t_extract = time.perf_counter()
    # Utterance embeddings are needed after extraction (topic clustering, verification); computing them
    # in the background lets torch use the core that extraction leaves idle.
    prefetch = threading.Thread(target=_prefetch, args=(plan.embedder, plan.conversation), daemon=True)
    prefetch.start()
    threading.Thread(target=warm_places, daemon=True).start()  # GeoNames' index, for add_locations below
    for batch, result in _run_batches(plan.extractor, todo, cancel):
        if isinstance(result, Exception):
            failures.append({"batch": batch.index, "session_id": batch.session_id,
                             "utterances": [batch.utterances[0].id, batch.utterances[-1].id],
                             "error": f"{type(result).__name__}: {result}"[:500]})
        else:
            checkpoints.save(batch, result)
            results[batch.index] = result
            counts.update({m: len(getattr(result, m)) for m in MODULES})
        notify(BuildProgress("extract", len(results) + len(failures), len(batches), failed=len(failures),
                             counts=dict(counts), message=f"batch {batch.index + 1} of {len(batches)} ({batch.session_id})"))
    if cancel is not None and cancel.is_set():
        raise BuildCancelled(done=len(results), failed=len(failures), total=len(batches),
                             cancelled=len(batches) - len(results) - len(failures))
    prefetch.join()
    return _Extraction(results=results, failures=failures, from_checkpoint=from_checkpoint,
                       seconds=time.perf_counter() - t_extract)


def _consolidate(plan: _Plan, extraction: _Extraction, notify: ProgressFn) -> _Anchors:
    """The batches' anchors as one set (the existing store's first), then the extractor's whole-conversation pass,
    sources checked, first and last sightings, places located."""
    # A session is in the store whole or not at all: if one of its batches failed, its other batches
    # wait in their checkpoints, so a rerun (or an --update) adds the session once, not twice.
    conversation, modules, results = plan.conversation, plan.modules, extraction.results
    failed_sessions = {f["session_id"] for f in extraction.failures}
    ordered = [results[b.index] for b in plan.batches if b.index in results and b.session_id not in failed_sessions]
    stats: Counter[str] = Counter()
    for r in ordered:
        stats.update(r.stats)
    prior = plan.existing.anchors if plan.existing else AnchorSet()
    anchors = AnchorSet(
        conversation_id=conversation.id,
        entities=consolidate_entities((r.entities for r in ordered), conversation.speakers, prior.entities)
        if "entities" in modules else [],
        events=consolidate_events((r.events for r in ordered), prior.events) if "events" in modules else [],
        topics=consolidate_topics((r.topics for r in ordered), prior.topics) if "topics" in modules else [],
    )
    notify(BuildProgress("finalize", 0, 1, failed=len(extraction.failures),
                         message="whole-conversation pass (topic arcs, links)"))
    t_final = time.perf_counter()
    done_sessions = sorted({b.session_id for b in plan.batches if b.index in results} - failed_sessions)
    anchors = plan.extractor.finalize(conversation, anchors, done_sessions)
    for m in MODULES:
        if m not in modules:
            setattr(anchors, m, [])
    dropped = drop_unknown_sources(anchors, conversation)
    set_seen_times(anchors.entities, conversation)
    located = add_locations(anchors)
    return _Anchors(anchors=anchors, stats=stats, done_sessions=done_sessions, failed_sessions=failed_sessions,
                    dropped=dropped, located=located, seconds=time.perf_counter() - t_final)


def _report(plan: _Plan, extraction: _Extraction, built: _Anchors, verification: dict[str, Any],
            timings: dict[str, float], started: float) -> dict[str, Any]:
    """What built the store (``anchors.built_with``, set here) and the build report saved beside it."""
    conversation, extractor, anchors = plan.conversation, plan.extractor, built.anchors
    desc = extractor.describe()
    anchors.built_with = BuildInfo(
        backend=extractor.name, extractor_version=str(desc.get("version", "")), llm_model=desc.get("llm_model"),
        embedding_model=plan.base_embedder.name, embedding_dim=plan.base_embedder.dim,
        prompt_versions=desc.get("prompt_versions", {}), batch_size=plan.batch_size, modules=list(plan.modules),
        fused=bool(desc.get("fused", False)), engine_version=__version__,
        duration_s=round(time.perf_counter() - started, 3),
        sessions=[s.id for s in conversation.sessions if (s.id in plan.covered or s.id in built.done_sessions)
                  and s.id not in built.failed_sessions],
    )
    n_results = len(extraction.results)
    report = {
        "conversation_id": conversation.id,
        "source": conversation.source,
        "backend": extractor.name,
        "extractor": desc,
        "utterances": conversation.n_utterances(),
        "sessions": len(conversation.sessions),
        "incremental": bool(plan.existing),
        "new_sessions": plan.new_sessions,
        "batches": {"total": len(plan.batches), "from_checkpoint": extraction.from_checkpoint,
                    "extracted": n_results - extraction.from_checkpoint, "failed": extraction.failures},
        "counts": anchors.counts(),
        "stats": dict(built.stats),
        "source_ids": {"dropped_nonexistent": built.dropped},
        "places_located": built.located,
        "verification": verification,
        "timings_s": {**{k: round(v, 3) for k, v in timings.items()}, "total": round(time.perf_counter() - started, 3)},
        "loader_warnings": conversation.warnings[:50],
    }
    usage = getattr(getattr(extractor, "client", None), "usage_report", None)
    if callable(usage):
        report["llm"] = usage()
    return report


def estimate_build(conversation: Conversation, backend: str = "classic", batch_size: int = DEFAULT_BATCH_SIZE,
                   fused: bool = True, model: str | None = None, modules: Iterable[str] = MODULES,
                   concurrency: int = 4) -> dict[str, Any]:
    """Calls, prompt tokens and seconds a build will take, before it starts (for the app and the CLI)."""
    batches = make_batches(conversation, batch_size)
    n_utts = conversation.n_utterances()
    if backend == "classic":
        # Measured on this project's shared 2-core machines (benchmarks/app.py, build_report timings): 24-36 s
        # for LoCoMo conversations of 369-663 turns, extraction ~30 turns/s and embedding the anchors and their
        # lines ~80 texts/s; the earlier 4 + n/120 was 4-7x too low. Loading the models adds ~8 s to the first
        # build of a process.
        return {"backend": "classic", "batches": len(batches), "calls": 0, "prompt_tokens": 0,
                "est_seconds": round(5.0 + n_utts / 20, 1)}

    transcript = sum(count_tokens(f"{u.speaker}: {u.display_text()}") for u in conversation.utterances())
    calls_per_batch = 1 if fused else len(tuple(modules))
    calls = len(batches) * calls_per_batch
    # Each call carries the batch (plus its ids and delimiters, ~1.3x) and a fixed instruction block.
    prompt_tokens = int(transcript * 1.3 * calls_per_batch + 450 * calls)
    completion_tokens = int(transcript * 0.5 * calls_per_batch)
    return {"backend": "llm", "model": model, "batches": len(batches), "calls": calls,
            "transcript_tokens": transcript, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "est_seconds": round(calls * 8.0 / max(1, concurrency), 1)}
