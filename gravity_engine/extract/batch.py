"""Extraction through a provider's batch API (OpenAI-compatible ``/v1/files`` + ``/v1/batches``).

A batch job costs half of the online price and needs no rate-limit juggling, but answers within
hours. So the batch API only fills the LLM cache: every extraction request of the build is written
as one JSONL line whose ``custom_id`` is the request's cache key (``cache.cache_key``, exactly as
``LLMClient.complete_json`` keys an online call), uploaded, submitted and polled; each valid answer
is stored under its key. The build that follows is the ordinary one: every call is a cache hit,
so it makes 0 online calls and writes its per-batch checkpoints as usual. A request that the batch
could not answer (or answered with invalid JSON) is simply made online by that build, with the
client's repair round.

State lives in ``state_dir`` (the run's checkpoint folder): the request and output files and
``state.json`` with each submitted batch's id, written before polling starts. A run that is
interrupted between submission and download resumes the same batch by its id; a request is never
submitted twice from one state folder.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..anchors import MODULES
from ..errors import ConfigError, LLMError
from ..fileio import atomic_write_json, atomic_write_text
from ..llm.cache import ResponseCache, cache_key
from ..llm.client import InvalidReply, LLMClient, parse_json_reply
from ..llm.config import LLMConfig
from ..llm.endpoints import JSON_MODES
from ..llm.guard import check_model_request
from ..prompts import PROMPTS
from .base import make_batches
from .llm import MODULE_PROMPTS, batch_context

log = logging.getLogger("gravity_engine.extract.batch")

ENDPOINT = "/v1/chat/completions"
TERMINAL = ("completed", "failed", "expired", "cancelled")
# OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
STATE_FILE = "state.json"

Status = Callable[[str], None]


@dataclass
class BatchItem:
    """One extraction request: its cache key (also its ``custom_id``), prompt and body."""

    key: str
    prompt: str  # PROMPTS name, to validate the answer against its response model
    conversation_id: str
    batch_index: int
    body: dict[str, Any]


@dataclass
class BatchRunReport:
    planned: int = 0  # extraction requests of the corpus
    cached: int = 0  # already in the cache before this run
    submitted: int = 0  # sent in new batch jobs by this run
    resumed: list[str] = field(default_factory=list)  # batch ids picked up from an earlier, interrupted run
    stored: int = 0  # answers put in the cache by this run
    unanswered: int = 0  # errors, invalid or missing answers: the build makes these calls online
    prompt_tokens: int = 0
    completion_tokens: int = 0
    batches: list[dict[str, Any]] = field(default_factory=list)

    def describe(self) -> str:
        resumed = f", resumed {', '.join(self.resumed)}" if self.resumed else ""
        return (f"batch API: {self.planned} requests, {self.cached} already cached, {self.submitted} submitted"
                f"{resumed}; {self.stored} answers cached, {self.unanswered} left for online calls; "
                f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens")


def extraction_requests(conversations: Iterable[Any], config: LLMConfig, *, batch_size: int, fused: bool = True,
                        modules: Iterable[str] | None = None, json_mode: str | None = None) -> list[BatchItem]:
    """Every extraction request a build of ``conversations`` would send, keyed as the online client keys it.

    ``json_mode``: the structured-output mode of the request bodies (default: the config's, json_schema
    for auto); the cache key does not depend on it, as online."""
    configured = getattr(config, "json_mode", "auto")
    json_mode = json_mode or (JSON_MODES[0] if configured == "auto" else configured)
    selected = [m for m in MODULES if m in set(modules or MODULES)]
    names = ["extract_fused"] if fused else [MODULE_PROMPTS[m] for m in selected]
    items: dict[str, BatchItem] = {}
    for conv in conversations:
        for batch in make_batches(conv, batch_size):
            context = batch_context(batch)
            for name in names:
                prompt = PROMPTS[name]
                messages = prompt.render(context)
                schema = prompt.json_schema()
                key = cache_key(prompt=prompt.id, model=config.model, messages=messages, schema=schema,
                                temperature=config.temperature, max_tokens=config.max_tokens)
                body: dict[str, Any] = {"model": config.model, "temperature": config.temperature,
                                        "messages": LLMClient._messages_for_mode(json_mode, messages, name, schema)}
                if config.max_tokens:
                    body["max_tokens"] = config.max_tokens
                response_format = LLMClient._response_format(json_mode, name, schema, config.max_tokens)
                if response_format is not None:
                    body["response_format"] = response_format
                # Identical batches (a conversation listed twice) are one request.
                items.setdefault(key, BatchItem(key, name, conv.id, batch.index, body))
    return list(items.values())


class BatchAPIRun:
    """Submit, poll and harvest batch jobs for ``items``; the answers land in ``config``'s LLM cache."""

    def __init__(self, config: LLMConfig, state_dir: str | Path, *, poll_s: float = 30.0,
                 max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES, status: Status | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        import openai

        if not config.cache:
            raise ConfigError("the batch API hands its answers to the build through the LLM cache; enable the cache")
        self.config = config
        self.dir = Path(state_dir)
        self.poll_s = poll_s
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.say = status or (lambda msg: log.info(msg))
        self.sleep = sleep
        self.cache = ResponseCache(config.cache_dir)
        self._openai = openai
        # Management calls (upload, create, retrieve, download) are cheap and idempotent to retry:
        # the openai client's own retries are enough here.
        self._client = openai.OpenAI(base_url=config.base_url, api_key=config.api_key.get_secret_value(),
                                     max_retries=config.max_retries, timeout=config.timeout)

    # --- the whole run -----------------------------------------------------------------------------
    def run(self, items: list[BatchItem]) -> BatchRunReport:
        from filelock import FileLock, Timeout

        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            lock = FileLock(str(self.dir / "state.lock"), timeout=0)
            lock.acquire()
        except Timeout:
            raise ConfigError(f"{self.dir}: another batch-API run is using this folder") from None
        try:
            return self._run(items)
        finally:
            lock.release()

    def _run(self, items: list[BatchItem]) -> BatchRunReport:
        report = BatchRunReport(planned=len(items))
        state = self._load_state()
        by_key = {i.key: i for i in items}
        # Pick up what an interrupted run left: submitted batches that were not downloaded yet.
        for record in state["batches"]:
            if not record.get("harvested"):
                self._finish(record, state, by_key, report)
                if record.get("id"):
                    report.resumed.append(record["id"])
        submitted = {k for r in state["batches"] if r.get("status") != "failed" for k in r.get("keys", [])}
        pending = []
        for item in items:
            if self.cache.get(item.key) is not None:
                report.cached += 1
            elif item.key not in submitted:
                pending.append(item)
        for chunk in self._chunks(pending):
            record = self._submit(chunk, state)
            report.submitted += len(chunk)
            self._finish(record, state, by_key, report)
        report.batches = [{k: r.get(k) for k in ("id", "status", "n", "counts")} for r in state["batches"]]
        return report

    # --- submission --------------------------------------------------------------------------------
    def _chunks(self, items: list[BatchItem]) -> Iterable[list[BatchItem]]:
        chunk: list[BatchItem] = []
        size = 0
        for item in items:
            line = len(self._line(item)) + 1
            if chunk and (len(chunk) >= self.max_requests or size + line > self.max_bytes):
                yield chunk
                chunk, size = [], 0
            chunk.append(item)
            size += line
        if chunk:
            yield chunk

    @staticmethod
    def _line(item: BatchItem) -> str:
        return json.dumps({"custom_id": item.key, "method": "POST", "url": ENDPOINT, "body": item.body},
                          ensure_ascii=False)

    def _submit(self, chunk: list[BatchItem], state: dict[str, Any]) -> dict[str, Any]:
        n = len(state["batches"])
        requests = self.dir / f"requests-{n:03d}.jsonl"
        atomic_write_text(requests, "".join(self._line(i) + "\n" for i in chunk))
        record: dict[str, Any] = {"n": len(chunk), "requests": requests.name, "keys": [i.key for i in chunk],
                                  "prompts": {i.key: i.prompt for i in chunk}, "status": "uploading"}
        state["batches"].append(record)
        self._save_state(state)
        with requests.open("rb") as fh:
            uploaded = self._call("upload the requests", self._client.files.create, file=(requests.name, fh),
                                  purpose="batch")
        record.update(input_file_id=uploaded.id, status="submitting")
        self._save_state(state)
        batch = self._call("create the batch", self._client.batches.create, input_file_id=uploaded.id,
                           endpoint=ENDPOINT, completion_window="24h",
                           metadata={"created_by": "gravity_engine", "requests": requests.name})
        record.update(id=batch.id, status=batch.status)
        self._save_state(state)  # from here on an interrupted run resumes this batch by its id
        self.say(f"submitted batch {batch.id}: {len(chunk)} requests")
        return record

    def _recover_id(self, record: dict[str, Any]) -> str | None:
        """A run killed between creating the batch and saving its id: find it by its input file."""
        if not record.get("input_file_id"):
            return None
        for batch in self._call("list batches", self._client.batches.list, limit=100):
            if batch.input_file_id == record["input_file_id"]:
                return batch.id
        return None

    # --- polling and harvest -----------------------------------------------------------------------
    def _finish(self, record: dict[str, Any], state: dict[str, Any], by_key: dict[str, BatchItem],
                report: BatchRunReport) -> None:
        if not record.get("id"):
            found = self._recover_id(record)
            if found is None:
                # Never created: its requests were not submitted, so a later run may send them again.
                record.update(status="failed", harvested=True, error="not submitted (interrupted before creation)")
                self._save_state(state)
                return
            record["id"] = found
            self._save_state(state)
        batch = self._poll(record, state)
        counts = getattr(batch, "request_counts", None)
        record["counts"] = counts.model_dump() if counts is not None else None
        if batch.status == "failed":
            record.update(status="failed", harvested=True)
            self._save_state(state)
            errors = "; ".join(f"{e.code or ''} {e.message or ''}".strip()
                               for e in (getattr(getattr(batch, "errors", None), "data", None) or [])[:3])
            raise LLMError(f"batch {batch.id} failed: {errors or 'no reason given'}; "
                           "run again to resubmit its requests")
        stored = 0
        if batch.output_file_id:
            stored = self._harvest(record, batch.output_file_id, by_key, report)
        report.stored += stored
        report.unanswered += record["n"] - stored
        if batch.status != "completed":
            self.say(f"batch {batch.id} ended {batch.status}: {record['n'] - stored} requests will be made online")
        record.update(status=batch.status, harvested=True)
        self._save_state(state)

    def _poll(self, record: dict[str, Any], state: dict[str, Any]) -> Any:
        last = None
        while True:
            batch = self._call("check the batch", self._client.batches.retrieve, record["id"])
            if batch.status != last:
                record["status"] = last = batch.status
                self._save_state(state)
                counts = getattr(batch, "request_counts", None)
                done = f" ({counts.completed + counts.failed}/{counts.total})" if counts and counts.total else ""
                self.say(f"batch {batch.id}: {batch.status}{done}")
            if batch.status in TERMINAL:
                return batch
            self.sleep(self.poll_s)

    def _harvest(self, record: dict[str, Any], file_id: str, by_key: dict[str, BatchItem],
                 report: BatchRunReport) -> int:
        out = self.dir / record["requests"].replace("requests-", "output-")
        if not out.is_file():  # kept, so a run killed while caching re-reads it instead of downloading again
            content = self._call("download the output", self._client.files.content, file_id)
            atomic_write_text(out, content.text)
        prompts = record.get("prompts", {})
        stored = 0
        for n, line in enumerate(out.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                key = row["custom_id"]
                response = row.get("response") or {}
                body = response.get("body") or {}
            except (ValueError, KeyError, TypeError, AttributeError):
                log.warning("%s line %d: not a batch output line; skipped", out.name, n)
                continue
            name = prompts.get(key) or (by_key[key].prompt if key in by_key else None)
            if name is None or response.get("status_code") != 200 or not body.get("choices"):
                continue  # an error line: the build makes this call online
            choice = body["choices"][0]
            usage = body.get("usage") or {}
            report.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            report.completion_tokens += int(usage.get("completion_tokens") or 0)
            prompt = PROMPTS[name]
            try:
                result = parse_json_reply((choice.get("message") or {}).get("content") or "", prompt.response_model,
                                          choice.get("finish_reason") or "stop")
            except InvalidReply as err:
                log.warning("%s: invalid batch answer (%s); the build asks again online", name, err)
                continue
            self.cache.put(key, prompt=prompt.id, model=self.config.model, content=result.model_dump_json(),
                           usage={"prompt_tokens": int(usage.get("prompt_tokens") or 0),
                                  "completion_tokens": int(usage.get("completion_tokens") or 0), "batch": True})
            stored += 1
        return stored

    # --- plumbing ----------------------------------------------------------------------------------
    def _call(self, what: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        check_model_request(self.config.base_url)
        try:
            return fn(*args, **kwargs)
        except self._openai.OpenAIError as err:
            status = getattr(err, "status_code", None)
            # Servers without a batch API (vLLM, Ollama, llama.cpp) refuse the very first call, the upload.
            hint = (" (does this endpoint offer a batch API? if not, build without --batch-api)"
                    if status in (400, 404, 405) and what == "upload the requests" else "")
            raise LLMError(self._scrub(f"batch API: cannot {what} at {self.config.endpoint_label()}: "
                                       f"{type(err).__name__}: {err}{hint}")[:600]) from None

    def _scrub(self, text: str) -> str:
        key = self.config.api_key.get_secret_value()
        return text.replace(key, "***") if key and len(key) >= 4 else text

    def _load_state(self) -> dict[str, Any]:
        path = self.dir / STATE_FILE
        if not path.is_file():
            return {"batches": []}
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(state.get("batches"), list):
                raise ValueError("no batches list")
            return state
        except (OSError, ValueError, AttributeError) as err:
            raise ConfigError(f"{path}: unreadable batch-API state ({err}); delete the file to start over "
                              "(batches it names would be submitted again)") from None

    def _save_state(self, state: dict[str, Any]) -> None:
        atomic_write_json(self.dir / STATE_FILE, state)
