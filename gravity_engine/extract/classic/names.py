"""Names as written in chat: cleaning a tagged span into a name ("Bye Caroline" -> "Caroline"), whether it looks
like one, its canonical form among the speakers, a type from its own head word, and a name token's full extent."""

from __future__ import annotations

import re

from .grammar import span_text
from .lexicon import (EVENT_HEADS, ORG_HEADS, PLACE_HEADS, PLACE_LEADS, LEAD_WORDS, NOT_NAMES, TIME_WORDS,
                      TOOL_NAMES)

def clean_name(text: str) -> str:
    text = re.sub(r"^(the|a|an|my|our|your)\s+", "", text.strip(), flags=re.I)
    text = re.sub(r"('s|’s|')$", "", text)
    text = text.strip(" .,!?;:\"'()[]-")
    # "Bye Caroline", "Thanks Mel": a greeting glued to a name by the tagger.
    words = text.split()
    while len(words) > 1 and (words[0].lower().strip(",!.") in NOT_NAMES or words[0].lower() in LEAD_WORDS):
        words.pop(0)
    # "Ironwood Fitness on", "Copper Kettle café": lowercase words trailing a name are not part of it
    while len(words) > 1 and words[-1][:1].islower() and words[0][:1].isupper():
        words.pop()
    return " ".join(words)


SAINT_HOUSE = re.compile(r"(?i)(?:st|saint)\.? [a-z]+['’]s")


def looks_like_name(name: str) -> bool:
    if len(name) < 2 or len(name) > 60 or not name[:1].isupper() and not name[:1].isdigit():
        return False
    if any(c in name for c in ",;!?\"()[]") or name.endswith("-") or re.search(r"\s:|:(\s|$)", name):
        return False  # a colon only inside one word ("Gear:Zero")
    words = name.lower().split()
    if all(w in NOT_NAMES or w in TIME_WORDS for w in words):
        return False
    if re.fullmatch(r"[\d\s.,/:%$-]+(st|nd|rd|th|s|k|am|pm)?", name.lower()):
        return False  # numbers, dates, times
    return not (words[0] in TIME_WORDS or words[-1] in TIME_WORDS)


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


def suffix_type(name: str) -> str | None:
    """A type from the name's own head word: "Cedar Valley Clinic" -> organization, "Mount Rainier" -> place,
    and the few tools NER takes for people ("Python")."""
    words = name.lower().replace(".", "").split()
    if name.lower() in TOOL_NAMES:
        return "product"
    if len(words) < 2:
        return None
    if re.fullmatch(r"[a-z]{0,3}\d+[a-z]{0,3}", words[-1]) and not words[-1].isdigit() or (
            words[-1].isdigit() and len(words[-1]) >= 3 and name[:1].isupper()):
        return "product"  # "Lumio X2", "SeaSense D1", "GrassHopper 300"
    if words[-1] in EVENT_HEADS or words[0] in ("workshop", "conference"):
        return "event"
    if words[-1] in ORG_HEADS:
        return "organization"
    if words[-1] in PLACE_HEADS or words[0] in PLACE_LEADS:
        return "place"
    return None


def title_span(token) -> tuple[int, int] | None:
    """The tokens [start, end) of a title built on "of the" that ``token`` stands in ("Crown of the Tides",
    "Keeper of the Lost Lanterns"): capitalised words led by a proper noun, "of the", capitalised words; else None.
    The tagger cuts such titles in two ("Crown" an organisation, "Tides" a person)."""
    doc, sent = token.doc, token.sent

    def cap(t) -> bool:
        return t.text[:1].isupper() and t.pos_ in ("PROPN", "NOUN", "ADJ", "NUM") and not t.is_punct

    def run(i: int) -> tuple[int, int]:  # the capitalised words around token i, [first, last]
        a = b = i
        while a > sent.start and cap(doc[a - 1]):
            a -= 1
        while b + 1 < sent.end and cap(doc[b + 1]):
            b += 1
        return a, b

    def of_the(i: int) -> bool:
        return i + 1 < sent.end and doc[i].lower_ == "of" and doc[i + 1].lower_ == "the"

    if not cap(token):
        return None
    a, b = run(token.i)
    if b + 2 < sent.end and of_the(b + 1) and cap(doc[b + 3]):
        left, right = a, run(b + 3)[1]
    elif a - 3 >= sent.start and of_the(a - 2) and cap(doc[a - 3]):
        left, right = run(a - 3)[0], b
    else:
        return None
    if doc[left].pos_ != "PROPN" or doc[left].lower_ in NOT_NAMES:  # "Most of the Tigers" is no title
        return None
    return left, right + 1


def full_name(token) -> str:
    """A name token with its compound parts ("Mary Ann", "the Harbor Striders", "University of Porto"), or the
    title it stands in ("Crown of the Tides"), never a following prepositional phrase ("Harbourside Pharmacy in
    Cardiff Bay" is two names)."""
    doc = token.doc
    if (title := title_span(token)) is not None:
        return clean_name(span_text(list(doc[title[0]:title[1]])))
    lo = hi = token.i

    def part(t) -> bool:
        return (t.pos_ == "PROPN" or (t.text[:1].isupper() and t.pos_ in ("NOUN", "ADJ", "NUM"))) and \
            t.sent.start == token.sent.start and not t.is_punct

    while lo - 1 >= token.sent.start and part(doc[lo - 1]) and lo - 1 <= doc[lo - 1].head.i <= token.i:
        lo -= 1
    while hi + 1 < token.sent.end and part(doc[hi + 1]) and (doc[hi + 1].head.i == token.i or doc[hi].head.i == hi + 1
                                                             or doc[hi + 1].dep_ in ("compound", "flat")):
        hi += 1
    # "St Mary's Hospital": the saint's name and its possessive belong to the name
    if lo - 3 >= token.sent.start and doc[lo - 1].lower_ in ("'s", "’s") and \
            SAINT_HOUSE.fullmatch(span_text(list(doc[lo - 3:lo]))):
        lo -= 3
    while hi + 2 < token.sent.end and doc[hi + 1].text == "&" and part(doc[hi + 2]):
        hi += 2  # "Pellow & Garth": one firm
    while hi + 2 < token.sent.end and doc[hi + 1].text == ":" and not doc[hi].whitespace_ and \
            not doc[hi + 1].whitespace_ and doc[hi + 2].text[:1].isupper():
        hi += 2  # "Gear:Zero": one name, written without spaces
    # "University of Calderbrook", "Bank of America": "of" + a capitalised name inside an organisation
    if hi + 2 < token.sent.end and doc[hi + 1].lower_ == "of" and part(doc[hi + 2]) and \
            doc[lo].lower_ in ORG_HEADS | {"university", "bank", "tower", "museum", "institute", "school", "city"}:
        hi += 2
        while hi + 1 < token.sent.end and part(doc[hi + 1]):
            hi += 1
    return clean_name(span_text(list(doc[lo:hi + 1])))
