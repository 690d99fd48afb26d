"""Consolidation: batch-local anchors become one knowledge base per conversation.

An entity seen in many batches becomes one profile; aliases (case and punctuation variants, a
first name next to a full name, names the extractor listed as aliases) are merged, and each merge
is recorded with a snapshot so it can be shown and undone (``unmerge``). Events get stable global
ids; topics with the same label or mostly the same keywords join into one arc.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..anchors import AnchorSet, Entity, Event, Topic
from ..conversation import Conversation
from ..merging import absorb, extend_unique, name_key, record_merge, slug, type_weight, typed_by_context, unmerge
from ..places import candidates
from ..store import AnchorStore, embed_anchors

class _EntityIndex:
    def __init__(self) -> None:
        self.entities: list[Entity] = []
        self.by_key: dict[str, Entity] = {}

    def find(self, entity: Entity) -> Entity | None:
        for name in [entity.name, *entity.aliases]:
            hit = self.by_key.get(name_key(name))
            if hit is not None:
                return hit
        return None

    def register(self, entity: Entity) -> None:
        for name in [entity.name, *entity.aliases]:
            self.by_key.setdefault(name_key(name), entity)


def _first_name_merges(entities: list[Entity], speakers: list[str]) -> list[Entity]:
    """Merge a one-word person name into the unique multi-word person whose first name it is
    ("Priya" -> "Priya Raman"), and a speaker's nickname prefix ("Mel" -> "Melanie")."""
    persons = [e for e in entities if e.type == "person"]
    speaker_keys = {name_key(s) for s in speakers}
    full_by_first: dict[str, list[Entity]] = {}
    full_by_last: dict[str, list[Entity]] = {}
    for e in persons:
        words = name_key(e.name).split()
        if len(words) > 1:
            full_by_first.setdefault(words[0], []).append(e)
            full_by_last.setdefault(words[-1], []).append(e)
    # A first word that also starts a non-person name ("Cedar" of "Cedar Valley Clinic") is ambiguous.
    other_firsts = {name_key(e.name).split()[0] for e in entities
                    if e.type != "person" and " " in name_key(e.name)}
    removed: set[int] = set()
    # The one-word side may carry any type: a small NER model often calls a bare first name a place.
    for e in entities:
        key = name_key(e.name)
        if " " in key or not key or id(e) in removed:
            continue
        target, reason = None, ""
        candidates = full_by_first.get(key, [])
        by_last = full_by_last.get(key, [])
        longer = [x for x in entities if x is not e and id(x) not in removed and x.type not in ("person", "product")
                  and len(name_key(x.name).split()) > 1 and name_key(x.name).split()[0] == key]
        if len(candidates) == 1 and (e.type == "person" or key not in other_firsts):
            target, reason = candidates[0], "first name of a full name"
        elif not candidates and len(longer) == 1 and key not in speaker_keys and (
                e.type != "person" or not typed_by_context(e)) and "place" not in (e.type, longer[0].type):
            # ("Cardiff" is not "Cardiff Bay": a town and a district of it stay two places)
            # "Brightwater" -> "Brightwater Energy", "RoboMarine" -> "RoboMarine Challenge"
            target, reason = longer[0], "short form of a longer name"
        elif not candidates and len(by_last) == 1 and e.type == "person" and key not in speaker_keys:
            target, reason = by_last[0], "surname of a full name"  # "Professor Reyes" -> Lucia Reyes
        elif e.type == "person" and len(key) >= 3 and key not in speaker_keys:
            prefixed = [p for p in persons if p is not e and name_key(p.name) in speaker_keys
                        and name_key(p.name).startswith(key)]
            if len(prefixed) == 1:
                target, reason = prefixed[0], "nickname of a speaker"
        if target is None:
            continue
        record_merge(target, e, reason)
        removed.add(id(e))
    kept = [e for e in entities if id(e) not in removed]
    return _kin_name_merges(_short_org_merges(kept, speaker_keys))


KNOWN_TOWN = 100_000


def _short_org_merges(entities: list[Entity], speaker_keys: set[str]) -> list[Entity]:
    """Merge a name of several words into the one organisation whose name starts with it ("Cedar Valley" ->
    "Cedar Valley Clinic", "St. Aurelia" -> "St. Aurelia Hospital"), unless the short name is a region or a
    town of at least ``KNOWN_TOWN`` people ("Cardiff" of "Cardiff University" is the city; a Cedar Valley of
    8,000 in Canada is not what a chat about Cedar Valley Clinic means)."""
    orgs = [(e, name_key(e.name).split()) for e in entities if e.type == "organization"]
    removed: set[int] = set()
    for e in entities:
        words = name_key(e.name).split()
        if len(words) < 2 or e.type in ("person", "organization") or name_key(e.name) in speaker_keys:
            continue
        longer = [x for x, org_words in orgs if len(org_words) > len(words) and org_words[:len(words)] == words]
        if len(longer) != 1 or (e.type == "place" and any(
                p.kind != "city" or p.population >= KNOWN_TOWN for p in candidates(e.name))):
            continue
        record_merge(longer[0], e, "short form of a longer name")
        removed.add(id(e))
    return [e for e in entities if id(e) not in removed]


KIN_NAMES = {"mum", "mom", "mam", "mama", "dad", "papa", "grandma", "grandpa", "granny", "gran", "nan", "nana",
             "grandad", "granddad"}


def _kin_name_merges(entities: list[Entity]) -> list[Entity]:
    """"Mum" merges into the named relative who has the same relation to the same person ("my mum
    Margit" -> Margit parent_of Rosa, so Rosa's "Mum" is Margit)."""
    removed: set[int] = set()
    for e in entities:
        if name_key(e.name) not in KIN_NAMES:
            continue
        links = {(name_key(r.predicate), name_key(r.target)) for r in e.relations}
        if not links:
            continue
        named = [x for x in entities if x is not e and x.type == "person" and name_key(x.name) not in KIN_NAMES
                 and links & {(name_key(r.predicate), name_key(r.target)) for r in x.relations}]
        if len(named) == 1:
            record_merge(named[0], e, f"what {', '.join(sorted(t for _, t in links))} call(s) them")
            removed.add(id(e))
    return [e for e in entities if id(e) not in removed]


def consolidate_entities(groups: Iterable[list[Entity]], speakers: list[str],
                         existing: list[Entity] | None = None) -> list[Entity]:
    """One profile per entity across all batches; ids are stable slugs of the canonical name."""
    index = _EntityIndex()
    # Per-batch types disagree (a small NER model calls a dog an organization in one batch and a pet
    # in another): the type said most often, weighted by mentions, wins.
    votes: dict[int, Counter] = {}
    for e in existing or []:
        copy = e.model_copy(deep=True)
        index.entities.append(copy)
        index.register(copy)
        if copy.type not in ("", "other"):  # an update's few new mentions must not outvote the old ones
            votes.setdefault(id(copy), Counter())[copy.type] += type_weight(copy)
    for group in groups:
        for e in group:
            hit = index.find(e)
            if hit is None:
                copy = e.model_copy(deep=True)
                copy.id = ""
                copy.mentions = copy.mentions or len(copy.source_ids)
                index.entities.append(copy)
                index.register(copy)
                if copy.type not in ("", "other"):
                    votes.setdefault(id(copy), Counter())[copy.type] += type_weight(copy)
            else:
                absorb(hit, e, votes)
                index.register(hit)
    for e in index.entities:
        if id(e) in votes:
            e.type = votes[id(e)].most_common(1)[0][0]
    entities = _first_name_merges(index.entities, speakers)
    taken = {e.id for e in entities if e.id}
    for e in entities:
        if not e.id:
            e.id = slug(e.name, taken, "ent")
    _link_relation_targets(entities)
    return entities


def _link_relation_targets(entities: list[Entity]) -> None:
    by_key: dict[str, str] = {}
    for e in entities:
        for name in [e.name, *e.aliases]:
            by_key.setdefault(name_key(name), e.id)
    for e in entities:
        for r in e.relations:
            r.target_id = by_key.get(name_key(r.target))


def _event_key(event: Event) -> tuple[str, str]:
    return event.session_id, name_key(event.what)


def consolidate_events(groups: Iterable[list[Event]], existing: list[Event] | None = None) -> list[Event]:
    """Global ids ``evt-0001``...; the same event said twice in one session becomes one record.
    Local ``follows``/``causes`` ids are rewritten to the global ids."""
    events = [e.model_copy(deep=True) for e in existing or []]
    seen = {_event_key(e): e for e in events}
    next_n = 1 + max((int(e.id.split("-")[-1]) for e in events if e.id.split("-")[-1].isdigit()), default=0)
    for group in groups:
        local_to_global: dict[str, str] = {}
        fresh: list[Event] = []
        for e in group:
            key = _event_key(e)
            if key in seen:
                extend_unique(seen[key].source_ids, e.source_ids)
                local_to_global[e.id] = seen[key].id
                continue
            copy = e.model_copy(deep=True)
            copy.id = f"evt-{next_n:04d}"
            next_n += 1
            local_to_global[e.id] = copy.id
            seen[key] = copy
            events.append(copy)
            fresh.append(copy)
        for e in fresh:
            e.follows = [local_to_global[x] for x in e.follows if x in local_to_global]
            e.causes = [local_to_global[x] for x in e.causes if x in local_to_global]
    return events


def _keyword_overlap(a: Topic, b: Topic) -> float:
    ka, kb = {name_key(k) for k in a.keywords}, {name_key(k) for k in b.keywords}
    return len(ka & kb) / len(ka | kb) if ka and kb else 0.0


def consolidate_topics(groups: Iterable[list[Topic]], existing: list[Topic] | None = None,
                       min_overlap: float = 0.5) -> list[Topic]:
    """Batch topics with the same label, or mostly the same keywords, join into one arc."""
    topics = [t.model_copy(deep=True) for t in existing or []]
    for group in groups:
        for t in group:
            hit = next((x for x in topics if name_key(x.label) == name_key(t.label)
                        or _keyword_overlap(x, t) >= min_overlap), None)
            if hit is None:
                copy = t.model_copy(deep=True)
                copy.id = ""
                topics.append(copy)
                continue
            extend_unique(hit.keywords, t.keywords)
            extend_unique(hit.participants, t.participants)
            extend_unique(hit.source_ids, t.source_ids)
            hit.key_facts += [f for f in t.key_facts if name_key(f.text) not in {name_key(x.text) for x in hit.key_facts}]
            for s in t.sessions:
                same = next((x for x in hit.sessions if x.session_id == s.session_id), None)
                if same is None:
                    hit.sessions.append(s.model_copy(deep=True))
                else:
                    same.mentions += s.mentions
                    extend_unique(same.source_ids, s.source_ids)
                    if s.state and s.state not in same.state:
                        same.state = f"{same.state} {s.state}".strip()
            if not hit.summary:
                hit.summary = t.summary
    taken = {t.id for t in topics if t.id}
    for t in topics:
        t.sessions.sort(key=lambda s: (s.date or "", s.session_id))
        if not t.id:
            t.id = slug(t.label, taken, "top")
    return topics


def drop_unknown_sources(anchors: AnchorSet, conversation: Conversation) -> int:
    """Remove cited utterance ids that do not exist in the conversation; return how many were removed."""
    known = set(conversation.utterance_index())
    removed = 0
    for item in anchors.citing_items():
        kept = [i for i in item.source_ids if i in known]
        removed += len(item.source_ids) - len(kept)
        item.source_ids = kept
    return removed


def set_seen_times(entities: list[Entity], conversation: Conversation) -> None:
    """first_seen/last_seen from the times of the utterances each entity cites."""
    utts = conversation.utterance_index()
    order = {u.id: i for i, u in enumerate(conversation.utterances())}
    for e in entities:
        cited = sorted((order[s], utts[s]) for s in e.source_ids if s in utts)
        if cited:
            first, last = cited[0][1], cited[-1][1]
            e.first_seen = first.timestamp or first.session_id
            e.last_seen = last.timestamp or last.session_id



def unmerge_store(store, entity_id: str, alias: str, embedder):
    """``unmerge`` on a loaded store, with the entity embeddings recomputed; the store is not saved."""
    anchors = unmerge(store.anchors, entity_id, alias)
    embeddings = embed_anchors(anchors, embedder)  # entity rows and lines changed; all in one encoder call
    # A new list: the loaded store (the app caches it) keeps its own report as it was.
    edits = [*store.report.get("edits", []), {"unmerge": {"entity": entity_id, "alias": alias}}]
    report = {**store.report, "edits": edits}
    return AnchorStore(anchors=anchors, embeddings=embeddings, conversation=store.conversation, report=report,
                       utterance_vectors=store.utterance_vectors)
