"""Stable keys of anchors: how an edit or a diff finds "the same anchor" in another build.

Ids are volatile (``evt-0007`` in one build is another event in the next), so an anchor is named by
what a reader would name it by: an entity by its name (or an alias) and type, an event by its text,
date and the utterances it cites, a topic by its label and sources. ``AnchorRef`` carries that key;
``Resolver`` finds it in an ``AnchorSet`` and stays correct while edits rename, merge and delete.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .anchors import MODULES, AnchorSet, Entity, Event, Topic
from .merging import name_key as _name_key

# A replay of many edits asks for the same few names again and again.
name_key = lru_cache(maxsize=1 << 16)(_name_key)

Module = Literal["entities", "events", "topics"]
MAX_REF_SOURCES = 20


class AnchorRef(BaseModel):
    """The stable key of one anchor as it was when an edit was made."""

    model_config = ConfigDict(extra="forbid")
    module: Module
    name: str = Field(min_length=1)  # entity name, event text (what), topic label
    type: str = ""  # entity type then (tells apart two entities with one name)
    date: str | None = None  # event date_start then
    source_ids: list[str] = Field(default_factory=list)  # event / topic sources then (a few)
    id: str = ""  # the id then: a hint among equals, never required

    def label(self) -> str:
        kind = {"entities": "entity", "events": "event", "topics": "topic"}[self.module]
        extra = f" ({self.type})" if self.type else f" ({self.date})" if self.date else ""
        return f"{kind} {self.name!r}{extra}"


def anchor_name(module: str, anchor) -> str:
    return anchor.name if module == "entities" else anchor.what if module == "events" else anchor.label


def ref_of(module: str, anchor) -> AnchorRef:
    if module == "entities":
        return AnchorRef(module=module, name=anchor.name, type=anchor.type, id=anchor.id)
    if module == "events":
        return AnchorRef(module=module, name=anchor.what, date=anchor.date_start,
                         source_ids=anchor.source_ids[:MAX_REF_SOURCES], id=anchor.id)
    return AnchorRef(module="topics", name=anchor.label, source_ids=anchor.source_ids[:MAX_REF_SOURCES], id=anchor.id)


def entity_keys(e: Entity) -> set[str]:
    return {k for k in (name_key(n) for n in [e.name, *e.aliases]) if k}


def event_key(v: Event) -> tuple[str, str, str]:
    """What a reader calls the same event: its text, its date and the first utterance it cites."""
    return name_key(v.what), v.date_start or "", v.source_ids[0] if v.source_ids else ""


class Resolver:
    """Finds anchors by ``AnchorRef`` in one AnchorSet; told of renames, additions and removals so a
    sequence of edits never rebuilds its indexes."""

    def __init__(self, anchors: AnchorSet):
        self.anchors = anchors
        self._names: dict[str, list[Entity]] = {}
        self._what: dict[str, list[Event]] = {}
        self._labels: dict[str, list[Topic]] = {}
        self._sources: dict[str, dict[str, list]] = {"events": {}, "topics": {}}
        self._dead: set[int] = set()
        for module in MODULES:
            for a in anchors.module(module):
                self.add(module, a)

    def add(self, module: str, anchor) -> None:
        self._dead.discard(id(anchor))
        self.renamed(module, anchor)
        if module != "entities":
            for s in anchor.source_ids:
                self._sources[module].setdefault(s, []).append(anchor)

    def renamed(self, module: str, anchor) -> None:
        """Index the anchor's current names too (old keys are filtered out when looked up)."""
        if module == "entities":
            for k in entity_keys(anchor):
                bucket = self._names.setdefault(k, [])
                if not any(x is anchor for x in bucket):
                    bucket.append(anchor)
            return
        index = self._what if module == "events" else self._labels
        bucket = index.setdefault(name_key(anchor_name(module, anchor)), [])
        if not any(x is anchor for x in bucket):
            bucket.append(anchor)

    def remove(self, anchor) -> None:
        self._dead.add(id(anchor))

    def alive(self, anchor) -> bool:
        return id(anchor) not in self._dead

    def entities_named(self, name: str) -> list[Entity]:
        key = name_key(name)
        seen: dict[int, Entity] = {}
        for e in self._names.get(key, []):
            if self.alive(e) and id(e) not in seen and key in entity_keys(e):
                seen[id(e)] = e
        return list(seen.values())

    def find(self, ref: AnchorRef):
        """(anchor, "") or (None, why not): the anchor this ref names in the current set."""
        if ref.module == "entities":
            return self._find_entity(ref)
        return self._find_other(ref)

    def _find_entity(self, ref: AnchorRef):
        cands = self.entities_named(ref.name)
        if not cands:
            return None, f"no entity named {ref.name!r} in this build"
        key = name_key(ref.name)
        for narrow in (lambda e: True, lambda e: name_key(e.name) == key, lambda e: e.type == ref.type,
                       lambda e: e.id == ref.id):
            cands = [e for e in cands if narrow(e)] or cands
            if len(cands) == 1:
                return cands[0], ""
        return None, f"{len(cands)} entities are named {ref.name!r}; the edit cannot tell which"

    def _find_other(self, ref: AnchorRef):
        module = ref.module
        key = name_key(ref.name)
        kind = "event" if module == "events" else "topic"
        index = self._what if module == "events" else self._labels
        named = [a for a in index.get(key, []) if self.alive(a) and name_key(anchor_name(module, a)) == key]
        wanted = set(ref.source_ids)
        # the same text citing a source of the ref; else the same text anywhere (another batching moved it)
        same = [a for a in named if wanted & set(a.source_ids)] or named
        if not same and module == "topics" and wanted:
            # A rebuilt topic may get another label; the arc that holds most of its utterances is it.
            cands = {id(a): a for s in ref.source_ids for a in self._sources[module].get(s, []) if self.alive(a)}
            if cands:
                best = max(cands.values(), key=lambda t: len(wanted & set(t.source_ids)))
                if len(wanted & set(best.source_ids)) * 2 >= len(wanted):
                    return best, ""
        if not same:
            cited = f" citing {', '.join(ref.source_ids[:3])}" if ref.source_ids else ""
            return None, f"no {kind} {ref.name!r}{cited} in this build"
        for narrow in (lambda a: True, lambda a: module != "events" or a.date_start == ref.date,
                       lambda a: a.id == ref.id):
            same = [a for a in same if narrow(a)] or same
            if len(same) == 1:
                return same[0], ""
        return None, f"{len(same)} {kind}s read {ref.name!r}; the edit cannot tell which"
