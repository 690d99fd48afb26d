"""Gold annotations of a conversation, and a scorer of an anchor store against them.

A gold file (``<name>.gold.json`` beside ``<name>.jsonl``; format in ``docs/gold_format.md``) says
what a careful reader takes from the conversation: the entities and their types, names that must not
become entities (interjections, idioms, titles, weekdays), relations in a small predicate vocabulary,
short facts per person, and events with the dates they resolve to. ``score_store`` measures how much
of that an :class:`~gravity_engine.anchors.AnchorSet` holds, and lists every miss so a person can
see why a number is what it is. Pure functions: no Streamlit, no model unless an embedder is passed.

Matching rules, in short (the doc page has the details):

* names compare case-, accent- and punctuation-insensitively, without a leading "the", a possessive
  "'s" or a leading title ("Dr.", "Professor", "Uncle"); a store entity is a gold entity when its
  name or one of its aliases is the gold name or one of the gold aliases;
* a store predicate is read through :data:`PREDICATE_READINGS` into the vocabulary (``owns`` and
  ``has_pet`` are ``owns_pet``; a bare kin word "X mother Y" means Y is X's mother, so it reads as
  ``parent_of`` from Y to X); symmetric predicates match in either direction;
* an event date is right when the store's range equals or contains the gold range and is at most one
  day wider.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..anchors import AnchorSet, Entity, Event
from ..errors import InputError
from ..vocabulary import (  # noqa: F401  (the gold format's vocabulary, re-exported for its readers)
    ENTITY_TYPES,
    PREDICATE_READINGS,
    SYMMETRIC,
    TYPE_SYNONYMS,
    VOCABULARY,
    normalize_predicate,
    normalize_type,
    predicate_readings,
)

GOLD_VERSION = 1
GOLD_SUFFIX = ".gold.json"


_TITLES = {"dr", "mr", "mrs", "ms", "mx", "prof", "professor", "sir", "dame", "uncle", "aunt", "auntie",
           "grandma", "grandpa", "coach", "captain"}
_STOP = {"the", "a", "an", "of", "to", "in", "on", "at", "for", "and", "or", "my", "our", "his", "her", "their",
         "very", "really", "so", "much", "more", "than", "every", "all", "any", "some", "with", "up"}


# --------------------------------------------------------------------------------------------------
# The gold file.


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    note: str = ""


class GoldEntity(_Item):
    name: str = Field(min_length=1)
    type: str
    aliases: list[str] = Field(default_factory=list)
    alt_types: list[str] = Field(default_factory=list)  # other types a reader would also accept
    optional: bool = False  # not required for recall; never counted as junk

    @field_validator("type", "alt_types")
    @classmethod
    def _known_type(cls, value: Any) -> Any:
        for t in [value] if isinstance(value, str) else value:
            if normalize_type(t) not in ENTITY_TYPES:
                raise ValueError(f"unknown entity type {t!r}; use one of {', '.join(ENTITY_TYPES)}")
        return value


class GoldRelation(_Item):
    subject: str = Field(min_length=1)
    predicate: str = Field(min_length=1)
    object: str = Field(min_length=1)
    evidence: list[str] = Field(min_length=1)
    optional: bool = False  # true, so a store relation saying it is not wrong; not required for recall


class GoldFact(_Item):
    subject: str = Field(min_length=1)
    text: str = Field(min_length=1)
    evidence: list[str] = Field(min_length=1)


class GoldEvent(_Item):
    what: str = Field(min_length=1)
    when_text: str = ""
    date_start: date
    date_end: date | None = None  # inclusive; the same day as date_start when absent
    evidence: list[str] = Field(min_length=1)
    relative: bool = False  # the date needs the session date to be resolved ("yesterday", "in May", "the 18th")

    @property
    def end(self) -> date:
        return self.date_end or self.date_start


class GoldMention(_Item):
    """A word in one utterance that names a gold entity without its name: a pronoun ("she"), a kin or role word
    ("Mum", "my boss") or a nickname said once. Training data uses these to learn who such words are."""
    utterance: str = Field(min_length=1)
    text: str = Field(min_length=1)  # as written in the utterance, matched case-insensitively on word boundaries
    entity: str = Field(min_length=1)  # a gold entity's name or alias


class Gold(BaseModel):
    model_config = ConfigDict(extra="forbid")
    gold_version: int = GOLD_VERSION
    conversation: str | None = None  # the conversation file, relative to the gold file
    description: str = ""
    speakers: list[str] = Field(default_factory=list)
    entities: list[GoldEntity] = Field(default_factory=list)
    junk_names: list[str] = Field(default_factory=list)
    relations: list[GoldRelation] = Field(default_factory=list)
    facts: list[GoldFact] = Field(default_factory=list)
    events: list[GoldEvent] = Field(default_factory=list)
    mentions: list[GoldMention] = Field(default_factory=list)
    path: Path | None = Field(default=None, exclude=True)

    def conversation_path(self) -> Path | None:
        if not self.conversation:
            return None
        base = self.path.parent if self.path else Path(".")
        return base / self.conversation

    def evidence_ids(self) -> set[str]:
        return {i for group in (self.relations, self.facts, self.events) for item in group for i in item.evidence}


def _where(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "top level"


def gold_from_dict(data: Any, source: str = "gold") -> Gold:
    """A gold annotation from parsed JSON; problems raise :class:`InputError` naming the JSON path."""
    if not isinstance(data, dict):
        raise InputError("expected a JSON object with entities, relations, facts and events, "
                         f"got {type(data).__name__}", source=source)
    try:
        gold = Gold.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        msg = first["msg"].removeprefix("Value error, ")
        more = f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else ""
        raise InputError(msg + more, source=source, where=_where(first["loc"])) from None
    if gold.gold_version != GOLD_VERSION:
        raise InputError(f"gold_version {gold.gold_version} is not supported (expected {GOLD_VERSION})",
                         source=source, where="gold_version")
    _check(gold, source)
    return gold


def load_gold(path: str | Path) -> Gold:
    """Read and check a gold file; any problem raises :class:`InputError` with the file and the place."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such gold file", source=str(p)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read the gold file: {err}", source=str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON: {err.msg}", source=str(p),
                         where=f"line {err.lineno}, column {err.colno}") from None
    gold = gold_from_dict(data, source=str(p))
    gold.path = p
    return gold


def _check(gold: Gold, source: str) -> None:
    """Cross-references: unique names, relation and fact subjects that are gold entities, date order."""
    index = GoldIndex(gold)
    seen: dict[str, str] = {}
    for i, ent in enumerate(gold.entities):
        for name in [ent.name, *ent.aliases]:
            key = norm_name(name)
            if not key:
                raise InputError(f"name {name!r} is empty once normalized", source=source, where=f"entities[{i}]")
            if key in seen and seen[key] != ent.name:
                raise InputError(f"{name!r} names both {seen[key]!r} and {ent.name!r}", source=source,
                                 where=f"entities[{i}]")
            seen[key] = ent.name
    speakers = {norm_name(s) for s in gold.speakers}
    for i, junk in enumerate(gold.junk_names):
        if norm_name(junk) in seen or norm_name(junk) in speakers:
            raise InputError(f"junk name {junk!r} is also a gold entity or a speaker", source=source,
                             where=f"junk_names[{i}]")
    def require_entity(name: str, what: str, where: str) -> None:
        if index.find(name) is None:
            raise InputError(f"{what} {name!r} is not a gold entity (name or alias)", source=source, where=where)

    for i, rel in enumerate(gold.relations):
        require_entity(rel.subject, "subject", f"relations[{i}].subject")
        canon, _ = predicate_readings(rel.predicate)[0]
        if canon in VOCABULARY and canon not in ("likes", "dislikes") and index.find(rel.object) is None:
            raise InputError(f"object {rel.object!r} of {rel.predicate} is not a gold entity (only likes, dislikes "
                             "and predicates outside the vocabulary take free text)", source=source,
                             where=f"relations[{i}].object")
    for i, fact in enumerate(gold.facts):
        require_entity(fact.subject, "subject", f"facts[{i}].subject")
    for i, mention in enumerate(gold.mentions):
        require_entity(mention.entity, "entity", f"mentions[{i}].entity")
    for i, ev in enumerate(gold.events):
        if ev.end < ev.date_start:
            raise InputError(f"date_end {ev.end} is before date_start {ev.date_start}", source=source,
                             where=f"events[{i}]")


def check_against_conversation(gold: Gold, conversation: Any) -> list[str]:
    """Problems between a gold file and its conversation: evidence ids that do not exist, speakers that differ."""
    texts = {u.id: u.text for u in conversation.utterances()}
    ids = set(texts)
    problems = []
    for group in ("relations", "facts", "events"):
        for i, item in enumerate(getattr(gold, group)):
            problems += [f"{group}[{i}]: evidence {e!r} is not an utterance id" for e in item.evidence if e not in ids]
    for i, m in enumerate(gold.mentions):
        if m.utterance not in ids:
            problems.append(f"mentions[{i}]: utterance {m.utterance!r} is not an utterance id")
        elif not mention_spans(texts[m.utterance], m.text):
            problems.append(f"mentions[{i}]: {m.text!r} is not a word in {m.utterance} ({texts[m.utterance][:60]!r})")
    if gold.speakers and sorted(gold.speakers) != sorted(conversation.speakers):
        problems.append(f"speakers {gold.speakers} differ from the conversation's {conversation.speakers}")
    return problems


def gold_stats(gold: Gold, conversation: Any) -> dict[str, int]:
    """What a gold file holds for training: utterances, entities, typed mentions (each time an entity's name or
    alias stands in an utterance), relations and relation instances (relation x evidence utterance), junk names,
    reference mentions (pronouns, kin words), and relations whose evidence names neither side nor a mention of it."""
    utts = list(conversation.utterances())
    typed = 0
    for ent in gold.entities:
        for u in utts:
            typed += any(mention_spans(u.text, n) for n in [ent.name, *ent.aliases])
    index = GoldIndex(gold)
    linked: dict[str, set[int]] = {}
    for m in gold.mentions:
        linked.setdefault(m.utterance, set()).add(index.find(m.entity))
    texts = {u.id: u.text for u in utts}
    speaker_of = {u.id: u.speaker for u in utts}
    unanchored = 0
    for rel in gold.relations:
        sides = [index.find(rel.subject), index.find(rel.object)]
        names = [n for i in sides if i is not None for n in (gold.entities[i].name, *gold.entities[i].aliases)]
        names.append(rel.object)
        if not any(any(mention_spans(texts.get(e, ""), n) for n in names) or linked.get(e, set()) & set(sides)
                   or index.find(speaker_of.get(e, "")) in sides for e in rel.evidence):
            unanchored += 1
    return {"utterances": len(utts), "entities": len(gold.entities), "typed mentions": typed,
            "relations": len(gold.relations), "relation instances": sum(len(r.evidence) for r in gold.relations),
            "junk names": len(gold.junk_names), "reference mentions": len(gold.mentions),
            "relations no evidence names": unanchored}


def mention_spans(text: str, words: str) -> list[tuple[int, int]]:
    """Character spans where ``words`` stands in ``text`` as whole words, case-insensitively."""
    pattern = r"(?<!\w)" + re.escape(words.strip()) + r"(?!\w)"
    return [m.span() for m in re.finditer(pattern, text, flags=re.IGNORECASE)]


# --------------------------------------------------------------------------------------------------
# Normalization.


def norm_name(name: str) -> str:
    """Lower case, no accents, no punctuation, no possessive "'s", no leading "the"."""
    s = unicodedata.normalize("NFKD", str(name)).replace("\u2019", "'")
    s = "".join(c for c in s if not unicodedata.combining(c)).casefold()
    s = re.sub(r"'s\b", "", s)
    s = re.sub(r"[^\w&+ ]+", " ", s)
    s = " ".join(s.split())
    return re.sub(r"^the ", "", s)


def _name_keys(name: str) -> list[str]:
    key = norm_name(name)
    words = key.split()
    keys = [key]
    if len(words) > 1 and words[0] in _TITLES:
        keys.append(" ".join(words[1:]))
    return keys


def _tokens(text: str) -> set[str]:
    words = re.findall(r"\w+", norm_name(text))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if w not in _STOP}


def _text_object_matches(gold_text: str, store_text: str) -> bool:
    g, s = _tokens(gold_text), _tokens(store_text)
    return bool(g) and bool(s) and (g <= s or s <= g)


class GoldIndex:
    """Gold entities by every key of their names and aliases."""

    def __init__(self, gold: Gold):
        self.gold = gold
        self.keys: dict[str, int] = {}
        for i, ent in enumerate(gold.entities):
            for name in [ent.name, *ent.aliases]:
                for key in _name_keys(name):
                    self.keys.setdefault(key, i)

    def find(self, name: str) -> int | None:
        for key in _name_keys(name):
            if key in self.keys:
                return self.keys[key]
        return None

    def match_entity(self, entity: Entity) -> tuple[int | None, str]:
        """(gold index, "name" | "alias") of a store entity, or (None, "")."""
        hit = self.find(entity.name)
        if hit is not None:
            return hit, "name"
        for alias in entity.aliases:
            hit = self.find(alias)
            if hit is not None:
                return hit, "alias"
        return None, ""


# --------------------------------------------------------------------------------------------------
# Scores.


@dataclass
class Rate:
    hit: int = 0
    n: int = 0

    @property
    def value(self) -> float | None:
        return self.hit / self.n if self.n else None

    def __str__(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.2f} ({self.hit}/{self.n})"


@dataclass
class GoldMisses:
    """What a person needs to see to debug a score; every entry is a short readable line."""

    missed_entities: list[str] = field(default_factory=list)
    wrong_types: list[str] = field(default_factory=list)  # "Pepper: pet, store says person"
    duplicate_entities: list[str] = field(default_factory=list)  # one gold entity, several store profiles
    junk_listed: list[str] = field(default_factory=list)  # store entities named in junk_names
    junk_unlisted: list[str] = field(default_factory=list)  # store entities that are no gold entity nor speaker
    missed_relations: list[str] = field(default_factory=list)
    wrong_relations: list[str] = field(default_factory=list)  # between gold entities, matching no gold relation
    missed_facts: list[str] = field(default_factory=list)
    undated_events: list[str] = field(default_factory=list)
    wrong_dates: list[str] = field(default_factory=list)  # gold relative events without a right store date


@dataclass
class GoldScore:
    conversation_id: str = ""
    entity_recall: Rate = field(default_factory=Rate)
    type_accuracy: Rate = field(default_factory=Rate)  # found gold entities whose every store profile is typed right
    junk_share: Rate = field(default_factory=Rate)
    relation_recall: Rate = field(default_factory=Rate)
    relation_precision: Rate = field(default_factory=Rate)  # n: store relations between two gold entities
    store_relations: int = 0
    fact_recall: Rate = field(default_factory=Rate)
    events_dated: Rate = field(default_factory=Rate)  # store events with a date_start
    event_recall: Rate = field(default_factory=Rate)  # gold events that some store event cites the evidence of
    relative_date_accuracy: Rate = field(default_factory=Rate)  # n: gold relative events (missed ones count wrong)
    relative_date_matched: int = 0  # of those, how many a store event cites
    misses: GoldMisses = field(default_factory=GoldMisses)

    def metrics(self) -> dict[str, float | None]:
        return {
            "entity_recall": self.entity_recall.value, "type_accuracy": self.type_accuracy.value,
            "junk_share": self.junk_share.value, "relation_recall": self.relation_recall.value,
            "relation_precision": self.relation_precision.value, "fact_recall": self.fact_recall.value,
            "events_dated": self.events_dated.value, "event_recall": self.event_recall.value,
            "relative_date_accuracy": self.relative_date_accuracy.value,
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key, value in self.metrics().items():
            out[key]["value"] = value
        return out


def _range(ev: Event) -> tuple[date, date] | None:
    try:
        start = date.fromisoformat(str(ev.date_start)[:10])
        end = date.fromisoformat(str(ev.date_end or ev.date_start)[:10])
    except (TypeError, ValueError):
        return None
    return (start, end) if end >= start else None


def date_matches(ev: Event, gold_event: GoldEvent, slack_days: int = 1) -> bool:
    """The store range equals or contains the gold range and is at most ``slack_days`` wider."""
    if not ev.date_start:
        return False
    rng = _range(ev)
    if rng is None:
        return False
    start, end = rng
    g_start, g_end = gold_event.date_start, gold_event.end
    return start <= g_start and end >= g_end and (end - start).days <= (g_end - g_start).days + slack_days


def _short(text: str, n: int = 70) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _label(ev: Event) -> str:
    rng = ev.date_label()
    return f"{rng} [{', '.join(ev.source_ids[:3])}] {_short(ev.what, 50)!r}"


def score_store(anchors: AnchorSet, gold: Gold, *, speakers: Iterable[str] | None = None, embedder: Any = None,
                fact_threshold: float = 0.6) -> GoldScore:
    """Score one conversation's anchors against its gold annotation (see the module doc for the rules).

    ``speakers`` (default: the gold file's) are never junk. With an ``embedder`` a gold fact is also
    found when a profile field of its subject has cosine >= ``fact_threshold`` with the fact's text.
    """
    index = GoldIndex(gold)
    score = GoldScore(conversation_id=anchors.conversation_id)
    matched, store_gold = _score_entities(anchors, gold, index, score, gold.speakers if speakers is None else speakers)
    _score_relations(anchors, gold, index, store_gold, score)
    _score_facts(anchors, gold, index, matched, score, embedder, fact_threshold)
    _score_events(anchors, gold, score)
    return score


def _score_entities(anchors: AnchorSet, gold: Gold, index: GoldIndex, score: GoldScore, speakers: Iterable[str]
                    ) -> tuple[dict[int, list[tuple[Entity, str]]], dict[str, int]]:
    """Which store profile is which gold entity (gold index -> profiles, store id -> gold index); entity recall,
    junk and types scored on the way."""
    miss = score.misses
    speaker_keys = {norm_name(s) for s in speakers}
    junk_keys = {norm_name(j) for j in gold.junk_names}

    matched: dict[int, list[tuple[Entity, str]]] = {}
    store_gold: dict[str, int] = {}  # store entity id -> gold index
    for ent in anchors.entities:
        gi, via = index.match_entity(ent)
        key = norm_name(ent.name)
        if gi is not None:
            matched.setdefault(gi, []).append((ent, via))
            store_gold[ent.id] = gi
        if key in junk_keys:
            miss.junk_listed.append(ent.name)
        elif gi is None and key not in speaker_keys:
            miss.junk_unlisted.append(ent.name)
    score.junk_share = Rate(len(miss.junk_listed) + len(miss.junk_unlisted), len(anchors.entities))

    required = [i for i, g in enumerate(gold.entities) if not g.optional]
    score.entity_recall = Rate(sum(1 for i in required if i in matched), len(required))
    miss.missed_entities = [gold.entities[i].name for i in required if i not in matched]
    type_hits = 0
    for gi, hits in sorted(matched.items()):
        # Right when every store profile of the entity has an accepted type: a reader sees each of them.
        g = gold.entities[gi]
        accepted = {normalize_type(g.type), *(normalize_type(t) for t in g.alt_types)}
        wrong = [e for e, _ in hits if normalize_type(e.type) not in accepted]
        if not wrong:
            type_hits += 1
        else:
            says = ", ".join(f"{e.type} ({e.name!r})" if len(hits) > 1 else e.type for e in wrong)
            miss.wrong_types.append(f"{g.name}: {g.type}, store says {says}")
        if len(hits) > 1:
            miss.duplicate_entities.append(f"{g.name}: " + ", ".join(repr(h[0].name) for h in hits))
    score.type_accuracy = Rate(type_hits, len(matched))
    return matched, store_gold


def _score_relations(anchors: AnchorSet, gold: Gold, index: GoldIndex, store_gold: dict[str, int],
                     score: GoldScore) -> None:
    """Relation recall (gold relations found, either reading of a predicate) and precision (of the store's
    relations between two gold entities)."""
    miss = score.misses
    by_id = {e.id: e for e in anchors.entities}
    gold_rels = []  # (gold relation, subject index, canonical predicate, object index or None)
    for rel in gold.relations:
        canon, flipped = predicate_readings(rel.predicate)[0]
        s, o = index.find(rel.subject), index.find(rel.object)
        if flipped:
            s, o = o, s
        gold_rels.append((rel, s, canon, o))

    def rel_matches(g: tuple, s: int | None, readings: list[tuple[str, bool]], o: int | None, target: str) -> bool:
        rel, gs, gc, go = g
        for canon, flipped in readings:
            if canon != gc:
                continue
            if go is None:  # free-text object (likes, dislikes, ...)
                if not flipped and s == gs and _text_object_matches(rel.object, target):
                    return True
                continue
            a, b = (o, s) if flipped else (s, o)
            if (a, b) == (gs, go) or (gc in SYMMETRIC and (b, a) == (gs, go)):
                return True
        return False

    found = [False] * len(gold_rels)
    checked = correct = 0
    for ent in anchors.entities:
        s = store_gold.get(ent.id)
        for r in ent.relations:
            score.store_relations += 1
            o = store_gold.get(r.target_id) if r.target_id and r.target_id in by_id else None
            if o is None:
                o = index.find(r.target)
            readings = predicate_readings(r.predicate)
            hit = False
            for k, g in enumerate(gold_rels):
                if rel_matches(g, s, readings, o, r.target):
                    found[k] = hit = True
            if s is not None and o is not None:
                checked += 1
                correct += hit
                if not hit:
                    miss.wrong_relations.append(f"{ent.name} {r.predicate} {r.target} [{', '.join(r.source_ids[:3])}]")
    req_rels = [k for k, g in enumerate(gold_rels) if not g[0].optional]
    score.relation_recall = Rate(sum(found[k] for k in req_rels), len(req_rels))
    score.relation_precision = Rate(correct, checked)
    miss.missed_relations = [f"{gold_rels[k][0].subject} {gold_rels[k][0].predicate} {gold_rels[k][0].object} "
                             f"[{', '.join(gold_rels[k][0].evidence)}]" for k in req_rels if not found[k]]


def _score_facts(anchors: AnchorSet, gold: Gold, index: GoldIndex, matched: dict[int, list[tuple[Entity, str]]],
                 score: GoldScore, embedder: Any, fact_threshold: float) -> None:
    """Fact recall: a profile field of the subject (attribute or relation) or a topic key fact naming the subject
    that cites the fact's evidence, or (with an embedder) says it nearly in words."""
    miss = score.misses
    def candidates(gi: int) -> list[tuple[str, set[str]]]:
        out = []
        for ent, _ in matched.get(gi, []):
            out += [(f"{ent.name} {a.key}: {a.value}", set(a.source_ids)) for a in ent.attributes]
            out += [(f"{ent.name} {r.predicate} {r.target}", set(r.source_ids)) for r in ent.relations]
        g = gold.entities[gi]
        names = {k for n in [g.name, *g.aliases] for k in _name_keys(n)}
        for topic in anchors.topics:
            for kf in topic.key_facts:
                text = f" {norm_name(kf.text)} "
                if any(f" {n} " in text for n in names):
                    out.append((kf.text, set(kf.source_ids)))
        return out

    fact_hits = 0
    pending: list[tuple[int, list[str]]] = []  # facts not found by citation, for the embedder
    for k, fact in enumerate(gold.facts):
        gi = index.find(fact.subject)
        cands = candidates(gi) if gi is not None else []
        if any(ids & set(fact.evidence) for _, ids in cands):
            fact_hits += 1
        elif embedder is not None and cands:
            pending.append((k, [t for t, _ in cands]))
        else:
            miss.missed_facts.append(f"{fact.subject}: {fact.text} [{', '.join(fact.evidence)}]")
    if pending:
        texts = sorted({t for _, ts in pending for t in ts} | {gold.facts[k].text for k, _ in pending})
        vecs = np.asarray(embedder.encode(texts), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        row = {t: i for i, t in enumerate(texts)}
        for k, ts in pending:
            fact = gold.facts[k]
            sims = vecs[[row[t] for t in ts]] @ vecs[row[fact.text]]
            if float(sims.max()) >= fact_threshold:
                fact_hits += 1
            else:
                miss.missed_facts.append(f"{fact.subject}: {fact.text} [{', '.join(fact.evidence)}]")
    score.fact_recall = Rate(fact_hits, len(gold.facts))


def _score_events(anchors: AnchorSet, gold: Gold, score: GoldScore) -> None:
    """Events dated, gold events found (a store event cites their evidence) and relative dates resolved right."""
    miss = score.misses
    dated = [ev for ev in anchors.events if ev.date_start]
    score.events_dated = Rate(len(dated), len(anchors.events))
    miss.undated_events = [f"{_short(ev.what, 60)!r} when={ev.when_text!r} [{', '.join(ev.source_ids[:3])}]"
                           for ev in anchors.events if not ev.date_start]
    citing: dict[str, list[Event]] = {}
    for ev in anchors.events:
        for sid in ev.source_ids:
            citing.setdefault(sid, []).append(ev)
    ev_found = rel_n = rel_matched = rel_ok = 0
    for gev in gold.events:
        cands = list({id(e): e for sid in gev.evidence for e in citing.get(sid, [])}.values())
        ev_found += bool(cands)
        if not gev.relative:
            continue
        rel_n += 1
        rel_matched += bool(cands)
        gold_range = f"{gev.date_start}" + (f"..{gev.end}" if gev.end != gev.date_start else "")
        if any(date_matches(e, gev) for e in cands):
            rel_ok += 1
        elif not cands:
            miss.wrong_dates.append(f"{_short(gev.what, 50)!r} {gev.when_text!r} = {gold_range}: no store event cites "
                                    f"{', '.join(gev.evidence)}")
        else:
            got = "; ".join(_label(e) for e in cands[:3])
            miss.wrong_dates.append(f"{_short(gev.what, 50)!r} {gev.when_text!r} = {gold_range}; store: {got}")
    score.event_recall = Rate(ev_found, len(gold.events))
    score.relative_date_accuracy = Rate(rel_ok, rel_n)
    score.relative_date_matched = rel_matched


def find_gold_files(folder: str | Path) -> list[Path]:
    """Every ``*.gold.json`` in a folder, sorted."""
    return sorted(Path(folder).glob(f"*{GOLD_SUFFIX}"))
