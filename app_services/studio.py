"""App-level services for Gravity Studio that need no Streamlit: where stores live, samples,
benchmark files, source quotes, and builds that run in a background thread.

The app keeps one ``BuildJob`` per output folder; the job outlives page reloads (it lives in the
server process) and its checkpoints outlive the process, so no extracted batch is lost.
"""

from __future__ import annotations

import gc
import importlib
import os
import re
import shutil
import threading
import uuid
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from gravity_engine.build import CHECKPOINT_DIR, BuildCancelled, BuildProgress, build_store
from gravity_engine.build.consolidate import unmerge_store
from gravity_engine.conversation import Conversation
from gravity_engine.embed import embedder_for
from gravity_engine.errors import GravityError
from gravity_engine.eval.measure import measure_conversation
from gravity_engine.hosts import LLM_AT_INGEST, get_host
from gravity_engine.hosts.dense import DenseHost, ingest_with_vectors
from gravity_engine.paths import gravity_home
from gravity_engine.query.pipeline import GravityQuery
from gravity_engine.store import ANCHORS_FILE, AnchorStore, save_unless_changed

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "sample_data"
SAMPLE_STORES = SAMPLE_DIR / "stores"
SHARED_DATA = ROOT.parent / "shared" / "data"


# A shared app gives each signed-in user a folder of their own (app_services.workspace installs the resolver,
# which reads the browser session); the library itself never knows about sessions.
_workspace_resolver: Callable[[], Path | None] | None = None


def set_workspace_resolver(resolver: Callable[[], Path | None] | None) -> None:
    """Have ``workspace_dir()`` ask ``resolver`` first (None from it: the process's own workspace)."""
    global _workspace_resolver
    _workspace_resolver = resolver


def workspace_dir() -> Path:
    """Where the app writes the stores it builds or imports (one folder per store): the signed-in user's when
    the app is shared, else ``$GRAVITY_HOME/workspace``."""
    own = _workspace_resolver() if _workspace_resolver is not None else None
    return own or gravity_home() / "workspace"


def safe_name(text: str, default: str = "store") -> str:
    """A folder name from free text: letters, digits, dot, dash and underscore only."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-_")[:60]
    return name or default


def is_store(path: Path) -> bool:
    return (path / ANCHORS_FILE).is_file()


def sample_stores() -> list[Path]:
    return sorted(p for p in SAMPLE_STORES.glob("*") if is_store(p)) if SAMPLE_STORES.is_dir() else []


def workspace_stores() -> list[Path]:
    ws = workspace_dir()
    if not ws.is_dir():
        return []
    return sorted((p for p in ws.iterdir() if is_store(p)), key=lambda p: -(p / ANCHORS_FILE).stat().st_mtime)


def available_stores() -> list[Path]:
    """Every store the app can open: the shipped samples first, then the workspace, newest first."""
    return sample_stores() + workspace_stores()


def default_store() -> Path | None:
    stores = available_stores()
    return stores[0] if stores else None


def store_mtime(path: str | Path) -> float:
    """Cache key part: a rebuilt or updated store gets a new anchors.json and so a new mtime."""
    try:
        return (Path(path) / ANCHORS_FILE).stat().st_mtime
    except OSError:
        return 0.0


def store_label(path: Path) -> str:
    kind = "sample" if SAMPLE_STORES in path.parents else "workspace"
    return f"{path.name} ({kind})"


# An upload bigger than this is refused with the limit named (GRAVITY_MAX_UPLOAD_MB): a LoCoMo conversation is
# under 1 MB, and a 50 MB file would take the app hours and most of the server's memory.
DEFAULT_MAX_UPLOAD_MB = 20.0
# A build estimated longer than this asks to be confirmed before it starts.
LONG_BUILD_SECONDS = 600


def max_upload_mb() -> float:
    """The largest conversation file the app accepts, in MB: ``$GRAVITY_MAX_UPLOAD_MB`` or 20."""
    try:
        value = float(os.environ.get("GRAVITY_MAX_UPLOAD_MB") or DEFAULT_MAX_UPLOAD_MB)
    except ValueError:
        return DEFAULT_MAX_UPLOAD_MB
    return value if value > 0 else DEFAULT_MAX_UPLOAD_MB


def upload_problem(n_bytes: int) -> str | None:
    """Why an upload of ``n_bytes`` is refused (its size and the limit), or None."""
    limit = max_upload_mb()
    if n_bytes <= limit * 1_000_000:
        return None
    return (f"This file is {n_bytes / 1_000_000:.1f} MB; the app builds conversation files up to {limit:g} MB "
            "(set GRAVITY_MAX_UPLOAD_MB to change it). Split the conversation, or build it with the command line: "
            "python -m gravity_engine build FILE.")


def size_text(n_bytes: int) -> str:
    """'812 KB', '3.4 MB'."""
    return f"{n_bytes / 1_000_000:.1f} MB" if n_bytes >= 1_000_000 else f"{max(1, round(n_bytes / 1000))} KB"


def duration_text(seconds: float) -> str:
    """A duration as people say it: '45 s', '4 min 37 s', '1 h 15 min'."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 and s < 600 else "")
    return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")


_CONVERSATION_ID = re.compile(r'"conversation_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def conversation_id_of(path: str | Path) -> str:
    """The conversation a store was built from (``conversation_id`` near the top of its anchors.json), or ""."""
    try:
        with open(Path(path) / ANCHORS_FILE, encoding="utf-8") as fh:
            head = fh.read(4096)
    except OSError:
        return ""
    m = _CONVERSATION_ID.search(head)
    return m.group(1) if m else ""


def compare_pair(paths: list[str], current: str) -> tuple[str, str]:
    """The stores Compare opens with: the current store (B) and another build of the same conversation (A),
    the most recently built first; with no other build, the current store on both sides (its edits)."""
    wanted = conversation_id_of(current)
    others = [p for p in paths if p != current and wanted and conversation_id_of(p) == wanted]
    others.sort(key=lambda p: -store_mtime(p))
    return (others[0] if others else current), current


def sample_conversations() -> list[Path]:
    if not SAMPLE_DIR.is_dir():
        return []
    # Questions files sit beside their conversation (x.questions.json) and are not conversations.
    return sorted(p for p in SAMPLE_DIR.iterdir() if p.is_file() and p.suffix in {".jsonl", ".json", ".csv", ".txt"}
                  and ".questions." not in p.name)


def benchmark_files() -> dict[str, Path]:
    """LoCoMo / LongMemEval files found in ``../shared/data`` (never copied into the repository)."""
    found: dict[str, Path] = {}
    locomo = SHARED_DATA / "locomo10.json"
    if locomo.is_file():
        found["LoCoMo (locomo10.json)"] = locomo
    lme = SHARED_DATA / "longmemeval"
    if lme.is_dir():
        for p in sorted(lme.glob("*.json")):
            found[f"LongMemEval ({p.name})"] = p
    return found


def quotes(store: AnchorStore, source_ids: list[str]) -> list[dict[str, str]]:
    """The cited utterances as rows: id, speaker, session, date and text (missing ids are marked)."""
    index = store.conversation.utterance_index() if store.conversation else {}
    rows = []
    for sid in source_ids:
        u = index.get(sid)
        if u is None:
            rows.append({"id": sid, "speaker": "", "session": "", "date": "", "text": "(utterance not in the store)"})
        else:
            rows.append({"id": sid, "speaker": u.speaker, "session": u.session_id,
                         "date": u.timestamp_text or u.timestamp or "", "text": u.display_text()})
    return rows


def session_by_utterance(store: AnchorStore) -> dict[str, str]:
    if store.conversation is None:
        return {}
    return {u.id: s.id for s in store.conversation.sessions for u in s.utterances}


def session_ids(store: AnchorStore) -> list[str]:
    if store.conversation is not None:
        return [s.id for s in store.conversation.sessions]
    return list(store.anchors.built_with.sessions)


# The build's steps as people read them, with the share of a classic build's time each one usually takes here
# (measured with benchmarks/app.py's build row): the bar moves by these shares.
BUILD_STEPS = {
    "extract": ("extracting entities, events and topics", (0.0, 0.55)),
    "finalize": ("linking across sessions (topic arcs, event links)", (0.55, 0.65)),
    "embed": ("embedding every anchor and anchor line", (0.65, 0.8)),
    "verify": ("checking every field against the utterances it cites", (0.8, 0.9)),
    "save": ("writing the store", (0.9, 0.93)),
    "host": ("indexing the conversation for the dense host (so the playground answers at once)", (0.93, 1.0)),
}


@dataclass(kw_only=True)
class BackgroundJob:
    """Work in a daemon thread that a page polls (``running``, ``error``, ``finished``) and may ``cancel()``: the work
    looks at ``_cancel`` between steps. A failure is reported in ``error``, never lost with the thread."""

    error: str | None = None
    cancelled: bool = False
    started: float = field(default_factory=time.time)
    finished: float | None = None
    _cancel: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _start(self, name: str, *args: Any) -> None:
        """Run ``_work(*args)`` in a new thread (again after a finished run: ``resume``)."""
        self._cancel.clear()
        self.cancelled, self.error, self.finished = False, None, None
        self._thread = threading.Thread(target=self._guarded, args=args, name=name, daemon=True)
        self._thread.start()

    def _guarded(self, *args: Any) -> None:
        try:
            self._work(*args)
        except GravityError as err:
            self.error = str(err)
        except Exception as err:  # a thread must report, not die silently; the page shows the message
            self.error = f"{type(err).__name__}: {err}"
        finally:
            self.finished = time.time()

    def _work(self, *args: Any) -> None:
        raise NotImplementedError


@dataclass
class BuildJob(BackgroundJob):
    """A build running in a daemon thread; the page polls ``progress`` and may ``cancel()``."""

    out_dir: Path
    conversation_id: str
    options: dict[str, Any]
    progress: Any = None  # the last BuildProgress
    log: list[str] = field(default_factory=list)
    store_path: Path | None = None
    stage_started: float = field(default_factory=time.time)  # when the current step began

    def describe(self, now: float | None = None) -> tuple[float, str]:
        """The share of the whole build done (0..1) and a line for people: the step, what it does, how far,
        and for how long it has run (steps without a count of their own still show their time moving)."""
        now = now or time.time()
        p = self.progress
        if p is None:
            return 0.0, f"Starting: loading the language and embedding models · {now - self.started:.0f} s"
        if p.stage not in BUILD_STEPS:
            return 1.0, p.message or p.stage
        steps = list(BUILD_STEPS)
        start, end = BUILD_STEPS[p.stage][1]
        inside = min(1.0, p.done / p.total) if p.total and p.stage == "extract" else 0.0
        count = f" · batch {p.done} of {p.total}" if p.stage == "extract" and p.total else ""
        failed = f" · {p.failed} failed" if p.failed else ""
        return start + (end - start) * inside, (
            f"Step {steps.index(p.stage) + 1} of {len(steps)}: {BUILD_STEPS[p.stage][0]}{count}{failed} · "
            f"{now - self.stage_started:.0f} s (build {now - self.started:.0f} s)")

    def _on_progress(self, p: Any) -> None:
        if self.progress is None or p.stage != self.progress.stage:
            self.stage_started = time.time()
        self.progress = p
        if p.message:
            self.log.append(f"{p.stage}: {p.message}")
            del self.log[:-200]

    def _work(self, conversation: Conversation) -> None:
        try:
            store = build_store(conversation, self.out_dir, progress=self._on_progress, cancel=self._cancel,
                                **self.options)
        except BuildCancelled as err:
            self.cancelled = True
            self.error = str(err)
            return
        self._prepare_dense_host(store)
        self.store_path = store.path

    def _prepare_dense_host(self, store: AnchorStore) -> None:
        if store.conversation is None or "embedder" in self.options or store.utterance_vectors is not None:
            return  # nothing to prepare: the store carries the dense host's utterance vectors
        self._on_progress(BuildProgress("host", 0, 1, counts=store.anchors.counts(),
                                        message="indexing the conversation for the dense host"))
        info = store.anchors.built_with
        try:
            index_for_dense_host(store, embedder_for(info.embedding_model or "all-MiniLM-L6-v2", info.embedding_dim))
        except Exception as err:  # an optimisation only: the playground indexes on first use instead
            self.log.append(f"host: dense index not prepared ({type(err).__name__}: {err})")


def start_build(conversation: Conversation, out_dir: str | Path, **options: Any) -> BuildJob:
    """Start ``build_store`` in a background thread; options are passed through (backend, batch_size, ...)."""
    job = BuildJob(out_dir=Path(out_dir), conversation_id=conversation.id, options=options)
    job._start(f"build-{job.out_dir.name}", conversation)
    return job


def pending_checkpoints(out_dir: str | Path) -> int:
    """How many batch checkpoints a folder holds: a resumable build when the store itself is missing."""
    ck = Path(out_dir) / CHECKPOINT_DIR
    return sum(1 for _ in ck.rglob("*.json")) if ck.is_dir() else 0


def questions_for(store: AnchorStore) -> list[dict[str, Any]]:
    """Benchmark questions with gold answers for the store's conversation: its own, or a sample's questions file."""
    conv = store.conversation
    if conv is not None and conv.questions:
        return [q.model_dump() for q in conv.questions]
    import json

    stems = {store.anchors.conversation_id}
    if conv is not None and conv.source:
        stems.add(Path(conv.source).stem)
    for stem in filter(None, stems):
        path = SAMPLE_DIR / f"{stem}.questions.json"
        if path.is_file():
            try:
                items = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return []
            return [q for q in items if isinstance(q, dict) and "question" in q]
    return []


def unmerge_into_workspace(store: AnchorStore, entity_id: str, alias: str, embedder) -> Path:
    """Split a merged name off its profile and save the store; a shipped sample is never edited in place:
    it is copied into the workspace first. Returns the folder of the edited store."""
    try:
        edited = unmerge_store(store, entity_id, alias, embedder)
    except KeyError as err:
        raise GravityError(str(err.args[0])) from None
    source = Path(store.path).resolve() if store.path else None
    if source is None or SAMPLE_STORES.resolve() in source.parents:
        target = workspace_dir() / safe_name(f"{source.name if source else store.anchors.conversation_id}-edited")
        edited.save(target)
    else:  # in place: not over a change the CLI (or another session) saved since this page loaded the store
        target = source
        save_unless_changed(edited, target, store.generation, "open it again and split the name off once more")
    return target


def host_cache_key(store_path: str | Path, mtime: float, name: str, llm_config=None) -> tuple:
    """What a ready (ingested) host depends on: the store, the host and, for a host that holds a model client,
    the endpoint, the model and a hash of the key (the key itself never becomes part of a cache key)."""
    if llm_config is None:
        return (str(store_path), mtime, name)
    import hashlib

    secret = llm_config.api_key.get_secret_value().encode()
    return (str(store_path), mtime, name, llm_config.endpoint_label(), llm_config.model,
            hashlib.sha256(secret).hexdigest()[:16])


def ingested_host(store: AnchorStore, name: str, embedder, llm_config=None):
    """A new host with the store's conversation ingested; ``llm_config`` only for hosts that call a model while
    ingesting (``hosts.LLM_AT_INGEST``)."""
    if store.conversation is None:
        raise GravityError(f"{store.path}: the store has no conversation.json, so no host can ingest it")

    host = get_host(name, embedder=embedder, **({"llm": llm_config} if llm_config is not None else {}))
    ingest_with_vectors(host, store.conversation, store.utterance_vectors)  # a new store's build embedded them
    return host


def host_unavailable(name: str, llm_config) -> str | None:
    """Why a host cannot run with the current settings (a sentence for people), or None when it can."""
    if name in LLM_AT_INGEST and llm_config is None:
        return (f"{name} calls a language model while it ingests the conversation, and no model endpoint is set: "
                "choose one on the Settings page (a local server works offline)")
    return None


@dataclass
class EvaluationJob(BackgroundJob):
    """LLM-free measures over a question slice and several hosts, in a daemon thread: the page polls ``done``
    and ``status``, may ``cancel()``; ``resume()`` starts again and measures only the questions not yet done
    (rows are kept per host as they finish, a few questions at a time)."""

    store: AnchorStore
    questions: list  # measure's Question objects, the slice
    hosts: list[str]
    dataset: str
    settings: Any  # measure.MeasureSettings
    embedder: Any = None
    llm_config: Any = None  # for hosts that call a model while ingesting
    chunk: int = 4  # questions between two looks at the cancel flag
    rows: dict[str, list] = field(default_factory=dict)  # host -> MeasureRow list
    failed: dict[str, str] = field(default_factory=dict)
    status: str = "starting"

    @property
    def total(self) -> int:
        return len(self.questions) * len(self.hosts)

    @property
    def done(self) -> int:
        return sum(len(r) for r in self.rows.values()) + sum(len(self.questions) for h in self.failed)

    @property
    def complete(self) -> bool:
        return not self.running and self.done >= self.total

    def start(self) -> "EvaluationJob":
        if not self.running:
            self._start("evaluation")
        return self

    resume = start

    def _work(self) -> None:
        gq = GravityQuery(self.store, self.embedder, self.settings.config)
        for name in self.hosts:
            if name in self.failed:
                continue
            rows = self.rows.setdefault(name, [])
            seen = {r.question_id for r in rows}
            todo = [q for q in self.questions if q.id not in seen]
            if not todo:
                continue
            why = host_unavailable(name, self.llm_config)
            if why:
                self.failed[name] = why
                continue
            self.status = f"{name}: ingesting the conversation"
            host = None
            try:
                host = ingested_host(self.store, name, gq.embedder, self.llm_config if _needs_llm(name) else None)
                for i in range(0, len(todo), self.chunk):
                    if self._cancel.is_set():
                        self.cancelled = True
                        self.status = "cancelled"
                        return
                    self.status = f"{name}: question {len(rows) + 1} of {len(self.questions)}"
                    rows += measure_conversation(self.store, host, todo[i:i + self.chunk], self.dataset,
                                                 self.settings, gravity=gq)
            except GravityError as err:
                self.failed[name] = str(err)
            finally:
                close = getattr(host, "close", None)
                if callable(close):
                    close()
        self.status = "done"


def _needs_llm(name: str) -> bool:
    return name in LLM_AT_INGEST


# The loaders name the option to change for programmers (the CLI shows that); the app says what to do instead.
_FOR_PEOPLE = [
    (re.compile(r"\s*\(LoadLimits\.\w+\)"), ""),
    (re.compile(r"; see LoadLimits"), ""),
    (re.compile(r"; raise the limit or split the file"), "; split the conversation into smaller files"),
    (re.compile(r"; raise it or set on_long_utterance='truncate'"), "; shorten that message or split it in two"),
    (re.compile(r"\s*\(set ColumnMap\.\w+\)"), " (rename that column in the file's first row to one of these names)"),
]


def message_for_people(err: Exception) -> str:
    """An error's message without the names of code options (``LoadLimits.max_depth``, ``ColumnMap.text``)."""
    text = str(err)
    for pattern, replacement in _FOR_PEOPLE:
        text = pattern.sub(replacement, text)
    return text


def store_ref(path: str | Path | None) -> str | None:
    """A store's name for a URL: ``sample/<name>`` or ``workspace/<name>``; None for a folder elsewhere (a
    URL never carries a file-system path)."""
    if not path:
        return None
    p = Path(path).resolve()
    for kind, root in (("sample", SAMPLE_STORES), ("workspace", workspace_dir())):
        if p.parent == root.resolve():
            return f"{kind}/{p.name}"
    return None


def store_from_ref(ref: str | None) -> Path | None:
    """The store a URL names (``store_ref``), looked up among the stores the app offers; None otherwise."""
    if not ref:
        return None
    return next((p for p in available_stores() if store_ref(p) == ref), None)


# Hosts without a model client, ingested in the background as soon as a page shows that it will need one (the
# playground's host box), so the first question waits only for what is left. Shared by every session: these
# hosts hold nothing of a user's (``host_cache_key`` without an endpoint).
_INGEST = ThreadPoolExecutor(max_workers=1, thread_name_prefix="host-ingest")
_READY: dict[tuple, Future] = {}
_READY_LOCK = threading.Lock()
_READY_MAX = 6


def host_in_background(store: AnchorStore, name: str) -> Future:
    """A future of ``ingested_host(store, name, <the store's embedder>)``, started once per store and host."""
    if name in LLM_AT_INGEST:
        raise GravityError(f"{name} holds a model client: it is built per browser session, not shared")
    key = host_cache_key(store.path, store_mtime(store.path), name)
    with _READY_LOCK:
        fut = _READY.get(key)
        if fut is None or (fut.done() and fut.exception() is not None):
            info = store.anchors.built_with
            fut = _READY[key] = _INGEST.submit(
                lambda: ingested_host(store, name, embedder_for(info.embedding_model or "all-MiniLM-L6-v2",
                                                                info.embedding_dim)))
            while len(_READY) > _READY_MAX:
                _READY.pop(next(iter(_READY)))
    return fut


def index_for_dense_host(store: AnchorStore, embedder) -> None:
    """Embed the conversation's memories the way the ``dense`` host does, into its on-disk cache, so the first
    playground question on a store built in the app does not wait for it."""
    if store.conversation is not None:
        ingest_with_vectors(DenseHost(embedder=embedder), store.conversation, store.utterance_vectors)


_WARMED: set[str] = set()
# What the pages after the first one draw with: imported ahead, so the first visit to a table or a chart does not
# wait for them (the first page itself needs none of them).
_PAGE_LIBRARIES = ("pandas", "pyarrow", "altair", "networkx")


def load_embedder_soon(name: str = "all-MiniLM-L6-v2", dim: int = 0, delay: float = 4.0) -> None:
    """In a daemon thread, once per process and model, ``delay`` seconds from now (after the first page is drawn:
    imports compete with it for the interpreter): import the libraries the other pages draw with, then load the
    embedding model, before a first question or build needs it."""
    with _READY_LOCK:
        if name in _WARMED:
            return
        _WARMED.add(name)

    def load() -> None:
        time.sleep(delay)
        try:
            for module in _PAGE_LIBRARIES:
                importlib.import_module(module)
            embedder_for(name, dim)
        except Exception:  # an optimisation only: the first use loads it and reports any error
            pass
        # Streamlit collects garbage after every script run; what was loaded once per process (torch, the model,
        # spaCy, pandas) lives as long as the server, so the collector need not walk it again: a full collection
        # took 0.25 s or more of each rerun before.
        gc.freeze()

    threading.Thread(target=load, name="embedder-preload", daemon=True).start()


def writable_store_dir(path: str | Path) -> Path:
    """Where edits of this store can be written: the store itself, or for a shipped sample a copy in the
    workspace (samples are never edited in place), made once."""
    source = Path(path).resolve()
    if SAMPLE_STORES.resolve() not in source.parents:
        return source
    target = workspace_dir() / safe_name(f"{source.name}-edited")
    if not (target / ANCHORS_FILE).is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.copy-{uuid.uuid4().hex[:6]}")
        shutil.copytree(source, tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    return target
