"""Where entities stand in utterances: their names, the speaker's "I", the listener's "you", and the pronouns and
kin words ("she", "my mum") that point at someone named elsewhere. Word lists are data files in ``words/``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# How an entity stands in an utterance.
HOW = ("name", "self", "self0", "you", "ref")


@dataclass(frozen=True)
class Occ:
    """One occurrence of entity ``ent`` in utterance ``utt`` at characters [start, end) (start -1: implied,
    a speaker who says no "I")."""

    ent: int
    utt: int
    start: int
    end: int
    how: str


@lru_cache(maxsize=None)
def words(name: str) -> tuple[str, ...]:
    """A word list from ``words/<name>.txt``: one entry a line, '#' comments."""
    text = (resources.files(__package__) / "words" / f"{name}.txt").read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


_SELF = re.compile(r"(?<![\w'’])(?:I(?:['’](?:m|ve|d|ll))?|me|my|mine|myself|im|ive)(?![\w'’])")
_YOU = re.compile(r"(?<![\w'’])(?:you(?:['’](?:re|ve|d|ll))?|your|yours|yourself|u|ur|youre)(?![\w'’])", re.I)
_POSSESSIVE = r"(?:(?:my|your|his|her|our|their|ur)\s+)"
_MODIFIER = r"(?:(?:little|big|older|younger|baby|step|half|new|ex|twin|late|dear|darling)[\s-]+)"


@lru_cache(maxsize=1)
def _reference_pattern() -> re.Pattern:
    kin = "|".join(re.escape(w) for w in sorted(words("kin"), key=len, reverse=True))
    pronouns = "|".join(re.escape(w) for w in words("pronouns"))
    return re.compile(rf"(?<![\w'’])(?:(?P<kin>{_POSSESSIVE}?{_MODIFIER}?(?:{kin}))|(?P<pro>{pronouns}))(?![\w'’])",
                      re.I)


def self_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _SELF.finditer(text)]


def you_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _YOU.finditer(text)]


def reference_spans(text: str) -> list[tuple[int, int, str]]:
    """Pronouns and kin words: (start, end, "kin" | "pronoun")."""
    return [(m.start(), m.end(), "kin" if m.group("kin") else "pronoun")
            for m in _reference_pattern().finditer(text)]


class NameFinder:
    """Finds the names and aliases of a list of entities in text, longest first, on word boundaries. A name in
    lowercase ("user") matches in any case; a capitalised one as written (a name also written in lowercase is a
    word: "Will", "May")."""

    def __init__(self, names: list[list[str]]):
        self._owner: dict[str, int] = {}
        for i, group in enumerate(names):
            for n in group:
                n = n.strip()
                if len(n) >= 2:
                    self._owner.setdefault(n.casefold() if n.islower() else n, i)
        keys = sorted(self._owner, key=len, reverse=True)
        self._re = re.compile(r"(?<![\w'’])(" + "|".join(map(re.escape, keys)) + r")(?!\w)") if keys else None
        self._lower = {k for k in keys if k.islower()}
        self._re_lower = (re.compile(r"(?<![\w'’])(" + "|".join(map(re.escape, sorted(self._lower, key=len,
                                                                                        reverse=True)))
                                     + r")(?!\w)", re.I) if self._lower else None)

    def find(self, text: str) -> list[tuple[int, int, int]]:
        """(entity index, start, end) for each name in ``text``, not overlapping."""
        out: list[tuple[int, int, int]] = []
        taken: list[tuple[int, int]] = []
        for pattern, fold in ((self._re, False), (self._re_lower, True)):
            if pattern is None:
                continue
            for m in pattern.finditer(text):
                key = m.group(1).casefold() if fold else m.group(1)
                ent = self._owner.get(key)
                if ent is None or any(m.start() < e and m.end() > s for s, e in taken):
                    continue
                taken.append(m.span())
                out.append((ent, m.start(), m.end()))
        return sorted(out, key=lambda t: t[1])
