"""Dependency-parse helpers shared by the entity and event patterns: subjects, clauses, rewording.

Everything here keeps the speaker's own words; the only change is the person ("I went" said by
Caroline becomes "Caroline went"), so an extracted field can still be checked against its source.
"""

from __future__ import annotations

FIRST_PERSON = {"i", "we"}
_SUBJECT_DEPS = {"nsubj", "nsubjpass", "expl"}
_LEADING_FILLERS = {"so", "well", "oh", "and", "but", "also", "anyway", "actually", "yeah", "btw", "when", "while",
                    "because", "since", "after", "before", "if", "as", "then", "plus"}
_THIRD_PERSON_IRREGULAR = {"am": "is", "'m": "is", "are": "is", "'re": "is", "have": "has", "'ve": "has",
                           "do": "does", "'ll": "will", "'d": "would"}


def subject_of(verb):
    """The verb's subject token, inherited from the head for conjoined verbs ("I went and swam")."""
    seen = 0
    while verb is not None and seen < 6:
        for child in verb.children:
            if child.dep_ in _SUBJECT_DEPS:
                return child
        # Conjoined verbs, complements and participle clauses ("I was there, spending the day ...")
        # share the subject of the verb they hang on.
        if verb.dep_ in ("conj", "xcomp", "advcl") and verb.head is not verb:
            verb = verb.head
            seen += 1
            continue
        return None
    return None


def is_first_person(token) -> bool:
    return token is not None and token.lower_ in FIRST_PERSON


def has_own_subject(verb) -> bool:
    return any(c.dep_ in _SUBJECT_DEPS for c in verb.children)


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
    return any(c.i in subjects for c in holder.children)


def third_person(tokens, speaker: str, other: str | None = None) -> str:
    """The clause reworded with the speaker's name for I/me/my (and the listener's for you/your)."""
    out: list[str] = []
    # Subjects that become a third-person singular name; their verbs must agree ("I am" -> "is").
    renamed = {"i"} | ({"you"} if other else set())
    singular_subjects = {t.i for t in tokens if t.lower_ in renamed and t.dep_ in _SUBJECT_DEPS}
    for k, tok in enumerate(tokens):
        low = tok.lower_
        word = tok.text
        if low in ("i", "me", "myself"):
            word = speaker
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
        elif tok.tag_ == "VBP" and _agrees_with(tok, singular_subjects):
            word = _third_person_verb(tok)
        elif low in ("'ll", "'d") and tok.dep_ in ("aux", "auxpass"):
            word = "will" if low == "'ll" else ("would" if tok.head.tag_ == "VB" else "had")
        if k == 0:
            word = word[:1].upper() + word[1:]
        elif word != tok.text and tok.text[:1] == "'" and out and not out[-1].isspace():
            out.append(" ")  # "I'm" -> "Caroline is", not "Carolineis"
        out.append(word)
        if k + 1 < len(tokens):
            nxt = tokens[k + 1]
            out.append(tok.whitespace_ if nxt.i == tok.i + 1 else " ")
    return "".join(out).strip()
