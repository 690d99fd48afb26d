"""Topic titles: a topic's own noun phrases ranked against its centroid (extract/classic/topics.py)."""

from __future__ import annotations

import numpy as np

from gravity_engine.embed import normalize
from gravity_engine.extract.classic.topics import centroid_titles, title_candidates

# Three directions: adoption, pottery, and one every topic shares a little ("family").
_AXES = {"adoption agencies": [1, 0, 0], "adoption": [0.9, 0.1, 0], "pottery class": [0, 1, 0], "clay": [0.1, 0.9, 0],
         "family": [0.6, 0.6, 0.2], "Caroline": [1, 0, 0], "book": [0, 0, 1], "books": [0, 0.05, 1],
         "library": [0.1, 0, 0.9]}


def _embed(texts):
    return normalize(np.array([_AXES[t] for t in texts], dtype=np.float32))


def test_the_title_is_the_phrase_closest_to_its_own_topic_and_far_from_the_others():
    centroids = normalize(np.array([[1, 0.1, 0], [0.1, 1, 0]], dtype=np.float32))
    phrases = [["family", "family", "family", "adoption agencies", "adoption agencies"],
               ["family", "family", "pottery class", "pottery class", "clay"]]
    titles = centroid_titles(phrases, centroids, _embed, frozenset())
    assert titles[0].startswith("adoption agencies") and titles[1].startswith("pottery class")
    assert all("family" not in t for t in titles)  # said more often, but every topic is near it


def test_a_second_phrase_must_add_a_word_and_speakers_never_title_a_topic():
    centroids = normalize(np.array([[0, 0.02, 1], [1, 0, 0]], dtype=np.float32))
    phrases = [["book", "book", "books", "library"], ["Caroline", "Caroline", "adoption"]]
    titles = centroid_titles(phrases, centroids, _embed, frozenset(), names=frozenset({"caroline"}))
    assert titles[0] in ("book and library", "books and library")
    assert titles[1] == "adoption"


def test_candidates_drop_stop_words_parse_debris_and_empty_topics():
    cands = title_candidates([["team / support", "the", "team"], []], frozenset({"the"}))
    assert list(cands[0]) == ["team"] and not cands[1]
    assert centroid_titles([[], []], np.eye(2, 3, dtype=np.float32), _embed, frozenset()) == ["", ""]
