"""The learned step of the classic build: the heads decide what the parser and its rules proposed.

After the rules (``ClassicExtractor.finalize``): each entity gets a type and a type confidence (a name the typing
head calls junk is dropped, unless it is a speaker or holds a relation); pronouns and kin words are resolved to
the people and pets named before them; each pair of entities that stand together in an utterance (or in a
question and its answer) gets a relation, or none. The rules' relations between two entities are features of
that decision and are replaced by it; their other relations (tastes in free text, relations between entities
that never stand together) stay, with no confidence. What a person owns is a pet, and a pet nobody owns yet gets
the likeliest owner. Two speakers the rules leave unrelated get what the tie head reads over their whole chat.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ...anchors import AnchorSet, Entity, Relation
from ...conversation import Conversation
from ...vocabulary import ENTITY_TYPES, normalize_type
from .encoder import TokenEncoder
from .features import SYMMETRIC, EntityView, Scene, UtteranceView, canonical_predicate, tie_row, types_fit
from .heads import Models
from .proposals import PROPOSED_SUFFIX, propose_names

MAX_SOURCES = 3
PROPOSAL_CONFIDENCE = 0.9  # a proposed name with no relation stays only when its type is this sure
MIN_KEPT = 0.01  # below this a probability is no candidate, nor a confidence worth showing
# Owned at this probability by the relation head, a name is a pet though the typing head reads a person's name. Held
# out by conversation on the training chats (4 folds), of the entities the typing head did not type pet, those
# owned at 0.5 or more were 27 pets and 3 others (0 people) of 30; at 0.3, 39 pets and 6 others (1 person).
OWNED_PET = 0.5


def views(anchors: AnchorSet, conversation: Conversation) -> tuple[list[UtteranceView], list[EntityView]]:
    """The conversation and the proposed entities as the heads see them."""
    utts = [UtteranceView(u.id, u.speaker, u.text, s.id) for s in conversation.sessions for u in s.utterances]
    speakers = {s.casefold() for s in conversation.speakers}
    index = {e.id: i for i, e in enumerate(anchors.entities)}
    by_name = {n.casefold(): i for i, e in enumerate(anchors.entities) for n in (e.name, *e.aliases)}
    ents = []
    for e in anchors.entities:
        rules = []
        for r in e.relations:
            target = index.get(r.target_id) if r.target_id else by_name.get(r.target.casefold())
            if target is not None:
                rules.append((target, r.predicate, tuple(r.source_ids)))
        ents.append(EntityView(e.name, list(e.aliases), e.type, e.name.casefold() in speakers, rules,
                               proposed=e.id.endswith(PROPOSED_SUFFIX)))
    return utts, ents


@dataclass
class Decisions:
    """What the heads decided, by entity index."""

    types: list[str]
    type_confidence: list[float]
    junk: list[bool]
    # (source, predicate, target) -> the utterances that carried the pair, each with the predicate's probability
    # (a pair read across a question and its answer: both turns, the same probability)
    relations: dict[tuple[int, str, int], list[tuple[str, float]]] = field(default_factory=dict)
    candidates: set[frozenset[int]] = field(default_factory=set)  # pairs the relation head saw
    ruled: dict[tuple[int, str, int], list[str]] = field(default_factory=dict)  # the rules' word on those pairs
    # and the utterances each rests on
    resolved: int = 0
    speakers: set[int] = field(default_factory=set)
    # two speakers -> the tie head's reading over their whole chat: (source, predicate, target), its probability
    # and the turns that say it most
    ties: dict[frozenset[int], tuple[tuple[int, str, int], float, list[str]]] = field(default_factory=dict)


def _rule_ends(ents: list[EntityView]) -> dict[int, list[tuple[str, int, bool]]]:
    """For each entity, the rules' relations it stands in: (canonical predicate, the other end, whether it is the
    subject)."""
    out: dict[int, list[tuple[str, int, bool]]] = {}
    for j, e in enumerate(ents):
        for target, predicate, _ in e.rules:
            c = canonical_predicate(predicate)
            if c is not None and target != j:
                subject, obj = (target, j) if c[1] else (j, target)
                out.setdefault(subject, []).append((c[0], obj, True))
                out.setdefault(obj, []).append((c[0], subject, False))
    return out


def decide(scene: Scene, models: Models) -> Decisions:
    th = models.thresholds
    p_type = models.typing.predict_proba(scene.type_rows())
    labels = models.typing.labels
    ends = _rule_ends(scene.ents)
    rule_types = [normalize_type(e.type) for e in scene.ents]

    def fits(i: int, t: str) -> bool:  # the rules' relations of entity i still make sense if it is a t
        return all(types_fit(p, t, rule_types[o]) if subj else types_fit(p, rule_types[o], t)
                   for p, o, subj in ends.get(i, ()))

    types, conf, junk = [], [], []
    for i, e in enumerate(scene.ents):
        if e.speaker:
            types.append(normalize_type(e.type) if normalize_type(e.type) in ENTITY_TYPES else "person")
            conf.append(1.0)
            junk.append(False)
            continue
        p = p_type[i]
        real = [j for j, lab in enumerate(labels) if lab != "junk"]
        best = max(real, key=lambda j: p[j])
        rule_type = normalize_type(e.type)
        # a name only the proposals found has no rule type to keep; a type the rules' own relations contradict
        # ("our dog Biscuit": a pet that is owned) is not taken
        sure = p[best] >= th["type"] and (fits(i, labels[best]) or not fits(i, rule_type))
        if sure or rule_type not in ENTITY_TYPES or e.proposed:
            types.append(labels[best])
            conf.append(float(p[best]))
        else:
            types.append(rule_type)
            conf.append(float(p[labels.index(rule_type)]))
        junk.append(float(p[labels.index("junk")]) >= th["junk"])
    out = Decisions(types, conf, junk, speakers={i for i, e in enumerate(scene.ents) if e.speaker})

    for k in range(len(scene.utts)):
        for span, cands in scene.reference_candidates(k, types):
            p = models.reference.predict_proba(scene.reference_rows(k, span, cands, types))[:, 1]
            best = int(np.argmax(p))
            if p[best] >= th["reference"]:
                scene.add_resolved(k, span[:2], cands[best].ent)
                out.resolved += 1

    between_speakers: dict[frozenset[int], list[tuple[int, int, list[str], np.ndarray]]] = {}
    for k in range(len(scene.utts)):
        pairs = scene.pair_candidates(k)
        if not pairs:
            continue
        probs = models.relations.predict_proba(scene.pair_rows(k, pairs, types))
        for (a, b), p in zip(pairs, probs):
            out.candidates.add(frozenset((a.ent, b.ent)))
            # one end in the turn before: the pair rests on both turns ("her name is Shadow" and the reply)
            uids = [scene.utts[j].id for j in sorted({a.utt, b.utt, k})]
            if a.ent in out.speakers and b.ent in out.speakers:
                between_speakers.setdefault(frozenset((a.ent, b.ent)), []).append((a.ent, b.ent, uids, p))
            for j, label in enumerate(models.relations.labels):
                if label == "none" or p[j] < MIN_KEPT:
                    continue
                src, dst = (min(a.ent, b.ent), max(a.ent, b.ent)) if label in SYMMETRIC else (a.ent, b.ent)
                out.relations.setdefault((src, label, dst), []).extend((uid, float(p[j])) for uid in uids)
    for i, e in enumerate(scene.ents):
        for target, predicate, sources in e.rules:
            c = canonical_predicate(predicate)
            if c is not None and frozenset((i, target)) in out.candidates:
                key = _pair_key(i, target, c)
                out.ruled[key] = [*out.ruled.get(key, []), *sources]
    if models.ties is not None:
        for pair, turns in between_speakers.items():
            out.ties[pair] = _tie(turns, models, len(out.speakers))
    return out


def _tie(turns: list[tuple[int, int, list[str], np.ndarray]], models: Models, speakers: int
         ) -> tuple[tuple[int, str, int], float, list[str]]:
    """What two speakers are to each other by the tie head: the likeliest predicate (its direction where it has one
    from the turns that read it so), its probability, and the turns the relation head read it in most."""
    p = models.ties.predict_proba(tie_row(np.stack([t[3] for t in turns]), speakers)[None])[0]
    best = 1 + int(np.argmax(p[1:]))
    label = models.ties.labels[best]
    j = models.relations.labels.index(label)
    a, b = turns[0][0], turns[0][1]
    if label in SYMMETRIC:
        key = (min(a, b), label, max(a, b))
    else:
        forward = sum(t[3][j] for t in turns if t[0] == a) >= sum(t[3][j] for t in turns if t[0] == b)
        key = (a, label, b) if forward else (b, label, a)
    cited = [uid for t in sorted(turns, key=lambda t: -t[3][j])[:MAX_SOURCES] for uid in t[2]]
    return key, float(p[best]), list(dict.fromkeys(cited))


def apply_learned(anchors: AnchorSet, conversation: Conversation, models: Models, encoder: TokenEncoder,
                  new_relations: bool = True) -> dict:
    """Let the heads decide types, references and relations of ``anchors`` in place; returns counts. Without
    ``new_relations`` the relation head only puts its confidence on the relations the rules wrote."""
    proposed = propose_names(anchors, conversation, encoder.vocabulary)
    utts, ents = views(anchors, conversation)
    if not ents:
        return {}
    return {"proposed": proposed} | write_back(anchors, decide(Scene(utts, ents, encoder), models), models.thresholds,
                                               new_relations)


def write_back(anchors: AnchorSet, d: Decisions, thresholds: dict[str, float], new_relations: bool = True) -> dict:
    """Put decisions into ``anchors`` (which they were decided on) under ``thresholds``; without
    ``new_relations``, the rules' relations stay as they are, each with the head's probability of it as its
    confidence (a low one puts it first in the Review queue), and only pets without an owner and speakers without
    a tie get a new one."""
    kept: dict[tuple[int, str, int], tuple[float, list[str]]] = {}
    # One predicate per pair: the strongest that clears its threshold (lower where the rules said the same; without
    # new relations, only what the rules said, at any probability). It cites the utterances the rule read it from
    # and those where the head is sure of it (else the one where the head is surest), not every turn the pair stood
    # in: a question and its answer put a pair in the next turn too.
    for key, seen in sorted(d.relations.items(), key=lambda kv: -max(p for _, p in kv[1])):
        src, _, dst = key
        if key in d.ruled:
            bar = thresholds["relation_ruled"] if new_relations else 0.0
        elif not new_relations or {src, dst} <= d.speakers:
            # Two speakers keep the rules' word only. Training labels a pair's turns without evidence "unclear",
            # and the speakers of a training chat are nearly always related, so the head never saw two speakers at
            # a turn that does not relate them: it calls two friends colleagues at a hurried goodbye (0.997).
            continue
        elif not types_fit(key[1], d.types[src], d.types[dst]):
            continue
        else:
            bar = thresholds["relation"]
        conf = max(p for _, p in seen)
        if conf < bar or any({s, t} == {src, dst} for s, _, t in kept):
            continue
        sure = [*d.ruled.get(key, []), *(uid for uid, p in seen if p >= thresholds["relation"])]
        kept[key] = (conf, list(dict.fromkeys(sure or _cited(seen, thresholds["relation"]))))
    entities: list[Entity] = anchors.entities
    index = {n.casefold(): j for j, e in enumerate(entities) for n in (e.name, *e.aliases)}
    index |= {e.id: j for j, e in enumerate(entities)}
    _owned_are_pets(d, kept, thresholds)
    owners = _owners(d, entities, index, kept, thresholds)
    kept |= owners
    ties = _speaker_ties(d, entities, index, kept, thresholds)
    kept |= ties
    linked = {i for s, _, t in kept for i in (s, t)}
    # a rule's relation gives way only to what the head keeps for the same pair: the head's silence is no veto
    # (vetoing rules it found unlikely cost DEV recall, 0.66 -> 0.58, and precision)
    decided = {frozenset((s, t)) for s, _, t in kept}
    for i, e in enumerate(entities):
        if normalize_type(e.type) != d.types[i]:
            _retyped(e)
        e.type = d.types[i]
        e.type_confidence = round(d.type_confidence[i], 3)
        if new_relations:
            e.relations = [r for r in e.relations if not _decided(r, i, index, decided)]
            continue
        for r in e.relations:  # the rule's own words, direction and utterances ("sister of"), with a confidence
            key = _rule_key(r, i, index)
            if key in kept:
                r.confidence = round(kept[key][0], 3)
    for (src, label, dst), (conf, ids) in kept.items() if new_relations else (owners | ties).items():
        target = entities[dst]
        entities[src].relations.append(Relation(predicate=label, target=target.name, target_id=target.id,
                                                source_ids=ids[:MAX_SOURCES], confidence=round(conf, 3)))
        for uid in ids[:MAX_SOURCES]:
            if uid not in entities[src].source_ids:
                entities[src].source_ids.append(uid)
    targets = {r.target_id for e in entities for r in e.relations}

    def doubtful(i: int) -> bool:
        # junk, or a name only the proposals found that earned no relation and no sure type
        return d.junk[i] or (entities[i].id.endswith(PROPOSED_SUFFIX) and d.type_confidence[i] < PROPOSAL_CONFIDENCE)

    dropped = {i for i, e in enumerate(entities)
               if doubtful(i) and i not in linked and e.id not in targets and not e.relations}
    anchors.entities = [e for i, e in enumerate(entities) if i not in dropped]
    return {"relations": len(kept), "resolved": d.resolved, "junk_dropped": len(dropped)}


def _retyped(e: Entity) -> None:
    """The rules' description of an entity the heads type otherwise names the rules' type ('a person ("Toby")' for
    a pet), and it is the line a prompt and the profile show: keep only what it quotes. The rules' ``why``
    attribute stays as their reading, which Review sets against the heads' type."""
    why = next((a.value for a in e.attributes if a.key == "why"), None)
    if why is not None and e.description == why and "(" in why:
        e.description = why.split("(", 1)[1].rstrip(")").strip()


def _ownerships(d: Decisions) -> Iterator[tuple[tuple[int, str, int], float, list[tuple[str, float]]]]:
    """Each pair the relation head read as a person owning what is no speaker and no junk: its key, the highest
    probability any turn gave it, and the turns."""
    for key, seen in d.relations.items():
        owner, label, pet = key
        if label == "owns_pet" and d.types[owner] == "person" and pet not in d.speakers and not d.junk[pet]:
            yield key, max(p for _, p in seen), seen


def _owned_are_pets(d: Decisions, kept: dict[tuple[int, str, int], tuple[float, list[str]]],
                    thresholds: dict[str, float]) -> None:
    """What a person owns is a pet, whatever its name makes the typing head think ("meet Toby, my puppy": a person
    at 0.95 by the name): owned by the relation head's reading of the turns at :data:`OWNED_PET`, or at the bar of
    a relation the rules said where the rules (or the head's own kept relation) say it too, even where the pair
    keeps another predicate ("Andrew likes Toby"). The probability becomes its type confidence."""
    owned: dict[int, float] = {}
    for key, conf, _ in _ownerships(d):
        pet = key[2]
        said = key in d.ruled or key in kept
        if d.types[pet] != "pet" and conf >= (thresholds["relation_ruled"] if said else OWNED_PET):
            owned[pet] = max(owned.get(pet, 0.0), conf)
    for pet, conf in owned.items():
        d.types[pet], d.type_confidence[pet] = "pet", conf


def _owners(d: Decisions, entities: list[Entity], index: dict[str, int],
            kept: dict[tuple[int, str, int], tuple[float, list[str]]], thresholds: dict[str, float]
            ) -> dict[tuple[int, str, int], tuple[float, list[str]]]:
    """An owner for each pet that has none: the person the relation head finds likeliest to own it, at the bar of
    a relation the rules said (a pet is someone's: its type stands in for the rule that would have said so)."""
    owned = {dst for _, label, dst in kept if label == "owns_pet"}
    owned |= {key[2] for i, e in enumerate(entities) for r in e.relations
              if (key := _rule_key(r, i, index)) is not None and key[1] == "owns_pet"}
    paired = {frozenset((s, t)) for s, _, t in kept}
    offers: dict[int, tuple[float, tuple[int, str, int], list[tuple[str, float]]]] = {}
    for key, conf, seen in _ownerships(d):
        src, _, pet = key
        if pet in owned or d.types[pet] != "pet" or frozenset((src, pet)) in paired:
            continue
        if conf >= thresholds["relation_ruled"] and conf > offers.get(pet, (0.0,))[0]:
            offers[pet] = (conf, key, seen)
    return {key: (conf, _cited(seen, thresholds["relation"])) for conf, key, seen in offers.values()}


def _speaker_ties(d: Decisions, entities: list[Entity], index: dict[str, int],
                  kept: dict[tuple[int, str, int], tuple[float, list[str]]], thresholds: dict[str, float]
                  ) -> dict[tuple[int, str, int], tuple[float, list[str]]]:
    """The tie head's word on two speakers the rules and the relation head left unrelated, where it is sure
    enough (heads without a tie threshold write none)."""
    bar = thresholds.get("tie")
    if bar is None:
        return {}
    related = {frozenset((s, t)) for s, _, t in kept}
    related |= {frozenset((key[0], key[2])) for i, e in enumerate(entities) for r in e.relations
                if (key := _rule_key(r, i, index)) is not None}
    return {key: (conf, cited) for pair, (key, conf, cited) in d.ties.items()
            if conf >= bar and pair not in related and types_fit(key[1], d.types[key[0]], d.types[key[2]])}


def _cited(seen: list[tuple[str, float]], sure: float) -> list[str]:
    """The utterances a head relation rests on: those where the head is ``sure`` of it, else those of the turn
    (or question and answer) where it is surest."""
    top = max(p for _, p in seen)
    return list(dict.fromkeys(uid for uid, p in seen if p >= min(sure, top)))


def _rule_key(r: Relation, i: int, index: dict[str, int]) -> tuple[int, str, int] | None:
    """The (source, predicate, target) key the heads' decisions use for rule relation ``r`` of entity ``i``."""
    c = canonical_predicate(r.predicate)
    target = index.get(r.target_id) if r.target_id else index.get(r.target.casefold())
    return None if c is None or target is None else _pair_key(i, target, c)


def _pair_key(i: int, target: int, c: tuple[str, bool]) -> tuple[int, str, int]:
    """The decision key of entity ``i``'s relation to ``target`` under canonical predicate ``c`` (name, flipped)."""
    src, dst = (target, i) if c[1] else (i, target)
    return (min(src, dst), c[0], max(src, dst)) if c[0] in SYMMETRIC else (src, c[0], dst)


def _decided(r: Relation, i: int, index: dict[str, int], candidates: set[frozenset[int]]) -> bool:
    """Whether the head kept a relation for the pair this rule relation joins (then the rule's word was only a
    feature of that decision)."""
    if canonical_predicate(r.predicate) is None:
        return False
    target = index.get(r.target_id) if r.target_id else None
    return target is not None and frozenset((i, target)) in candidates


