"""The classic extractor's word lists, kept as data: one TOML file per module in ``words/`` (``words/entities.toml``
holds the lists of ``entities.py`` and of the rule modules split from it), each list a key with its words in the
order the rules read them. A rule module names a list and says what it needs of it:
``KIN = set(word_list("entities", "KIN"))``."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

WORDS_DIR = Path(__file__).with_name("words")


@cache
def _table(module: str) -> dict[str, list[str]]:
    with open(WORDS_DIR / f"{module}.toml", "rb") as fh:
        return tomllib.load(fh)


def word_list(module: str, name: str) -> list[str]:
    """The words of list ``name`` of ``module``'s data file, in file order (a fresh list)."""
    return list(_table(module)[name])
