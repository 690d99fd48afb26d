"""Query expansion: per-module generators and the round-robin merge with budget and exhaustion."""

from __future__ import annotations

from query_fixtures import make_anchor_set

from gravity_engine.query import QueryConfig
from gravity_engine.query.expand import entity_queries, event_queries, expand, topic_queries


def _selected():
    a = make_anchor_set()
    return {"entities": a.entities[:3], "events": a.events[:4], "topics": a.topics[:2]}


def test_generators_follow_the_method():
    a = make_anchor_set()
    assert next(entity_queries(a.entities[0])) == "Caroline adopted Oscar"
    assert list(event_queries(a.events[0]))[0] == "Caroline went to the LGBTQ support group yesterday"
    assert list(event_queries(a.events[4]))[1] == "Caroline gave a talk at the school about transgender journey"
    assert list(topic_queries(a.topics[0]))[:2] == ["Caroline is researching counseling programs", "Caroline counseling career"]


def test_round_robin_topic_entity_event_within_budget():
    out = expand(_selected(), QueryConfig())
    assert len(out) <= 9
    assert [e.module for e in out[:6]] == ["topics", "entities", "events"] * 2
    assert len({e.query.lower() for e in out}) == len(out)


def test_stops_when_a_module_is_exhausted_unless_told_to_continue():
    sel = _selected()
    sel["topics"] = sel["topics"][:1]  # one topic: two queries (fact + participant pair)
    stop = expand(sel, QueryConfig())
    assert [e.module for e in stop] == ["topics", "entities", "events"] * 2
    go = expand(sel, QueryConfig(continue_after_exhausted=True))
    assert len(go) == 9 and [e.module for e in go[6:]] == ["entities", "events", "entities"]


def test_modules_without_anchors_take_no_part_and_exp_off():
    sel = _selected()
    sel["topics"] = []
    out = expand(sel, QueryConfig())
    assert out and out[0].module == "entities" and {e.module for e in out} == {"entities", "events"}
    assert expand(sel, QueryConfig(expand=False)) == []
    assert expand(sel, QueryConfig(expansion_budget=2)) and len(expand(sel, QueryConfig(expansion_budget=2))) == 2


def test_original_question_is_not_repeated():
    sel = {"entities": [], "events": make_anchor_set().events[:1], "topics": []}
    out = expand(sel, QueryConfig(), original="Caroline went to the LGBTQ support group yesterday")
    assert out == []
