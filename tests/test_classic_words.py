"""The classic extractor's word lists are data (``extract/classic/words/*.toml``): each read by its module."""

from __future__ import annotations

import collections
import re
import tomllib

from gravity_engine.extract.classic.wordlists import WORDS_DIR, word_list

CLASSIC = WORDS_DIR.parent
# entities.py's rules were split into modules below it, which still read words/entities.toml
MODULES_OF = {"extractor": ("__init__",),
              "entities": ("entities", "profiles", "references", "noun_patterns", "verb_patterns", "relations",
                           "replies", "nicknames")}


def test_every_list_is_read_by_its_module_and_repeats_no_word():
    files = sorted(WORDS_DIR.glob("*.toml"))
    assert files
    for path in files:
        modules = MODULES_OF.get(path.stem, (path.stem,))
        source = "".join((CLASSIC / f"{m}.py").read_text(encoding="utf-8") for m in modules)
        read = set(re.findall(rf'word_list\("{path.stem}", "(\w+)"\)', source))
        lists = tomllib.loads(path.read_text(encoding="utf-8"))
        assert set(lists) == read, f"{path.name}: lists no rule reads {set(lists) - read}, or read and missing"
        for name, words in lists.items():
            assert words and all(isinstance(w, str) and w for w in words), f"{path.name}: {name}"
            repeated = [w for w, n in collections.Counter(words).items() if n > 1]
            assert not repeated, f"{path.name}: {name} repeats {repeated}"


def test_a_list_comes_back_in_file_order_as_a_fresh_list():
    kin = word_list("lexicon", "KIN")
    assert kin[:3] == ["mom", "mum", "mam"] and "neighbour" in kin
    kin.append("not a kin word")
    assert "not a kin word" not in word_list("lexicon", "KIN")
