"""The ``llm`` extractor: the paper's method, one fused call per batch (or one call per module).

The model's reply is mapped into anchors with batch-local ids (``b{index}-e{n}``, ``-v{n}``, ``-t{n}``);
consolidation assigns global ones. Source ids the model invents are dropped and counted; relative
dates it left unresolved are resolved here against the batch's session time.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import date, datetime
from typing import Any, Iterable, Iterator

from ..anchors import MODULES, AnchorSet, Attribute, Entity, Event, KeyFact, Relation, Topic, TopicSession
from ..conversation import Conversation
from ..llm import make_client
from ..llm.client import LLMClient
from ..llm.config import LLMConfig
from ..prompts import PROMPTS
from ..prompts.extract_entities import ExtractedEntity
from ..prompts.extract_events import ExtractedEvent
from ..prompts.extract_topics import ExtractedTopic
from ..timeparse import resolve_time_expression
from .base import Batch, BatchAnchors


# Bump when the mapping of replies into anchors changes (the prompts carry their own versions): checkpoints
# and stores record it, so a rebuild re-extracts instead of reusing batches the old code wrote.
EXTRACTOR_VERSION = "1"
ENTITY_TYPES = ("person", "pet", "organization", "place", "project", "product", "artifact", "other")
_TYPE_SYNONYMS = {"org": "organization", "company": "organization", "group": "organization", "team": "organization",
                  "location": "place", "city": "place", "country": "place", "animal": "pet", "object": "artifact",
                  "item": "artifact", "event": "other", "concept": "other", "people": "person", "human": "person"}
MODULE_PROMPTS = {"entities": "extract_entities", "events": "extract_events", "topics": "extract_topics"}
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_ISO_YEAR = re.compile(r"^(\d{4})$")


def batch_context(batch: Batch) -> dict[str, Any]:
    """The context dict the extraction prompts render: session facts plus the batch's utterances."""
    return {
        "session_id": batch.session_id, "session_time": batch.session_time,
        "session_time_text": batch.session_time_text, "speakers": batch.speakers,
        "utterances": [{"id": u.id, "speaker": u.speaker, "text": u.display_text()} for u in batch.utterances],
    }


def _as_iso_day(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return normalize_model_date(str(value))[0]


def normalize_model_date(text: str | None) -> tuple[str | None, str | None, str | None]:
    """A model-written date -> (start day, end day, granularity); (None, None, None) when unreadable.

    Accepts YYYY-MM-DD (with or without a time part), YYYY-MM and YYYY; anything else is dropped
    rather than trusted.
    """
    if not text:
        return None, None, None
    text = text.strip()
    if m := _ISO_DAY.match(text):
        try:
            day = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return None, None, None
        return day.isoformat(), None, "day"
    if m := _ISO_MONTH.match(text):
        year, month = int(m[1]), int(m[2])
        if not 1 <= month <= 12:
            return None, None, None
        nxt = date(year + (month == 12), month % 12 + 1, 1)
        return date(year, month, 1).isoformat(), date.fromordinal(nxt.toordinal() - 1).isoformat(), "month"
    if m := _ISO_YEAR.match(text):
        return f"{m[1]}-01-01", f"{m[1]}-12-31", "year"
    return None, None, None


class LLMExtractor:
    """Entities, events and topics of each batch from an OpenAI-compatible model."""

    name = "llm"

    def __init__(self, client: LLMClient | None = None, *, config: LLMConfig | None = None, fused: bool = True,
                 modules: Iterable[str] = MODULES):
        if client is None:
            client = make_client(config)
        self.client = client
        self.fused = fused
        self.modules = tuple(m for m in MODULES if m in set(modules))
        unknown = set(modules) - set(MODULES)
        if unknown or not self.modules:
            raise ValueError(f"unknown or no anchor modules {sorted(unknown) or list(modules)}; expected some of {MODULES}")
        self._resolve = resolve_time_expression

    # --- the Extractor protocol -------------------------------------------------------------------
    def extract_batch(self, batch: Batch) -> BatchAnchors:
        """One fused call (or one call per selected module); raises ``LLMError`` when the batch fails."""
        context = batch_context(batch)
        stats: dict[str, int] = {}
        replies: dict[str, list] = {m: [] for m in MODULES}
        if self.fused:
            reply, usage = self.client.complete_json_with_info(PROMPTS["extract_fused"], context)
            self._count(stats, usage)
            for module in self.modules:
                replies[module] = getattr(reply, module)
        else:
            for module in self.modules:
                reply, usage = self.client.complete_json_with_info(PROMPTS[MODULE_PROMPTS[module]], context)
                self._count(stats, usage)
                replies[module] = getattr(reply, module)
        mapper = _BatchMapper(batch, self._resolve, stats)
        return BatchAnchors(
            entities=mapper.entities(replies["entities"]), events=mapper.events(replies["events"]),
            topics=mapper.topics(replies["topics"]), stats=stats,
        )

    def finalize(self, conversation: Conversation, anchors: AnchorSet, new_session_ids: list[str]) -> AnchorSet:
        """Link each event without a topic to the topic citing most of the same utterances; order topic arcs."""
        topics_by_source: dict[str, list[str]] = {}
        for topic in anchors.topics:
            topic.sessions.sort(key=lambda s: (s.date or "", s.session_id))
            for sid in topic.source_ids:
                topics_by_source.setdefault(sid, []).append(topic.id)
        for event in anchors.events:
            if event.topic_id:
                continue
            votes: dict[str, int] = {}
            for sid in event.source_ids:
                for tid in topics_by_source.get(sid, []):
                    votes[tid] = votes.get(tid, 0) + 1
            if votes:
                event.topic_id = max(sorted(votes), key=votes.__getitem__)
        return anchors

    def describe(self) -> dict[str, Any]:
        names = ["extract_fused"] if self.fused else [MODULE_PROMPTS[m] for m in self.modules]
        return {"backend": self.name, "version": EXTRACTOR_VERSION, "llm_model": self.client.config.model,
                "fused": self.fused,
                "modules": list(self.modules), "prompt_versions": {n: PROMPTS[n].version for n in names},
                "endpoint": self.client.config.endpoint_label()}

    def usage_report(self) -> dict[str, Any]:
        """Calls, cache hits, tokens and wall time per prompt, for the build report's cost summary."""
        return self.client.usage_report()

    # --- concurrency ------------------------------------------------------------------------------
    def extract_batches(self, batches: Iterable[Batch], cancel: threading.Event | None = None,
                        ) -> Iterator[tuple[Batch, BatchAnchors | Exception]]:
        """Extract batches with ``config.concurrency`` workers; yields (batch, anchors or the exception)
        as each finishes, so a failed batch is reported and the others go on.

        At most one batch per worker is in flight: once ``cancel`` is set no new batch starts, the ones
        in flight are still yielded (the build checkpoints them, they are paid for), and the rest never run."""
        pending = iter(list(batches))
        workers = max(1, self.client.config.concurrency)
        in_flight: dict[Future, Batch] = {}
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm-extract") as pool:

            def submit_next() -> None:
                batch = None if cancel is not None and cancel.is_set() else next(pending, None)
                if batch is not None:
                    in_flight[pool.submit(self.extract_batch, batch)] = batch

            for _ in range(workers):
                submit_next()
            while in_flight:
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    batch = in_flight.pop(future)
                    try:
                        result: BatchAnchors | Exception = future.result()
                    except Exception as err:  # noqa: BLE001 - the caller records any failure per batch
                        result = err
                    yield batch, result
                    submit_next()

    @staticmethod
    def _count(stats: dict[str, int], usage) -> None:
        for key, value in (("llm_calls", usage.calls), ("llm_requests", usage.requests),
                           ("llm_cache_hits", usage.cache_hits), ("prompt_tokens", usage.prompt_tokens),
                           ("completion_tokens", usage.completion_tokens), ("llm_retries", usage.retries),
                           ("llm_repairs", usage.repairs)):
            stats[key] = stats.get(key, 0) + int(value)


class _BatchMapper:
    """Turns one batch's reply models into anchors, keeping only provenance that exists in the batch."""

    def __init__(self, batch: Batch, resolve, stats: dict[str, int]):
        self.batch = batch
        self.valid = [u.id for u in batch.utterances]
        self._valid_set = set(self.valid)
        self.resolve = resolve
        self.stats = stats
        stats.setdefault("invented_source_ids", 0)
        self.seen = batch.session_time or batch.session_id
        self.reference = _parse_reference(batch.session_time)

    def ids(self, source_ids: list[str]) -> list[str]:
        kept = []
        for sid in source_ids:
            sid = str(sid).strip()
            if sid in self._valid_set:
                if sid not in kept:
                    kept.append(sid)
            else:
                self.stats["invented_source_ids"] += 1
        return kept

    def _mentions(self, names: list[str]) -> list[str]:
        # A name the model cited nothing for is still grounded where the batch says it; nothing else is.
        pats = [re.compile(r"\b" + re.escape(n) + r"\b", re.I) for n in names if n]
        return [u.id for u in self.batch.utterances
                if any(p.search(u.display_text()) or p.fullmatch(u.speaker) for p in pats)]

    def entities(self, items: list[ExtractedEntity]) -> list[Entity]:
        out: list[Entity] = []
        for item in items:
            name = item.name.strip()
            if not name:
                continue
            attributes = [Attribute(key=a.key.strip(), value=a.value.strip(), source_ids=self.ids(a.source_ids))
                          for a in item.attributes if a.key.strip() and a.value.strip()]
            relations = [Relation(predicate=r.predicate.strip(), target=r.target.strip(), source_ids=self.ids(r.source_ids))
                         for r in item.relations if r.predicate.strip() and r.target.strip()]
            aliases = [a.strip() for a in item.aliases if a.strip() and a.strip().lower() != name.lower()]
            sources = self.ids(item.source_ids)
            if not sources:
                sources = list(dict.fromkeys(s for f in attributes + relations for s in f.source_ids))
            if not sources:
                sources = self._mentions([name, *aliases])
            kind = item.type.strip().lower()
            kind = kind if kind in ENTITY_TYPES else _TYPE_SYNONYMS.get(kind, "other")
            out.append(Entity(
                id=f"b{self.batch.index}-e{len(out)}", name=name, type=kind, aliases=list(dict.fromkeys(aliases)),
                description=item.description.strip(), attributes=attributes, relations=relations, source_ids=sources,
                mentions=len(sources), first_seen=self.seen, last_seen=self.seen,
            ))
        return out

    def events(self, items: list[ExtractedEvent]) -> list[Event]:
        kept: list[tuple[int, ExtractedEvent]] = [(i, e) for i, e in enumerate(items) if e.what.strip()]
        local_id = {orig: f"b{self.batch.index}-v{n}" for n, (orig, _) in enumerate(kept)}
        out: list[Event] = []
        for orig, item in kept:
            start, end, granularity = self._dates(item)
            out.append(Event(
                id=local_id[orig], what=item.what.strip(), participants=[p.strip() for p in item.participants if p.strip()],
                when_text=item.when_text.strip(), date_start=start, date_end=end, granularity=granularity,
                where=item.where.strip(), session_id=self.batch.session_id, session_date=self.batch.session_time,
                source_ids=self.ids(item.source_ids),
                follows=[local_id[i] for i in dict.fromkeys(item.follows) if i in local_id and i != orig],
                causes=[local_id[i] for i in dict.fromkeys(item.causes) if i in local_id and i != orig],
            ))
        return out

    def _dates(self, item: ExtractedEvent) -> tuple[str | None, str | None, str]:
        start, end, gran = normalize_model_date(item.date_start)
        if item.date_start and start is None:
            self.stats["invalid_model_dates"] = self.stats.get("invalid_model_dates", 0) + 1
        if start is not None:
            end_start, end_end, _ = normalize_model_date(item.date_end)
            end = end_end or end_start or end  # an end given as a month means its last day
            granularity = item.granularity if item.granularity != "unknown" else (gran or "day")
            return start, end, granularity
        when = item.when_text.strip()
        if when and self.resolve is not None and self.reference is not None:
            span = self.resolve(when, self.reference)
            if span is not None:
                resolved = _span_fields(span)
                if resolved[0]:
                    self.stats["dates_resolved_locally"] = self.stats.get("dates_resolved_locally", 0) + 1
                    return resolved
        return None, None, item.granularity if when else "unknown"

    def topics(self, items: list[ExtractedTopic]) -> list[Topic]:
        out: list[Topic] = []
        for item in items:
            label = item.label.strip()
            if not label:
                continue
            facts = [KeyFact(text=f.text.strip(), source_ids=self.ids(f.source_ids)) for f in item.key_facts if f.text.strip()]
            sources = self.ids(item.source_ids) or list(dict.fromkeys(s for f in facts for s in f.source_ids))
            out.append(Topic(
                id=f"b{self.batch.index}-t{len(out)}", label=label,
                keywords=list(dict.fromkeys(k.strip() for k in item.keywords if k.strip())),
                summary=item.summary.strip(), key_facts=facts,
                participants=[p.strip() for p in item.participants if p.strip()],
                sessions=[TopicSession(session_id=self.batch.session_id, date=self.batch.session_time,
                                       state=item.state.strip() or item.summary.strip(), mentions=len(sources),
                                       source_ids=sources)],
                status="ongoing", source_ids=sources,
            ))
        return out


def _parse_reference(session_time: str | None) -> datetime | None:
    if not session_time:
        return None
    try:
        return datetime.fromisoformat(session_time)
    except ValueError:
        return None


def _span_fields(span: Any) -> tuple[str | None, str | None, str]:
    """Read a ``TimeSpan`` (start/end/granularity attributes, or a mapping) into anchor fields."""
    get = span.get if isinstance(span, dict) else lambda k, d=None: getattr(span, k, d)
    start = _as_iso_day(get("start", None) or get("date_start", None))
    end = _as_iso_day(get("end", None) or get("date_end", None))
    granularity = str(get("granularity", None) or "day")
    if granularity not in ("day", "week", "month", "season", "year", "range", "unknown"):
        granularity = "range" if end and end != start else "day"
    if end == start:
        end = None
    return start, end, granularity
