"""The anchor schema: entity profiles, event records and topic arcs, as stored in ``anchors.json``.

Every field a reader may doubt cites the utterance ids it came from (``source_ids``), so the app
can show the evidence and ``verify`` can check it. ``compact_text()`` is the one text form of an
anchor used for embedding, reranking and display.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = 1
ANCHORS_FILE = "anchors.json"  # an AnchorSet as a store saves it (``store.py``); the edits log marks it changed

# "before" / "after": nothing more precise was said than the tense, so the session day is a bound:
# date_start == date_end == the session day, read "on or before" (a past event) or "on or after" (a plan).
Granularity = Literal["day", "week", "month", "season", "year", "range", "before", "after", "unknown"]
TopicStatus = Literal["ongoing", "resolved", "dormant"]


class FieldCheck(BaseModel):
    """Verification of one anchor field against the utterances it cites."""

    field: str  # e.g. "name", "attributes[2]", "relations[0]", "what", "date", "key_facts[1]"
    supported: bool
    score: float  # 0..1; embedding similarity or 1.0/0.0 for exact string/date checks
    method: str  # "string", "date", "embedding", "gazetteer", "missing-source"
    note: str = ""


class Attribute(BaseModel):
    key: str
    value: str
    source_ids: list[str] = Field(default_factory=list)


class Relation(BaseModel):
    predicate: str
    target: str
    target_id: str | None = None  # id of the target entity when it has a profile
    source_ids: list[str] = Field(default_factory=list)
    confidence: float | None = None  # the relation head's probability; None: a rule's or an edit's word


class Merge(BaseModel):
    """One alias folded into a profile during consolidation; kept so the merge can be shown and undone."""

    alias: str  # the name that was merged
    alias_id: str  # the id the alias had before the merge
    reason: str  # "same name", "case/punctuation", "nickname", "llm alias", ...
    source_ids: list[str] = Field(default_factory=list)
    # The alias profile as it was before the merge, so ``consolidate.unmerge`` can restore it, and
    # what the merge changed on the target (aliases it added, type and description it had).
    snapshot: dict = Field(default_factory=dict)
    added_aliases: list[str] = Field(default_factory=list)
    target_before: dict = Field(default_factory=dict)


class Entity(BaseModel):
    id: str
    name: str
    type: str = "other"  # person, organization, place, project, product, pet, artifact, other
    type_confidence: float | None = None  # the typing head's probability of ``type``; None: not learned
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    attributes: list[Attribute] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list)
    mentions: int = 0
    first_seen: str | None = None  # ISO time (or session id when times are unknown)
    last_seen: str | None = None
    merges: list[Merge] = Field(default_factory=list)
    checks: list[FieldCheck] = Field(default_factory=list)

    def compact_text(self) -> str:
        parts = [f"{self.name} ({self.type})"]
        if self.aliases:
            parts.append("aka " + ", ".join(self.aliases))
        if self.description:
            parts.append(self.description)
        parts += [f"{a.key}: {a.value}" for a in self.attributes[:8]]
        parts += [f"{r.predicate} {r.target}" for r in self.relations[:8]]
        return "; ".join(parts)


class Event(BaseModel):
    id: str
    what: str
    participants: list[str] = Field(default_factory=list)
    when_text: str = ""  # the temporal expression as said ("yesterday", "last May")
    date_start: str | None = None  # ISO date, resolved against session_date; None when unknown
    date_end: str | None = None
    granularity: Granularity = "unknown"
    where: str = ""
    causes: list[str] = Field(default_factory=list)  # ids of events this one led to
    follows: list[str] = Field(default_factory=list)  # ids of events this one comes after
    session_id: str = ""
    session_date: str | None = None  # the ISO time the expression was resolved against
    topic_id: str | None = None
    source_ids: list[str] = Field(default_factory=list)
    checks: list[FieldCheck] = Field(default_factory=list)

    def date_label(self) -> str:
        if not self.date_start:
            return self.when_text or "date unknown"
        if self.granularity == "before":
            return f"on or before {self.date_end or self.date_start}"
        if self.granularity == "after":
            return f"on or after {self.date_start}"
        if self.date_end and self.date_end != self.date_start:
            return f"{self.date_start}..{self.date_end}"
        return self.date_start

    def compact_text(self) -> str:
        who = ", ".join(self.participants)
        when = self.date_label()
        if self.when_text and self.date_start:
            when += f' ("{self.when_text}")'
        text = f"{who}: {self.what}" if who else self.what
        text += f" | when: {when}"
        if self.where:
            text += f" | where: {self.where}"
        return text


class KeyFact(BaseModel):
    text: str
    source_ids: list[str] = Field(default_factory=list)


class TopicSession(BaseModel):
    """One step of a topic's arc: what the topic looked like in one session."""

    session_id: str
    date: str | None = None
    state: str = ""  # a short summary of the topic in that session
    mentions: int = 0
    source_ids: list[str] = Field(default_factory=list)


class Topic(BaseModel):
    id: str
    label: str
    keywords: list[str] = Field(default_factory=list)
    summary: str = ""
    key_facts: list[KeyFact] = Field(default_factory=list)
    participants: list[str] = Field(default_factory=list)
    sessions: list[TopicSession] = Field(default_factory=list)  # the arc, ordered by time
    status: TopicStatus = "ongoing"
    source_ids: list[str] = Field(default_factory=list)
    checks: list[FieldCheck] = Field(default_factory=list)

    def compact_text(self) -> str:
        text = f"Topic: {self.label}"
        if self.keywords:
            text += f" [{', '.join(self.keywords[:8])}]"
        if self.participants:
            text += f" | participants: {', '.join(self.participants)}"
        if self.summary:
            text += f" | {self.summary}"
        facts = "; ".join(f.text for f in self.key_facts[:5])
        if facts:
            text += f" | facts: {facts}"
        return text


Anchor = Entity | Event | Topic
MODULES = ("entities", "events", "topics")


class BuildInfo(BaseModel):
    """What built the anchors, so a reader knows how far to trust them and a rebuild can be compared."""

    backend: str = "classic"  # classic | llm
    extractor_version: str = ""  # the extractor's describe()["version"]; "" in stores written before it was kept
    llm_model: str | None = None
    embedding_model: str = ""
    embedding_dim: int = 0
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    batch_size: int = 20
    modules: list[str] = Field(default_factory=lambda: list(MODULES))
    fused: bool = False
    built_at: str = Field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    duration_s: float = 0.0
    engine_version: str = ""
    sessions: list[str] = Field(default_factory=list)  # session ids the anchors cover (incremental builds)


class AnchorSet(BaseModel):
    """The three knowledge bases of one conversation: the content of ``anchors.json``."""

    schema_version: int = SCHEMA_VERSION
    conversation_id: str = ""
    built_with: BuildInfo = Field(default_factory=BuildInfo)
    entities: list[Entity] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    topics: list[Topic] = Field(default_factory=list)

    def module(self, name: str) -> list[Entity] | list[Event] | list[Topic]:
        if name not in MODULES:
            raise KeyError(f"unknown anchor module {name!r}; expected one of {', '.join(MODULES)}")
        return getattr(self, name)

    def signature(self) -> tuple:
        """Cheap enough for every query: a replaced list, a changed length or changed ends mean new anchors, and
        what is built from them (the anchor index, the line table) is rebuilt. Anchors edited in place without any
        of these are not seen; edits make new stores, as unmerge does."""
        return tuple((m, id(items), len(items), items[0].id if items else "", items[-1].id if items else "")
                     for m in MODULES for items in (self.module(m),))

    def counts(self) -> dict[str, int]:
        return {m: len(self.module(m)) for m in MODULES}

    def by_id(self) -> dict[str, Anchor]:
        return {a.id: a for m in MODULES for a in self.module(m)}

    def citing_items(self) -> Iterator[BaseModel]:
        """Every object that carries ``source_ids``: anchors and their attributes, relations, key facts
        and arc steps (one walk, shared by everything that reads or rewrites citations)."""
        for e in self.entities:
            yield e
            yield from e.attributes
            yield from e.relations
        yield from self.events
        for t in self.topics:
            yield t
            yield from t.key_facts
            yield from t.sessions

    def all_source_ids(self) -> set[str]:
        """Every utterance id any anchor or any of its fields cites."""
        return {i for item in self.citing_items() for i in item.source_ids}
