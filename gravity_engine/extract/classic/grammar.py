"""Dependency-parse helpers shared by the entity and event patterns: subjects, clauses, rewording.

Everything here keeps the speaker's own words; the only change is the person ("I went" said by
Caroline becomes "Caroline went"), so an extracted field can still be checked against its source.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexicon import KIN, PERSON_NOUNS
from .wordlists import word_list

FIRST_PERSON = set(word_list("grammar", "FIRST_PERSON"))
FUTURE_AUX = set(word_list("grammar", "FUTURE_AUX"))  # auxiliaries of a clause said ahead
_SUBJECT_DEPS = set(word_list("grammar", "_SUBJECT_DEPS"))
_LEADING_FILLERS = set(word_list("grammar", "_LEADING_FILLERS"))
_THIRD_PERSON_IRREGULAR = {"am": "is", "'m": "is", "are": "is", "'re": "is", "have": "has", "'ve": "has",
                           "do": "does", "'ll": "will", "'d": "would"}


def subject_of(verb):
    """The verb's subject token, inherited from the head for conjoined verbs ("I went and swam")."""
    seen = 0
    while verb is not None and seen < 6:
        for child in verb.children:
            if child.dep_ in _SUBJECT_DEPS:
                return child
        # "No, Raj works remotely for Nordfield Games": the small parser hangs a name it does not know before a
        # finite verb as a modifier; it is the subject
        before = verb.doc[verb.i - 1] if verb.i > 0 else None
        if before is not None and before.head.i == verb.i and before.dep_ == "npadvmod" and before.pos_ == "PROPN" \
                and before.ent_type_ not in ("DATE", "TIME") and verb.tag_ in ("VBZ", "VBD", "VBP"):
            return before
        # Conjoined verbs, complements and participle clauses ("I was there, spending the day ...")
        # share the subject of the verb they hang on.
        if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.i != verb.i:
            verb = verb.head
            seen += 1
            continue
        return None
    return None


def is_first_person(token) -> bool:
    return token is not None and token.lower_ in FIRST_PERSON


def has_own_subject(verb) -> bool:
    return any(c.dep_ in _SUBJECT_DEPS for c in verb.children)


_NOT_THINGS = set(word_list("grammar", "_NOT_THINGS"))


@lru_cache(maxsize=1)
def _people_nouns() -> frozenset[str]:
    return frozenset(KIN | PERSON_NOUNS)


def it_antecedent(tok) -> list | None:
    """The words an object "it" stands for: the nearest noun subject before it in the same utterance
    ("The retrained encoder finished last week ... Dr. Aisha Bello signed off on it on Friday": the retrained
    encoder), as its determiner, modifiers and head; None when "it" is no object or nothing fits.

    Only objects: a subject "it" is as often the weather or the situation ("it poured", "it was amazing")."""
    if tok.lower_ != "it" or tok.dep_ not in ("dobj", "pobj"):
        return None
    doc, start = tok.doc, tok.sent.start
    if start:
        start = doc[start - 1].sent.start  # its sentence and the one before
    for cand in reversed(doc[start:tok.i]):
        if cand.dep_ not in ("nsubj", "nsubjpass") or cand.pos_ == "PRON" or cand.ent_type_ == "PERSON" \
                or cand.lower_ in _people_nouns():
            continue  # "I fixed it", "and it beats the old one", "My sister called": look further back
        if cand.pos_ != "NOUN" or cand.ent_type_ in _NOT_THINGS:
            return None  # a name may be a person's that NER did not tag ("Caroline ... She sold it")
        words = [t for t in cand.subtree if t.i <= cand.i and t.dep_ in ("det", "amod", "compound", "poss", "nummod")
                 or t.i == cand.i]
        if len(words) > 5 or words[0].i != min(t.i for t in cand.subtree if t.i <= cand.i):
            return None  # a long or broken phrase reads worse than "it"
        return words
    return None


def it_phrase(tok, clause, speaker: str, other: str | None, pronoun: str) -> str | None:
    """What to write for an object "it" of ``clause`` (``it_antecedent``), in the clause's person: "Nate fixed
    his old bike" when the speaker is the clause's subject and known to be "he", "Nate's old bike" otherwise."""
    words = it_antecedent(tok)
    if not words or any(w.i == t.i for w in words for t in clause):
        return None
    phrase = third_person(words, speaker, other, pronoun)
    if words[0].pos_ == "DET":
        phrase = phrase[:1].lower() + phrase[1:]
    speaker_does = any(t.lower_ == "i" and t.dep_ in _SUBJECT_DEPS for t in clause)
    if pronoun in ("she", "he") and phrase.startswith(f"{speaker}'s ") and speaker_does:
        phrase = _PRONOUN_FORMS.get(pronoun, _PRONOUN_FORMS["they"])[0] + phrase[len(speaker) + 2:]
    return phrase


def clause_tokens(verb, max_tokens: int = 32) -> list:
    """The verb's clause: its subtree without conjoined clauses that have their own subject."""
    excluded: set[int] = set()
    for child in verb.children:
        if (child.dep_ == "conj" and has_own_subject(child)) or child.dep_ in ("parataxis", "intj"):
            excluded.update(t.i for t in child.subtree)
            # The "and"/"but" that joined the dropped clause goes with it.
            excluded.update(c.i for c in verb.children if c.dep_ == "cc" and c.i < child.i and c.i > verb.i)
    tokens = [t for t in verb.subtree if t.i not in excluded]
    while tokens and (tokens[0].is_punct or tokens[0].dep_ in ("cc", "intj", "discourse", "mark")
                      or tokens[0].lower_ in _LEADING_FILLERS):
        tokens.pop(0)
    while tokens and (tokens[-1].is_punct or tokens[-1].dep_ == "cc"):
        tokens.pop()
    if len(tokens) > max_tokens:
        # Keep the words around the verb: the action and what it acts on.
        start = max(0, next((k for k, t in enumerate(tokens) if t.i == verb.i), 0) - 6)
        tokens = tokens[start:start + max_tokens]
    return tokens


def span_text(tokens) -> str:
    """The tokens as written, with the original spacing (gaps become one space)."""
    out: list[str] = []
    for k, tok in enumerate(tokens):
        out.append(tok.text)
        if k + 1 < len(tokens):
            nxt = tokens[k + 1]
            out.append(tok.whitespace_ if nxt.i == tok.i + 1 else " ")
    return "".join(out).strip()


def _third_person_verb(tok) -> str:
    word = tok.text
    low = word.lower()
    if low in _THIRD_PERSON_IRREGULAR:
        return _THIRD_PERSON_IRREGULAR[low]
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _agrees_with(verb, subjects: set[int]) -> bool:
    holder = verb.head if verb.dep_ in ("aux", "auxpass") else verb
    while holder.dep_ == "conj" and not has_own_subject(holder) and holder.head.i != holder.i:
        holder = holder.head  # "I fly out ... and come back": "come" agrees with "I"
    return any(c.i in subjects for c in holder.children)


_PRONOUN_FORMS = {"she": ("her", "herself"), "he": ("his", "himself"), "they": ("their", "themselves")}


def speaker_pronouns(texts: list[str], speakers: list[str]) -> dict[str, str]:
    """"she", "he" or "they" per speaker, from how the conversation refers to them: the pronoun that
    most often follows the name in the same sentence ("Priya said she ..."); "they" when unsure."""
    out: dict[str, str] = {}
    for speaker in speakers:
        first = re.escape(speaker.split()[0])
        counts = {"she": 0, "he": 0}
        pattern = re.compile(rf"\b{first}\b[^.!?]{{0,80}}?\b(she|her|hers|he|him|his)\b", re.I)
        for text in texts:
            for m in pattern.finditer(text):
                counts["she" if m.group(1).lower() in ("she", "her", "hers") else "he"] += 1
        best = max(counts, key=counts.get)
        out[speaker] = best if counts[best] >= 2 and counts[best] > 2 * min(counts.values()) else "they"
    return out


def third_person(tokens, speaker: str, other: str | None = None, pronoun: str = "they",
                 forms: dict[int, str] | None = None) -> str:
    """The clause reworded with the speaker's name for I/me/my (and the listener's for you/your).

    Once the speaker's name is the subject, "my"/"myself" become a pronoun ("Priya made her first
    bowl", not "Priya made Priya's first bowl"); ``pronoun`` is "she", "he" or "they". ``forms`` gives
    the word for some tokens (by index) outright: a question's verb turned into a statement's. An object "it"
    becomes what it stands for (``it_phrase``)."""
    possessive, reflexive = _PRONOUN_FORMS.get(pronoun, _PRONOUN_FORMS["they"])
    # an object "it" takes the words it stands for ("signed off on the retrained encoder"); ``forms`` win
    its = {t.i: p for t in tokens if getattr(t, "dep_", None) and (p := it_phrase(t, tokens, speaker, other, pronoun))}
    forms = {**its, **(forms or {})}
    named = False
    out: list[str] = []
    # Subjects that become a third-person singular name; their verbs must agree ("I am" -> "is").
    renamed = {"i"} | ({"you"} if other else set())
    singular_subjects = {t.i for t in tokens if t.lower_ in renamed and t.dep_ in _SUBJECT_DEPS}
    for k, tok in enumerate(tokens):
        low = tok.lower_
        word = tok.text
        if low == "myself" and named:
            word = reflexive
        elif low in ("i", "me", "myself"):
            word = speaker
            named = named or (low == "i" and tok.dep_ in _SUBJECT_DEPS)
        elif low == "my" and named:
            word = possessive
        elif low in ("my", "mine"):
            word = f"{speaker}'s"
        elif low == "we":
            word = f"{speaker} and others"
        elif low in ("our", "ours"):
            word = f"{speaker}'s"
        elif low == "us":
            word = f"{speaker} and others"
        elif other and low in ("you", "yourself"):
            word = other
        elif other and low in ("your", "yours"):
            word = f"{other}'s"
        elif (tok.tag_ == "VBP" or (tok.tag_ == "VB" and tok.dep_ == "conj" and not any(
                c.dep_ in ("aux", "auxpass") for c in tok.children) and tok.head.tag_ == "VBP")) \
                and _agrees_with(tok, singular_subjects):
            word = _third_person_verb(tok)
        elif low in ("'ll", "'d") and tok.dep_ in ("aux", "auxpass"):
            word = "will" if low == "'ll" else ("would" if tok.head.tag_ == "VB" else "had")
        if forms and tok.i in forms:
            word = forms[tok.i]
        if k == 0:
            word = word[:1].upper() + word[1:]
        elif word != tok.text and tok.text[:1] == "'" and out and not out[-1].isspace():
            out.append(" ")  # "I'm" -> "Caroline is", not "Carolineis"
        out.append(word)
        if k + 1 < len(tokens):
            nxt = tokens[k + 1]
            out.append(tok.whitespace_ if nxt.i == tok.i + 1 else " ")
    return "".join(out).strip()


_FUTURE_WORDS = set(word_list("grammar", "_FUTURE_WORDS"))
_PAST_AUX = set(word_list("grammar", "_PAST_AUX"))
_HEDGE_MODALS = set(word_list("grammar", "_HEDGE_MODALS"))


def verb_tense(verb, depth: int = 0) -> bool | None:
    """Whether a verb's clause speaks of the future (True), the past (False), or does not say (None).

    For dating a time expression said without a year or a direction: the present of a fixed date is
    a plan ("I fly out on 14 May", "the race is in March", "Lukas is off to Hamburg on Friday"), so
    it counts as future; an infinitive is what lies ahead of its head ("asked me to run it in
    September"); a conjoined verb without auxiliaries shares its head's ("I'll fly out ... and come
    back on 21 May").
    """
    aux = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    words = {c.lower_ for c in aux}
    if words & _FUTURE_WORDS:
        return True
    if verb.lemma_ == "go" and verb.tag_ == "VBG" and any(c.dep_ == "xcomp" for c in verb.children):
        return not (words & _PAST_AUX)  # "I'm going to", not "I was going to"
    if verb.lower_ == "used" or words & {"did"} or verb.tag_ == "VBD":
        return False
    if verb.tag_ == "VBN":
        return False if words & {"have", "'ve", "has", "had", "'d", "was", "were", "got"} or not words else True
    if words & _HEDGE_MODALS:
        return None
    if verb.tag_ == "VB" and "to" in words:
        return True
    if not aux and verb.tag_ in ("VB", "VBG") and verb.dep_ in ("conj", "xcomp", "advcl") and verb.head.i != verb.i \
            and depth < 4:
        return verb_tense(verb.head, depth + 1)
    if verb.tag_ == "VBG":
        return not (words & _PAST_AUX)
    if verb.tag_ in ("VBZ", "VBP"):
        return True
    return None


def _opens_with_past(sent) -> bool:
    """Chat drops the subject: "Bought Cardigan Bay Kayaks off his old boss in January." opens with a past form
    (no subject of its own) whose clause the small parser hangs on another word ("Kayaks", a verb in the present
    to it), or which it makes a name."""
    first = sent[0]
    if first.pos_ not in ("PROPN", "NOUN", "VERB") or not first.text[:1].isupper() or \
            first.ent_type_ in ("DATE", "TIME") or any(c.dep_ in ("nsubj", "nsubjpass") for c in first.children):
        return False
    from lemminflect import getAllLemmas, getInflection  # imported here: it imports spaCy

    word = first.lower_
    lemmas = getAllLemmas(word)
    return "NOUN" not in lemmas and any(word in getInflection(lemma, tag="VBD") for lemma in lemmas.get("VERB", ()))


def tense_reader(doc):
    """``tense_at(char_offset)`` for ``timeparse.find_time_expressions``: the tense of the verb the
    token at that offset hangs on."""
    def tense_at(offset: int) -> bool | None:
        tok = next((t for t in doc if t.idx <= offset < t.idx + len(t)), None)
        if tok is not None and _opens_with_past(tok.sent):
            return False
        hops = 0
        while tok is not None and hops < 8:
            if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in ("aux", "auxpass"):
                return verb_tense(tok)
            if tok.head.i == tok.i:
                return None
            tok = tok.head
            hops += 1
        return None
    return tense_at


def implicit_first_person(verb) -> bool:
    """Chat drops the "I": "Researching adoption agencies ...", "Been running longer ..."."""
    if verb.dep_ != "ROOT" or verb.tag_ not in ("VBG", "VBD", "VBN"):
        return False
    lead = [t for t in verb.sent if not t.is_punct and t.dep_ != "intj"][:2]
    return bool(lead) and (lead[0].i == verb.i or (lead[0].lower_ == "been" and len(lead) > 1 and lead[1].i == verb.i))


def implicit_prefix(speaker: str, first) -> str:
    if first.lower_ == "been":
        return f"{speaker} has "
    return f"{speaker} is " if first.tag_ == "VBG" else f"{speaker} "
