"""Names the rules did not propose: every run of capitalised words that is not a known entity, a speaker or a
common word, so the typing head can decide what it is (a person from a culture the parser's model knows few names
of, "Parminder"; a club said once). What is junk the typing head drops."""

from __future__ import annotations

import re

from ...anchors import AnchorSet, Entity
from ...conversation import Conversation
from .mentions import words

# capitals beyond ASCII too ("Ángeles", "Øystein", "Ümit"): Latin, Greek, Cyrillic and the other scripts below U+2000
_UPPER = "[" + re.escape("".join(c for c in map(chr, range(0x2000)) if c.isupper())) + "]"
# a word holds a full stop only before a letter ("U.S"), so a run ends with its sentence ("Nate. I'll"), and a
# colon only before a capital ("Gear:Zero")
_WORD = rf"{_UPPER}(?:[\w'’&-]|\.(?=\w)|:(?={_UPPER}))*"
_CONNECTORS = ("of", "de", "da", "del", "van", "von", "the", "&")
_RUN = re.compile(rf"(?<![\w'’]){_WORD}(?:\s+(?:{'|'.join(_CONNECTORS)})?\s*{_WORD})*")
_LOWER_WORD = re.compile(rf"\b(?=[^\W\d_])(?!{_UPPER})[\w'’-]{{2,}}")  # "honestly", "ümit"
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n)$")
MIN_LENGTH = 2
PROPOSED_SUFFIX = "-p"  # the id of a proposed entity ends so


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "x"


def propose_names(anchors: AnchorSet, conversation: Conversation, vocabulary: frozenset[str] = frozenset()) -> int:
    """Add an untyped entity for each capitalised run not yet an entity; returns how many were added. One word seen
    only at the start of sentences is a word, never proposed, when the conversation also writes it in lowercase
    ("Honestly") or ``vocabulary`` (the encoder's whole words, lowercase) knows it ("Hang in there", "Marrying
    my partner"); a name said inside a sentence somewhere is proposed whatever the vocabulary says."""
    known = {n.casefold() for e in anchors.entities for n in (e.name, *e.aliases)}
    known |= {s.casefold() for s in conversation.speakers}
    common = {w.casefold() for w in words("not_names")}

    def is_common(word: str) -> bool:
        return word.casefold().replace("’", "'") in common  # "I’m" as "I'm"

    lowercase = {w for u in conversation.utterances() for w in _LOWER_WORD.findall(u.text)}
    # a title the rules read whole ("Crown of the Tides") is no source of names of its parts
    titles = sorted((n for n in known if " of the " in n), key=len, reverse=True)
    whole = re.compile("|".join(re.escape(n) for n in titles), re.I) if titles else None
    found: dict[str, list[str]] = {}
    inside: set[str] = set()
    for u in conversation.utterances():
        text = whole.sub(lambda m: " " * len(m.group(0)), u.text) if whole else u.text
        for m in _RUN.finditer(text):
            name = re.sub(r"['’]s$", "", m.group(0)).rstrip(".'’-&").strip()  # "Anna's" is Anna
            parts = name.split()
            while parts and is_common(parts[0]):  # "Honestly Priya" -> "Priya"
                parts = parts[1:]
            while parts and (is_common(parts[-1]) or parts[-1] in _CONNECTORS):  # "Perhaps I", "Haar & Now"
                parts = parts[:-1]
            name = " ".join(parts)
            if len(name) < MIN_LENGTH or name.casefold() in known or is_common(name) or name.isdigit():
                continue
            found.setdefault(name, []).append(u.id)
            if parts == name.split() and not _SENTENCE_START.search(text[:m.start()]):
                inside.add(name)
    added = 0
    for name, ids in found.items():
        if name not in inside and " " not in name and (name.casefold() in lowercase or name.casefold() in vocabulary):
            continue
        ids = list(dict.fromkeys(ids))
        anchors.entities.append(Entity(id=f"ent-{_slug(name)}{PROPOSED_SUFFIX}", name=name, type="other",
                                       source_ids=ids[:20], mentions=len(ids),
                                       description="proposed for the typing head"))
        added += 1
    return added
