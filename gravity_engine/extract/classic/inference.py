"""Relations the whole conversation implies but no single utterance states.

Each batch is read alone, so two facts said in different sessions never meet there: "Eleven years at
Pellow & Garth" (session 1) and "Tobias has been on my team since 2021" (session 2) together say where
Tobias works. After consolidation: a colleague or manager of someone with one known employer works there
too (unless they have an employer of their own).

Tried and left out: a child of one partner is the other's child. On DEV it found no right relation and one
wrong one (a father's new partner made the stepfather of his grown daughter).

An inferred relation cites the utterances of both relations it comes from, so verification sees the target
named and a reader sees why.
"""

from __future__ import annotations

from ...anchors import AnchorSet, Entity, Relation
from .wordlists import word_list

WORKMATE_PREDICATES = tuple(word_list("inference", "WORKMATE_PREDICATES"))
MAX_EVIDENCE = 4


def _rels(e: Entity, predicate: str) -> list[Relation]:
    return [r for r in e.relations if r.predicate == predicate]


def _link(ent: Entity, predicate: str, target: Entity, *evidence: Relation) -> bool:
    if any(r.predicate == predicate and r.target.lower() == target.name.lower() for r in ent.relations):
        return False
    ids = list(dict.fromkeys(i for r in evidence for i in r.source_ids[:2]))[:MAX_EVIDENCE]
    ent.relations.append(Relation(predicate=predicate, target=target.name, target_id=target.id, source_ids=ids))
    for i in ids:
        if i not in ent.source_ids:
            ent.source_ids.append(i)
    return True


def infer_relations(anchors: AnchorSet) -> int:
    """Add the implied relations to ``anchors`` in place; returns how many were added."""
    people = {e.name.lower(): e for e in anchors.entities if e.type == "person"}
    orgs = {e.name.lower(): e for e in anchors.entities if e.type == "organization"}
    added = 0

    def employers(e: Entity) -> list[Relation]:
        return [r for r in _rels(e, "works_at") if r.target.lower() in orgs]

    # workmates, in both directions of each relation
    pairs: list[tuple[Entity, Entity, Relation]] = []
    for e in people.values():
        for predicate in WORKMATE_PREDICATES:
            for r in _rels(e, predicate):
                other = people.get(r.target.lower())
                if other is not None and other is not e:
                    pairs += [(e, other, r), (other, e, r)]
    for who, mate, link in pairs:
        theirs = employers(mate)
        if len(theirs) == 1 and not _rels(who, "works_at"):
            added += _link(who, "works_at", orgs[theirs[0].target.lower()], link, theirs[0])

    return added
