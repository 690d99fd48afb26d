"""Entity profiles from one batch: speakers, named entities, recurring proper nouns, the
attributes and relations people state about themselves, and their atomic facts (``facts.py``).

Relations come from dependency patterns with a small predicate vocabulary (``PREDICATES``), each
stored ONCE, on the entity that is the relation's grammatical subject, and read "<entity>
<predicate> <target>": "my sister Ana" said by Caroline gives Ana sister_of Caroline, "my manager
Lena" gives Lena manager_of Priya, "our dog Biscuit" gives Tom owns_pet Biscuit, "I work at
Northwind Health" gives Priya works_at Northwind Health, "I love hiking" gives Caroline likes hiking
(a concept target: no target_id). No inverse is stored, so the graph draws each edge once.

Types: the context of a naming pattern decides over the NER guess ("my cat Miso" -> pet, "working on
Atlas" -> project, "at Porto Polytechnic" -> organization, "the model MedLLM" -> product), then a
name's own head word ("... Clinic" -> organization, "Mount ..." -> place), then NER. An entity typed
by context carries an attribute ``why`` (also its description), e.g. 'pet of Tom ("our dog Biscuit")';
consolidation lets such a type outvote NER's guesses from other batches.

Values are spans of the speaker's own words, so verification can find them in the cited utterance.
"""

from __future__ import annotations

import re

from ...anchors import Attribute, Entity, Relation
from ...text import STOPWORDS
from ..base import Batch
from ...timeparse import find_time_expressions, parse_datetime
from .answers import Answered, parsed_statements
from .facts import FACT_KEY, _hedged, facts_of_doc
from .grammar import FUTURE_AUX, is_first_person, span_text, speaker_pronouns, subject_of, tense_reader
from .lexicon import FAMILY, NOT_NAMES, PERSON_NOUNS, PETS, TIME_WORDS
from .names import SAINT_HOUSE, full_name, looks_like_name, canonical_name, clean_name, suffix_type
from .patterns import relation_matches
from .wordlists import word_list

NER_TYPES = {
    "PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
    "PRODUCT": "product", "WORK_OF_ART": "artifact", "EVENT": "other", "NORP": "other",
}
# "I want to tell you ..." is conversation, not a wish worth a profile field.
_TALK_VERBS = set(word_list("entities", "_TALK_VERBS"))
_LIKE = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "hate": "dislikes",
         "dislike": "dislikes", "detest": "dislikes"}
_WISH = {"plan": "plans", "intend": "plans", "aim": "plans", "decide": "plans", "want": "wants", "hope": "wants",
         "wish": "wants"}
_VAGUE_OBJECTS = set(word_list("entities", "_VAGUE_OBJECTS"))
_NOT_IDENTITY = set(word_list("entities", "_NOT_IDENTITY"))
_WORD = re.compile(r"[A-Za-z][A-Za-z'.&-]*")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


_NAME_JOINERS = set(word_list("entities", "_NAME_JOINERS"))


def split_run_on(text: str) -> list[str]:
    """A tagger's run-on span as the names in it: "Moorish Castle and Pena Palace" is two names,
    "Ironwood Fitness on Albany Road" too ("on" joins "Stratford-upon-Avon"-like names only when the
    next word is capitalised and the left part is one word); "Vila Nova de Gaia", "Bank of America" stay whole."""
    words = text.split()
    parts: list[list[str]] = [[]]
    for k, w in enumerate(words):
        low = w.lower()
        if low in ("and", "or", "with", "at", "near", "by", "from", "to", "for") or (
                low in ("on", "in") and len(parts[-1]) > 1):
            parts.append([])
        elif w[:1].islower() and low not in _NAME_JOINERS:
            parts.append([])
        else:
            parts[-1].append(w)
    names = [" ".join(p) for p in parts if p and p[0][:1].isupper()]
    return names if len(names) > 1 else [text]


def _part_type(span: str, name: str, j: int, ner_type: str) -> str:
    """The type of the ``j``-th name of a run-on span (``split_run_on``): the first has NER's; "the Rothay
    Hotel in Grasmere": what follows "in", "near", "at" or "on" is a place; "Moorish Castle and Pena Palace":
    a list is of one kind; "Clevedon with Jonah": what follows any other word is of no known type."""
    if j == 0:
        return ner_type
    joiner = re.search(rf"(\S+)\s+{re.escape(name)}\b", span)
    word = joiner.group(1).lower() if joiner else ""
    if word in ("in", "near", "at", "on"):
        return "place"
    return ner_type if word in ("and", "or") or word.endswith(",") else "other"


def _phrase(token, max_tokens: int = 8, drop_to: bool = True) -> str:
    """The token's subtree without relative clauses, as written, at most ``max_tokens`` words."""
    skip: set[int] = set()
    for child in token.children:
        if child.dep_ in ("relcl", "advcl", "punct", "cc", "conj", "parataxis") and child.i > token.i:
            skip.update(t.i for t in child.subtree)
    # Stop at the first punctuation after the head: the value stays one contiguous run of words.
    stop = next((t.i for t in token.subtree if t.is_punct and t.i > token.i), None)
    tokens = [t for t in token.subtree if t.i not in skip and (stop is None or t.i < stop)]
    while tokens and (tokens[-1].lower_ in ("too", "also", "either") or not any(c.isalnum() for c in tokens[-1].text)):
        tokens.pop()  # "flying too 😂" is "flying"
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ in ("cc", "prep", "det")):
        tokens.pop()
    while tokens and (tokens[0].is_punct or (drop_to and tokens[0].lower_ in ("to", "na") and tokens[0].dep_ == "aux")):
        tokens.pop(0)
    return span_text(tokens[:max_tokens])


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
                ent.description = _shorten(context, 180)
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


def _shorten(text: str, limit: int) -> str:
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


def _name_of(token):
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


def _quote(doc, a, b) -> str:
    lo, hi = min(a.i, b.i), max(a.i, b.i)
    lo = min([lo] + [c.i for c in a.children if c.dep_ in ("poss", "det", "amod", "compound") and c.i < a.i])
    return _shorten(span_text(list(doc[lo:hi + 1])), 60)


def _unnamed_subject(tok) -> bool:
    """"My little sister is flying over with her girlfriend": "her" is the clause's subject, a person with no name
    here, not the last name said."""
    verb = tok.head
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    subj = subject_of(verb) if verb.pos_ in ("VERB", "AUX") else None
    return subj is not None and subj.pos_ == "NOUN" and subj.lemma_.lower() in ROLE_PREDICATES and \
        _name_of(subj) is None


def _possessor(book: ProfileBook, tok, speaker: Entity, other: str | None, source_id: str):
    """Whose "sister"/"dog"/"club" this is: my/our -> the speaker, your -> the listener, "Anna's" -> Anna."""
    # "My cousin Kenta": the parser hangs "my" on the name, with the role noun as its compound
    kids = [*tok.children, *(tok.head.children if tok.dep_ == "compound" and tok.head.pos_ == "PROPN" else [])]
    for c in kids:
        if c.dep_ != "poss":
            continue
        if c.lower_ in ("my", "our"):
            return speaker
        if c.lower_ in ("your",) and other:
            return book.entity(other, "person", source_id)
        if c.pos_ == "PROPN" and c.ent_type_ in ("PERSON", ""):
            name = full_name(c)
            if looks_like_name(name):
                return book.entity(name, "person", source_id, c.sent.text)
        if c.lower_ in ("her", "his") and not _unnamed_subject(tok) and (
                named := _person_before(book, tok)) is not None:
            return book.entity(named, "person", source_id)
    if tok.dep_ == "dobj" and tok.head.lemma_ in ("have", "adopt", "get", "own", "rescue", "foster"):
        return _owner(book, subject_of(tok.head), speaker, other, source_id)
    if tok.sent.text.rstrip().endswith("?"):
        return None
    head = tok.head
    # "I joined a climbing gym called X", "I'm leading the Quill project"
    if tok.dep_ in ("dobj", "attr") and head.lemma_ in _MEMBER_VERBS | _BUILD_VERBS | {"work"}:
        return _owner(book, subject_of(head), speaker, other, source_id)
    # "I'm in the Elmstead chess club", "I play for the Red Kites", "I work on the Quill project"
    if tok.dep_ == "pobj" and head.dep_ == "prep" and head.lower_ in ("in", "for", "with", "on", "at") and \
            head.head.lemma_ in ("be", "play", "sing", "work", "volunteer", "train", "row", "swim", "run", "climb"):
        return _owner(book, subject_of(head.head), speaker, other, source_id)
    return None


PERSON_VERBS = set(word_list("entities", "PERSON_VERBS"))  # the small model's lemma of "texted"


def _personish(book: ProfileBook, ent) -> bool:
    """A named span that stands for a person: NER says so, its profile says so, or it does what
    people do ("Tasha said", "Marcus is coming", "Gethin texted")."""
    known = book.get(clean_name(ent.text))
    if known is not None and known.type == "person":
        return True
    if known is not None and book.typed_by_context(known):
        return False
    if ent.label_ == "PERSON":
        return known is None or known.type in ("person", "other")
    root = ent.root
    return root.dep_ in ("nsubj", "nsubjpass") and root.head.lemma_.lower() in PERSON_VERBS and len(ent) <= 2


RECENT_UTTERANCES = 3  # "he"/"she" with no name in its utterance points at a person named this recently
RECENT_ORG_UTTERANCES = 1  # "there" points at an organisation named in this utterance or the one before


def _person_before(book: ProfileBook, tok) -> str | None:
    """The person "her"/"his"/"she" most likely means: the last person named before ``tok`` in its
    utterance (not a speaker; an entity NER calls a person, or a name already known as a person: "my sister
    Ana came with her husband"), else the last one named in the batch's last few utterances."""
    best, at = None, -1
    for ent in tok.doc.ents:
        if ent.end <= tok.i and _personish(book, ent):
            name = clean_name(ent.text)
            if looks_like_name(name) and name.lower() not in NOT_NAMES and book.canonical(name)[0] not in book.speakers:
                best, at = book.canonical(name)[0], ent.end
    for t in tok.doc[:tok.i]:
        if t.pos_ != "PROPN" or t.i < at:
            continue
        known = book.get(full_name(t))
        if known is not None and known.type == "person" and known.name not in book.speakers:
            best, at = known.name, t.i
        elif known is None or known.type == "other":
            # "Siobhan is happy ...; she's studying at ...": a name that is the subject of a clause
            name = full_name(t)
            if t.dep_ in ("nsubj", "nsubjpass") and t.ent_type_ in ("PERSON", "") and looks_like_name(name) \
                    and name.lower() not in NOT_NAMES and book.canonical(name)[0] not in book.speakers:
                best, at = name, t.i
    if best is not None:
        return best
    asked = _kin_asked_before(book)
    if asked is not None:
        # "Has your dad come round?" - "Slowly. He's coming down from Scarborough": the dad, named or not
        return asked or None
    return book.last_person if book.utterance_index - book.last_person_at <= RECENT_UTTERANCES else None


_KIN_PHRASE = re.compile(r"(?i)\b(?:your|my|his|her)\s+(?:(?:little|big|older|younger|new|old)\s+)?("
                         + "|".join(sorted(map(re.escape, ROLE_PREDICATES), key=len, reverse=True)) + r")\b")


def _question_before(book: ProfileBook):
    """The turn just before the current one, when another speaker asked a question in it."""
    k = book.utterance_index
    if k == 0 or k >= len(book.batch.utterances):
        return None
    before, now = book.batch.utterances[k - 1], book.batch.utterances[k]
    return before if before.speaker != now.speaker and "?" in before.text else None


def _kin_asked_before(book: ProfileBook) -> str | None:
    """When the other speaker's turn just before asked after someone by kin ("How's your dad?"): that person's name
    if the batch knows it, else "" (someone unnamed); None when nothing was asked so."""
    before = _question_before(book)
    if before is None or book.utterance_index - book.last_person_at <= 1:
        return None  # a name said in the question or since ("Alan? Since when do you call your dad Alan?") wins
    found = _KIN_PHRASE.search(before.text)
    if found is None:
        return None
    role = ROLE_PREDICATES[found.group(1).lower()]
    whose = found.group(0).split()[0].lower()
    owner = book.batch.utterances[book.utterance_index].speaker if whose == "your" else \
        before.speaker if whose == "my" else None
    known = [e.name for e in book.entities() if e.type == "person" and e.name not in book.speakers and any(
        r.predicate == role and r.target == owner for r in e.relations)]
    return known[0] if len(known) == 1 else ""


def _named_org(ent: Entity) -> bool:
    """An organisation by context or by its own name ("... Dental", "... Bank"), not by NER alone."""
    return ent.type == "organization" and (any(a.key == "why" for a in ent.attributes) or
                                           suffix_type(ent.name) == "organization")


def _org_before(book: ProfileBook, tok) -> str | None:
    """What "there" points at: the last organisation named before ``tok`` (this utterance first)."""
    for ent in reversed([e for e in tok.doc.ents if e.end <= tok.i]):
        known = book.get(clean_name(ent.text))
        if known is not None and _named_org(known):
            return known.name
    # "Still nights at St Brendan's?" - "I'm a nurse there": an organisation named turns ago is not meant
    return book.last_org if book.utterance_index - book.last_org_at <= RECENT_ORG_UTTERANCES else None


_VENUE_NOUNS = set(word_list("entities", "_VENUE_NOUNS"))
_PLACE_MOTION = set(word_list("entities", "_PLACE_MOTION"))


def _place_types(book: ProfileBook, doc, source_id: str) -> None:
    """A one-word name after "in/to/from/near" with a verb of living or going ("moved to Heworth",
    "lives in Leeds", "back from Penarth") is a place, whatever NER says."""
    for ent in doc.ents:
        if ent.label_ in ("GPE", "LOC") or len(ent) > 2:
            continue
        root = ent.root
        prep = root.head
        along = root.dep_ == "pobj" and prep.lower_ in ("along", "across") and ent.start > 0 and \
            doc[ent.start - 1].lower_ == "the"  # "18 miles along the Charles", "across the Tamar": a river
        if not along and (root.dep_ != "pobj" or prep.lower_ not in ("in", "to", "from", "near", "around")
                          or prep.head.i == prep.i):
            continue
        verb = prep.head
        if verb.lower_ == "next":
            continue  # "she moved me next to Priya": beside someone or something, not gone to a place
        away = verb.lower_ in ("away", "back", "over", "out", "off", "home")
        if verb.pos_ == "ADV" and verb.head.i != verb.i:  # "back from", "over in", "down to"
            verb = verb.head
        if along:
            verb = prep
        elif away and prep.lower_ in ("in", "to", "from"):
            pass  # "Ines is away in Grenoble", "she's off to Porto": where a person is
        elif verb.pos_ == "NOUN" and prep.lower_ in ("in", "near") and ent.label_ == "PERSON":
            pass  # "the new branch in Penarth", "a flat near Totterdown"
        elif prep.lower_ in ("in", "near") and ent.label_ in ("ORG", "NORP") and (
                verb.lemma_.lower() in _VENUE_NOUNS or verb.pos_ == "PROPN" and (
                    (org := book.get(full_name(verb))) is not None and org.type == "organization")):
            pass  # "the Rothay Hotel in Grasmere", "his pizzeria in Penrith": a business is somewhere
        elif verb.lemma_.lower() not in _PLACE_MOTION or (verb.lemma_ == "be" and prep.lower_ != "from"
                                                          and ent.label_ != "PERSON"):
            continue
        name = clean_name(ent.text)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name) not in (None, "place"):
            continue
        known = book.get(name)
        if known is not None and book.typed_by_context(known):
            continue
        book.entity(name, "place", source_id, ent.sent.text,
                    why=f'a place ("{_shorten(span_text(list(doc[verb.i:root.i + 1])) if verb.i < root.i else name, 60)}")')


# What only a person has: "Hattie's leaving do", "Carys's boyfriend" (not "Bristol's best cafe", "Leeds's manager").
PERSON_POSSESSIONS = {*(w for w, p in ROLE_PREDICATES.items() if p not in ("manager_of", "coach_of", "mentor_of",
                                                                          "colleague_of")),
                      "birthday", "wedding", "funeral", "leaving", "farewell", "graduation", "retirement", "hen",
                      "stag"}


def _person_types(book: ProfileBook, doc, source_id: str) -> None:
    """A name that does what people do ("Tasha said", "Marcus is coming") or has what only people have
    ("Hattie's leaving do") is a person, whatever NER says."""
    for ent in doc.ents:
        if ent.label_ == "PERSON" or len(ent) > 2:
            continue
        root = ent.root
        owned = root.dep_ == "poss" and (root.head.lower_ in PERSON_POSSESSIONS or
                                         root.head.lower_ == "do" and root.head.pos_ == "NOUN")  # "Marit's leaving do"
        if not owned and not _she_next(ent) and (ent.label_ in ("GPE", "LOC") or not _personish(book, ent)):
            continue
        name = clean_name(ent.text)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name):
            continue
        verb = root.head
        book.entity(name, "person", source_id, ent.sent.text,
                    why=f'a person ("{_shorten(span_text([root, verb]) if verb.i > root.i else ent.text, 60)}")')
    first = doc[0] if len(doc) else None
    if first is not None and first.lower_ == "who" and first.head.lemma_ == "be" and doc.text.rstrip().endswith("?"):
        # "Who's Ade?": asked of a person
        named = [t for t in first.head.children if t.pos_ == "PROPN" and t.dep_ in ("attr", "nsubj")]
        name = clean_name(full_name(named[0])) if len(named) == 1 else ""
        known = book.get(name) if name else None
        if name and looks_like_name(name) and name.lower() not in NOT_NAMES and not suffix_type(name) and (
                known is None or not book.typed_by_context(known)):
            book.entity(name, "person", source_id, doc.text, why=f'a person ("{_shorten(doc.text, 60)}")')
    for tok in doc:  # "Carys who moved to Plymouth?": "who" is said of people (the tagger may call Carys a noun)
        if tok.pos_ not in ("PROPN", "NOUN") or not tok.text[:1].isupper() or tok.dep_ == "compound":
            continue
        clause = next((c for c in tok.children if c.dep_ == "relcl" and any(
            w.lower_ in ("who", "whom", "whose") and w.i > tok.i for w in c.children)), None)
        name = clean_name(tok.text)
        if clause is None or not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name) \
                or tok.pos_ == "NOUN" and not _unknown_word(tok.lower_):
            continue
        book.entity(name, "person", source_id, tok.sent.text,
                    why=f'a person ("{_shorten(span_text([tok, *clause.subtree]), 60)}")')


def _she_next(ent) -> bool:
    """"Any news from Hattie? How long has she been in Lisbon?": the next sentence's subject is "she" or "he"
    with nobody else named between, and the name is not where someone goes or is ("from Izmir. She ...")."""
    root = ent.root
    if root.dep_ == "pobj":
        prep = root.head
        if prep.lower_ not in ("from", "with", "about", "of", "for") or prep.head.pos_ != "NOUN":
            return False  # "news from Hattie", "a message from Hattie"; not "back from Izmir"
    elif root.dep_ not in ("nsubj", "dobj"):
        return False
    doc = ent.doc
    nxt = next((s for s in doc.sents if s.start >= ent.sent.end), None)
    if nxt is None or any(e.label_ == "PERSON" and e.start < nxt.end for e in doc.ents if e.start >= ent.end):
        return False
    subj = next((t for t in nxt if t.dep_ in ("nsubj", "nsubjpass")), None)
    return subj is not None and subj.lower_ in ("she", "he")


def _kin_names(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Mum called", "ask Dad": a kin word used as a name is the speaker's relative."""
    for tok in doc:
        low = tok.lower_
        if low not in KIN_NAMES or not tok.text[:1].isupper() or tok.pos_ not in ("PROPN", "NOUN"):
            continue
        if any(c.dep_ in ("poss", "det") for c in tok.children) or tok.dep_ == "compound":
            continue
        if tok.sent.text.rstrip().endswith("?") and tok.dep_ == "npadvmod":
            continue
        name = tok.text[:1].upper() + low[1:]
        said = _shorten(tok.sent.text, 60)
        kin = book.entity(name, "person", source_id, tok.sent.text, why=f'{speaker.name}\'s {low} ("{said}")')
        book.relation(kin, ROLE_PREDICATES.get(low, "parent_of"), speaker.name, source_id)


# Kin words people address each other with; "mate", "buddy", "love" are said to anyone.
VOCATIVE_KIN = set(word_list("entities", "VOCATIVE_KIN"))


def _addressed_kin(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """"You're my little sis": the listener is the speaker's kin; "as your big brother": the speaker
    is the listener's."""
    if not other:
        return
    for tok in doc:
        if tok.dep_ not in ("attr", "pobj") or tok.pos_ != "NOUN":
            continue
        pred = ROLE_PREDICATES.get(tok.lemma_.lower())
        if pred is None or pred == "reports_to" or _name_of(tok) is not None:
            continue
        poss = next((c.lower_ for c in tok.children if c.dep_ == "poss"), None)
        if poss == "my" and tok.dep_ == "attr" and tok.head.lemma_ == "be" and not \
                tok.sent.text.rstrip().endswith("?"):
            subj = subject_of(tok.head)
            if subj is not None and subj.lower_ == "you":
                book.relation(book.entity(other, "person", source_id), pred, speaker.name, source_id)
        elif poss == "your" and tok.dep_ == "pobj" and tok.head.lower_ == "as":
            book.relation(speaker, pred, other, source_id)
    for tok in doc:  # "Good luck, little sis.", "Thanks, bro!": the listener addressed by a kin word
        pred = ROLE_PREDICATES.get(tok.lemma_.lower() if tok.lower_ not in VOCATIVE_KIN else tok.lower_)
        if tok.lower_ not in VOCATIVE_KIN or pred is None or tok.i == 0 or doc[tok.i - 1].text != "," and not (
                doc[tok.i - 1].dep_ == "amod" and tok.i > 1 and doc[tok.i - 2].text == ","):
            continue
        if any(c.dep_ == "poss" and c.lower_ != "my" for c in tok.children) or _name_of(tok) is not None or \
                tok.dep_ not in ("appos", "npadvmod", "vocative", "ROOT", "dep", "intj", "conj", "attr"):
            continue
        nxt = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
        if nxt is None or nxt.is_punct:
            book.relation(book.entity(other, "person", source_id), pred, speaker.name, source_id)


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


def _unknown_word(word: str) -> bool:
    """Not in lemminflect's English lexicon: the small tagger makes some names adverbs ("Elif?", "Raj works")."""
    from lemminflect import getAllLemmas  # imported here: it imports spaCy, which only an extraction needs

    return not getAllLemmas(word)


# words of chat that no lexicon holds and no name is: "Awww", "Ughhh", "lol", "Omg"
_CHAT_NOISE = re.compile(r"(?i)^(?:.*(\w)\1\1.*|lol|lmao|omg|ugh|eww?|yay|wow|hm+|oops|aw+|haha|hehe|ooh|ahh?"
                         r"|yikes|phew|meh|nah|yep|yup|idk|tbh|btw|brb|pls|plz|thx|ty|np|xoxo|ok|okay)$")
_REPLY_OPENERS = set(word_list("entities", "_REPLY_OPENERS"))


def _named_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """A bare name in reply names the unnamed "my sister" or "your cat" of the turn before: "is it ok if my
    sister stays?" - "Elif? Always!" (Elif is the asker's sister), "your cat threw up on the rug" - "Ugh,
    Pilchard!" (Pilchard is the replier's cat); so does a name echoed as the subject of a short exclamation or
    question ("my mum's flying in" - "Sevgi's coming?!"), and a name that is the subject of a yes or no to a
    question about the kin ("Does your brother live in Exeter?" - "Yes, Danny's been in Heavitree for years").
    Both turns are the evidence."""
    words = [t for t in doc if not t.is_space]
    yes_or_no = False
    while words and (words[0].lower_ in _REPLY_OPENERS or words[0].is_punct):
        yes_or_no = yes_or_no or words[0].lower_ in ("yes", "yeah", "yep", "yup", "no", "nope")
        words = words[1:]
    if len(words) < 2 or not words[0].text[:1].isupper():
        return
    sent = words[0].sent
    subject = words[0].dep_ in ("nsubj", "nsubjpass")
    echoed = subject and len(sent) <= 6 and sent[-1].text in ("?", "!")  # "Sevgi's coming?!"
    # "Does your brother live in Exeter?" - "Yes, Danny's been in Heavitree ...": the answer's subject is the kin
    answered = yes_or_no and subject
    if words[1].text not in ("?", "!", ",", ".") and not echoed and not answered:
        return
    if words[0].pos_ not in ("PROPN", "NOUN") and not _unknown_word(words[0].lower_):
        return  # "Really? Wow": a word; "Elif?" (tagged an adverb) is no English word, so a name
    name = clean_name(words[0].text)
    if not looks_like_name(name) or name.lower() in NOT_NAMES or book.canonical(name)[0] in book.speakers:
        return
    if name.lower() not in book.capitalised_inside and not (
            (words[1].text == "?" or echoed and "?" in sent.text) and name.isalpha() and _unknown_word(name.lower())
            and not _CHAT_NOISE.match(name)):
        # "Awww, thanks!", "Oops!", "Pizza? Cool", "Sames, can't wait": a name is also written as one inside a
        # sentence, or is asked back alone and is no English word nor chat noise ("Elif? Always!" names the sister
        # whose name comes up again sessions later)
        return
    unnamed = [t for t in asked_doc if t.pos_ == "NOUN" and (t.lemma_.lower() in PETS or t.lemma_.lower() in FAMILY)
               and _name_of(t) is None and any(c.dep_ == "poss" and c.lower_ in ("my", "your") for c in t.children)]
    if len(unnamed) != 1:
        return  # "my sister and your dog": which one is it?
    noun = unnamed[0]
    if answered and not echoed and (noun.dep_ not in ("nsubj", "nsubjpass") or
                                    not noun.sent.text.rstrip().endswith("?")):
        return  # a yes or no answers a question about the kin, not one where the kin is mentioned in passing
    mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in noun.children)
    owner = book.entity(asked.speaker, "person", asked.id) if mine else speaker
    lemma = noun.lemma_.lower()
    said = f'"{_quote(asked_doc, noun, noun)}" - "{_shorten(words[0].sent.text, 40)}"'
    if lemma in PETS:
        pet = book.entity(name, "pet", source_id, words[0].sent.text, why=f"pet of {owner.name} ({said})")
        book.relation(owner, "owns_pet", pet.name, asked.id)
        book.relation(owner, "owns_pet", pet.name, source_id)
    elif lemma in ROLE_PREDICATES:
        person = book.entity(name, "person", source_id, words[0].sent.text, why=f"{owner.name}'s {lemma} ({said})")
        book.relation(person, ROLE_PREDICATES[lemma], owner.name, asked.id)
        book.relation(person, ROLE_PREDICATES[lemma], owner.name, source_id)
        # "Elif? Always! Is she still at Severnside?": she is who was just named
        book.last_person, book.last_person_at = person.name, book.utterance_index
        # and what the turn before said of "my mum" is said of her ("my mum's flying in from Izmir" - "Sevgi's
        # coming?!"): read it again now that the kin has a name
        book.counting = False
        try:
            _read_relations(book, asked_doc, book.entity(asked.speaker, "person", asked.id), speaker.name, asked.id)
        finally:
            book.counting = True


def _kin_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """The other way round: a question about one named person, answered about "my <kin>" with no name:
    "Did Maren make it over from Cardiff?" - "No, my poor girlfriend got called in." (Maren is the replier's
    girlfriend). Only when the named person is the question's subject ("Did you see Maren?" - "My sister saw
    her" says nothing of Maren)."""
    question = [s for s in asked_doc.sents if s.text.rstrip().endswith("?")]
    first = next(iter(doc.sents), None)
    if len(question) != 1 or first is None:
        return
    people = [e for e in question[0].ents if e.label_ == "PERSON" or (
        (known := book.get(clean_name(e.text))) is not None and known.type == "person")]
    names = {book.canonical(clean_name(e.text))[0] for e in people} - set(book.speakers)
    if len(names) != 1 or people[0].root.dep_ not in ("nsubj", "nsubjpass"):
        return
    kin = [t for t in first if t.dep_ in ("nsubj", "nsubjpass") and t.pos_ == "NOUN" and t.lemma_.lower() in FAMILY
           and t.lemma_.lower() in ROLE_PREDICATES and _name_of(t) is None
           and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in t.children)]
    if len(kin) != 1:
        return
    name, lemma = names.pop(), kin[0].lemma_.lower()
    said = f'"{_shorten(question[0].text, 40)}" - "{_quote(doc, kin[0], kin[0])}"'
    person = book.entity(name, "person", source_id, question[0].text, why=f"{speaker.name}'s {lemma} ({said})")
    book.relation(person, ROLE_PREDICATES[lemma], speaker.name, asked.id)
    book.relation(person, ROLE_PREDICATES[lemma], speaker.name, source_id)


def _kin_echo(book: ProfileBook, doc, asked, asked_doc, source_id: str) -> None:
    """A reply that asks back with a kin word names the one person of the turn before: "Callum's coming to stay on
    Saturday" - "Your little brother? Course." (Callum is the asker's brother)."""
    first = next(iter(doc.sents), None)
    if first is None or first.text.rstrip()[-1:] != "?" or len([t for t in first if not t.is_punct]) > 4:
        return
    kin = [t for t in first if t.pos_ == "NOUN" and t.lemma_.lower() in ROLE_PREDICATES
           and any(c.dep_ == "poss" and c.lower_ == "your" for c in t.children)]
    people = {book.canonical(clean_name(e.text))[0] for e in asked_doc.ents if _personish(book, e)} - set(book.speakers)
    # "Callum and Priya are coming": NER may miss one of the two, the parse joins them
    joined = any(t.dep_ == "conj" and t.head.pos_ == "PROPN" and t.pos_ == "PROPN" for t in asked_doc)
    if len(kin) != 1 or len(people) != 1 or joined:
        return
    name, lemma = people.pop(), kin[0].lemma_.lower()
    said = f'"{_shorten(asked_doc.text, 40)}" - "{_shorten(first.text, 30)}"'
    person = book.entity(name, "person", source_id, first.text, why=f"{asked.speaker}'s {lemma} ({said})")
    book.relation(person, ROLE_PREDICATES[lemma], asked.speaker, asked.id)
    book.relation(person, ROLE_PREDICATES[lemma], asked.speaker, source_id)


_ASKED_JOBS = set(word_list("entities", "_ASKED_JOBS"))


def _job_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """A question about the listener's job answered by naming one organisation: "How's the new job going?" - "A
    month in and Brackwater Studios still feels like a dream." (the replier works there)."""
    question = [s for s in asked_doc.sents if s.text.rstrip().endswith("?")]
    if len(question) != 1 or any(e.label_ in ("ORG", "PERSON") for e in question[0].ents):
        return
    job = [t for t in question[0] if t.pos_ == "NOUN" and t.lemma_.lower() in _ASKED_JOBS and (
        any(c.lower_ == "your" for c in t.children) or
        any(c.lower_ == "the" for c in t.children) and any(c.lower_ == "new" for c in t.children))]
    orgs = {clean_name(e.text) for s in list(doc.sents)[:2] for e in s.ents if e.label_ == "ORG"}
    orgs = {o for o in orgs if looks_like_name(o) and ((known := book.get(o)) is None or known.type == "organization")}
    if len(job) != 1 or len(orgs) != 1:
        return
    said = f'"{_shorten(question[0].text, 40)}" - "{_shorten(doc.text, 40)}"'
    org = book.entity(orgs.pop(), "organization", source_id, doc.text,
                      why=f"organization where {speaker.name} works ({said})")
    book.relation(speaker, "works_at", org.name, asked.id)
    book.relation(speaker, "works_at", org.name, source_id)


def _owner(book: ProfileBook, subj, speaker: Entity, other: str | None, source_id: str) -> Entity | None:
    """Who did it: the speaker (I/we), the listener (you), a named person, or "my sister Anna"."""
    if subj is None:
        return None
    if is_first_person(subj):
        return speaker
    if subj.lower_ == "you" and other:
        return book.entity(other, "person", source_id)
    if subj.lower_ in ("she", "he") and (named := _person_before(book, subj)) is not None:
        return book.entity(named, "person", source_id)
    if _known_person(book, subj):  # "Carys who moved to Plymouth?": the tagger calls Carys a noun
        return book.entity(full_name(subj), "person", source_id, subj.sent.text)
    # A name doing what people do is a person whatever NER says ("Cian moved to Cork": NER says NORP).
    if subj.pos_ == "PROPN" and subj.text[:1].isupper() and (subj.ent_type_ in ("PERSON", "") or (
            (known := book.get(full_name(subj))) is not None and known.type == "person") or (
            subj.ent_type_ in ("NORP", "ORG") and subj.head.lemma_.lower() in PERSON_VERBS)):
        name = full_name(subj)
        if looks_like_name(name) and name.lower() not in NOT_NAMES:
            return book.entity(name, "person", source_id, subj.sent.text)
    name_tok = _name_of(subj) if subj.lemma_.lower() in ROLE_PREDICATES else None
    if name_tok is not None:
        return book.entity(full_name(name_tok), "person", source_id, subj.sent.text)
    return _kin_known(book, subj, speaker, other)


def _kin_known(book: ProfileBook, noun, speaker: Entity, other: str | None) -> Entity | None:
    """"my brother" once the batch knows who that is ("Danny's been in Heavitree" named him): the one person
    with that role towards the speaker (or, for "your", the listener)."""
    role = ROLE_PREDICATES.get(noun.lemma_.lower())
    poss = next((c.lower_ for c in noun.children if c.dep_ == "poss"), None)
    owner = speaker.name if poss == "my" else other if poss == "your" else None
    if role is None or owner is None:
        return None
    known = [e for e in book.entities() if e.type == "person" and e.name not in book.speakers
             and any(r.predicate == role and r.target == owner for r in e.relations)]
    return known[0] if len(known) == 1 else None


def _known_person(book: ProfileBook, tok) -> bool:
    """A capitalised word the tagger calls a noun that the batch already knows as a person (not a speaker)."""
    if tok.pos_ != "NOUN" or not tok.text[:1].isupper():
        return False
    known = book.get(full_name(tok))
    return known is not None and known.type == "person" and known.name not in book.speakers


def _name_before_comma(tok):
    """The capitalised word before "X, the <modifiers> <tok>" (the parser often misses this apposition)."""
    k = tok.i - 1
    while k > tok.sent.start and (tok.doc[k].pos_ in ("DET", "ADJ", "NOUN", "VERB", "PRON") and tok.doc[k].dep_ in (
            "det", "amod", "compound", "npadvmod", "poss", "nmod") or tok.doc[k].text == "-"):
        k -= 1
    if k - 1 > tok.sent.start and tok.doc[k].text == "," and tok.doc[k - 1].text[:1].isupper():
        return tok.doc[k - 1]
    return None


_DENIALS = set(word_list("entities", "_DENIALS"))


def _named_kin_tag(book: ProfileBook, tok):
    """(name, my/your) of "Cathal's your brother, yeah?", which the small parser reads as two possessives of
    "brother"; asked, it holds unless the answer opens with a no."""
    named = next((c for c in tok.children if c.dep_ == "poss" and c.pos_ == "PROPN" and c.i == tok.sent.start
                  and any(g.dep_ == "case" for g in c.children)), None)
    mine = next((c for c in tok.children if c.dep_ == "poss" and c.lower_ in ("my", "your", "our")), None)
    if named is None or mine is None or mine.i < named.i:
        return None
    if tok.sent.text.rstrip().endswith("?") and _confirmed(book) is None:
        return None
    return named, mine


def _confirmed(book: ProfileBook) -> str | None:
    """The id of the turn after the current one when it does not open with a no: what confirms a question that
    states something ("Cathal's your brother, yeah?" - "The only one!")."""
    k = book.utterance_index + 1
    if k >= len(book.batch.utterances):
        return None
    first = _WORD.findall(book.batch.utterances[k].text)[:1]
    return book.batch.utterances[k].id if first and first[0].lower() not in _DENIALS else None


def _name_beside_fragment(tok):
    """The name a bare "my/your <kin>" fragment is about: "And your brother? Is Cian still in Dublin?" (the
    fragment, then a name in the next sentence) or "Ines's, obviously. My girlfriend has ..." (a bare name,
    then the kin noun)."""
    if not any(c.dep_ == "poss" and c.lower_ in ("my", "your") for c in tok.children):
        return None
    sent = tok.sent
    doc = tok.doc
    if tok.dep_ == "ROOT" and all(t.i == tok.i or t.is_punct or t.dep_ in ("poss", "cc", "amod", "det", "intj")
                                  for t in sent):
        if sent.end < len(doc):
            nxt = doc[sent.end].sent
            names = [t for t in nxt if t.pos_ == "PROPN" and t.dep_ in ("nsubj", "nsubjpass", "attr")
                     and t.ent_type_ in ("PERSON", "", "NORP", "ORG")]
            return names[0] if len(names) == 1 else None
        return None
    if sent.start > 0 and tok.dep_ in ("nsubj", "nsubjpass"):
        prev = doc[sent.start - 1].sent
        words = [t for t in prev if not t.is_punct and t.dep_ not in ("case", "advmod", "intj", "cc")]
        # "Ines's, obviously." names; "Definitely!" is a word
        if len(words) == 1 and words[0].text[:1].isupper() and words[0].lower_ not in NOT_NAMES and (
                words[0].ent_type_ == "PERSON" or _unknown_word(words[0].lower_)):
            return words[0]
    return None


def _noun_patterns(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Naming patterns around a noun: "my sister Anna", "our dog Biscuit", "my running club, the Harbor
    Striders", "the model MedLLM", "Anna is my sister"."""
    for tok in doc:
        lemma = tok.lemma_.lower()
        # the small tagger makes an adjective of "spaniel" in "My spaniel Bramble sends her love"
        if tok.pos_ not in ("NOUN", "PROPN") and not (tok.pos_ == "ADJ" and lemma in PETS and tok.i + 1 < len(doc)
                                                     and doc[tok.i + 1].text[:1].isupper()):
            continue
        kind = ("pet" if lemma in PETS else "role" if lemma in ROLE_PREDICATES else "group" if lemma in GROUP_PREDICATES
                else "product" if lemma in PRODUCT_NOUNS else "project" if lemma in PROJECT_NOUNS
                else "person" if lemma in PERSON_NOUNS and (tok.pos_ == "NOUN" or tok.text.islower()) else None)
        if kind is None:
            continue
        name_tok = _name_of(tok)
        # "Anna is my sister": the name is the subject of "is", the role noun its complement.
        if name_tok is None and tok.dep_ == "attr" and tok.head.lemma_ == "be":
            subj = next((c for c in tok.head.children if c.dep_ == "nsubj"), None)
            if subj is not None and subj.pos_ == "PROPN":
                name_tok = subj
        if name_tok is None and tok.dep_ in ("nsubj", "nsubjpass") and tok.head.lemma_ == "be":
            attr = next((c for c in tok.head.children if c.dep_ == "attr" and c.pos_ == "PROPN"), None)
            if attr is not None:
                name_tok = attr  # "my new manager will be Owen Price"
        if name_tok is None and kind in ("product", "project"):
            name_tok = _name_before_comma(tok)  # "MedLLM, the medical question-answering model"
        if name_tok is None and kind == "pet" and tok.pos_ == "ADJ":
            name_tok = doc[tok.i + 1]
        tagged = _named_kin_tag(book, tok) if kind == "role" and name_tok is None else None
        if tagged is not None:
            name_tok = tagged[0]
        if name_tok is None and kind == "role":
            name_tok = _name_beside_fragment(tok)  # "And your brother? Is Cian still in Dublin?"
        if name_tok is None:
            if kind == "pet" and any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children):
                book.attribute(speaker, "pet", tok.text, source_id)
            elif kind == "role" and lemma in FAMILY and any(c.dep_ == "poss" and c.lower_ in ("my", "our")
                                                            for c in tok.children):
                book.attribute(speaker, "family", tok.text, source_id)
            continue
        name = full_name(name_tok)
        if not looks_like_name(name) or name.lower() in NOT_NAMES:
            continue
        if tagged is None:
            owner = _possessor(book, tok, speaker, other, source_id)
        elif tagged[1].lower_ in ("my", "our"):
            owner = speaker
        else:  # "your": the listener
            owner = book.entity(other, "person", source_id) if other else None
        said = _quote(doc, tok, name_tok)
        if kind == "pet":
            if owner is None:
                continue
            pet = book.entity(name, "pet", source_id, tok.sent.text, why=f'pet of {owner.name} ("{said}")')
            book.relation(owner, "owns_pet", pet.name, source_id)
            book.attribute(owner, "pet", said, source_id) if said.lower() in doc.text.lower() else None
        elif kind == "role" or kind == "person":
            if kind == "person" or (owner is None and lemma not in FAMILY):
                # "Marcus, a coach at Ironbridge Gym": a person by role, working where the role is
                person = book.entity(name, "person", source_id, tok.sent.text, why=f'a {lemma} ("{said}")')
                # "Hollins Mill put their prices up" - "Their rep, Colin, says ...": the organisation's person
                if any(c.dep_ == "poss" and c.lower_ in ("their", "its") for c in tok.children) and \
                        (org := _org_before(book, tok)) is not None and lemma not in FAMILY:
                    book.relation(person, "works_at", org, source_id)
                for prep in (g for g in tok.children if g.dep_ == "prep" and g.lower_ in ("at", "for", "with")):
                    _relate(book, person, "works_at", next((g for g in prep.children if g.dep_ == "pobj"), None),
                            source_id)
                continue
            if owner is None and any(c.dep_ == "poss" for c in tok.children):
                # "my sister ... her girlfriend Sigrid": whose is not known here, a person she is
                book.entity(name, "person", source_id, tok.sent.text, why=f'a {lemma} ("{said}")')
            if owner is None or owner.name.lower() == name.lower():
                continue
            person = book.entity(name, "person", source_id, tok.sent.text, why=f"{owner.name}'s {lemma} (\"{said}\")")
            predicate = ROLE_PREDICATES[lemma]
            if predicate == "reports_to":
                book.relation(owner, "manager_of", person.name, source_id)
            else:
                book.relation(person, predicate, owner.name, source_id)
        elif kind == "group":
            predicate = GROUP_PREDICATES[lemma]
            org = book.entity(name, "organization", source_id, tok.sent.text,
                              why=f'{lemma} of {owner.name} ("{said}")' if owner else f'the {lemma} ("{said}")')
            if owner is not None and owner.type == "person":
                book.relation(owner, predicate, org.name, source_id)
        else:
            article = "an" if lemma[:1] in "aeiou" else "a"
            thing = book.entity(name, kind, source_id, tok.sent.text, why=f'{article} {lemma} ("{said}")')
            if owner is not None:
                book.relation(owner, "works_on", thing.name, source_id)


_PLACE_VERBS = {("live", "in"): "lives_in", ("move", "to"): "lives_in", ("move", "into"): "lives_in", ("relocate", "to"): "lives_in",
                ("base", "in"): "lives_in", ("settle", "in"): "lives_in", ("move", "from"): "moved_from",
                ("work", "at"): "works_at", ("work", "for"): "works_at", ("work", "with"): None,
                ("intern", "at"): "works_at", ("start", "at"): "works_at",
                ("volunteer", "at"): "volunteers_at", ("volunteer", "with"): "volunteers_at", ("volunteer", "for"): "volunteers_at",
                ("study", "at"): "studies_at", ("enroll", "at"): "studies_at", ("enroll", "in"): "studies_at",
                ("enrol", "at"): "studies_at", ("major", "in"): None, ("be", "from"): "from", ("come", "from"): "from",
                ("grow", "in"): "grew_up_in", ("work", "on"): "works_on", ("join", "at"): "works_at",
                ("play", "for"): "member_of", ("sing", "in"): "member_of", ("play", "in"): "member_of",
                ("row", "for"): "member_of", ("run", "with"): "member_of", ("climb", "at"): "member_of",
                ("train", "at"): "member_of", ("teach", "at"): "works_at", ("lecture", "at"): "works_at",
                ("research", "at"): "studies_at", ("live", "near"): "lives_in", ("stay", "in"): None,
                ("cover", "at"): "works_at",  # "I'm covering at Bellhouse till 2": a shift
                ("live", "outside"): "lives_in", ("live", "around"): "lives_in",
                ("commute", "from"): "lives_in",  # "I'd be commuting from Bristol to London": home is Bristol
                # "I got promoted at Deloitte", "she was hired by Arup", "I've signed up with the Yare Valley Harriers"
                # (not "I signed with Eden Valley Flour": a supplier)
                ("promote", "at"): "works_at", ("hire", "at"): "works_at", ("hire", "by"): "works_at",
                ("employ", "by"): "works_at", ("employ", "at"): "works_at", ("sign up", "with"): "member_of"}
_ATTRIBUTE_KEYS = {("work", "as"): "occupation", ("major", "in"): "studies"}
# "Lives out in Malton", "Works at the brewery now": where a dropped subject's verb still says something
_DROPPED_SUBJECT_VERBS = set(word_list("entities", "_DROPPED_SUBJECT_VERBS"))
_TARGET_TYPES = {"lives_in": "place", "moved_from": "place", "from": "place", "grew_up_in": "place",
                 "works_at": "organization", "volunteers_at": "organization", "studies_at": "organization",
                 "member_of": "organization", "works_on": "project"}
_WHY = {"lives_in": "place where {who} lives", "moved_from": "place {who} moved from", "from": "where {who} is from",
        "grew_up_in": "where {who} grew up", "works_at": "organization where {who} works",
        "volunteers_at": "organization where {who} volunteers", "studies_at": "where {who} studies",
        "member_of": "group {who} belongs to", "works_on": "project {who} works on"}
_MEMBER_VERBS = set(word_list("entities", "_MEMBER_VERBS"))
_GROUP_ROLES = set(word_list("entities", "_GROUP_ROLES"))
_WORKPLACE_NOUNS = set(word_list("entities", "_WORKPLACE_NOUNS"))
_THERE_ADVERBS = set(word_list("entities", "_THERE_ADVERBS"))
_SCHOOL_HEADS = set(word_list("entities", "_SCHOOL_HEADS"))
_DEGREE_NOUNS = set(word_list("entities", "_DEGREE_NOUNS"))
_STUDENT_NOUNS = set(word_list("entities", "_STUDENT_NOUNS"))
_BUILD_VERBS = set(word_list("entities", "_BUILD_VERBS"))
_JOB_NOUNS = set(word_list("entities", "_JOB_NOUNS"))
_TAKE_JOB_VERBS = set(word_list("entities", "_TAKE_JOB_VERBS"))
_LEASE_NOUNS = set(word_list("entities", "_LEASE_NOUNS"))
# "We just bought a house in Harrogate", "we're renting a flat in Porto": a home the speaker now has
_HOME_GETTING_VERBS = set(word_list("entities", "_HOME_GETTING_VERBS"))
_ORDINALS = set(word_list("entities", "_ORDINALS"))
# "my neighbours in Didsbury", "the commute from Reading is killing me": where the speaker lives
_HOME_SIDE_NOUNS = {"neighbour": "in", "neighbor": "in", "commute": "from"}
_HOME_NOUNS = set(word_list("entities", "_HOME_NOUNS"))


def _target_name(pobj) -> str | None:
    # the small tagger often makes a town a common noun ("Leeds" NNS), while NER still calls it a place, or a
    # person ("my brother lives in Exeter"): a capitalised word inside the sentence that is no English word
    if pobj is None or not pobj.text[:1].isupper() or (
            pobj.pos_ != "PROPN" and pobj.ent_type_ not in ("GPE", "LOC")
            and not (pobj.i > pobj.sent.start and _unknown_word(pobj.lower_))):
        return None
    name = full_name(pobj)
    return name if looks_like_name(name) and name.lower() not in NOT_NAMES else None


def _relate(book: ProfileBook, who: Entity, predicate: str, pobj, source_id: str) -> bool:
    name = _target_name(pobj)
    if name is None:
        return False
    why = _WHY[predicate].format(who=who.name) + f' ("{_shorten(pobj.sent.text, 80)}")'
    ent_type = _TARGET_TYPES[predicate]
    # "I live in Porto": a place keeps the NER's finer guess only when that guess is a place too
    target = book.entity(name, ent_type, source_id, pobj.sent.text, why=why)
    book.relation(who, predicate, target.name, source_id)
    return True


def _compliment(book: ProfileBook, verb, obj) -> bool:
    """What "I love ..." says to the listener, not of the speaker's tastes: "I love your turtles", "I love the
    thought Nate!", "That's what I like to hear"."""
    return any(c.dep_ == "poss" and c.lower_ == "your" for c in obj.children) or any(
        t.text in book.speakers for t in obj.subtree) or any(
        c.lower_ in ("what", "which") and c.dep_ in ("dobj", "attr", "pobj") for c in verb.subtree if c.i < verb.i)


def _verb_patterns(book: ProfileBook, verb, who: Entity, speaker: Entity, source_id: str) -> None:
    """Patterns of a verb whose subject is ``who`` (the speaker for I/we, else a named person)."""
    lemma = verb.lemma_.lower()
    children = list(verb.children)
    negated = any(c.dep_ == "neg" for c in children)
    conditional = any(c.lower_ in ("would", "'d", "might", "could") for c in children) or _hedged(verb)
    future = any(c.dep_ == "aux" and c.lower_ in FUTURE_AUX for c in children)
    is_speaker = who is speaker
    if lemma == "stand" and negated and any(c.lower_ in ("ca", "can", "could") for c in children):
        obj = next((c for c in children if c.dep_ in ("dobj", "xcomp")), None)  # "I can't stand the treadmill"
        if obj is not None and obj.pos_ != "PRON" and obj.lower_ not in _VAGUE_OBJECTS:
            book.relation(who, "dislikes", _phrase(obj, 6), source_id)
        return
    if lemma in _LIKE and not conditional:
        # "you can't stand anything that moves, you hate flying": the object, before a clause hung on the verb
        obj = next((c for dep in ("dobj", "xcomp", "ccomp") for c in children if c.dep_ == dep
                    and not (dep == "ccomp" and any(g.dep_ == "nsubj" for g in c.children))), None)
        if obj is not None and obj.lower_ not in _VAGUE_OBJECTS and obj.pos_ != "PRON" and \
                not _compliment(book, verb, obj):
            key = _LIKE[lemma]
            if negated:
                key = "dislikes" if key == "likes" else "likes"
            name = _target_name(obj)
            target = book.entity(name, "other", source_id, obj.sent.text).name if name else _phrase(obj)
            if target and len(target.split()) <= 6:
                book.relation(who, key, target, source_id)
        return
    if not is_speaker:
        pass
    elif (lemma in _WISH or (lemma in ("love", "like") and conditional)) and not negated:
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")), None)
        if obj is not None and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, _WISH.get(lemma, "wants"), _phrase(obj, 10), source_id)
        return
    elif lemma == "go" and verb.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in children):
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
        if obj is not None and not negated and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, "plans", _phrase(obj, 10), source_id)
        return
    elif lemma in ("study", "learn", "teach", "play") and not negated:
        obj = next((c for c in children if c.dep_ == "dobj"), None)
        if obj is not None and obj.pos_ != "PRON" and obj.lower_ not in _VAGUE_OBJECTS and obj.pos_ != "PROPN":
            key = {"study": "studies", "learn": "learning", "teach": "teaches", "play": "plays"}[lemma]
            book.attribute(speaker, key, _phrase(obj, 6), source_id)
    if lemma == "be" and negated:
        for c in children:  # "I'm not a fan of slugs"
            of = next((g for g in c.children if g.dep_ == "prep" and g.lower_ == "of"), None)
            if c.dep_ == "attr" and c.lemma_ in ("fan", "lover") and of is not None:
                pobj = next((g for g in of.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.pos_ != "PRON":
                    book.relation(who, "dislikes", _phrase(pobj, 6), source_id)
    if lemma == "be" and not negated:
        for c in children:  # "I'm sick of cold calls", "I'm tired of the commute"
            if c.dep_ == "acomp" and c.lemma_ in ("sick", "tired", "fed"):
                of = next((g for g in c.subtree if g.dep_ == "prep" and g.lower_ == "of"), None)
                pobj = next((g for g in of.children if g.dep_ == "pobj"), None) if of is not None else None
                if pobj is not None and pobj.pos_ != "PRON" and pobj.lower_ not in _VAGUE_OBJECTS:
                    book.relation(who, "dislikes", _phrase(pobj, 6), source_id)
    if future and not negated and not conditional:
        # "I'll be working on the Tidewater dashboard", "I'll work at Brightwater from May": a new job said ahead
        for prep in (c for c in children if c.dep_ == "prep"):
            key = _PLACE_VERBS.get((lemma, prep.lower_))
            if key in ("works_at", "works_on", "studies_at"):
                _relate(book, who, key, next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
    school = next((c for c in children if c.dep_ == "dobj"), None) if lemma == "attend" else None
    if school is not None and not negated and not conditional and \
            _is_school(school):
        _relate(book, who, "studies_at", school, source_id)  # "Maya will attend Bruntsfield Primary"
    if negated or conditional or future:
        return
    if lemma == "be":
        _still_there(book, verb, who, source_id)
        # "He's been on my team since 2021"
        for prep in (c for c in children if c.dep_ == "prep" and c.lower_ == "on"):
            team = next((g for g in prep.children if g.dep_ == "pobj" and g.lemma_ in ("team", "staff", "crew")), None)
            mate = _possessor(book, team, speaker, None, source_id) if team is not None else None
            if mate is not None and mate.type == "person" and mate.name != who.name and who.type == "person":
                book.relation(who, "colleague_of", mate.name, source_id)
        for c in children:
            if c.dep_ == "attr" and c.pos_ == "NOUN":
                of = next((g for g in c.children if g.dep_ == "prep" and g.lower_ == "of"), None)
                if c.lemma_ == "fan" and of is not None:
                    pobj = next((g for g in of.children if g.dep_ == "pobj"), None)
                    if pobj is not None and pobj.pos_ != "PRON" and not _compliment(book, verb, pobj):
                        name = _target_name(pobj)
                        book.relation(who, "likes", book.entity(name, "other", source_id).name if name
                                      else _phrase(pobj), source_id)
                elif c.lemma_ == "fan" and negated:
                    pass
                elif c.lemma_ in _GROUP_ROLES and of is not None:  # "Derek is chair of Rivelin Bank"
                    _relate(book, who, "member_of", next((g for g in of.children if g.dep_ == "pobj"), None), source_id)
                elif c.lemma_ == "member" and (org := _org_before(book, c)) is not None:
                    # "The Allotment Society had a waiting list, so now I'm a member"
                    book.relation(who, "member_of", org, source_id)
                elif c.lemma_ not in _NOT_IDENTITY and (c.lemma_ not in ROLE_PREDICATES or c.lemma_ in _STUDENT_NOUNS
                                                         or c.lemma_ == "coach") and any(
                        g.dep_ == "det" and g.lower_ in ("a", "an") for g in c.children):
                    if is_speaker:
                        book.attribute(speaker, "is", _phrase(c, 6), source_id)
                    # "I'm a data analyst there": the organisation named just before
                    org_name = _org_before(book, c)
                    if org_name and any(g.lower_ == "there" and g.dep_ == "advmod" for g in [*c.children, *children]):
                        org = book.entity(org_name, "organization", source_id)
                        book.relation(who, "studies_at" if c.lemma_ in _STUDENT_NOUNS else "works_at", org.name,
                                      source_id)
                    # "Sofie is a barista in Hamburg": where one works is where one lives
                    for prep in (g for g in c.children if g.dep_ == "prep" and g.lower_ == "in"):
                        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                        if pobj is not None and pobj.ent_type_ == "GPE":
                            _relate(book, who, "lives_in", pobj, source_id)
                    # "I'm a nurse at Cedar Clinic", "I'm a student at Porto Polytechnic"
                    for prep in (g for g in c.subtree if g.dep_ == "prep" and g.lower_ in ("at", "for", "with")
                                 and g.head.pos_ in ("NOUN", "PROPN") and g.head.i <= c.i):
                        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                        _relate(book, who, "studies_at" if c.lemma_ in _STUDENT_NOUNS
                                else "works_at", pobj, source_id)
            if c.dep_ == "acomp" and c.lemma_ in ("passionate", "interested", "into") and is_speaker:
                prep = next((g for g in c.children if g.dep_ == "prep"), None)
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None) if prep is not None else None
                if pobj is not None:
                    book.attribute(speaker, "interests", _phrase(pobj), source_id)
    # "I joined the Harbor Striders", "I'm building Atlas", "we're calling it MedKG"
    dobj = next((c for c in children if c.dep_ == "dobj"), None)
    if lemma == "join" and dobj is not None:
        # "I joined Northwind as a data analyst": a job, not a membership
        role = next((g for c in children if c.dep_ == "prep" and c.lower_ == "as" for g in c.children
                     if g.dep_ == "pobj" and g.pos_ == "NOUN" and g.lemma_ not in ("member", "volunteer")), None)
        _relate(book, who, "works_at" if role is not None else "member_of", dobj, source_id)
    elif lemma in _OWN_VERBS and dobj is not None and not negated and dobj.lemma_.lower() in _MADE_NOUNS and \
            (called := _called(dobj)) is not None:
        # "I run a small bakery called Crumb & Co.", "we started a podcast called Low Tide"
        business = dobj.lemma_.lower() in _BUSINESS_NOUNS
        _relate(book, who, "works_at" if business else "works_on", called, source_id)
    elif lemma in _BUILD_VERBS and dobj is not None and dobj.ent_type_ not in ("PERSON", "GPE", "DATE", "NORP"):
        _relate(book, who, "works_on", dobj, source_id)
    elif lemma in ("call", "name") and dobj is not None and dobj.lower_ == "it":
        oprd = next((c for c in children if c.dep_ in ("oprd", "xcomp", "attr", "npadvmod") and c.pos_ == "PROPN"), None)
        if oprd is not None:
            _relate(book, who, "works_on", oprd, source_id)
    if lemma == "work" and any(c.lower_ == "there" and c.dep_ == "advmod" for c in children) and \
            (org_name := _org_before(book, verb)):
        book.relation(who, "works_at", book.entity(org_name, "organization", source_id).name, source_id)
    # "I'm doing an MSc at the University of X", "she's starting a PhD at Y"
    if dobj is not None and dobj.lemma_.lower() in _DEGREE_NOUNS:
        for prep in (g for g in [*dobj.children, *children] if g.dep_ == "prep" and g.lower_ in ("at", "with")):
            _relate(book, who, "studies_at", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
    # "I'm writing the navigation code for Otter", "I did the wiring on Otter": a known project
    for prep in [c for c in children if c.dep_ == "prep" and c.lower_ in ("for", "on")] + (
            [g for g in dobj.children if g.dep_ == "prep" and g.lower_ in ("for", "on")] if dobj is not None else []):
        pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN"), None)
        known = book.get(full_name(pobj)) if pobj is not None else None
        if known is not None and known.type in ("project", "product") and lemma not in _LIKE and not negated:
            book.relation(who, "works_on", known.name, source_id)
    phrasal = f"{lemma} up" if any(c.dep_ == "prt" and c.lower_ == "up" for c in children) else lemma
    for prep in (c for c in children if c.dep_ == "prep"):
        pair = (phrasal if (phrasal, prep.lower_) in _PLACE_VERBS else lemma, prep.lower_)
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        if pobj is None or pobj.pos_ == "PRON" or pobj.ent_type_ in ("DATE", "TIME"):
            continue  # "I volunteered at yesterday's fair" names no place
        if pair in _ATTRIBUTE_KEYS and is_speaker:
            book.attribute(speaker, _ATTRIBUTE_KEYS[pair], _phrase(pobj, 6), source_id)
            continue
        key = _PLACE_VERBS.get(pair)
        if key is None:
            continue
        if not _relate(book, who, key, pobj, source_id) and is_speaker and key != "works_on":
            book.attribute(speaker, key, _phrase(pobj, 6), source_id)  # "I live in a small town"


_WHILE_NOUNS = set(word_list("entities", "_WHILE_NOUNS"))  # not a week: a trip


def _for_a_while(verb) -> bool:
    """A perfect "be" with a duration: "has been in Leeds for years", "I've been at Acme for six months"."""
    # "Danny's been": the small parser reads the "'s" of "has" as a passive "is"
    return verb.tag_ == "VBN" and any(c.dep_ in ("aux", "auxpass") and (c.lemma_.lower() == "have" or c.lower_ in (
        "'s", "'ve", "'d")) for c in verb.children) and any(
        c.dep_ == "prep" and c.lower_ == "for" and any(g.lemma_.lower() in _WHILE_NOUNS for g in c.subtree)
        for c in verb.children)


def _still_there(book: ProfileBook, verb, who: Entity, source_id: str) -> None:
    """Being somewhere as a lasting state: "Mum's still up in Harrogate" (lives there), "she's still at
    Severnside Uni" (studies there), "Carys is at Drakeshead Marine Lab now" (works there). "still" (or a
    duration: "has been in Heavitree for years") says a state for both; "now" only for an organisation ("I'm in
    Lisbon now" may be a trip)."""
    kids = list(verb.children)
    adverbs = {c.lower_ for c in kids if c.dep_ == "advmod"}
    if _for_a_while(verb):
        adverbs.add("still")  # "Danny's been in Heavitree for about eight years"
    if not adverbs & {"still", "now"} or who.type != "person":
        return
    # "still up in Leeds": the place hangs on the particle-like adverb
    preps = [c for c in kids if c.dep_ == "prep"] + [g for c in kids if c.dep_ == "advmod" and c.lower_ in
                                                     _THERE_ADVERBS for g in c.children if g.dep_ == "prep"]
    for prep in preps:
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        name = _target_name(pobj)
        if name is None:
            continue
        known = book.get(name)
        if prep.lower_ == "in" and "still" in adverbs and (pobj.ent_type_ in ("GPE", "LOC") or (
                known is not None and known.type == "place")):
            _relate(book, who, "lives_in", pobj, source_id)
        elif prep.lower_ == "at":
            if name.lower().split()[-1] in _SCHOOL_HEADS:
                _relate(book, who, "studies_at", pobj, source_id)
            elif suffix_type(name) == "organization" or (known is not None and _named_org(known)):
                _relate(book, who, "works_at", pobj, source_id)


def _home_after(book: ProfileBook, tok, speaker: Entity, words: tuple[str, ...], source_id: str) -> None:
    """The speaker lives in what follows ``tok`` after one of ``words``, on the noun or on its verb ("a lease in
    Ballard", "bought a house in Harrogate": the parser hangs "in" on either)."""
    for prep in (c for c in [*tok.children, *tok.head.children] if c.dep_ == "prep" and c.lower_ in words
                 and c.i > tok.i):
        _relate(book, speaker, "lives_in", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)


def _is_school(target) -> bool:
    """"Kirkgate Uni", "Larkrise Primary": a place to study, by the name's head word."""
    return full_name(target).lower().split()[-1] in _SCHOOL_HEADS


def _said_of_the_past(tok) -> bool:
    """The clause ``tok`` is in says how things were: "My commute from Reading used to be awful", "... was"."""
    verb = tok.head if tok.dep_ in ("nsubj", "nsubjpass") else None
    return verb is not None and (verb.tag_ == "VBD" or any(t.lower_ == "used" for t in verb.children) or
                                 verb.head.lower_ == "used")


_OWN_VERBS = set(word_list("entities", "_OWN_VERBS"))
_BUSINESS_NOUNS = set(word_list("entities", "_BUSINESS_NOUNS"))

_MADE_NOUNS = _BUSINESS_NOUNS | PROJECT_NOUNS | PRODUCT_NOUNS | {"podcast", "blog", "channel", "newsletter", "show",
                                                               "zine", "label", "charity", "club", "brand"}


def _called(noun):
    """The name in "a bakery called Crumb & Co." / "a podcast named Low Tide", else None."""
    for acl in noun.children:
        if acl.dep_ == "acl" and acl.lemma_.lower() in ("call", "name"):
            return next((g for g in acl.children if g.dep_ in ("oprd", "attr", "dobj", "xcomp") and g.pos_ == "PROPN"),
                        None)
    return None


def _speaker_gets_home(tok) -> bool:
    """``tok`` (a home noun) is what the speaker bought, rents or owns, said as done or going on, not planned."""
    verb = tok.head
    if tok.dep_ != "dobj" or verb.lemma_.lower() not in _HOME_GETTING_VERBS or verb.dep_ == "xcomp":
        return False
    return is_first_person(subject_of(verb)) and not _hedged(verb) and not any(
        c.dep_ == "neg" or (c.dep_ == "aux" and c.lower_ in FUTURE_AUX) for c in verb.children)


def _job_patterns(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"at my job at Northwind", "my new position at Globex": works_at without a work verb."""
    for tok in doc:
        lemma = tok.lemma_.lower()
        if lemma not in _JOB_NOUNS and lemma not in _HOME_NOUNS and lemma not in _LEASE_NOUNS and \
                lemma not in _HOME_SIDE_NOUNS and lemma != "year" and \
                tok.lower_ not in ("here", "home") and \
                tok.pos_ != "PROPN":
            continue
        if tok.sent.text.rstrip().endswith("?"):
            continue
        mine = any(c.dep_ == "poss" and c.lower_ == "my" for c in tok.children)
        # "I got the job at Brightwater", "I handed in my notice at Pennine Mutual"
        taken = tok.dep_ == "dobj" and tok.head.lemma_.lower() in _TAKE_JOB_VERBS and is_first_person(
            subject_of(tok.head)) and not any(c.dep_ == "neg" for c in tok.head.children) and not _hedged(tok.head)
        if lemma in _JOB_NOUNS and (mine or taken):
            verb_preps = [c for c in tok.head.children if c.dep_ == "prep" and c.lower_ == "at" and c.i > tok.i] \
                if tok.dep_ == "dobj" else []
            for prep in [c for c in tok.children if c.dep_ == "prep" and c.lower_ in ("at", "with", "for")] + verb_preps:
                _relate(book, speaker, "works_at", next((g for g in prep.children if g.dep_ == "pobj"), None),
                        source_id)
        # "I signed a lease in Ballard": where the speaker lives now
        if lemma in _LEASE_NOUNS and tok.dep_ == "dobj" and is_first_person(subject_of(tok.head)) and not any(
                c.dep_ == "neg" for c in tok.head.children) and not _hedged(tok.head):
            _home_after(book, tok, speaker, ("in", "on"), source_id)
        # "I'm in my second year at Kirkgate Uni": a course or a job, by the place's name
        if lemma == "year" and any(c.dep_ == "amod" and c.lower_ in _ORDINALS for c in tok.children) and any(
                c.dep_ == "poss" and c.lower_ == "my" for c in tok.children) and \
                not tok.sent.text.rstrip().endswith("?"):
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "at"):
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                if pobj is not None and pobj.pos_ == "PROPN":
                    _relate(book, speaker, "studies_at" if _is_school(pobj) else "works_at", pobj, source_id)
        if lemma in _HOME_NOUNS and lemma != "move" and _speaker_gets_home(tok):
            _home_after(book, tok, speaker, ("in",), source_id)
        mine = any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children) or (
            not any(c.dep_ == "poss" for c in tok.children) and any(t.lower_ in ("me", "my", "i") for t in tok.sent))
        if lemma in _HOME_SIDE_NOUNS and mine and not _said_of_the_past(tok):
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == _HOME_SIDE_NOUNS[lemma]):
                _relate(book, speaker, "lives_in", next((g for g in prep.children if g.dep_ == "pobj"), None), source_id)
        # "our flat in Bristol", "Mum's house in Harrogate", "the move to Bristol"
        if lemma in _HOME_NOUNS:
            owner = _possessor(book, tok, speaker, None, source_id) if any(c.dep_ == "poss" for c in tok.children) \
                else None
            if owner is not None and owner.type == "person":
                for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ in (
                        ("to",) if lemma == "move" else ("in", "near"))):
                    pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ in ("GPE", "LOC", "")), None)
                    if pobj is not None:
                        _relate(book, owner, "lives_in", pobj, source_id)
        # "back home in Leeds" said of oneself; "here in York", "an interview here in Bristol" whoever it is about
        if tok.lower_ in ("here", "home") and tok.dep_ in ("advmod", "npadvmod", "dobj") and \
                not tok.sent.text.rstrip().endswith("?"):
            verb = tok.head
            if tok.lower_ == "here" or (is_first_person(subject_of(verb)) if verb.pos_ in ("VERB", "AUX") else False):
                # the parser hangs "in Bristol" on "here" or beside it, on the same head
                after = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
                for prep in {c for c in [*tok.children, after] if c is not None and c.dep_ == "prep" and
                             c.lower_ == "in"}:
                    pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
                    # NER often calls the town an organisation here ("here in Bristol")
                    if pobj is not None and (pobj.ent_type_ == "GPE" or (
                            tok.lower_ == "here" and pobj.ent_type_ in ("ORG", "PERSON", "LOC"))):
                        _relate(book, speaker, "lives_in", pobj, source_id)
        # "my friend Kenta in Osaka": a named person in a city
        if tok.pos_ == "PROPN" and (known := book.get(full_name(tok))) is not None and known.type == "person" and \
                known.name != speaker.name:
            for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "in"):
                pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ == "GPE"), None)
                if pobj is not None:
                    _relate(book, known, "lives_in", pobj, source_id)


def _person_named(book: ProfileBook, tok, source_id: str) -> Entity | None:
    """The person a noun phrase names: "Dana", "a designer called Wojtek", "a friend, Isla"."""
    name_tok = tok if tok.pos_ == "PROPN" else _name_of(tok)
    if name_tok is None:
        return None
    name = full_name(name_tok)
    if not looks_like_name(name) or name.lower() in NOT_NAMES or suffix_type(name):
        return None  # "a designer called Wojtek", not "I've worked with Python"
    known = book.get(name)
    if tok.pos_ == "PROPN" and name_tok.ent_type_ != "PERSON" and (known is None or known.type != "person"):
        return None  # "I work with Figma": a bare name is a person only when NER or the profile says so
    if known is not None and known.type != "person" and book.typed_by_context(known):
        return None
    said = _shorten(span_text(list(tok.doc[min(tok.i, name_tok.i):max(tok.i, name_tok.i) + 1])), 60)
    return book.entity(name, "person", source_id, tok.sent.text,
                       why=None if tok.pos_ == "PROPN" else f'a {tok.lemma_.lower()} ("{said}")')


def _asked_person(book: ProfileBook) -> str | None:
    """The person the other speaker's question just before this turn named ("Where was Jordan before?")."""
    if book.last_person_at != book.utterance_index - 1 or book.last_person in (None, *book.speakers):
        return None
    return book.last_person if _question_before(book) is not None else None


def _employer_misfit(book: ProfileBook, target) -> bool:
    """"I've been at Mum's since Friday", "three weeks in Lisbon": a place, a person or a date is no employer."""
    name = _target_name(target)
    known = book.get(name) if name else None
    # a facility NER knows ("Harwick Cider", "the Royal Infirmary") is somewhere one can work
    return name is None or target.ent_type_ in ("GPE", "LOC", "PERSON", "DATE") or (
        known is not None and known.type not in ("organization", "other") and not (
            target.ent_type_ == "FAC" and not book.typed_by_context(known)))


def _matched_relations(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Relations from the DependencyMatcher patterns of ``patterns.py``."""
    for label, t in relation_matches(doc):
        head = t["noun"] if label.startswith("member") else t.get("verb") or t.get("noun")
        if any(c.dep_ == "neg" for c in head.children) or _hedged(head):
            continue
        target = t["target"]
        if target.pos_ == "NOUN" and label != "colleague" and label != "friend_made":
            target = _name_of(target) or target  # "my membership at Northern Edge climbing wall"
        if label.startswith("member"):
            owner = _possessor(book, head, speaker, other, source_id)
            if owner is not None and owner.type == "person":
                _relate(book, owner, "member_of", target, source_id)
            continue
        if label == "tenure":
            # "Eleven years at Pellow & Garth this spring": only as the sentence's opening, with no subject of its own
            opening = t["count"].i - t["noun"].sent.start <= 1 and t["count"].i < t["noun"].i
            if opening and not _employer_misfit(book, target):
                # "Where was Jordan before?" - "Six years at the Rothay Hotel": the one asked about
                who = book.entity(asked, "person", source_id) if (asked := _asked_person(book)) else speaker
                _relate(book, who, "studies_at" if _is_school(target) else "works_at", target, source_id)
            continue
        who = _owner(book, t["subject"], speaker, other, source_id)
        if who is None or who.type != "person":
            continue
        if label == "job_in":
            if target.ent_type_ == "GPE":  # "I've accepted a job in Edinburgh": where one works, one lives
                _relate(book, who, "lives_in", target, source_id)
        elif label in ("employed_at", "job_taken"):
            if not _employer_misfit(book, target):
                _relate(book, who, "works_at", target, source_id)
        elif label in ("colleague", "friend_made"):
            person = _person_named(book, t["target"], source_id)
            if person is not None and person.name != who.name:
                book.relation(person, "colleague_of" if label == "colleague" else "friend_of", who.name, source_id)


def _subject_entity(book: ProfileBook, verb, speaker: Entity, other: str | None, source_id: str) -> Entity | None:
    subj = subject_of(verb)
    if subj is None:
        # "Lives out in Malton, workshop at the bottom of his garden": a dropped "he"/"she" (a third-person verb
        # opening its sentence) is the person just talked about
        if verb.tag_ == "VBZ" and verb.i == verb.sent.start and verb.lemma_.lower() in _DROPPED_SUBJECT_VERBS and \
                not verb.sent.text.rstrip().endswith("?") and (named := _person_before(book, verb)) is not None:
            return book.entity(named, "person", source_id)
        return None
    if is_first_person(subj):
        return speaker
    if subj.lower_ == "you":
        return None  # what the listener does is mostly asked or praised, not stated
    if subj.lower_ in ("who", "that") and verb.dep_ == "relcl":
        return _owner(book, verb.head, speaker, other, source_id)  # "my cousin Kenta, who lives in Osaka"
    if subj.lower_ in ("she", "he") and (named := _person_before(book, subj)) is not None:
        return book.entity(named, "person", source_id)  # "Tasha? She lives in Bristol now"
    return _owner(book, subj, speaker, other, source_id)


def extract_entities(batch: Batch, docs: list, answered: list | None = None) -> list[Entity]:
    """Profiles for the batch: one per speaker and per named thing, with attributes, relations and facts.

    The statements that question-answer pairs make (``answers.parsed_statements``, computed when not given)
    are read like an utterance of the answerer; what they yield cites the question and the answer."""
    book = ProfileBook(batch)
    ref = parse_datetime(batch.session_time) if batch.session_time else None
    pronouns = speaker_pronouns([u.text for u in batch.utterances], book.speakers)
    if answered is None:
        answered = parsed_statements(batch.utterances, docs)
    by_answer: dict[int, list[tuple[Answered, object]]] = {}
    for a, a_doc in answered:
        by_answer.setdefault(a.index, []).append((a, a_doc))
    for k, (utt, doc) in enumerate(zip(batch.utterances, docs)):
        book.utterance_index = k
        speaker = book.entity(utt.speaker, "person", utt.id)
        others = [s for s in book.speakers if s != utt.speaker]
        other = others[0] if len(others) == 1 else None
        in_entity: set[int] = set()
        for ent in doc.ents:
            in_entity.update(range(ent.start, ent.end))
            if ent.label_ not in NER_TYPES:
                continue
            text = ent.text
            if ent[0].tag_ == "MD" and len(ent) > 1:  # "Will Ruth come?"
                text = ent[1:].text
            parts = split_run_on(clean_name(text))
            for j, name in enumerate(parts):
                name = clean_name(name)
                if looks_like_name(name) and name.lower() not in NOT_NAMES:
                    # "St Brendan's", "St Mary's": a saint's name with the possessive is a hospital, school or church
                    house = j == 0 and SAINT_HOUSE.fullmatch(text.strip()) is not None
                    book.entity(name, "organization" if house else _part_type(text, name, j, NER_TYPES[ent.label_]),
                                utt.id, ent.sent.text, why=f'an institution ("{text.strip()}")' if house else None)
        # Proper nouns the NER missed (projects, pets, nicknames); finalize keeps those that recur.
        run: list = []
        for tok in [*doc, None]:
            if tok is not None and tok.pos_ == "PROPN" and tok.i not in in_entity and tok.text[:1].isupper():
                run.append(tok)
                continue
            if run:
                name = clean_name(span_text(run))
                if looks_like_name(name) and name.lower() not in NOT_NAMES:
                    book.entity(name, "other", utt.id, run[0].sent.text)
                run = []
        _place_types(book, doc, utt.id)
        _person_types(book, doc, utt.id)
        if k > 0 and batch.utterances[k - 1].speaker != utt.speaker:
            _named_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            _kin_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            _kin_echo(book, doc, batch.utterances[k - 1], docs[k - 1], utt.id)
            _job_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
            _project_in_reply(book, doc, batch.utterances[k - 1], docs[k - 1], speaker, utt.id)
        # after the names of this turn: "Does your brother live in Exeter?" - "Yes, Danny's ..." names the brother
        for a, a_doc in by_answer.get(k, []):
            _read_answer(book, a, a_doc, speaker, other, ref, pronouns)
        _read_relations(book, doc, speaker, other, utt.id)
        last_named = -1
        for t in doc:  # a name already known as a person ("my sister Ana"), whatever NER or the tagger made of it
            if (t.pos_ == "PROPN" or t.pos_ == "NOUN" and t.text[:1].isupper()) and (
                    known := book.get(full_name(t))) is not None and known.type == "person" \
                    and known.name not in book.speakers:
                book.last_person, book.last_person_at, last_named = known.name, book.utterance_index, t.i
        for ent in doc.ents:
            name = clean_name(ent.text)
            if not looks_like_name(name) or name.lower() in NOT_NAMES:
                continue
            known = book.get(name)
            if _personish(book, ent) and book.canonical(name)[0] not in book.speakers and ent.start >= last_named:
                book.last_person = book.canonical(name)[0]
                book.last_person_at = book.utterance_index
            elif known is not None and _named_org(known):
                book.last_org = known.name
                book.last_org_at = book.utterance_index
        _read_facts(book, doc, utt.text, speaker, other, utt.id, ref, pronouns)
    return book.entities()


_ARRIVE_VERBS = set(word_list("entities", "_ARRIVE_VERBS"))
_ARRIVE_PARTICLES = set(word_list("entities", "_ARRIVE_PARTICLES"))


def _visitor_homes(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Where someone comes over from is where they live ("my mum's flying in from Izmir", "Did Maren make it over
    from Cardiff?"), and so is where they have been for how long ("How long has she been in Lisbon now?"): asked
    or said, the place is taken as known. Not the speaker's own travel nor a way back ("I just got back from Paris")."""
    for prep in doc:
        if prep.dep_ != "prep" or prep.head.pos_ not in ("VERB", "AUX"):
            continue
        verb, kids = prep.head, list(prep.head.children)
        if prep.lower_ == "from":
            ok = verb.lemma_.lower() in _ARRIVE_VERBS and not any(c.lower_ == "back" for c in kids) and any(
                c.dep_ in ("prt", "advmod") and c.lower_ in _ARRIVE_PARTICLES for c in kids)
        else:
            ok = prep.lower_ == "in" and verb.lemma_ == "be" and any(c.lemma_ == "have" for c in kids) and any(
                c.lower_ == "long" and any(g.lower_ == "how" for g in c.children) for c in kids)
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        subj = subject_of(verb)
        if not ok or pobj is None or pobj.ent_type_ in ("ORG", "FAC", "DATE", "TIME") or subj is None \
                or is_first_person(subj):
            continue
        if subj.lower_ == "you":
            who = book.entity(other, "person", source_id) if other else None
        elif subj.lower_ in ("she", "he"):
            who = book.entity(named, "person", source_id) if (named := _person_before(book, subj)) else None
        else:
            who = _owner(book, subj, speaker, other, source_id)
        if who is not None and who.type == "person":
            _relate(book, who, "lives_in", pobj, source_id)


_CLUB_SESSIONS = set(word_list("entities", "_CLUB_SESSIONS"))


def _club_sessions(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """A named group's training in the speaker's own plans is the speaker's group: "I'll ring him after Harbourside
    Hornets training", "I've got Hornets practice tonight"."""
    for noun in doc:
        if noun.lemma_.lower() not in _CLUB_SESSIONS or noun.pos_ != "NOUN" or noun.sent.text.rstrip().endswith("?"):
            continue
        names = [c for c in noun.children if c.dep_ == "compound" and c.pos_ == "PROPN" and c.text[:1].isupper()]
        if not names or not any(t.dep_ == "nsubj" and is_first_person(t) for t in noun.sent):
            continue
        name = clean_name(full_name(names[-1]))
        known = book.get(name)
        # NER's "person" gives way ("Harbourside Hornets" is PERSON to it); a type set by context does not
        if looks_like_name(name) and name.lower() not in NOT_NAMES and (known is None or known.type in (
                "organization", "other") or known.type == "person" and not book.typed_by_context(known)) \
                and book.canonical(name)[0] not in book.speakers:
            org = book.entity(name, "organization", source_id, noun.sent.text,
                              why=f'group of {speaker.name} ("{_shorten(noun.sent.text, 60)}")')
            book.relation(speaker, "member_of", org.name, source_id)


def _staying_with(book: ProfileBook, doc, source_id: str) -> None:
    """Staying with someone somewhere says where they live: "Two (weeks) with Elif in Gloucester"."""
    for prep in doc:
        if prep.lower_ != "with" or prep.dep_ != "prep":
            continue
        person = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN" and g.text[:1].isupper()),
                      None)
        where = next((g for g in person.children if g.dep_ == "prep" and g.lower_ == "in"), None) if person else None
        place = next((g for g in where.children if g.dep_ == "pobj" and g.ent_type_ in ("GPE", "LOC")), None) \
            if where is not None else None
        if place is None:
            continue
        name = full_name(person)
        known = book.get(name)
        # NER's guess for a first name is often a place or a company: then it has to be known as a person already
        if not looks_like_name(name) or name.lower() in NOT_NAMES or book.canonical(name)[0] in book.speakers or (
                known is not None and known.type not in ("person", "other")) or (
                person.ent_type_ not in ("PERSON", "") and (known is None or known.type != "person")):
            continue
        _relate(book, book.entity(name, "person", source_id, person.sent.text), "lives_in", place, source_id)


def _project_in_reply(book: ProfileBook, doc, asked, asked_doc, speaker: Entity, source_id: str) -> None:
    """"How's Kittiwake coming along?" - "Slowly! I sanded the hull on Sunday.": a named thing coming along is
    the replier's project (not a person, a place or an organisation)."""
    for verb in asked_doc:
        # "coming along", not "going": "How's Lisbon going?" asks about a move
        if verb.lemma_ != "come" or not verb.sent.text.rstrip().endswith("?") or not any(
                c.lower_ == "how" for c in verb.children) or not any(c.lower_ == "along" for c in verb.children):
            continue
        subj = subject_of(verb)
        if subj is None or subj.pos_ != "PROPN" or not subj.text[:1].isupper() or subj.ent_type_ in (
                "PERSON", "GPE", "LOC", "NORP", "DATE", "EVENT", "FAC"):
            continue
        name = full_name(subj)
        known = book.get(name)
        if not looks_like_name(name) or name.lower() in NOT_NAMES or (known is not None and known.type in (
                "person", "place", "organization", "pet", "event")):
            continue
        if not any(t.dep_ == "nsubj" and is_first_person(t) for t in doc):
            continue
        said = f'"{_shorten(verb.sent.text, 40)}" - "{_shorten(doc.text, 40)}"'
        project = book.entity(name, "project", source_id, verb.sent.text, why=f"a project of {speaker.name} ({said})")
        book.relation(speaker, "works_on", project.name, asked.id)
        book.relation(speaker, "works_on", project.name, source_id)


def _workplace_of(tok):
    """The workplace noun said with a name: "Priya from your work", "Rachel Kim from our legal team reviewed
    it" (the parser hangs "from" on the verb right after the name), "Marco Silva, a data engineer on my team"."""
    preps = [c for c in tok.children if c.dep_ == "prep" and c.lower_ == "from"]
    if tok.dep_ in ("nsubj", "nsubjpass"):
        preps += [c for c in tok.head.children if c.dep_ == "prep" and c.lower_ == "from" and c.i == tok.i + 1]
    preps += [p for a in tok.children if a.dep_ == "appos" and a.pos_ == "NOUN"
              for p in a.children if p.dep_ == "prep" and p.lower_ in ("on", "in", "from")]
    return next((g for p in preps for g in p.children if g.dep_ == "pobj" and g.lemma_ in _WORKPLACE_NOUNS), None)


def _workmates(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """"Priya from your work?" (unless the answer says no), "Tom from my office says hi", "Rachel Kim from our
    legal team", "Marco Silva, a data engineer on my team": a colleague."""
    for tok in doc:
        if tok.pos_ != "PROPN" or tok.ent_type_ not in ("PERSON", ""):
            continue
        place = _workplace_of(tok)
        if place is None:
            continue
        reply = _confirmed(book) if tok.sent.text.rstrip().endswith("?") else None
        if tok.sent.text.rstrip().endswith("?") and reply is None:
            continue
        owner = _possessor(book, place, speaker, other, source_id)
        name = full_name(tok)
        known = book.get(name)
        if owner is None or owner.type != "person" or not looks_like_name(name) or name.lower() in NOT_NAMES or (
                known is not None and known.type != "person" and book.typed_by_context(known)):
            continue
        mate = book.entity(name, "person", source_id, tok.sent.text,
                           why=f'a colleague of {owner.name} ("{_shorten(tok.sent.text, 60)}")')
        if mate.name != owner.name:
            book.relation(mate, "colleague_of", owner.name, source_id)
            if reply is not None:
                book.relation(mate, "colleague_of", owner.name, reply)


def _visit_me_in(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"You have to come visit me in Seattle", "Come and see us in Leeds": where the speaker lives."""
    for tok in doc:
        if tok.lemma_.lower() not in ("visit", "see") or any(c.dep_ == "neg" for c in tok.children) or \
                not any(c.dep_ == "dobj" and c.lower_ in ("me", "us") for c in tok.children):
            continue
        for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ == "in"):
            # a town NER takes for a person ("Braga") still counts; "in June" does not
            pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.ent_type_ not in ("DATE", "TIME")), None)
            if pobj is not None:
                _relate(book, speaker, "lives_in", pobj, source_id)


_DURATION_WORDS = set(word_list("entities", "_DURATION_WORDS"))  # not days or weeks: "Been in Paris a week" is a trip


def _been_there(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Been at Lidl six months now" (the speaker's work), "Been in Cardiff three years" (home): a sentence
    that opens with "Been", a place or an organisation and how long; "Leeds is home now": home."""
    for sent in doc.sents:
        if sent.text.rstrip().endswith("?"):
            continue
        first = sent[0]
        if first.lower_ == "been" and first.dep_ == "ROOT" and any(
                t.lemma_.lower() in _DURATION_WORDS for t in sent if t.i > first.i):
            for prep in (c for c in first.children if c.dep_ == "prep" and c.lower_ in ("at", "in")):
                # NER reads "Lidl six months" as one date; the name is still a name
                pobj = next((g for g in prep.children if g.dep_ == "pobj" and g.pos_ == "PROPN"
                             and g.lower_ not in TIME_WORDS), None)
                if pobj is None:
                    continue
                known = book.get(full_name(pobj))
                if prep.lower_ == "in" and pobj.ent_type_ in ("GPE", "LOC", "DATE", ""):
                    _relate(book, speaker, "lives_in", pobj, source_id)
                elif prep.lower_ == "at" and (known is None or known.type in ("organization", "other")):
                    _relate(book, speaker, "studies_at" if _is_school(pobj) else "works_at", pobj, source_id)
        root = sent.root
        home = next((c for c in root.children if c.dep_ in ("attr", "advmod") and c.lower_ == "home"), None)
        subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
        if root.lemma_ == "be" and home is not None and subj is not None and subj.pos_ == "PROPN" and \
                subj.ent_type_ in ("GPE", "LOC", "") and not any(c.dep_ == "neg" for c in root.children) and \
                not any(c.dep_ == "poss" for c in home.children):
            _relate(book, speaker, "lives_in", subj, source_id)


_JOINING = set(word_list("entities", "_JOINING"))


def _called_it(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    """"Already signed up! It's called Salmon Bay Clay": what the speaker joined, started or runs, named in
    the next sentence ("I started a podcast last year. It's called Low Tide")."""
    sents = list(doc.sents)
    for before, sent in zip(sents, sents[1:]):
        root = sent.root
        name = next((c for c in root.children if c.dep_ in ("oprd", "attr", "xcomp") and c.pos_ == "PROPN"), None)
        if root.lemma_.lower() not in ("call", "name") or name is None or not any(
                c.dep_ in ("nsubjpass", "nsubj") and c.lower_ in ("it", "this", "she", "he") for c in root.children):
            continue
        verb = before.root
        if verb.pos_ != "VERB" or any(c.dep_ == "neg" for c in verb.children) or _hedged(verb) or \
                before.text.rstrip().endswith("?"):
            continue
        subj = subject_of(verb)
        if not (is_first_person(subj) or (subj is None and verb.i == before.start + (before[0].dep_ == "advmod"))):
            continue  # the speaker's own, said or with the "I" dropped ("Already signed up!")
        lemma = verb.lemma_.lower()
        joined = lemma in _JOINING or (lemma == "sign" and any(c.dep_ == "prt" and c.lower_ == "up"
                                                               for c in verb.children))
        made = next((c for c in verb.children if c.dep_ == "dobj" and c.lemma_.lower() in _MADE_NOUNS), None)
        if joined:
            _relate(book, speaker, "member_of", name, source_id)
        elif made is not None and lemma in _OWN_VERBS:
            _relate(book, speaker, "works_at" if made.lemma_.lower() in _BUSINESS_NOUNS else "works_on", name,
                    source_id)


def _read_relations(book: ProfileBook, doc, speaker: Entity, other: str | None, source_id: str) -> None:
    """Relations and attributes from every pattern of a parsed utterance."""
    _been_there(book, doc, speaker, source_id)
    _called_it(book, doc, speaker, source_id)
    _visitor_homes(book, doc, speaker, other, source_id)
    _visit_me_in(book, doc, speaker, source_id)
    _workmates(book, doc, speaker, other, source_id)
    _club_sessions(book, doc, speaker, source_id)
    _staying_with(book, doc, source_id)
    _kin_names(book, doc, speaker, source_id)
    _addressed_kin(book, doc, speaker, other, source_id)
    _noun_patterns(book, doc, speaker, other, source_id)
    _job_patterns(book, doc, speaker, source_id)
    _matched_relations(book, doc, speaker, other, source_id)
    for tok in doc:
        if tok.pos_ not in ("VERB", "AUX") or tok.dep_ in ("aux", "auxpass") or \
                (tok.dep_ == "xcomp" and tok.lemma_.lower() not in _BUILD_VERBS | {"work"}) or \
                (tok.sent.text.rstrip().endswith("?") and not (tok.dep_ == "relcl" and (
                    tok.head.pos_ == "PROPN" or _known_person(book, tok.head)))):
            # "I started working on Atlas": the xcomp carries the relation; a question states nothing, but
            # its relative clause on a name takes its content as known ("Carys who moved to Plymouth?"; not
            # "What's something you like doing?")
            continue
        who = _subject_entity(book, tok, speaker, other, source_id)
        subj = subject_of(tok)
        if who is None and other and subj is not None and subj.lower_ == "you" and (
                tok.lemma_.lower() in _LIKE or tok.lemma_.lower() == "stand"):
            who = book.entity(other, "person", source_id)  # "you hate flying": a statement about the listener
        if who is not None and who.type in ("person", "other"):
            _verb_patterns(book, tok, who, speaker, source_id)


def _read_facts(book: ProfileBook, doc, text: str, speaker: Entity, other: str | None, source_id: str,
                ref, pronouns: dict[str, str]) -> None:
    spans = find_time_expressions(text, ref, tense_reader(doc)) if ref else []
    people = {e.name for e in book.entities() if e.type == "person"}
    for fact in facts_of_doc(doc, speaker.name, other, source_id, spans, pronouns.get(speaker.name, "they"), people):
        holder = speaker
        if fact.about:
            if not looks_like_name(fact.about) or fact.about.lower() in NOT_NAMES:
                continue
            holder = book.entity(fact.about, "other", source_id, fact.text)
            if holder.type not in ("person", "pet", "other"):
                continue
        book.attribute(holder, FACT_KEY, fact.text, source_id)


def _read_answer(book: ProfileBook, answered: Answered, doc, speaker: Entity, other: str | None, ref,
                 pronouns: dict[str, str]) -> None:
    """A question-answer pair's statement, read as the answerer's utterance: what it yields cites both turns
    (and counts no new mention: both turns were counted as said)."""
    before = {id(x) for e in book.entities() for x in (*e.relations, *e.attributes)
              if answered.answer_id in x.source_ids}
    book.counting = False
    try:
        _place_types(book, doc, answered.answer_id)
        _read_relations(book, doc, speaker, other, answered.answer_id)
        _read_facts(book, doc, answered.text, speaker, other, answered.answer_id, ref, pronouns)
    finally:
        book.counting = True
    for e in book.entities():
        for x in (*e.relations, *e.attributes):
            if id(x) not in before and answered.answer_id in x.source_ids and answered.question_id not in x.source_ids:
                x.source_ids.insert(x.source_ids.index(answered.answer_id), answered.question_id)
