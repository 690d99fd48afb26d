"""Entity profiles from one batch: speakers, named entities, recurring proper nouns, and the
attributes and relations people state about themselves ("I love painting", "my sister Anna").

Values are spans of the speaker's own words, so verification can find them in the cited utterance.
"""

from __future__ import annotations

import re

from ...anchors import Attribute, Entity, Relation
from ..base import Batch
from .grammar import is_first_person, span_text, subject_of

NER_TYPES = {
    "PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place",
    "PRODUCT": "product", "WORK_OF_ART": "artifact", "EVENT": "other", "NORP": "other",
}
KIN = {
    "mom", "mother", "dad", "father", "parent", "sister", "brother", "sibling", "husband", "wife", "partner",
    "boyfriend", "girlfriend", "fiance", "fiancee", "fiancé", "son", "daughter", "kid", "child", "baby",
    "grandma", "grandmother", "grandpa", "grandfather", "grandparent", "aunt", "uncle", "cousin", "niece",
    "nephew", "friend", "roommate", "boss", "coworker", "colleague", "mentor", "neighbor", "neighbour",
}
FAMILY = KIN - {"friend", "roommate", "boss", "coworker", "colleague", "mentor", "neighbor", "neighbour"}
PETS = {"dog", "cat", "puppy", "pup", "kitten", "kitty", "pet", "bird", "parrot", "hamster", "rabbit", "bunny",
        "horse", "fish", "turtle", "snake", "lizard", "pony", "guinea"}
# Capitalised words of chat that are not names.
NOT_NAMES = {
    "hey", "hi", "hello", "wow", "thanks", "thank", "omg", "lol", "haha", "yeah", "yes", "no", "oh", "ok", "okay",
    "congrats", "congratulations", "awesome", "great", "cool", "nice", "sure", "bye", "mom", "dad", "god", "gosh",
    "ah", "aww", "aw", "hmm", "um", "btw", "tbh", "i", "im", "me", "you", "we", "they", "good", "love", "xoxo",
    "dear", "sweet", "amazing", "yay", "hooray", "woah", "whoa", "ugh", "yep", "nope", "cheers", "take", "sounds",
    "glad", "wanna", "gonna", "nah", "agreed", "bye", "welcome", "sorry", "please", "ya", "yup", "anyway", "fyi",
    "woohoo", "woo", "yikes", "ooh", "ahh", "phew", "tons", "lots", "kudos", "bravo", "whew", "geez", "damn",
    # titles: "Dr." before a name is part of how the person is called, never an entity of its own
    "dr", "mr", "mrs", "ms", "mx", "prof", "sir", "madam",
}
# "I want to tell you ..." is conversation, not a wish worth a profile field.
_TALK_VERBS = {"tell", "say", "ask", "share", "thank", "know", "hear", "talk", "let", "check", "chat", "catch",
               "mention", "remind", "show", "congratulate", "hug", "see", "send", "update", "give", "hang"}
TIME_WORDS = {
    "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "last", "next", "today", "tonight", "yesterday", "tomorrow",
    "weekend", "christmas", "easter", "thanksgiving", "halloween", "summer", "winter", "spring", "fall", "autumn",
}
_LIKE = {"love": "likes", "like": "likes", "enjoy": "likes", "adore": "likes", "hate": "dislikes",
         "dislike": "dislikes", "detest": "dislikes"}
_WISH = {"plan": "plans", "intend": "plans", "aim": "plans", "decide": "plans", "want": "wants", "hope": "wants",
         "wish": "wants"}
_PLACE_VERBS = {("live", "in"): "lives_in", ("move", "to"): "moved_to", ("move", "from"): "moved_from",
                ("work", "at"): "works_at", ("work", "for"): "works_at", ("work", "as"): "occupation",
                ("work", "on"): "working_on", ("volunteer", "at"): "volunteers_at",
                ("volunteer", "with"): "volunteers_at", ("study", "at"): "studies_at", ("major", "in"): "studies",
                ("be", "from"): "from", ("grow", "in"): "grew_up_in", ("go", "to"): None}
_RELATION_KEYS = {"lives_in", "moved_to", "moved_from", "works_at", "volunteers_at", "studies_at", "from",
                  "grew_up_in"}
_VAGUE_OBJECTS = {"it", "that", "this", "them", "those", "these", "you", "one", "all", "everything", "something",
                  "so", "lot", "much", "idea", "way", "sound"}
_NOT_IDENTITY = {"bit", "lot", "little", "kind", "sort", "fan", "thing", "one", "way", "part", "mess", "wreck"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'.&-]*")


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


def clean_name(text: str) -> str:
    text = re.sub(r"^(the|a|an|my|our|your)\s+", "", text.strip(), flags=re.I)
    text = re.sub(r"('s|’s|')$", "", text)
    text = text.strip(" .,!?;:\"'()[]-")
    # "Bye Caroline", "Thanks Mel": a greeting glued to a name by the tagger.
    words = text.split()
    while len(words) > 1 and words[0].lower().strip(",!.") in NOT_NAMES:
        words.pop(0)
    return " ".join(words)


def _looks_like_name(name: str) -> bool:
    if len(name) < 2 or len(name) > 60 or not name[:1].isupper() and not name[:1].isdigit():
        return False
    if any(c in name for c in ",;:!?\"()[]") or name.endswith("-"):
        return False
    words = name.lower().split()
    if all(w in NOT_NAMES or w in TIME_WORDS for w in words):
        return False
    return not (words[0] in TIME_WORDS or words[-1] in TIME_WORDS)


def _phrase(token, max_tokens: int = 8, drop_to: bool = True) -> str:
    """The token's subtree without relative clauses, as written, at most ``max_tokens`` words."""
    skip: set[int] = set()
    for child in token.children:
        if child.dep_ in ("relcl", "advcl", "punct", "cc", "conj", "parataxis") and child.i > token.i:
            skip.update(t.i for t in child.subtree)
    # Stop at the first punctuation after the head: the value stays one contiguous run of words.
    stop = next((t.i for t in token.subtree if t.is_punct and t.i > token.i), None)
    tokens = [t for t in token.subtree if t.i not in skip and (stop is None or t.i < stop)]
    while tokens and tokens[-1].lower_ in ("too", "also", "either"):
        tokens.pop()
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
        self._when = batch.session_time or batch.session_id

    def canonical(self, name: str) -> tuple[str, str | None]:
        return canonical_name(name, self.speakers)

    def entity(self, name: str, type_: str, source_id: str | None, context: str = "") -> Entity:
        canonical, alias = self.canonical(name)
        if canonical in self.speakers:
            type_ = "person"
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
        elif (ent.type == "other" and type_ != "other") or (type_ == "pet" and ent.type == "person") or (
                type_ == "organization" and ent.type == "product"):
            ent.type = type_  # a naming pattern ("my dog Max") beats the tagger's guess
        if alias and alias not in ent.aliases:
            ent.aliases.append(alias)
        if source_id:
            ent.mentions += 1
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


def canonical_name(name: str, speakers: list[str]) -> tuple[str, str | None]:
    """(canonical name, alias or None): "Mel" becomes Melanie when Melanie is a speaker."""
    low = name.lower()
    for speaker in speakers:
        first = speaker.split()[0].lower()
        if low == speaker.lower():
            return speaker, None
        if low == first or (len(low) >= 3 and first.startswith(low)):
            return speaker, name
    return name, None


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _name_of(token):
    """The proper name attached to a noun: "my sister Anna", "a dog named Max", "my friend, Jo"."""
    for child in token.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            return child
        if child.dep_ == "acl" and child.lemma_ in ("name", "call"):
            for grand in child.children:
                if grand.pos_ == "PROPN" and grand.dep_ in ("oprd", "attr", "dobj", "xcomp", "npadvmod"):
                    return grand
    if token.dep_ == "compound" and token.head.pos_ == "PROPN":
        return token.head
    nxt = token.nbor(1) if token.i + 1 < len(token.doc) else None
    if nxt is not None and nxt.pos_ == "PROPN" and nxt.ent_type_ in ("PERSON", "") and nxt.text[:1].isupper():
        return nxt
    return None


def _full_name(token) -> str:
    """A name token with its compound parts ("Mary Ann")."""
    parts = [t for t in token.subtree if t.pos_ == "PROPN" and abs(t.i - token.i) <= 2]
    return clean_name(span_text(sorted(parts, key=lambda t: t.i))) if parts else token.text


def _possessive_patterns(book: ProfileBook, doc, speaker: Entity, source_id: str) -> None:
    for tok in doc:
        lemma = tok.lemma_.lower()
        if lemma not in KIN and lemma not in PETS:
            continue
        mine = any(c.dep_ == "poss" and c.lower_ in ("my", "our") for c in tok.children)
        owner = speaker if mine else None
        if owner is None and tok.dep_ == "dobj" and tok.head.lemma_ in ("have", "adopt", "get", "own", "rescue"):
            owner = _owner(book, subject_of(tok.head), speaker, source_id)
        if owner is None:
            continue
        name_tok = _name_of(tok)
        name = _full_name(name_tok) if name_tok is not None else ""
        if name and _looks_like_name(name):
            is_pet = lemma in PETS
            if not is_pet and owner is not speaker:
                continue  # "her friend Jo": whose friend is too uncertain
            target = book.entity(name, "pet" if is_pet else "person", source_id, tok.sent.text)
            predicate = "has_pet" if is_pet else lemma
            book.relation(owner, predicate, target.name, source_id)
            book.relation(target, "pet_of" if is_pet else f"{lemma}_of", owner.name, source_id)
            if is_pet:
                lo, hi = min(tok.i, name_tok.i), max(tok.i, name_tok.i)
                book.attribute(owner, "pet", span_text(list(doc[lo:hi + 1])), source_id)
        elif owner is not speaker:
            continue
        elif lemma in PETS:
            book.attribute(speaker, "pet", tok.text, source_id)
        elif lemma in FAMILY:
            book.attribute(speaker, "family", tok.text, source_id)


def _owner(book: ProfileBook, subj, speaker: Entity, source_id: str) -> Entity | None:
    """Who "adopted a dog named Max": the speaker (I/we), a named person, or "my sister Anna"."""
    if subj is None:
        return None
    if is_first_person(subj):
        return speaker
    if subj.pos_ == "PROPN" and subj.ent_type_ in ("PERSON", ""):
        return book.entity(_full_name(subj), "person", source_id, subj.sent.text)
    name_tok = _name_of(subj) if subj.lemma_.lower() in KIN else None
    if name_tok is not None:
        return book.entity(_full_name(name_tok), "person", source_id, subj.sent.text)
    return None


def _verb_patterns(book: ProfileBook, verb, speaker: Entity, source_id: str) -> None:
    lemma = verb.lemma_.lower()
    children = list(verb.children)
    negated = any(c.dep_ == "neg" for c in children)
    conditional = any(c.lower_ in ("would", "'d") for c in children)
    if lemma in _LIKE and not conditional:
        obj = next((c for c in children if c.dep_ in ("dobj", "xcomp", "ccomp")), None)
        if obj is not None and obj.lower_ not in _VAGUE_OBJECTS and obj.pos_ != "PRON":
            key = _LIKE[lemma]
            if negated:
                key = "dislikes" if key == "likes" else "likes"
            book.attribute(speaker, key, _phrase(obj), source_id)
        return
    if (lemma in _WISH or (lemma in ("love", "like") and conditional)) and not negated:
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ in ("VERB", "AUX")), None)
        if obj is not None and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, _WISH.get(lemma, "wants"), _phrase(obj, 10), source_id)
        return
    if lemma == "go" and verb.tag_ == "VBG" and any(c.dep_ == "aux" and c.lemma_ == "be" for c in children):
        obj = next((c for c in children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
        if obj is not None and not negated and obj.lemma_ not in _TALK_VERBS:
            book.attribute(speaker, "plans", _phrase(obj, 10), source_id)
        return
    if lemma in ("study", "learn", "teach", "play") and not negated:
        obj = next((c for c in children if c.dep_ == "dobj"), None)
        if obj is not None and obj.pos_ != "PRON" and obj.lower_ not in _VAGUE_OBJECTS:
            key = {"study": "studies", "learn": "learning", "teach": "teaches", "play": "plays"}[lemma]
            book.attribute(speaker, key, _phrase(obj, 6), source_id)
    if lemma == "be" and not negated:
        for c in children:
            if c.dep_ == "attr" and c.pos_ == "NOUN":
                of = next((g for g in c.children if g.dep_ == "prep" and g.lower_ == "of"), None)
                if c.lemma_ == "fan" and of is not None:
                    pobj = next((g for g in of.children if g.dep_ == "pobj"), None)
                    if pobj is not None:
                        book.attribute(speaker, "likes", _phrase(pobj), source_id)
                elif c.lemma_ not in _NOT_IDENTITY and any(
                        g.dep_ == "det" and g.lower_ in ("a", "an") for g in c.children):
                    book.attribute(speaker, "is", _phrase(c, 6), source_id)
            if c.dep_ == "acomp" and c.lemma_ in ("passionate", "interested", "into"):
                prep = next((g for g in c.children if g.dep_ == "prep"), None)
                pobj = next((g for g in prep.children if g.dep_ == "pobj"), None) if prep is not None else None
                if pobj is not None:
                    book.attribute(speaker, "interests", _phrase(pobj), source_id)
    for prep in (c for c in children if c.dep_ == "prep"):
        key = _PLACE_VERBS.get((lemma, prep.lower_))
        if key is None or negated:
            continue
        pobj = next((g for g in prep.children if g.dep_ == "pobj"), None)
        if pobj is None or pobj.pos_ == "PRON" or pobj.ent_type_ in ("DATE", "TIME"):
            continue  # "I volunteered at yesterday's fair" names no place
        value = _phrase(pobj, 6)
        book.attribute(speaker, key, value, source_id)
        if key in _RELATION_KEYS and pobj.pos_ == "PROPN":
            name = _full_name(pobj)
            ent_type = "organization" if key in ("works_at", "volunteers_at", "studies_at") else "place"
            if _looks_like_name(name):
                target = book.entity(name, ent_type, source_id, pobj.sent.text)
                book.relation(speaker, key, target.name, source_id)


def extract_entities(batch: Batch, docs: list) -> list[Entity]:
    """Profiles for the batch: one per speaker and per named thing, with attributes and relations."""
    book = ProfileBook(batch)
    for utt, doc in zip(batch.utterances, docs):
        speaker = book.entity(utt.speaker, "person", utt.id)
        in_entity: set[int] = set()
        for ent in doc.ents:
            in_entity.update(range(ent.start, ent.end))
            if ent.label_ not in NER_TYPES:
                continue
            name = clean_name(ent.text)
            if _looks_like_name(name):
                book.entity(name, NER_TYPES[ent.label_], utt.id, ent.sent.text)
        # Proper nouns the NER missed (projects, pets, nicknames); finalize keeps those that recur.
        run: list = []
        for tok in [*doc, None]:
            if tok is not None and tok.pos_ == "PROPN" and tok.i not in in_entity and tok.text[:1].isupper():
                run.append(tok)
                continue
            if run:
                name = clean_name(span_text(run))
                if _looks_like_name(name) and name.lower() not in NOT_NAMES:
                    book.entity(name, "other", utt.id, run[0].sent.text)
                run = []
        _possessive_patterns(book, doc, speaker, utt.id)
        for tok in doc:
            if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in ("aux", "auxpass") and is_first_person(subject_of(tok)):
                _verb_patterns(book, tok, speaker, utt.id)
    return book.entities()
