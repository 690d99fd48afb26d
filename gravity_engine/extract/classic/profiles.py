"""The profile book of one batch and what the rules share to write into it: ``ProfileBook`` (the entities keyed by
canonical name, with their attributes and relations), the predicate vocabulary (``PREDICATES``, ``ROLE_PREDICATES``,
``KIN_NAMES``, ``GROUP_PREDICATES``, the product and project nouns), the name helpers (``name_of``: the name
attached to a noun, ``quote``, ``shorten``, ``capitalised_inside``, ``unknown_word``) and ``relate``, which stores a
relation to a named target and types the target by the predicate ("lives_in" makes a place)."""

from __future__ import annotations

import re

from ...anchors import Attribute, Entity, Relation
from ...text import STOPWORDS
from ..base import Batch
from .grammar import span_text
from .lexicon import NOT_NAMES
from .names import full_name, looks_like_name, canonical_name, suffix_type
from .wordlists import word_list


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


class ProfileBook:
    """The entities of one batch, keyed by canonical name, with speaker aliases resolved."""

    def __init__(self, batch: Batch):
        self.batch = batch
        self.speakers = sorted({*batch.speakers, *(u.speaker for u in batch.utterances)})
        self._by_key: dict[str, Entity] = {}
        self._strong: set[str] = set()  # keys of entities typed by context: NER cannot change them
        self._when = batch.session_time or batch.session_id
        self.last_person: str | None = None  # who "her"/"his" points at: the person named last
        self.last_person_at = -10  # the utterance (index in the batch) that named it
        self.utterance_index = 0
        self.last_org: str | None = None  # what "there" points at in "I'm an analyst there"
        self.last_org_at = -10
        self.counting = True  # False while reading a question-answer statement: its names were counted as said
        self.capitalised_inside = capitalised_inside(u.text for u in batch.utterances)

    def canonical(self, name: str) -> tuple[str, str | None]:
        return canonical_name(name, self.speakers)

    def entity(self, name: str, type_: str, source_id: str | None, context: str = "",
               why: str | None = None) -> Entity:
        """The profile of ``name``; ``why`` (a context pattern) fixes the type and says why it exists."""
        canonical, alias = self.canonical(name)
        if canonical in self.speakers:
            type_, why = "person", None
        elif why is None:
            type_ = suffix_type(canonical) or type_
        key = canonical.lower()
        ent = self._by_key.get(key)
        if ent is None:
            ent = Entity(id=f"ent-{slug(canonical)}-b{self.batch.index}", name=canonical, type=type_,
                         first_seen=self._when, last_seen=self._when)
            if canonical in self.speakers:
                ent.description = "A speaker in this conversation."
            elif context:
                ent.description = shorten(context, 180)
            self._by_key[key] = ent
        elif key not in self._strong and (why is not None or (ent.type == "other" and type_ != "other")):
            ent.type = type_
        if why is not None and key not in self._strong:
            self._strong.add(key)
            ent.type = type_
            ent.description = why
            if source_id:
                self.attribute(ent, "why", why, source_id)
        if alias and alias not in ent.aliases:
            ent.aliases.append(alias)
        if source_id:
            ent.mentions += self.counting
            if source_id not in ent.source_ids:
                ent.source_ids.append(source_id)
        return ent

    def attribute(self, ent: Entity, key: str, value: str, source_id: str) -> None:
        value = value.strip(" -–—,;:")
        if not value or len(value) > 120:
            return
        for a in ent.attributes:
            if a.key == key and a.value.lower() == value.lower():
                if source_id not in a.source_ids:
                    a.source_ids.append(source_id)
                return
        ent.attributes.append(Attribute(key=key, value=value, source_ids=[source_id]))
        if source_id not in ent.source_ids:
            ent.source_ids.append(source_id)

    def relation(self, ent: Entity, predicate: str, target: str, source_id: str) -> None:
        if ent.name.lower() == target.lower():
            return
        for r in ent.relations:
            if r.predicate == predicate and r.target.lower() == target.lower():
                if source_id not in r.source_ids:
                    r.source_ids.append(source_id)
                return
        ent.relations.append(Relation(predicate=predicate, target=target, source_ids=[source_id]))
        if source_id not in ent.source_ids:
            ent.source_ids.append(source_id)

    def entities(self) -> list[Entity]:
        return list(self._by_key.values())

    def typed_by_context(self, ent: Entity) -> bool:
        return ent.name.lower() in self._strong

    def get(self, name: str) -> Entity | None:
        return self._by_key.get(self.canonical(name)[0].lower())


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


# --- the predicate vocabulary -------------------------------------------------------------------

PREDICATES = tuple(word_list("entities", "PREDICATES"))  # plus free ones: "<role>_of", from, grew_up_in, volunteers_at
ROLE_PREDICATES = {
    "sister": "sister_of", "brother": "brother_of", "sibling": "sibling_of",
    "mom": "parent_of", "mum": "parent_of", "mother": "parent_of", "dad": "parent_of", "father": "parent_of",
    "parent": "parent_of", "son": "child_of", "daughter": "child_of", "kid": "child_of", "child": "child_of",
    "baby": "child_of", "husband": "partner_of", "wife": "partner_of", "partner": "partner_of",
    "boyfriend": "partner_of", "girlfriend": "partner_of", "fiance": "partner_of", "fiancee": "partner_of",
    "fiancé": "partner_of", "spouse": "partner_of", "friend": "friend_of", "bestie": "friend_of",
    "buddy": "friend_of", "pal": "friend_of", "colleague": "colleague_of", "coworker": "colleague_of",
    "co-worker": "colleague_of", "teammate": "colleague_of", "boss": "manager_of", "manager": "manager_of",
    "supervisor": "manager_of", "grandma": "grandparent_of", "grandmother": "grandparent_of",
    "grandpa": "grandparent_of", "grandfather": "grandparent_of", "grandparent": "grandparent_of",
    "aunt": "aunt_of", "uncle": "uncle_of", "cousin": "cousin_of", "niece": "niece_of", "nephew": "nephew_of",
    "mentor": "mentor_of", "coach": "coach_of", "roommate": "roommate_of", "neighbor": "neighbor_of",
    "neighbour": "neighbor_of", "advisor": "advisor_of", "adviser": "advisor_of", "therapist": "therapist_of",
    "teacher": "teacher_of", "tutor": "tutor_of", "physio": "physio_of", "doctor": "doctor_of",
    "student": "student_of", "report": "reports_to", "intern": "reports_to",
    "sis": "sister_of", "bro": "brother_of", "mam": "parent_of", "mama": "parent_of", "papa": "parent_of",
    "hubby": "partner_of", "gran": "grandparent_of", "granny": "grandparent_of", "nan": "grandparent_of",
    "nana": "grandparent_of", "grandad": "grandparent_of", "granddad": "grandparent_of",
    "stepmom": "parent_of", "stepmum": "parent_of", "stepdad": "parent_of", "flatmate": "flatmate_of",
    "housemate": "flatmate_of",
}
# Kin words people use as names ("Mum called", "ask Dad"): the speaker's own relative.
KIN_NAMES = set(word_list("entities", "KIN_NAMES"))
# "my running club, the Harbor Striders": the owner's relation to a named group.
GROUP_PREDICATES = {
    "club": "member_of", "team": "member_of", "group": "member_of", "band": "member_of", "choir": "member_of",
    "league": "member_of", "gym": "member_of", "church": "member_of", "crew": "member_of", "society": "member_of",
    "association": "member_of", "union": "member_of", "company": "works_at", "employer": "works_at",
    "startup": "works_at", "firm": "works_at", "lab": "works_at", "agency": "works_at",
    "university": "studies_at", "college": "studies_at", "school": "studies_at", "uni": "studies_at",
}
PRODUCT_NOUNS = set(word_list("entities", "PRODUCT_NOUNS"))
PROJECT_NOUNS = set(word_list("entities", "PROJECT_NOUNS"))


def _is_name(tok) -> bool:
    """A proper noun, or a capitalised noun inside a sentence (the small tagger calls "Miso" a noun)."""
    return tok.pos_ == "PROPN" or (tok.pos_ == "NOUN" and tok.text[:1].isupper() and tok.i > tok.sent.start
                                   and tok.lower_ not in NOT_NAMES)


def _listed_with_me(name) -> bool:
    """"My girlfriend, Toby and I are going camping": a list of three, so Toby is not the girlfriend."""
    doc = name.doc
    return name.i + 2 < len(doc) and doc[name.i + 1].lower_ == "and" and \
        doc[name.i + 2].lower_ in ("i", "me", "we", "us")


def name_of(token):
    """The proper name attached to a noun: "my sister Anna", "a dog named Max", "my friend, Jo"."""
    for child in token.children:
        if child.dep_ == "appos" and _is_name(child) and not _listed_with_me(child):
            return child
        if child.dep_ == "acl" and child.lemma_ in ("name", "call"):
            for grand in child.children:
                if _is_name(grand) and grand.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod"):
                    return grand
    if token.dep_ == "compound" and token.head.pos_ == "PROPN":
        return token.head
    named = [c for c in token.children if token.text.islower() and c.dep_ == "compound" and c.pos_ == "PROPN" and c.i < token.i
             and c.text[:1].isupper() and c.ent_type_ not in ("GPE", "DATE", "TIME", "NORP", "PERSON")]
    if named:
        return named[-1]
    if token.dep_ == "appos" and token.head.pos_ == "PROPN":
        return token.head  # "Dr. Aisha Bello, our clinical advisor"
    nxt = token.nbor(1) if token.i + 1 < len(token.doc) else None
    if nxt is not None and _is_name(nxt) and nxt.ent_type_ in ("PERSON", "", "ORG", "GPE", "NORP") and \
            nxt.text[:1].isupper():
        return nxt
    return None


def quote(doc, a, b) -> str:
    lo, hi = min(a.i, b.i), max(a.i, b.i)
    lo = min([lo] + [c.i for c in a.children if c.dep_ in ("poss", "det", "amod", "compound") and c.i < a.i])
    return shorten(span_text(list(doc[lo:hi + 1])), 60)


_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
_WORDS_AND_COMMAS = re.compile(r"[A-Za-z][\w'’-]*|[,;(]")


_I_FORMS = re.compile(r"^I(?:['’](?:m|ll|ve|d))?$")


def capitalised_inside(texts) -> set[str]:
    """Lowercased words written capitalised inside a sentence, not next to another capitalised word:
    a one-word name has to appear like this at least once ("how is Biscuit?"); "Fingers crossed."
    or "Pancreatitis, probably ..." only start sentences."""
    found: set[str] = set()
    for text in texts:
        for sentence in _SENTENCE.split(text):
            # a comma separates: "Again, Ben!" writes Ben alone inside a sentence
            words = _WORDS_AND_COMMAS.findall(sentence)
            # "I" and a function word opening the sentence are capitalised anyway: "For Sevgi I'll pretend" writes
            # Sevgi alone, "New York is big" does not write York alone
            capital = [w[:1].isupper() and not _I_FORMS.match(w) and not (k == 0 and w.lower() in STOPWORDS)
                       for k, w in enumerate(words)]
            for k in range(1, len(words)):
                w = words[k]
                if capital[k] and not capital[k - 1] and (k + 1 >= len(words) or not capital[k + 1]):
                    found.add(re.sub(r"['’]s$", "", w.lower()))
                    found.add(w.lower())
    return found


def unknown_word(word: str) -> bool:
    """Not in lemminflect's English lexicon: the small tagger makes some names adverbs ("Elif?", "Raj works")."""
    from lemminflect import getAllLemmas  # imported here: it imports spaCy, which only an extraction needs

    return not getAllLemmas(word)


_TARGET_TYPES = {"lives_in": "place", "moved_from": "place", "from": "place", "grew_up_in": "place",
                 "works_at": "organization", "volunteers_at": "organization", "studies_at": "organization",
                 "member_of": "organization", "works_on": "project"}
_WHY = {"lives_in": "place where {who} lives", "moved_from": "place {who} moved from", "from": "where {who} is from",
        "grew_up_in": "where {who} grew up", "works_at": "organization where {who} works",
        "volunteers_at": "organization where {who} volunteers", "studies_at": "where {who} studies",
        "member_of": "group {who} belongs to", "works_on": "project {who} works on"}
SCHOOL_HEADS = set(word_list("entities", "_SCHOOL_HEADS"))


def target_name(pobj) -> str | None:
    # the small tagger often makes a town a common noun ("Leeds" NNS), while NER still calls it a place, or a
    # person ("my brother lives in Exeter"): a capitalised word inside the sentence that is no English word
    if pobj is None or not pobj.text[:1].isupper() or (
            pobj.pos_ != "PROPN" and pobj.ent_type_ not in ("GPE", "LOC")
            and not (pobj.i > pobj.sent.start and unknown_word(pobj.lower_))):
        return None
    name = full_name(pobj)
    return name if looks_like_name(name) and name.lower() not in NOT_NAMES else None


def relate(book: ProfileBook, who: Entity, predicate: str, pobj, source_id: str) -> bool:
    name = target_name(pobj)
    if name is None:
        return False
    why = _WHY[predicate].format(who=who.name) + f' ("{shorten(pobj.sent.text, 80)}")'
    ent_type = _TARGET_TYPES[predicate]
    # "I live in Porto": a place keeps the NER's finer guess only when that guess is a place too
    target = book.entity(name, ent_type, source_id, pobj.sent.text, why=why)
    book.relation(who, predicate, target.name, source_id)
    return True


def is_school(target) -> bool:
    """"Kirkgate Uni", "Larkrise Primary": a place to study, by the name's head word."""
    return full_name(target).lower().split()[-1] in SCHOOL_HEADS
