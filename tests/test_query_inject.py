"""Context injection: the three blocks, their token counts, and the answer prompt."""

from __future__ import annotations

from query_fixtures import make_anchor_set

from gravity_engine.query.inject import answer_messages, render_context, render_summaries


def _count(text):
    return len(text.split())


def test_three_blocks_with_dates_and_sources():
    a = make_anchor_set()
    ctx = render_context({"entities": a.entities[:2], "events": [a.events[2], a.events[0], a.events[6]],
                          "topics": a.topics[:1]}, _count)
    text = ctx.text
    assert text.index("## Topic Summaries") < text.index("## Entity Profiles") < text.index("## Event Records")
    assert "2023-05-07 (7 May 2023)" in text and 'said "yesterday" on 8 May 2023' in text
    assert "[v1; sources: D1:1]" in text and "aka: Mel" in text and "adopted Oscar (D2:1)" in text
    events = ctx.blocks["events"].splitlines()[1:]
    assert [line.split("[")[-1].split(";")[0] for line in events] == ["v1", "v3", "v7"]  # chronological, undated last
    assert "date unknown" in events[-1]
    assert ctx.tokens == {m: _count(ctx.blocks[m]) for m in ("topics", "entities", "events")}
    assert ctx.anchor_ids["events"] == ["v1", "v3", "v7"]


def test_empty_selection_and_summaries():
    assert render_context({"entities": [], "events": [], "topics": []}, _count).text == ""
    ctx = render_summaries([("sum0", "(8 May 2023) Caroline: hello")], _count)
    assert ctx.text.startswith("## Conversation Summaries") and ctx.total_tokens > 0


def test_answer_prompt_puts_anchors_after_memories_as_supplementary():
    a = make_anchor_set()
    ctx = render_context({"events": a.events[:1]}, _count)
    with_ = answer_messages("When?", ["[8 May 2023] Caroline: hi (D1:1)"], ctx, "2023-09-01")
    without = answer_messages("When?", ["[8 May 2023] Caroline: hi (D1:1)"], None)
    user = with_[1]["content"]
    assert user.index("<memories>") < user.index("<anchors>") < user.index("Question: When?")
    assert "## Event Records" in user and "Question date: 2023-09-01" in user
    assert "primary source of truth" in with_[0]["content"]
    assert "<anchors>" not in without[1]["content"] and "primary source" not in without[0]["content"]
