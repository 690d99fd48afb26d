"""A small hand-built conversation and anchor store for the query tests (no extractor needed)."""

from __future__ import annotations

from gravity_engine.anchors import AnchorSet, Attribute, BuildInfo, Entity, Event, KeyFact, Relation, Topic, TopicSession
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.store import AnchorStore, embed_anchors

_SESSIONS = [
    ("s1", "2023-05-08T13:56", [
        ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
        ("Melanie", "That's great! I painted a sunrise over the lake last week."),
        ("Caroline", "I'm thinking about a career in counseling and mental health."),
        ("Melanie", "My kids love pottery; we made bowls together."),
    ]),
    ("s2", "2023-06-20T10:00", [
        ("Caroline", "I adopted a dog named Oscar from the shelter."),
        ("Melanie", "We went camping at the beach with the family."),
        ("Caroline", "The adoption agency interview went well, I hope to adopt a child."),
        ("Melanie", "I ran a charity race for mental health last Saturday."),
    ]),
    ("s3", "2023-08-15T18:30", [
        ("Caroline", "I gave a talk at the school about my transgender journey."),
        ("Melanie", "Oscar looks so happy in the new photos!"),
        ("Caroline", "I'm researching counseling programs for next year."),
        ("Melanie", "We visited the museum with the kids on Sunday."),
    ]),
]


def make_conversation() -> Conversation:
    sessions = []
    for i, (sid, ts, turns) in enumerate(_SESSIONS):
        utts = [Utterance(id=f"D{i + 1}:{j + 1}", speaker=sp, text=tx, session_id=sid, timestamp=ts)
                for j, (sp, tx) in enumerate(turns)]
        sessions.append(Session(id=sid, index=i, timestamp=ts, utterances=utts))
    return Conversation(id="toy", sessions=sessions, speakers=["Caroline", "Melanie"], format="test")


def make_anchor_set() -> AnchorSet:
    entities = [
        Entity(id="e1", name="Caroline", type="person", description="transgender woman interested in counseling",
               attributes=[Attribute(key="career goal", value="counseling and mental health", source_ids=["D1:3"])],
               relations=[Relation(predicate="adopted", target="Oscar", target_id="e3", source_ids=["D2:1"])],
               source_ids=["D1:1", "D1:3", "D2:1"], mentions=6),
        Entity(id="e2", name="Melanie", type="person", aliases=["Mel"], description="painter and mother",
               attributes=[Attribute(key="hobby", value="painting", source_ids=["D1:2"])],
               relations=[Relation(predicate="made bowls with", target="kids", source_ids=["D1:4"])],
               source_ids=["D1:2", "D1:4"], mentions=6),
        Entity(id="e3", name="Oscar", type="pet", description="dog adopted from the shelter",
               source_ids=["D2:1", "D3:2"], mentions=2),
        Entity(id="e4", name="LGBTQ support group", type="organization", source_ids=["D1:1"], mentions=1),
    ]
    events = [
        Event(id="v1", what="went to the LGBTQ support group", participants=["Caroline"], when_text="yesterday",
              date_start="2023-05-07", date_end="2023-05-07", granularity="day", session_id="s1",
              session_date="2023-05-08T13:56", source_ids=["D1:1"]),
        Event(id="v2", what="painted a sunrise over the lake", participants=["Melanie"], when_text="last week",
              date_start="2023-05-01", date_end="2023-05-07", granularity="week", session_id="s1", source_ids=["D1:2"]),
        Event(id="v3", what="adopted a dog named Oscar from the shelter", participants=["Caroline"],
              date_start="2023-06-20", date_end="2023-06-20", granularity="day", session_id="s2", source_ids=["D2:1"]),
        Event(id="v4", what="ran a charity race for mental health", participants=["Melanie"], when_text="last Saturday",
              date_start="2023-06-17", date_end="2023-06-17", granularity="day", session_id="s2", source_ids=["D2:4"]),
        Event(id="v5", what="gave a talk at the school about transgender journey", participants=["Caroline"],
              date_start="2023-08-15", date_end="2023-08-15", granularity="day", where="school", session_id="s3",
              source_ids=["D3:1"]),
        Event(id="v6", what="visited the museum with the kids", participants=["Melanie"], when_text="Sunday",
              date_start="2023-08-13", date_end="2023-08-13", granularity="day", where="museum", session_id="s3",
              source_ids=["D3:4"]),
        Event(id="v7", what="went camping at the beach with the family", participants=["Melanie"],
              session_id="s2", source_ids=["D2:2"]),
    ]
    topics = [
        Topic(id="t1", label="counseling career", keywords=["counseling", "mental health", "career", "programs"],
              summary="Caroline plans a career in counseling and researches programs.",
              key_facts=[KeyFact(text="Caroline is researching counseling programs", source_ids=["D3:3"])],
              participants=["Caroline"], source_ids=["D1:3", "D3:3"],
              sessions=[TopicSession(session_id="s1", date="2023-05-08", state="considering counseling"),
                        TopicSession(session_id="s3", date="2023-08-15", state="researching programs")]),
        Topic(id="t2", label="adoption", keywords=["adopt", "adoption", "agency", "dog", "child"],
              summary="Caroline adopted a dog and is going through child adoption.",
              key_facts=[KeyFact(text="Caroline had an adoption agency interview", source_ids=["D2:3"])],
              participants=["Caroline"], source_ids=["D2:1", "D2:3"]),
        Topic(id="t3", label="family outings", keywords=["camping", "beach", "museum", "kids", "pottery"],
              summary="Melanie's outings and crafts with her kids.", participants=["Melanie"],
              source_ids=["D1:4", "D2:2", "D3:4"]),
    ]
    return AnchorSet(conversation_id="toy", built_with=BuildInfo(embedding_model="fake-embedder", embedding_dim=64),
                     entities=entities, events=events, topics=topics)


def make_store(embedder) -> AnchorStore:
    anchors = make_anchor_set()
    anchors.built_with.embedding_model = embedder.name
    anchors.built_with.embedding_dim = embedder.dim
    return AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, embedder), conversation=make_conversation())
