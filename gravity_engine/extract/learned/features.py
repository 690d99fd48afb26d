"""Features the learned heads read, computed the same way when training and when building.

A :class:`Scene` is one conversation seen through the entities the parser proposed: where each entity stands in
each utterance (:class:`~.mentions.Occ`), the contextual vectors of those places, and what the rules already said
(their types and relations, kept as features: the parser proposes, the heads decide).

* typing: one row per entity (its mentions in context, its name alone, its shape, the rules' type);
* reference: one row per (pronoun or kin word, an entity named before it);
* relations: one row per ordered pair of entities that stand in one utterance, or one in the utterance and one
  in the turn before it (a question and its answer), with the speaker as "I" and the listener as "you";
* ties: one row per pair of speakers, what the relation head read on every turn where the two stand together
  (:func:`tie_row`): what two people are to each other shows over a conversation more than in any one turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...vocabulary import ENTITY_TYPES, normalize_type, predicate_readings
from .encoder import DIM, TokenEncoder, TokenVectors
from .mentions import HOW, NameFinder, Occ, reference_spans, self_spans, you_spans

# The relation labels a pair can get (subject first), and "none". Symmetric ones hold in both orders.
PREDICATES = ("works_at", "lives_in", "sibling_of", "parent_of", "partner_of", "friend_of", "colleague_of",
              "manager_of", "owns_pet", "member_of", "studies_at", "works_on", "likes", "dislikes", "cousin_of",
              "grandparent_of", "neighbour_of", "flatmate_of")
SYMMETRIC = frozenset({"sibling_of", "partner_of", "friend_of", "colleague_of", "cousin_of", "neighbour_of",
                       "flatmate_of"})
LABELS = ("none", *PREDICATES)
# What a relation's ends may be, so the head cannot write a film liking a film or "Mateus friend_of Coritiba":
# its subject is a person (a pet may also like, dislike and live somewhere; a team or company may be a member and
# work on something), the other end of a tie between people is a person, and what is owned as a pet is a pet.
SUBJECT_TYPES = {p: frozenset({"person"}) for p in PREDICATES} | {
    "likes": frozenset({"person", "pet"}), "dislikes": frozenset({"person", "pet"}),
    "lives_in": frozenset({"person", "pet"}), "member_of": frozenset({"person", "organization"}),
    "works_on": frozenset({"person", "organization"})}
BETWEEN_PEOPLE = frozenset({"sibling_of", "parent_of", "partner_of", "friend_of", "colleague_of", "manager_of",
                            "cousin_of", "grandparent_of", "neighbour_of", "flatmate_of"})
TYPE_LABELS = (*ENTITY_TYPES, "junk")
REF_WINDOW = 6  # a pronoun points at someone named this many turns back at most
REF_CANDIDATES = 8
MENTIONS_PER_ENTITY = 12


def canonical_predicate(predicate: str) -> tuple[str, bool] | None:
    """A store or gold predicate as one of :data:`PREDICATES` and whether it runs backwards, or None."""
    canon, flipped = predicate_readings(predicate)[0]
    canon = {"neighbor_of": "neighbour_of", "roommate_of": "flatmate_of", "housemate_of": "flatmate_of",
             "grandchild_of": "grandparent_of"}.get(canon, canon)
    if canon == "grandparent_of" and predicate_readings(predicate)[0][0] == "grandchild_of":
        flipped = not flipped
    return (canon, flipped) if canon in PREDICATES else None


def types_fit(predicate: str, subject_type: str, object_type: str) -> bool:
    """Whether entities of these types can stand in ``predicate`` (one of :data:`PREDICATES`); "other" is a type
    nobody decided yet."""
    if subject_type not in SUBJECT_TYPES[predicate]:
        return False
    if predicate in BETWEEN_PEOPLE:
        return object_type == "person"
    return predicate != "owns_pet" or object_type in ("pet", "other")


@dataclass
class EntityView:
    """What the heads know of one proposed entity."""

    name: str
    aliases: list[str]
    type: str  # the rules' type
    speaker: bool = False
    rules: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)  # (target entity, predicate, sources)
    proposed: bool = False  # by ``proposals`` (a capitalised run), not by the parser's rules


@dataclass
class UtteranceView:
    id: str
    speaker: str
    text: str
    session: str


def tie_row(probs: np.ndarray, speakers: int) -> np.ndarray:
    """Two speakers' tie, from the relation head's probabilities (rows: the turns where they stand together, both
    orders; columns: :data:`LABELS`): per predicate the highest, the mean of the three highest, the mean, and the
    chance that at least one turn says it; then how many turns, whether the chat has two speakers, how many."""
    n = len(probs)
    p = np.asarray(probs, np.float32).reshape(-1, len(LABELS))[:, 1:] if n else np.zeros((1, len(LABELS) - 1))
    top = np.sort(p, axis=0)[-3:]
    anyone = 1.0 - np.exp(np.log1p(-np.clip(p, 0.0, 0.999)).sum(axis=0))
    return np.concatenate([p.max(axis=0), top.mean(axis=0), p.mean(axis=0), anyone,
                           [np.log1p(n), speakers == 2, np.log(max(speakers, 1))]]).astype(np.float32)


def _one_hot(value: str, options: Sequence[str]) -> np.ndarray:
    out = np.zeros(len(options), dtype=np.float32)
    if value in options:
        out[options.index(value)] = 1.0
    return out


def _bucket(n: int, edges: Sequence[int]) -> np.ndarray:
    out = np.zeros(len(edges) + 1, dtype=np.float32)
    out[int(np.searchsorted(edges, n, side="right"))] = 1.0
    return out


class Scene:
    """One conversation, its proposed entities and where they stand; vectors from ``encoder``."""

    def __init__(self, utterances: list[UtteranceView], entities: list[EntityView], encoder: TokenEncoder):
        self.utts = utterances
        self.ents = entities
        self.tv: list[TokenVectors] = encoder.encode([u.text for u in utterances])
        self.name_vectors = np.stack([t.pooled for t in encoder.encode([e.name for e in entities])]) if entities \
            else np.zeros((0, DIM), np.float32)
        self.speaker_ent = {e.name.casefold(): i for i, e in enumerate(entities) if e.speaker}
        speakers = list(dict.fromkeys(u.speaker for u in utterances))
        finder = NameFinder([[e.name, *e.aliases] for e in entities])
        self.occ: list[list[Occ]] = []
        self.refs: list[list[tuple[int, int, str]]] = []
        for k, u in enumerate(utterances):
            found = [Occ(i, k, s, e, "name") for i, s, e in finder.find(u.text)]
            me = self.speaker_ent.get(u.speaker.casefold())
            if me is not None and not any(o.ent == me for o in found):
                spans = self_spans(u.text)
                found.append(Occ(me, k, *spans[0], "self") if spans else Occ(me, k, -1, -1, "self0"))
            listener = self._listener(k, speakers)
            if listener is not None and not any(o.ent == listener for o in found):
                spans = you_spans(u.text)
                if spans:
                    found.append(Occ(listener, k, *spans[0], "you"))
            taken = [(o.start, o.end) for o in found if o.start >= 0]
            self.refs.append([(s, e, kind) for s, e, kind in reference_spans(u.text)
                              if not any(s < b and e > a for a, b in taken)])
            self.occ.append(found)

    def _listener(self, k: int, speakers: list[str]) -> int | None:
        """Who "you" is: the other speaker of a two-person chat, else the last one who spoke before."""
        me = self.utts[k].speaker
        if len(speakers) == 2:
            other = speakers[1] if speakers[0] == me else speakers[0]
        else:
            other = next((self.utts[j].speaker for j in range(k - 1, max(-1, k - 4), -1)
                          if self.utts[j].session == self.utts[k].session and self.utts[j].speaker != me), None)
        return self.speaker_ent.get(other.casefold()) if other else None

    def vector(self, o: Occ) -> np.ndarray:
        t = self.tv[o.utt]
        return t.pooled if o.start < 0 else t.span(o.start, o.end)

    def previous(self, k: int) -> int | None:
        return k - 1 if k > 0 and self.utts[k - 1].session == self.utts[k].session else None

    def add_resolved(self, k: int, span: tuple[int, int], ent: int) -> None:
        """A pronoun or kin word in utterance ``k`` resolved to ``ent``: it stands there from now on."""
        if not any(o.ent == ent for o in self.occ[k]):
            self.occ[k].append(Occ(ent, k, span[0], span[1], "ref"))

    # ---------------------------------------------------------------------------------------------- typing

    def type_rows(self) -> np.ndarray:
        rows = []
        lower_texts = [u.text for u in self.utts]
        for i, e in enumerate(self.ents):
            occ = [o for k in range(len(self.utts)) for o in self.occ[k] if o.ent == i and o.how == "name"]
            occ = occ[:MENTIONS_PER_ENTITY]
            span = np.mean([self.vector(o) for o in occ], axis=0) if occ else self.name_vectors[i]
            ctx = np.mean([self.tv[o.utt].pooled for o in occ], axis=0) if occ else self.name_vectors[i]
            words = e.name.split()
            low = sum(f" {e.name.lower()} " in f" {t} " for t in lower_texts)  # written in lowercase somewhere
            shape = np.array([len(words) == 1, len(words) == 2, len(words) >= 3,
                              all(w[:1].isupper() for w in words), any(c.isdigit() for c in e.name),
                              e.name.isupper(), min(low, 3) / 3, e.speaker, np.log1p(len(occ)) / 3,
                              bool(e.aliases), e.proposed], dtype=np.float32)
            rows.append(np.concatenate([span, ctx, self.name_vectors[i], shape,
                                        _one_hot(normalize_type(e.type), ENTITY_TYPES)]))
        return np.stack(rows) if rows else np.zeros((0, 3 * DIM + 11 + len(ENTITY_TYPES)), np.float32)

    # ---------------------------------------------------------------------------------------------- reference

    def reference_candidates(self, k: int, types: list[str]) -> list[tuple[tuple[int, int, str], list[Occ]]]:
        """For each pronoun or kin word of utterance ``k``: the entities (people and pets) named before it,
        latest first, each with its latest occurrence."""
        out = []
        for span in self.refs[k]:
            seen: dict[int, Occ] = {}
            window = range(k, max(-1, k - REF_WINDOW), -1) if span[2] == "pronoun" else range(k, -1, -1)
            for j in window:
                if self.utts[j].session != self.utts[k].session and span[2] == "pronoun":
                    break
                for o in sorted(self.occ[j], key=lambda o: -o.start):
                    if o.how not in ("name", "ref") or (j == k and o.start >= span[0]):
                        continue
                    if types[o.ent] in ("person", "pet") and o.ent not in seen:
                        seen[o.ent] = o
                if len(seen) >= REF_CANDIDATES:
                    break
            if seen:
                out.append((span, list(seen.values())))
        return out

    def reference_rows(self, k: int, span: tuple[int, int, str], cands: list[Occ], types: list[str]) -> np.ndarray:
        t = self.tv[k]
        mention = t.span(span[0], span[1])
        me = self.speaker_ent.get(self.utts[k].speaker.casefold())
        rows = []
        for rank, o in enumerate(cands):
            kin_known = any(target == me for target, p, _ in self.ents[o.ent].rules) or (
                me is not None and any(target == o.ent for target, p, _ in self.ents[me].rules))
            flags = np.array([span[2] == "kin", o.utt == k, self.ents[o.ent].speaker, kin_known,
                              self.utts[o.utt].speaker == self.utts[k].speaker, rank == 0], dtype=np.float32)
            rows.append(np.concatenate([mention, self.vector(o), t.pooled, mention * self.vector(o), flags,
                                        _bucket(k - o.utt, (1, 2, 3, 5, 10, 30)),
                                        _one_hot(types[o.ent], ("person", "pet"))]))
        return np.stack(rows)

    # ---------------------------------------------------------------------------------------------- relations

    def pair_candidates(self, k: int) -> list[tuple[Occ, Occ]]:
        """Ordered pairs of entities standing in utterance ``k`` (one may stand in the turn before)."""
        here = {}
        for o in self.occ[k]:
            here.setdefault(o.ent, o)
        before = {}
        j = self.previous(k)
        if j is not None:
            for o in self.occ[j]:
                if o.how in ("name", "ref", "self", "self0") and o.ent not in here:
                    before.setdefault(o.ent, o)
        pairs = []
        for a in here.values():
            for b in [*here.values(), *before.values()]:
                if a.ent != b.ent:
                    pairs.append((a, b))
                    if b.utt != k:
                        pairs.append((b, a))
        return pairs

    def speaker_pairs(self, k: int) -> list[tuple[Occ, Occ]]:
        """The candidate pairs of utterance ``k`` whose two ends are speakers."""
        return [(a, b) for a, b in self.pair_candidates(k) if self.ents[a.ent].speaker and self.ents[b.ent].speaker]

    def pair_rows(self, k: int, pairs: list[tuple[Occ, Occ]], types: list[str]) -> np.ndarray:
        t = self.tv[k]
        j = self.previous(k)
        prev = self.tv[j].pooled if j is not None else np.zeros(DIM, np.float32)
        rows = []
        for a, b in pairs:
            va, vb = self.vector(a), self.vector(b)
            rule = np.zeros(2 * len(PREDICATES) + 1, dtype=np.float32)
            uid = self.utts[k].id
            for src, dst, forward in ((a.ent, b.ent, True), (b.ent, a.ent, False)):
                for target, predicate, sources in self.ents[src].rules:
                    if target == dst and (c := canonical_predicate(predicate)):
                        backwards = c[1] == forward  # the rule's subject is b, or it runs backwards from a
                        rule[PREDICATES.index(c[0]) + (len(PREDICATES) if backwards else 0)] = 1.0
                        rule[-1] = max(rule[-1], float(uid in sources))
            gap = abs((a.start if a.start >= 0 else 0) - (b.start if b.start >= 0 else 0))
            both = a.utt == b.utt == k and a.start >= 0 and b.start >= 0
            mid = t.between(min(a.end, b.end), max(a.start, b.start)) if both else np.zeros(DIM, np.float32)
            ca = self.tv[a.utt].around(a.start, a.end) if a.start >= 0 else np.zeros(DIM, np.float32)
            cb = self.tv[b.utt].around(b.start, b.end) if b.start >= 0 else np.zeros(DIM, np.float32)
            flags = np.array([a.utt != k, b.utt != k, a.start >= 0 and b.start >= 0 and a.start < b.start,
                              a.utt == b.utt == k and a.start >= 0 and b.start >= 0], dtype=np.float32)
            rows.append(np.concatenate([va, vb, t.pooled, prev, va * vb, mid, ca, cb, _one_hot(a.how, HOW),
                                        _one_hot(b.how, HOW),
                                        _one_hot(types[a.ent], ENTITY_TYPES), _one_hot(types[b.ent], ENTITY_TYPES),
                                        rule, flags, _bucket(gap, (10, 25, 50, 100))]))
        return np.stack(rows) if rows else np.zeros((0, 0), np.float32)
