"""Step 2: expansion queries written from the selected anchors, merged round-robin.

Per module, a generator yields queries from the anchors in rank order (at most
``per_anchor_queries`` each): entities pair the name with an attribute value or a relation,
events join participants, the action and the time as said, topics use key facts and
participant-topic pairs. The merge cycles topic -> entity -> event, one query per module per round,
until the budget (9) is filled or a module is exhausted; ``continue_after_exhausted`` keeps cycling
the others instead. A module that selected no anchor takes no part (it cannot run dry mid-way).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..anchors import Anchor, Entity, Event, Topic
from .config import QueryConfig
from .text import human_date, truncate_words

_MAX_WORDS = 24


@dataclass(frozen=True)
class Expansion:
    query: str
    module: str
    anchor_id: str


def entity_queries(entity: Entity) -> Iterator[str]:
    for rel in entity.relations:
        yield f"{entity.name} {rel.predicate} {rel.target}"
    for attr in entity.attributes:
        yield f"{entity.name} {attr.key} {attr.value}"
    if entity.description:
        yield f"{entity.name} {entity.description}"


def _join_new(*parts: str) -> str:
    """Join parts, skipping any already said by an earlier part (an event's 'what' often names its people)."""
    out: list[str] = []
    for part in parts:
        if part and part.lower() not in " ".join(out).lower():
            out.append(part)
    return " ".join(out)


def event_queries(event: Event) -> Iterator[str]:
    who = " ".join(p for p in event.participants if p.lower() not in event.what.lower())
    when = event.when_text or human_date(event.date_start, event.granularity)
    yield _join_new(who, event.what, when)
    if event.where:
        yield _join_new(who, event.what, event.where)


def topic_queries(topic: Topic) -> Iterator[str]:
    facts = [f.text for f in topic.key_facts]
    pairs = [f"{p} {topic.label}" for p in topic.participants]
    for i in range(max(len(facts), len(pairs))):
        if i < len(facts):
            yield facts[i]
        if i < len(pairs):
            yield pairs[i]
    if not facts and not pairs and topic.keywords:
        yield f"{topic.label} {' '.join(topic.keywords[:5])}"


_GENERATORS = {"entities": entity_queries, "events": event_queries, "topics": topic_queries}


def module_queries(module: str, anchors: list[Anchor], per_anchor: int) -> Iterator[Expansion]:
    make = _GENERATORS[module]
    for anchor in anchors:
        for i, q in enumerate(make(anchor)):
            if i >= per_anchor:
                break
            yield Expansion(truncate_words(q, _MAX_WORDS), module, anchor.id)


def expand(selected: dict[str, list[Anchor]], config: QueryConfig, original: str = "") -> list[Expansion]:
    """At most ``expansion_budget`` queries, round-robin over ``expansion_order``, duplicates skipped."""
    if not config.expand or config.expansion_budget == 0:
        return []
    gens = {m: module_queries(m, selected[m], config.per_anchor_queries)
            for m in config.expansion_order if selected.get(m)}
    seen = {" ".join(original.lower().split())}
    out: list[Expansion] = []
    active = [m for m in config.expansion_order if m in gens]
    while active and len(out) < config.expansion_budget:
        for module in list(active):
            if len(out) >= config.expansion_budget:
                break
            item = None
            for cand in gens[module]:
                key = " ".join(cand.query.lower().split())
                if key and key not in seen:
                    seen.add(key)
                    item = cand
                    break
            if item is None:
                if not config.continue_after_exhausted:
                    return out
                active.remove(module)
                continue
            out.append(item)
    return out
