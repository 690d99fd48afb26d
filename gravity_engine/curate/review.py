"""The review queue: the anchors most likely wrong, ranked, each with its reasons and sources.

Each check gives an anchor a reason with a weight in (0, 1]; an anchor's score is the chance that
at least one reason is right if they were independent (``1 - prod(1 - w)``), so two weak reasons
rank above one. The checks:

* **type conflict**: the type disagrees with a context cue: the extractor's ``why`` ("pet of Tom"),
  the roles relations give it (the target of ``owns_pet`` is a pet, of ``works_at`` an organization,
  a kin relation links persons), its own head word ("... Clinic"), or a profile merged into it;
* **seen once**: one mention, no relation in or out (often a passing word taken for a name);
* **name-like junk**: interjections, titles, weekdays and months, lower-case or numeric "names",
  long phrases, and single words that are capitalized in the sources only at the start of a sentence;
* **undated event**, **date far from its session** (more than ``far_days``), **duplicate events**
  cited from one utterance (same text inside the other, or cosine of the stored embeddings);
* **unsupported field**: a relation, attribute, key fact, event text or date whose verification
  (``verify.py``) failed, with its note;
* **topic mixing sessions**: an arc step whose stored line embedding is far from the mean of the
  topic's other steps (cosine below ``topic_cosine`` and 0.15 below the topic's median step).

With a gold file the store is scored by ``gold.score_store`` and each miss is listed; misses that name
a store entity (wrong type, junk, split profile) also become reasons on it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from ..anchors import Entity
from ..merging import name_key
from ..datecheck import far_date_reason
from ..extract.classic.lexicon import KIN, NOT_NAMES, TIME_WORDS
from ..extract.classic.names import suffix_type
from ..eval.gold import ENTITY_TYPES, TYPE_SYNONYMS, Gold, GoldIndex, GoldScore, normalize_type, predicate_readings, score_store
from ..store import AnchorStore

# Where a relation puts its ends: canonical predicate -> (subject type, object type); None: no cue.
ROLE_TYPES: dict[str, tuple[str | None, str | None]] = {
    "works_at": ("person", "organization"), "studies_at": ("person", "organization"),
    "member_of": (None, "organization"), "lives_in": ("person", "place"), "owns_pet": ("person", "pet"),
    "sibling_of": ("person", "person"), "parent_of": ("person", "person"), "partner_of": ("person", "person"),
    "friend_of": ("person", "person"), "colleague_of": ("person", "person"), "manager_of": ("person", "person"),
    "works_on": ("person", None),
}
# Types a reader accepts for one another: a conflict between them is weak ("a library is either").
NEAR_TYPES = {frozenset({"place", "organization"}), frozenset({"project", "product"}),
              frozenset({"artifact", "product"}), frozenset({"event", "other"})}
WEIGHTS = {"type_conflict": 0.6, "type_conflict_near": 0.25, "seen_once": 0.3, "junk": 0.7, "junk_weak": 0.35,
           "undated": 0.3, "far_date": 0.5, "duplicate": 0.6, "unsupported": 0.5, "topic_mix": 0.4, "gold": 0.9,
           "low_confidence": 0.75}
# A learned type or relation less sure than this is listed (first, among the checks: the heads say where they
# doubt); the less sure, the higher it ranks.
LOW_CONFIDENCE = {"type": 0.7, "relation": 0.85}
_CUE_WORDS = {w: t for w, t in {**TYPE_SYNONYMS, **{t: t for t in ENTITY_TYPES}, **{k: "person" for k in KIN},
                                "group": "organization", "where": "place"}.items()}


@dataclass
class Reason:
    kind: str  # type_conflict, seen_once, junk, undated, far_date, duplicate, unsupported, topic_mix, gold,
    # low_confidence
    text: str
    weight: float
    source_ids: list[str] = field(default_factory=list)
    fix: dict[str, Any] = field(default_factory=dict)  # a suggested edit: {"kind": "set_type", "type": "pet"}


@dataclass
class ReviewItem:
    module: str
    anchor_id: str
    name: str  # entity name, event text, topic label
    detail: str  # type, date, or sessions: what a reader checks first
    reasons: list[Reason] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return round(1.0 - float(np.prod([1.0 - r.weight for r in self.reasons])), 4)

    def reason_text(self) -> str:
        return "; ".join(r.text for r in self.reasons)


@dataclass
class ReviewQueue:
    items: list[ReviewItem]
    gold: GoldScore | None = None
    counts: dict[str, int] = field(default_factory=dict)  # reasons per kind

    def top(self, n: int) -> list[ReviewItem]:
        return self.items[:n]

    def rows(self) -> list[dict[str, Any]]:
        return [{"score": i.score, "module": i.module, "id": i.anchor_id, "anchor": i.name, "detail": i.detail,
                 "reasons": i.reason_text(), "sources": ", ".join(i.source_ids[:6])} for i in self.items]


def gold_miss_lines(score: GoldScore) -> list[tuple[str, str]]:
    """(kind, line) of every gold miss, in the order a reader fixes them."""
    m = score.misses
    groups = [("missed entity", m.missed_entities), ("wrong type", m.wrong_types),
              ("split profile", m.duplicate_entities), ("junk (listed)", m.junk_listed),
              ("junk (not a gold entity)", m.junk_unlisted), ("missed relation", m.missed_relations),
              ("wrong relation", m.wrong_relations), ("missed fact", m.missed_facts),
              ("undated event", m.undated_events), ("wrong date", m.wrong_dates)]
    return [(kind, line) for kind, lines in groups for line in lines]


class _Queue:
    def __init__(self, store: AnchorStore):
        self.store = store
        self.items: dict[str, ReviewItem] = {}

    def add(self, module: str, anchor, reason: Reason) -> None:
        item = self.items.get(anchor.id)
        if item is None:
            if module == "entities":
                name, detail = anchor.name, anchor.type
            elif module == "events":
                name, detail = anchor.what, anchor.date_label()
            else:
                name, detail = anchor.label, ", ".join(s.session_id for s in anchor.sessions)
            item = self.items[anchor.id] = ReviewItem(module, anchor.id, name, detail, source_ids=list(anchor.source_ids))
        if not any(r.kind == reason.kind and r.text == reason.text for r in item.reasons):
            item.reasons.append(reason)


def review(store: AnchorStore, gold: Gold | None = None, *, far_days: int = 365, duplicate_cosine: float = 0.9,
           topic_cosine: float = 0.55) -> ReviewQueue:
    """The review queue of a store, most likely wrong first; with ``gold``, its score and misses too."""
    q = _Queue(store)
    speakers = {name_key(s) for s in (store.conversation.speakers if store.conversation else [])}
    _entity_checks(q, store, speakers)
    _confidence_checks(q, store, speakers)
    _event_checks(q, store, far_days, duplicate_cosine)
    _unsupported_checks(q, store)
    _topic_checks(q, store, topic_cosine)
    score = None
    if gold is not None:
        score = score_store(store.anchors, gold, speakers=store.conversation.speakers if store.conversation else None)
        _gold_reasons(q, store, gold, score)
    items = sorted(q.items.values(), key=lambda i: (-i.score, i.module, i.anchor_id))
    counts: dict[str, int] = defaultdict(int)
    for i in items:
        for r in i.reasons:
            counts[r.kind] += 1
    return ReviewQueue(items=items, gold=score, counts=dict(counts))


# --------------------------------------------------------------------------------------------------
# Entities.


def _why_type(entity: Entity) -> tuple[str, str] | None:
    """The type the extractor's context pattern gave ("pet of Tom (...)" -> pet), and the pattern."""
    for a in entity.attributes:
        if a.key != "why":
            continue
        head = a.value.split("(")[0].split('"')[0].lower()
        for word in re.findall(r"[a-z]+", head):
            t = _CUE_WORDS.get(word)
            if t:
                return t, a.value
    return None


def _conflict(q: _Queue, e: Entity, cue: str, text: str, sources: list[str]) -> None:
    have = normalize_type(e.type)
    if cue == have or e.type in ("", "other") and cue in ("other",):
        return
    near = frozenset({cue, have}) in NEAR_TYPES
    kind = "type_conflict_near" if near else "type_conflict"
    q.add("entities", e, Reason("type_conflict", f"typed {e.type}, but {text} says {cue}", WEIGHTS[kind],
                                sources, {"kind": "set_type", "type": cue}))


def _entity_checks(q: _Queue, store: AnchorStore, speakers: set[str]) -> None:
    entities = store.anchors.entities
    by_id = {e.id: e for e in entities}
    by_key: dict[str, Entity] = {}
    for e in entities:
        for n in [e.name, *e.aliases]:
            by_key.setdefault(name_key(n), e)
    incoming: dict[str, int] = defaultdict(int)
    for e in entities:
        for r in e.relations:
            target = by_id.get(r.target_id) if r.target_id else by_key.get(name_key(r.target))
            if target is None:
                continue
            incoming[target.id] += 1
            for canon, flipped in predicate_readings(r.predicate)[:1]:
                subj_t, obj_t = ROLE_TYPES.get(canon, (None, None))
                if flipped:
                    subj_t, obj_t = obj_t, subj_t
                said = f"'{e.name} {r.predicate} {r.target}'"
                if obj_t and name_key(target.name) not in speakers:
                    _conflict(q, target, obj_t, said, r.source_ids)
                if subj_t and name_key(e.name) not in speakers:
                    _conflict(q, e, subj_t, said, r.source_ids)
    index = store.conversation.utterance_index() if store.conversation else {}
    for e in entities:
        key = name_key(e.name)
        if key in speakers:
            continue
        why = _why_type(e)
        if why:
            # with a type_confidence the learned heads typed it, so the conflict is theirs against the rules' reading
            reading = "the rules' reading" if e.type_confidence is not None else "the context"
            _conflict(q, e, why[0], f"{reading} ({why[1][:80]})", e.source_ids[:3])
        head = suffix_type(e.name)
        if head and not why:
            _conflict(q, e, head, f"its head word ({e.name.split()[-1]!r})", [])
        for m in e.merges:
            other = normalize_type(str(m.snapshot.get("type", ""))) if m.snapshot else ""
            if other and other not in ("other", normalize_type(e.type)):
                q.add("entities", e, Reason("type_conflict", f"merged {m.alias!r} was typed {other}", WEIGHTS["type_conflict_near"],
                                            m.source_ids, {"kind": "split", "alias": m.alias}))
        if (e.mentions or len(e.source_ids)) <= 1 and not e.relations and not incoming[e.id]:
            q.add("entities", e, Reason("seen_once", "seen once, no relation", WEIGHTS["seen_once"], e.source_ids,
                                        {"kind": "delete"}))
        junk = _junk_reason(e, index)
        if junk:
            text, weight = junk
            q.add("entities", e, Reason("junk", text, weight, e.source_ids[:3], {"kind": "delete"}))


def _confidence_checks(q: _Queue, store: AnchorStore, speakers: set[str]) -> None:
    """Types and relations the learned heads were least sure of (``type_confidence``, ``Relation.confidence``)."""
    for e in store.anchors.entities:
        c = e.type_confidence
        if c is not None and c < LOW_CONFIDENCE["type"] and name_key(e.name) not in speakers:
            q.add("entities", e, Reason("low_confidence", f"typed {e.type} with confidence {c:.2f}",
                                        WEIGHTS["low_confidence"] + 0.2 * (1 - c), e.source_ids[:3]))
        for r in e.relations:
            if r.confidence is not None and r.confidence < LOW_CONFIDENCE["relation"]:
                q.add("entities", e, Reason("low_confidence", f"'{e.name} {r.predicate} {r.target}' with confidence "
                                            f"{r.confidence:.2f}", WEIGHTS["low_confidence"] + 0.2 * (1 - r.confidence),
                                            r.source_ids, {"kind": "delete_field", "field": "relations", "key": r.predicate,
                                                           "value": r.target}))


def _junk_reason(e: Entity, index: dict) -> tuple[str, float] | None:
    name = e.name.strip()
    key = name_key(name)
    words = key.split()
    if not key:
        return "no letters in the name", WEIGHTS["junk"]
    if key in NOT_NAMES or key in TIME_WORDS or all(w in TIME_WORDS for w in words):
        return f"{name!r} is a generic word, interjection, title or time word", WEIGHTS["junk"]
    if name[:1].islower():
        return "the name starts lower-case", WEIGHTS["junk"]
    if any(ch.isdigit() for ch in name) and not any(ch.isalpha() for ch in name):
        return "the name is a number", WEIGHTS["junk"]
    if len(words) > 5 or name.endswith(("!", "?")):
        return "a phrase, not a name", WEIGHTS["junk"]
    if len(words) == 1 and e.type in ("other", "organization", "product", "artifact") and index:
        said = _capitalized_only_first(name, [index[s].display_text() for s in e.source_ids if s in index])
        if said:
            return said, WEIGHTS["junk_weak"]
    return None


def _capitalized_only_first(name: str, texts: list[str]) -> str | None:
    """A common word read as a name: in its sources it is capitalized only where a sentence starts."""
    if not texts:
        return None
    pattern = re.compile(rf"\b{re.escape(name)}\b", re.IGNORECASE)
    inside = lower = 0
    for text in texts:
        for m in pattern.finditer(text):
            before = text[:m.start()].rstrip()
            if m.group(0)[:1].islower():
                lower += 1
            elif before and before[-1] not in ".!?:\"'(":
                inside += 1
    if inside:
        return None
    if lower:
        return f"{name!r} is written lower-case in its sources"
    return f"{name!r} is capitalized only at the start of a sentence"


# --------------------------------------------------------------------------------------------------
# Events.


def _ordinal(iso: str | None) -> float:
    if not iso:
        return np.nan
    try:
        return float(date.fromisoformat(iso[:10]).toordinal())
    except ValueError:
        return np.nan


def _event_checks(q: _Queue, store: AnchorStore, far_days: int, duplicate_cosine: float) -> None:
    events = store.anchors.events
    if not events:
        return
    start = np.array([_ordinal(v.date_start) for v in events])
    for i in np.flatnonzero(np.isnan(start)):
        v = events[i]
        said = f" (said {v.when_text!r})" if v.when_text else ""
        q.add("events", v, Reason("undated", f"no date{said}", WEIGHTS["undated"], v.source_ids,
                                  {"kind": "set_date"}))
    # The timeline's rule (datecheck.py), so both pages flag the same dates: "back in 2019", "ten years ago" are far
    # on purpose and said so; far from a "yesterday", or in another year nobody said, is an error.
    for i in np.flatnonzero(~np.isnan(start)):
        v = events[i]
        why = far_date_reason(v.date_start, v.date_end, v.session_date, v.when_text, far_days)
        if why:
            q.add("events", v, Reason("far_date", f"{v.date_label()} is {why}; session {(v.session_date or '')[:10]}, "
                                      f"said {v.when_text!r}", WEIGHTS["far_date"], v.source_ids, {"kind": "set_date"}))
    groups: dict[str, list[int]] = defaultdict(list)
    for i, v in enumerate(events):
        if v.source_ids:
            groups[v.source_ids[0]].append(i)
    matrix = store.embeddings.get("events")
    usable = matrix is not None and matrix.shape[0] == len(events)
    for sid, rows in groups.items():
        if len(rows) < 2:
            continue
        sims = matrix[rows] @ matrix[rows].T if usable else np.zeros((len(rows), len(rows)))
        for a in range(len(rows)):
            for b in range(a + 1, len(rows)):
                va, vb = events[rows[a]], events[rows[b]]
                ka, kb = name_key(va.what), name_key(vb.what)
                inside = ka in kb or kb in ka
                if not inside and sims[a, b] < duplicate_cosine:
                    continue
                # the shorter text is the one to drop (the longer says more)
                drop, keep = (va, vb) if len(ka) <= len(kb) else (vb, va)
                how = "its text is inside the other's" if inside else f"cosine {sims[a, b]:.2f}"
                q.add("events", drop, Reason("duplicate", f"duplicate of {keep.id} ({keep.what[:60]!r}) from {sid}: {how}",
                                             WEIGHTS["duplicate"], [sid], {"kind": "delete"}))


# --------------------------------------------------------------------------------------------------
# Verification, topics, gold.


def _field_sources(anchor, field_name: str) -> list[str]:
    m = re.fullmatch(r"(\w+)\[(\d+)\]", field_name)
    if m:
        items = getattr(anchor, m.group(1), [])
        i = int(m.group(2))
        if i < len(items):
            return list(getattr(items[i], "source_ids", []))
    return list(anchor.source_ids)


def _field_fix(module: str, anchor, field_name: str) -> dict[str, Any]:
    m = re.fullmatch(r"(\w+)\[(\d+)\]", field_name)
    if m:
        items = getattr(anchor, m.group(1), [])
        i = int(m.group(2))
        if i >= len(items):
            return {}
        item = items[i]
        if m.group(1) == "relations":
            return {"kind": "delete_field", "field": "relations", "key": item.predicate, "value": item.target}
        if m.group(1) == "attributes":
            return {"kind": "delete_field", "field": "attributes", "key": item.key, "value": item.value}
        if m.group(1) == "key_facts":
            return {"kind": "delete_field", "field": "key_facts", "value": item.text}
        return {}
    if module == "events" and field_name == "date":
        return {"kind": "set_date"}
    if module == "events" and field_name == "what":
        return {"kind": "delete"}
    return {}


def _field_text(anchor, field_name: str) -> str:
    m = re.fullmatch(r"(\w+)\[(\d+)\]", field_name)
    if m:
        items = getattr(anchor, m.group(1), [])
        i = int(m.group(2))
        if i < len(items):
            item = items[i]
            if m.group(1) == "relations":
                return f"relation '{item.predicate} {item.target}'"
            if m.group(1) == "attributes":
                return f"attribute '{item.key}: {item.value[:60]}'"
            if m.group(1) == "key_facts":
                return f"key fact '{item.text[:60]}'"
    return field_name


def _unsupported_checks(q: _Queue, store: AnchorStore) -> None:
    for module in ("entities", "events", "topics"):
        for a in store.anchors.module(module):
            for c in a.checks:
                if c.supported:
                    continue
                weight = WEIGHTS["unsupported"] * (1.0 - 0.5 * min(max(c.score, 0.0), 1.0))
                note = f": {c.note}" if c.note else ""
                q.add(module, a, Reason("unsupported", f"{_field_text(a, c.field)} not supported by its sources{note}",
                                        round(weight, 3), _field_sources(a, c.field), _field_fix(module, a, c.field)))


def _topic_checks(q: _Queue, store: AnchorStore, topic_cosine: float) -> None:
    lines = store.embeddings.get("lines")
    if lines is None or store.line_keys is None or len(store.line_keys) != lines.shape[0]:
        return
    row = {k: i for i, k in enumerate(store.line_keys)}
    for t in store.anchors.topics:
        steps = [(i, s) for i, s in enumerate(t.sessions) if f"{t.id}/sessions[{i}]" in row]
        if len(steps) < 3:
            continue
        m = lines[[row[f"{t.id}/sessions[{i}]"] for i, _ in steps]]
        total = m.sum(axis=0)
        # each step against the mean of the others (leave one out), all at once
        others = (total[None, :] - m) / (len(steps) - 1)
        others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-9)
        sims = np.einsum("ij,ij->i", m, others)
        # The label starts every step's line, which lifts all cosines: a step is odd when it is both low
        # and well below the topic's typical step.
        low = (sims < topic_cosine) & (sims < np.median(sims) - 0.15)
        odd = [(steps[k][1], float(sims[k])) for k in np.flatnonzero(low)]
        if odd:
            where = ", ".join(f"{s.session_id} ({sim:.2f})" for s, sim in odd[:4])
            q.add("topics", t, Reason("topic_mix", f"arc steps unlike the rest of the topic: {where}",
                                      WEIGHTS["topic_mix"], [i for s, _ in odd for i in s.source_ids[:2]]))


def _gold_reasons(q: _Queue, store: AnchorStore, gold: Gold, score: GoldScore) -> None:
    """Gold misses that name a store profile become reasons on it (the gold's matching rules)."""
    index = GoldIndex(gold)
    junk = set(score.misses.junk_listed) | set(score.misses.junk_unlisted)
    for e in store.anchors.entities:
        gi, _ = index.match_entity(e)
        if gi is not None:
            g = gold.entities[gi]
            accepted = {normalize_type(g.type), *(normalize_type(t) for t in g.alt_types)}
            if normalize_type(e.type) not in accepted:
                q.add("entities", e, Reason("gold", f"gold says {g.name} is {g.type}", WEIGHTS["gold"], [],
                                            {"kind": "set_type", "type": g.type}))
        elif e.name in junk:
            q.add("entities", e, Reason("gold", "gold: not an entity of this conversation", WEIGHTS["gold"], [],
                                        {"kind": "delete"}))
