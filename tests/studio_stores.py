"""Hand-made anchor stores for the app and viz tests (fast: FakeEmbedder, no extractor)."""

from __future__ import annotations

from pathlib import Path

from gravity_engine.anchors import (AnchorSet, Attribute, BuildInfo, Entity, Event, FieldCheck, KeyFact, Merge,
                                    Relation, Topic, TopicSession)
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder

HOSTILE = "<img src=x onerror=alert(1)>"


def demo_conversation(name_a: str = "Priya", name_b: str = "Marco") -> Conversation:
    days = ["2023-05-08T10:00:00", "2023-05-22T10:00:00", "2023-06-05T10:00:00"]
    lines = [
        [(name_a, "I noticed our medical model hallucinated a drug dose yesterday."),
         (name_b, "That is worrying. Did you report it to Dr. Chen?"),
         (name_a, "Yes, Dr. Chen at St. Mary Hospital reviewed it.")],
        [(name_a, "We added a knowledge graph of drug interactions last week."),
         (name_b, "Did the hallucinations drop?"),
         (name_a, "They dropped by half. My dog Biscuit kept me company during the late nights.")],
        [(name_a, "Next month we start the X-ray module with St. Mary Hospital."),
         (name_b, "Someday you should present it at a conference."),
         (name_a, "Maybe. The knowledge graph work is done now.")],
    ]
    sessions = []
    for i, (day, turns) in enumerate(zip(days, lines)):
        sid = f"session_{i + 1}"
        utts = [Utterance(id=f"D{i + 1}:{j + 1}", speaker=sp, text=tx, session_id=sid, timestamp=day,
                          timestamp_text=day[:10]) for j, (sp, tx) in enumerate(turns)]
        sessions.append(Session(id=sid, index=i, timestamp=day, timestamp_text=day[:10], utterances=utts))
    return Conversation(id="demo-medllm", sessions=sessions, speakers=[name_a, name_b], source="demo", format="jsonl")


def demo_anchors(name_a: str = "Priya", name_b: str = "Marco") -> AnchorSet:
    entities = [
        Entity(id="ent_1", name=name_a, type="person", aliases=["P."], description="engineer building a medical LLM",
               attributes=[Attribute(key="works on", value="medical LLM", source_ids=["D1:1"]),
                           Attribute(key="has a pet named", value="Biscuit", source_ids=["D2:3"])],
               relations=[Relation(predicate="works with", target="Dr. Chen", target_id="ent_3", source_ids=["D1:3"]),
                          Relation(predicate="owns", target="Biscuit", target_id="ent_5", source_ids=["D2:3"]),
                          Relation(predicate="partners with", target="St. Mary Hospital", source_ids=["D3:1"])],
               source_ids=["D1:1", "D1:3", "D2:1", "D2:3", "D3:1", "D3:3"], mentions=6,
               first_seen="2023-05-08T10:00:00", last_seen="2023-06-05T10:00:00",
               merges=[Merge(alias="P.", alias_id="ent_9", reason="nickname", source_ids=["D2:1"])],
               checks=[FieldCheck(field="attributes[0]", supported=True, score=0.8, method="embedding"),
                       FieldCheck(field="attributes[1]", supported=False, score=0.2, method="embedding",
                                  note="weak support")]),
        Entity(id="ent_2", name=name_b, type="person", relations=[Relation(predicate="talks with", target=name_a,
                                                                               source_ids=["D1:2"])],
               source_ids=["D1:2", "D2:2", "D3:2"], mentions=3),
        Entity(id="ent_3", name="Dr. Chen", type="person",
               relations=[Relation(predicate="works at", target="St. Mary Hospital", target_id="ent_4",
                                   source_ids=["D1:3"])], source_ids=["D1:2", "D1:3"], mentions=2),
        Entity(id="ent_4", name="St. Mary Hospital", type="organization", source_ids=["D1:3", "D3:1"], mentions=2),
        Entity(id="ent_5", name="Biscuit", type="pet", source_ids=["D2:3"], mentions=1),
    ]
    events = [
        Event(id="evt_1", what="noticed the model hallucinated a drug dose", participants=[name_a],
              when_text="yesterday", date_start="2023-05-07", date_end="2023-05-07", granularity="day",
              session_id="session_1", session_date="2023-05-08T10:00:00", topic_id="top_1", source_ids=["D1:1"],
              causes=["evt_2"]),
        Event(id="evt_2", what="added a knowledge graph of drug interactions", participants=[name_a],
              when_text="last week", date_start="2023-05-15", date_end="2023-05-21", granularity="week",
              session_id="session_2", session_date="2023-05-22T10:00:00", topic_id="top_1", source_ids=["D2:1"],
              follows=["evt_1"]),
        Event(id="evt_3", what="start the X-ray module", participants=[name_a, "St. Mary Hospital"],
              when_text="next month", date_start="2023-07-01", date_end="2023-07-31", granularity="month",
              session_id="session_3", session_date="2023-06-05T10:00:00", topic_id="top_2", source_ids=["D3:1"]),
        Event(id="evt_4", what="present the work at a conference", participants=[name_a], when_text="someday",
              granularity="unknown", session_id="session_3", session_date="2023-06-05T10:00:00",
              source_ids=["D3:2"]),
    ]
    topics = [
        Topic(id="top_1", label="hallucination and knowledge graph", keywords=["hallucination", "knowledge", "graph"],
              summary="A hallucinated dose led to a knowledge graph of drug interactions.",
              key_facts=[KeyFact(text="hallucinations dropped by half", source_ids=["D2:3"])],
              participants=[name_a, name_b],
              sessions=[TopicSession(session_id="session_1", date="2023-05-08", state="hallucination noticed",
                                     mentions=2, source_ids=["D1:1", "D1:2"]),
                        TopicSession(session_id="session_2", date="2023-05-22", state="knowledge graph added",
                                     mentions=3, source_ids=["D2:1", "D2:2", "D2:3"]),
                        TopicSession(session_id="session_3", date="2023-06-05", state="graph work done",
                                     mentions=1, source_ids=["D3:3"])],
              status="resolved", source_ids=["D1:1", "D2:1", "D3:3"]),
        Topic(id="top_2", label="X-ray module", keywords=["x-ray", "module"], summary="An X-ray module is planned.",
              participants=[name_a],
              sessions=[TopicSession(session_id="session_3", date="2023-06-05", state="X-ray module planned",
                                     mentions=1, source_ids=["D3:1"])], source_ids=["D3:1"]),
    ]
    return AnchorSet(conversation_id="demo-medllm",
                     built_with=BuildInfo(backend="classic", embedding_model="fake-embedder", embedding_dim=64,
                                          sessions=["session_1", "session_2", "session_3"]),
                     entities=entities, events=events, topics=topics)


def make_store(path: Path, *, hostile: bool = False) -> AnchorStore:
    """Write a small store to ``path``; with ``hostile`` a speaker is named with an HTML payload."""
    name_a = HOSTILE if hostile else "Priya"
    anchors = demo_anchors(name_a=name_a)
    conversation = demo_conversation(name_a=name_a)
    embeddings = embed_anchors(anchors, FakeEmbedder(dim=64))
    store = AnchorStore(anchors=anchors, embeddings=embeddings, conversation=conversation,
                        report={"verification": {"share": 0.9}, "counts": anchors.counts()})
    store.save(path)
    return store
