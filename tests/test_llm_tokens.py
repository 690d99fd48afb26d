"""The offline token counter (MiniLM WordPiece standing in for GPT's BPE)."""

from gravity_engine.llm import count_tokens


def test_count_tokens_approximates_gpt_counts():
    assert count_tokens("") == 0
    text = "Caroline went to the LGBTQ support group yesterday, and it was really powerful."
    assert 12 <= count_tokens(text) <= 20  # a GPT BPE gives about 16
    # Past BERT's 512-piece window: counted whole, without truncation.
    assert abs(count_tokens(" ".join([text] * 100)) - 100 * count_tokens(text)) <= 5
