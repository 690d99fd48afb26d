"""Word-level helpers shared by retrieval, expansion and the measures: one tokenizer, one stopword list."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

# Function words plus question words: they carry no anchor identity, so they never make a native match.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing done down during each else ever few for from further get got had has have
having he her here hers herself him himself his how i if in into is it its itself just let like many me might
more most much must my myself no nor not now of off on once only or other our ours ourselves out over own
really same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up upon us very was we were what when where which while who whom whose why
will with would yes yet you your yours yourself yourselves s t ll d m re ve also one two thing things kind
go went going gone make made say said tell told think thought know knew want wanted
""".split())


# "X, and which Y?" / "X; what Y?": a question asking two things; each part is matched on its own as well.
_PART_BREAK = re.compile(r"(?:,\s*(?:and\s+|but\s+)?|\s+(?:and|but)\s+)(?=(?:in |on |at |for |from |with |of |since )?"
                         r"(?:which|what|who|whom|whose|where|when|why|how)\b)|[;?]\s+", re.I)
MIN_PART_WORDS = 3


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks two or more things ("In which country will Tom run, and in which state
    does Priya live?"), each of at least ``MIN_PART_WORDS`` words; [] for a question asking one thing."""
    parts = [p.strip(" ,;?") for p in _PART_BREAK.split(question.strip())]
    parts = [p for p in parts if len(p.split()) >= MIN_PART_WORDS]
    return parts if len(parts) >= 2 else []


def normalize_token(token: str) -> str:
    """Lowercase, drop a possessive and a plain plural 's' so 'groups'/'group' and "Caroline's"/'Caroline' meet."""
    token = token.lower()
    if token.endswith("'s"):
        token = token[:-2]
    token = token.replace("'", "")
    if len(token) > 4 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    return token


def tokens(text: str) -> list[str]:
    """All normalized word tokens of ``text`` in order (stopwords kept)."""
    return [normalize_token(t) for t in _WORD.findall(text.lower())]


_CAPITALIZED = re.compile(r"(?<=[a-z,;:] )([A-Z][a-z]+)\b")


def content_tokens(text: str) -> list[str]:
    """Normalized tokens without stopwords, duplicates removed, first-seen order. A stopword written
    capitalized inside a sentence is kept: it is a name ("What does Will do?", "Did May call?")."""
    names = {normalize_token(m) for m in _CAPITALIZED.findall(text)}
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t and (t not in STOPWORDS or t in names) and t not in seen:
            seen[t] = None
    return list(seen)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball's English stemmer in C, loads in milliseconds

    return Stemmer.Stemmer("english")


def stems(words: list[str]) -> list[str]:
    """Snowball stems of normalized tokens ("adopted", "adopt" -> "adopt")."""
    return _stemmer().stemWords(words)



def truncate_words(text: str, n: int) -> str:
    words = text.split()
    return " ".join(words[:n])
