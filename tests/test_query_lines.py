"""Anchor lines, their scoring against the question, packing under a budget, expansion and the answer prompt."""

from __future__ import annotations

import numpy as np
import pytest
from query_fixtures import make_anchor_set, make_store

from gravity_engine.anchors import Attribute, Entity
from gravity_engine.query import QueryConfig
from gravity_engine.query.expand import expand
from gravity_engine.query.inject import answer_messages, render_summaries
from gravity_engine.lines import LineTable, entity_lines, event_line, event_when, latest_attributes, topic_lines
from gravity_engine.query.pack import LineSelection, ScoredLine, pack_lines, render_lines, score_lines


def _count(text):
    return len(text.split())


def _unscored(selected) -> LineSelection:
    """Every line of ``selected`` in stored order, as the method's literal reading ranks them."""
    sel = LineSelection(anchors={m: list(selected.get(m, [])) for m in ("entities", "events", "topics")})
    for module, anchors in sel.anchors.items():
        for rank, a in enumerate(anchors):
            lines = [event_line(a)] if module == "events" else (entity_lines(a) if module == "entities" else topic_lines(a))
            sel.lines += [ScoredLine(ln, float("nan"), rank) for ln in lines]
    return sel


def test_lines_are_lean_and_self_contained():
    a = make_anchor_set()
    caroline = entity_lines(a.entities[0])
    assert [ln.text for ln in caroline] == ["transgender woman interested in counseling",
                                            "career goal: counseling and mental health", "adopted Oscar"]
    assert caroline[2].search_text == "Caroline adopted Oscar" and caroline[2].source_ids == ("D2:1",)
    v1 = event_line(a.events[0])
    assert v1.text == "7 May 2023: Caroline: went to the LGBTQ support group"
    assert v1.search_text == "Caroline went to the LGBTQ support group yesterday"
    assert "D1:1" not in v1.text and "v1" not in v1.text  # ids stay in the trace, not the prompt
    assert event_when(a.events[1]) == "1 May 2023 to 7 May 2023"
    assert event_when(a.events[6]) == "date unknown"
    assert event_when(a.events[6].model_copy(update={"date_end": "2023-06-20"})) == "on or before 20 June 2023"
    bound = a.events[6].model_copy(update={"date_start": "2023-06-20", "date_end": "2023-06-20", "granularity": "before"})
    assert event_when(bound) == "on or before 20 June 2023"
    plan = bound.model_copy(update={"granularity": "after"})
    assert event_when(plan) == "on or after 20 June 2023"
    t1 = topic_lines(a.topics[0])
    assert [ln.field for ln in t1] == ["summary", "key_facts[0]", "sessions[0]", "sessions[1]"]
    assert t1[2].text == "8 May 2023: considering counseling"


def test_facts_drop_the_repeated_name_and_attributes_show_their_latest_value():
    e = Entity(id="e", name="Jon Park", type="person", attributes=[
        Attribute(key="lives_in", value="Boston", source_ids=["D1:4"]),
        Attribute(key="fact", value="Jon Park is a baker", source_ids=["D1:5"]),
        Attribute(key="lives_in", value="Denver", source_ids=["D7:2"]),
        Attribute(key="fact", value="Jon has two kids", source_ids=["D2:1"])])
    assert [i for i, _ in latest_attributes(e)] == [1, 2, 3]
    lines = entity_lines(e)
    assert [ln.text for ln in lines] == ["is a baker", "lives in: Denver", "has two kids"]
    assert lines[0].search_text == "Jon Park is a baker" and lines[1].search_text == "Jon Park lives in Denver"


def test_line_table_covers_every_anchor_and_is_stored_with_the_embeddings(tmp_path, fake_embedder):
    store = make_store(fake_embedder)
    table = LineTable.build(store.anchors)
    assert set(table.by_anchor) == {a.id for m in ("entities", "events", "topics") for a in store.anchors.module(m)}
    assert store.embeddings["lines"].shape == (len(table.lines), fake_embedder.dim)
    store.save(tmp_path / "s")
    from gravity_engine.store import AnchorStore

    loaded = AnchorStore.load(tmp_path / "s")
    assert loaded.line_keys == table.keys()
    assert np.allclose(loaded.line_matrix(fake_embedder), store.embeddings["lines"])
    edited = loaded.anchors.model_copy(deep=True)
    edited.entities[0].attributes.append(Attribute(key="fact", value="Caroline paints", source_ids=["D1:1"]))
    stale = AnchorStore(anchors=edited, embeddings=dict(loaded.embeddings), line_keys=loaded.line_keys)
    assert stale.line_matrix(fake_embedder).shape[0] == len(table.lines) + 1  # edited: re-embedded, not misread


def test_question_aware_scoring_ranks_a_profiles_lines_by_the_question(embedder):
    store = make_store(embedder)
    a = store.anchors
    selected = {"entities": [a.entities[0]], "events": [], "topics": []}
    qvec = embedder.encode(["Which pet did Caroline adopt?"])[0]
    sel = score_lines(selected, store, embedder, qvec, QueryConfig(), {}, set())
    assert sel.lines[0].line.text == "adopted Oscar"
    stored = score_lines(selected, store, embedder, qvec, QueryConfig(question_aware=False), {}, set())
    assert stored.lines[0].line.field == "description"  # the method's literal order


def test_packing_spends_the_budget_line_by_line_best_first():
    a = make_anchor_set()
    sel = _unscored({"entities": a.entities[:2], "events": a.events[:3], "topics": a.topics[:1]})
    for i, s in enumerate(sel.lines):
        s.score = 0.9 - 0.01 * i
    sel.lines[-1].score = 0.95  # the last event is the most relevant line of all
    cfg = QueryConfig(line_sigma=0.0)
    full = pack_lines(sel, cfg, None, _count)
    small = pack_lines(sel, cfg, 30, _count)
    assert 0 < small.total_tokens <= 30 < full.total_tokens
    shown = [s.line for m in small.lines for s in small.lines[m]]
    assert sel.lines[-1].line in shown  # taken first although its block comes last
    assert small.tokens == {m: _count(small.blocks[m]) + small.blocks[m].count("\n") for m in small.blocks}
    # the method's whole anchors drop the lowest-ranked anchor of the largest block instead
    whole = pack_lines(sel, cfg.with_(packing="anchors"), 40, _count)
    assert whole.total_tokens <= 40 and all(whole.anchor_ids[m] for m in whole.anchor_ids)


def test_lines_below_line_sigma_are_not_worth_their_tokens_but_pinned_events_are():
    a = make_anchor_set()
    sel = _unscored({"entities": a.entities[:1], "events": a.events[:2]})
    for s in sel.lines:
        s.score = 0.1
    sel.lines[-1].pinned = True
    ctx = pack_lines(sel, QueryConfig(line_sigma=0.3), None, _count)
    assert "entities" not in ctx.blocks
    assert ctx.anchor_ids["events"] == ["v2", "v1"]  # chronological; events carry their anchor's (already sigma-cut) score


def test_a_line_that_repeats_a_packed_line_is_skipped_unless_pinned():
    a = make_anchor_set()
    sel = _unscored({"entities": a.entities[:1], "events": a.events[:2]})
    for i, s in enumerate(sel.lines):
        s.score = 0.9 - 0.01 * i
        s.vector = np.eye(8, dtype=np.float32)[i % 8]
    first, other = sel.lines[0], sel.lines[1]
    other.vector = (first.vector + 0.1 * np.eye(8, dtype=np.float32)[7]) / np.linalg.norm(
        first.vector + 0.1 * np.eye(8, dtype=np.float32)[7])  # the same fact in other words: cosine 0.995
    cfg = QueryConfig(line_sigma=0.0, line_redundancy=0.9)
    shown = [s.line for m, lines in pack_lines(sel, cfg, None, _count).lines.items() for s in lines]
    assert first.line in shown and other.line not in shown
    assert len(shown) == len(sel.lines) - 1  # lines that say something else all stay
    kept_all = pack_lines(sel, cfg.with_(line_redundancy=None), None, _count)
    assert other.line in [s.line for lines in kept_all.lines.values() for s in lines]
    other.pinned = True  # a temporal slot's event is shown whatever it repeats
    assert other.line in [s.line for lines in pack_lines(sel, cfg, None, _count).lines.values() for s in lines]


def test_blocks_in_order_events_chronological_without_ids():
    a = make_anchor_set()
    sel = _unscored({"entities": a.entities[:2], "events": [a.events[2], a.events[0], a.events[6]],
                     "topics": a.topics[:1]})
    ctx = render_lines(sel, sel.lines, _count)
    text = ctx.text
    assert text.index("## Topic Summaries") < text.index("## Entity Profiles") < text.index("## Event Records")
    assert ctx.anchor_ids["events"] == ["v1", "v3", "v7"]  # chronological, undated last
    assert "- Melanie (person; aka Mel)" in text and "sources" not in text and "[v1" not in text
    assert "- 7 May 2023: Caroline: went to the LGBTQ support group" in text


def test_expansion_round_robin_from_lines_with_stored_vectors(fake_embedder):
    store = make_store(fake_embedder)
    a = store.anchors
    selected = {"entities": a.entities[:3], "events": a.events[:4], "topics": a.topics[:2]}
    qvec = fake_embedder.encode(["Caroline"])[0]
    sel = score_lines(selected, store, fake_embedder, qvec, QueryConfig(line_sigma=-1), {}, set())
    out = expand(sel, QueryConfig(line_sigma=-1))
    assert len(out) == 9 and [e.module for e in out[:6]] == ["topics", "entities", "events"] * 2
    assert all(e.vector is not None for e in out)  # every query's embedding was stored at build time
    assert len({e.query.lower() for e in out}) == len(out)
    assert expand(sel, QueryConfig(expand=False)) == []
    assert len(expand(sel, QueryConfig(line_sigma=-1, expansion_budget=2))) == 2
    best_first = expand(sel, QueryConfig(line_sigma=-1, expansion_merge="score"))
    assert len(best_first) == 9 and [e.score for e in best_first] == sorted((e.score for e in best_first), reverse=True)


def test_paper_expansion_stops_when_a_module_runs_dry_and_uses_topic_pairs():
    a = make_anchor_set()
    sel = _unscored({"entities": a.entities[:3], "events": a.events[:4], "topics": a.topics[:1]})
    paper = QueryConfig(question_aware=False)
    out = expand(sel, paper)
    assert [e.query for e in out if e.module == "topics"] == ["Caroline is researching counseling programs",
                                                               "Caroline counseling career"]
    assert [e.module for e in out] == ["topics", "entities", "events"] * 2  # topics ran dry after two
    go = expand(sel, paper.with_(continue_after_exhausted=True))
    assert len(go) == 9


def test_original_question_is_not_repeated():
    sel = _unscored({"events": make_anchor_set().events[:1]})
    assert expand(sel, QueryConfig(question_aware=False), original="Caroline went to the LGBTQ support group yesterday") == []


def test_config_with_validates_and_takes_the_methods_names():
    cfg = QueryConfig().with_(R=2)
    assert cfg.temporal.temporal_slots == 2 and cfg.temporal.temporal_slots == 2
    from gravity_engine.errors import ConfigError

    with pytest.raises(ConfigError):
        QueryConfig().with_(K_E=-5)
    with pytest.raises(ConfigError):
        QueryConfig().with_(sigma=7)
    with pytest.raises(ConfigError, match="unknown"):
        QueryConfig().with_(K_X=1)


def test_summaries_and_answer_prompt():
    ctx = render_summaries([("sum0", "(8 May 2023) Caroline: hello")], _count)
    assert ctx.text.startswith("## Conversation Summaries") and ctx.total_tokens > 0 and "sum0" not in ctx.text
    a = make_anchor_set()
    events = render_lines(_unscored({"events": a.events[:1]}), _unscored({"events": a.events[:1]}).lines, _count)
    with_ = answer_messages("When?", ["[8 May 2023] Caroline: hi (D1:1)"], events, "2023-09-01")
    without = answer_messages("When?", ["[8 May 2023] Caroline: hi (D1:1)"], None)
    user = with_[1]["content"]
    assert user.index("<memories>") < user.index("<anchors>") < user.index("Question: When?")
    assert "## Event Records" in user and "Question date: 2023-09-01" in user
    assert "primary source of truth" in with_[0]["content"]
    assert "<anchors>" not in without[1]["content"] and "primary source" not in without[0]["content"]


def test_the_questions_words_in_a_line_add_to_its_score(embedder):
    from gravity_engine.query.pipeline import GravityQuery

    store = make_store(embedder)
    gq = GravityQuery(store, embedder, QueryConfig(line_lexical=1.0), count=_count)
    question = "Which pet did Caroline adopt?"
    lexical = gq._line_lexical(question, gq.config)
    table = store.line_table()
    assert table.lines[int(np.argmax(lexical))].search_text == "Caroline adopted Oscar"  # "adopt" meets "adopted"
    assert 0 < lexical.max() <= 1.0
    assert gq._line_lexical(question, QueryConfig(line_lexical=0.0)) is None
    assert gq._line_lexical("Hmm?", gq.config) is None  # no word of the question in any line
    # added to the cosine: a line the words favour overtakes the rest
    selected = {"entities": [store.anchors.entities[0]], "events": [], "topics": []}
    qvec = embedder.encode(["Tell me about her."])[0]
    plain = score_lines(selected, store, embedder, qvec, QueryConfig(), {}, set())
    last = plain.lines[-1].line
    boost = np.zeros(len(table.lines), dtype=np.float32)
    boost[next(i for i, ln in enumerate(table.lines) if (ln.anchor_id, ln.field) == (last.anchor_id, last.field))] = 5.0
    sel = score_lines(selected, store, embedder, qvec, QueryConfig(), {}, set(), boost)
    assert sel.lines[0].line == last and plain.lines[0].line != last
