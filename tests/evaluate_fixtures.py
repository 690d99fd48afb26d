"""A toy conversation, its questions, a hand-built anchor store and a scripted answer/judge router,
so the evaluation tests know the exact table they must get. All text here is invented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gravity_engine.anchors import AnchorSet, BuildInfo, Entity, Event, KeyFact, Topic
from gravity_engine.loaders import load_conversations
from gravity_engine.store import AnchorStore, embed_anchors

CONVERSATION_ID = "garden_club"

_TURNS = [
    ("session_1", "2024-04-02 18:00", [
        ("Nadia", "The garden club meets at the library on Tuesdays now."),
        ("Felix", "I planted tomatoes and basil yesterday."),
        ("Nadia", "My sister Ines is visiting from Lisbon next week."),
        ("Felix", "Our compost bin finally works; the trick was more cardboard."),
    ]),
    ("session_2", "2024-05-14 18:30", [
        ("Nadia", "Ines loved the seed swap last Saturday."),
        ("Felix", "The tomatoes got blight, so I pulled three plants."),
        ("Nadia", "I was elected treasurer of the garden club two days ago."),
        ("Felix", "Congratulations! I am building a trellis for the beans."),
    ]),
]

# question id -> (question, gold, category, answer without anchors, answer with anchors)
QUESTIONS = {
    "q1": ("Where does the garden club meet?", "the library", "single-hop", "the library", "the library"),
    "q2": ("When did Felix plant tomatoes?", "1 April 2024", "temporal", "I don't know", "1 April 2024"),
    "q3": ("Who is visiting Nadia?", "Ines", "single-hop", "Ines", "Lisbon"),
    "q4": ("What fixed the compost bin?", "more cardboard", "open-domain", "water", "worms"),
    "q5": ("When was Nadia elected treasurer?", "12 May 2024", "temporal", "May 2024", "12 May 2024"),
    "q6": ("What is Felix building?", "a trellis", "single-hop", "a trellis", "a bean trellis"),
}
MALFORMED_ANSWER = "a bean trellis"  # the judge replies garbage for this answer, even after the repair round
# The table the router above must produce (variants baseline and full):
EXPECTED_BASELINE = (3, 6)  # q1, q3, q6 correct of 6
EXPECTED_FULL = (3, 5)  # q1, q2, q5 correct of 5 judged (q6's judge fails)
EXPECTED_GAINS = {"q2", "q5"}
EXPECTED_LOSSES = {"q3"}


def write_conversation(folder: Path) -> tuple[Path, Path]:
    """The toy conversation as JSONL and its questions file (``<stem>.questions.json``) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    conv = folder / f"{CONVERSATION_ID}.jsonl"
    lines = []
    for session, start, turns in _TURNS:
        for i, (speaker, text) in enumerate(turns):
            n = session.split("_")[1]
            lines.append(json.dumps({"id": f"S{n}:{i + 1}", "session": session, "timestamp": start,
                                     "speaker": speaker, "text": text}))
    conv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    qfile = folder / f"{CONVERSATION_ID}.questions.json"
    qfile.write_text(json.dumps([{"id": qid, "question": q, "answer": gold, "category": cat, "evidence": ["S1:1"]}
                                 for qid, (q, gold, cat, _, _) in QUESTIONS.items()]), encoding="utf-8")
    return conv, qfile


def anchor_set() -> AnchorSet:
    entities = [
        Entity(id="e1", name="Nadia", type="person", description="treasurer of the garden club",
               source_ids=["S1:1", "S2:3"], mentions=4),
        Entity(id="e2", name="Felix", type="person", description="grows tomatoes and beans",
               source_ids=["S1:2", "S2:2"], mentions=4),
        Entity(id="e3", name="Ines", type="person", description="Nadia's sister from Lisbon", source_ids=["S1:3"]),
    ]
    events = [
        Event(id="v1", what="Felix planted tomatoes and basil", participants=["Felix"], when_text="yesterday",
              date_start="2024-04-01", date_end="2024-04-01", granularity="day", session_id="session_1",
              source_ids=["S1:2"]),
        Event(id="v2", what="Nadia was elected treasurer of the garden club", participants=["Nadia"],
              when_text="two days ago", date_start="2024-05-12", date_end="2024-05-12", granularity="day",
              session_id="session_2", source_ids=["S2:3"]),
    ]
    topics = [
        Topic(id="t1", label="vegetable garden", keywords=["tomatoes", "basil", "blight", "beans", "trellis"],
              summary="Felix grows tomatoes (lost three to blight) and builds a bean trellis.",
              key_facts=[KeyFact(text="Felix pulled three tomato plants with blight", source_ids=["S2:2"])],
              participants=["Felix"], source_ids=["S1:2", "S2:2", "S2:4"]),
        Topic(id="t2", label="compost bin", keywords=["compost", "bin", "cardboard"],
              summary="Felix got the compost bin working by adding more cardboard.", participants=["Felix"],
              source_ids=["S1:4"]),
    ]
    return AnchorSet(conversation_id=CONVERSATION_ID, built_with=BuildInfo(embedding_model="fake-embedder",
                                                                            embedding_dim=64),
                     entities=entities, events=events, topics=topics)


def write_store(stores: Path, conversation_file: Path, embedder) -> Path:
    """The hand-built store of the toy conversation under ``stores/garden_club`` (as a build would leave it)."""
    conv = load_conversations(conversation_file)[0]
    anchors = anchor_set()
    store = AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, embedder), conversation=conv)
    store.save(stores / CONVERSATION_ID)
    return stores / CONVERSATION_ID


_QUESTION = re.compile(r"Question: (.*?)\nShort answer:", re.S)
_JUDGE = re.compile(r"<gold_answer>\n(.*?)\n</gold_answer>\n<generated_answer>\n(.*)\n</generated_answer>", re.S)
_BY_TEXT = {q: (qid, base, grav) for qid, (q, _, _, base, grav) in QUESTIONS.items()}


def prompt_name(request: dict) -> str | None:
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return None


def first_user(request: dict) -> str:
    """The first user message: the judge's question (later ones are the client's repair rounds)."""
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def answer_of(request: dict) -> tuple[str, bool] | None:
    """(question, with anchors?) of an answer request; None for any other request."""
    if prompt_name(request) is not None:
        return None
    user = request["messages"][-1]["content"]
    m = _QUESTION.search(user)
    return (m.group(1).strip(), "<anchors>" in user) if m else None


def router(request: dict):
    """Answers from ``QUESTIONS``; the judge marks an answer CORRECT when it equals the gold text."""
    name = prompt_name(request)
    if name == "judge":
        gold, answer = _JUDGE.search(first_user(request)).groups()
        if answer.strip() == MALFORMED_ANSWER:
            return "the answer looks fine to me"  # no JSON at all
        return {"reasoning": "compared with the gold text",
                "label": "CORRECT" if answer.strip().lower() == gold.strip().lower() else "WRONG"}
    asked = answer_of(request)
    if asked is None:
        return "unexpected request"
    question, with_anchors = asked
    _, base, grav = _BY_TEXT.get(question, ("", "I don't know", "I don't know"))
    return grav if with_anchors else base
