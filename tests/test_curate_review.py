"""The review queue: each check finds the anchor it is about, ranks it, says why and cites sources;
with a gold file, the store is scored by ``gold.score_store`` and the misses are listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gravity_engine.anchors import Entity, Event, FieldCheck, Relation, TopicSession
from gravity_engine.curate.edits import find_ref, make_edit, record_edit
from gravity_engine.curate.review import gold_miss_lines, review
from gravity_engine.eval.gold import load_gold, score_store
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder

from studio_stores import demo_anchors, demo_conversation

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "sample_data" / "gold" / "robotics_team.gold.json"


def _store_with_problems() -> AnchorStore:
    a = demo_anchors()
    ents = {e.name: e for e in a.entities}
    ents["Biscuit"].type = "organization"  # Priya "owns" it: a pet
    a.entities.append(Entity(id="ent_lol", name="Lol", type="other", source_ids=["D1:2"], mentions=1))
    a.entities.append(Entity(id="ent_week", name="Knowledge", type="organization", source_ids=["D2:1"], mentions=1))
    ents["Marco"].relations.append(Relation(predicate="friend_of", target="Priya", target_id="ent_1", source_ids=["D1:2"]))
    a.events.append(Event(id="evt_far", what="noticed the model hallucinated", when_text="yesterday",
                          date_start="2019-05-07", date_end="2019-05-07", granularity="day", session_id="session_1",
                          session_date="2023-05-08T10:00:00", source_ids=["D1:1"]))
    a.events[0].checks = [FieldCheck(field="date", supported=False, score=0.0, method="date",
                                     note="'yesterday' resolves to 2023-05-07")]
    ents["Priya"].checks.append(FieldCheck(field="relations[2]", supported=False, score=0.1, method="string",
                                           note="'St. Mary Hospital' does not occur in its sources"))
    topic = a.topics[0]
    topic.label = "model"  # (the label starts every arc line; a short one lets the fake embedder see the states)
    for step, verb in zip(topic.sessions, ("planned", "added", "done")):
        step.state = f"knowledge graph of drug doses {verb}"
    topic.sessions.append(TopicSession(session_id="session_3", date="2023-06-05",
                                       state="zebra violin marathon tulips", source_ids=["D3:2"]))
    conv = demo_conversation()
    return AnchorStore(anchors=a, embeddings=embed_anchors(a, FakeEmbedder(dim=64)), conversation=conv)


def _reasons(queue, anchor_id):
    item = next((i for i in queue.items if i.anchor_id == anchor_id), None)
    return {} if item is None else {r.kind: r for r in item.reasons}


def test_each_check_finds_its_anchor_with_reason_sources_and_a_fix():
    store = _store_with_problems()
    q = review(store)
    biscuit = _reasons(q, "ent_5")["type_conflict"]
    assert "says pet" in biscuit.text and biscuit.fix == {"kind": "set_type", "type": "pet"}
    assert biscuit.source_ids == ["D2:3"]
    assert "junk" in _reasons(q, "ent_lol") and "seen_once" in _reasons(q, "ent_lol")
    assert "written lower-case in its sources" in _reasons(q, "ent_week")["junk"].text
    assert "no date" in _reasons(q, "evt_4")["undated"].text
    far = _reasons(q, "evt_far")
    assert "years from its session" in far["far_date"].text
    dup = far["duplicate"]
    assert "evt_1" in dup.text and dup.source_ids == ["D1:1"] and dup.fix == {"kind": "delete"}
    assert "resolves to 2023-05-07" in _reasons(q, "evt_1")["unsupported"].text
    rel = _reasons(q, "ent_1")["unsupported"]
    assert rel.fix == {"kind": "delete_field", "field": "relations", "key": "partners with", "value": "St. Mary Hospital"}
    assert rel.source_ids == ["D3:1"]
    assert "session_3" in _reasons(q, "top_1")["topic_mix"].text
    # Marco is in a friend_of relation: a person, and not "seen once"; speakers are never junk
    assert "type_conflict" not in _reasons(q, "ent_2") and "junk" not in _reasons(q, "ent_1")


def test_queue_is_ranked_by_combined_score():
    q = review(_store_with_problems())
    scores = [i.score for i in q.items]
    assert scores == sorted(scores, reverse=True)
    far = next(i for i in q.items if i.anchor_id == "evt_far")
    single = max(r.weight for r in far.reasons)
    assert far.score > single  # two reasons rank above either alone
    assert q.counts["duplicate"] == 1
    assert q.rows()[0]["score"] == scores[0]


def test_a_clean_store_has_no_type_or_junk_reasons():
    a = demo_anchors()
    store = AnchorStore(anchors=a, embeddings=embed_anchors(a, FakeEmbedder(dim=64)), conversation=demo_conversation())
    kinds = {r.kind for i in review(store).items for r in i.reasons}
    assert not kinds & {"type_conflict", "junk", "duplicate", "far_date", "topic_mix"}


@pytest.fixture(scope="module")
def gold_store(tmp_path_factory):
    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversation

    gold = load_gold(GOLD)
    path = tmp_path_factory.mktemp("gold") / "robotics"
    build_store(load_conversation(gold.conversation_path()), path, backend="classic", embedder=FakeEmbedder())
    return gold, path


def test_gold_score_and_misses_on_a_small_annotated_conversation(gold_store):
    gold, path = gold_store
    store = AnchorStore.load(path)
    q = review(store, gold)
    direct = score_store(store.anchors, gold, speakers=store.conversation.speakers)
    assert q.gold.metrics() == direct.metrics()  # the gold module's scorer, not a second one
    assert q.gold.entity_recall.n == sum(not e.optional for e in gold.entities)
    lines = gold_miss_lines(q.gold)
    assert len(lines) == sum(len(v) for v in vars(q.gold.misses).values())

    # a wrong type made on purpose is a gold miss and the top of the queue, with the gold's type as the fix
    # (from the right type first: the build's own type for Otter is the extractor's business, not this test's)
    record_edit(path, make_edit("set_type", find_ref(store, "entities", "Otter"), type="project"), FakeEmbedder())
    q = review(AnchorStore.load(path), gold)
    record_edit(path, make_edit("set_type", find_ref(store, "entities", "Otter"), type="person"), FakeEmbedder())
    edited = AnchorStore.load(path)
    q2 = review(edited, gold)
    assert any(kind == "wrong type" and line.startswith("Otter: project") for kind, line in gold_miss_lines(q2.gold))
    assert q2.gold.type_accuracy.hit == q.gold.type_accuracy.hit - 1
    otter = next(i for i in q2.items if i.name == "Otter")
    gold_reason = next(r for r in otter.reasons if r.kind == "gold")
    assert gold_reason.fix == {"kind": "set_type", "type": "project"}
    assert otter.score >= 0.9
