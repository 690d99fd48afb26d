"""Build orchestration, consolidation, verification and the store, independent of any backend.

``WordExtractor`` below is a tiny rule extractor written for these tests: it makes the build's own
logic (checkpoints, failures, resume, incremental update, merges) observable batch by batch.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from gravity_engine.anchors import AnchorSet, Attribute, Entity, Event, KeyFact, Relation, Topic, TopicSession
from gravity_engine.build import BuildCancelled, build_store, estimate_build
from gravity_engine.build.consolidate import consolidate_entities, consolidate_events, consolidate_topics
from gravity_engine.merging import unmerge
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.errors import StoreError
from gravity_engine.extract.base import Batch, BatchAnchors, make_batches
from gravity_engine.store import AnchorStore
from gravity_engine.build.verify import verify_anchors


def make_conversation(n_sessions: int = 3, per_session: int = 5) -> Conversation:
    sessions = []
    for s in range(1, n_sessions + 1):
        utts = [
            Utterance(id=f"D{s}:{i}", speaker="Ann" if i % 2 else "Bob",
                      text=f"In session {s} I talked about Paris and turn {i}. Bob likes chess.",
                      session_id=f"session_{s}", timestamp=f"2024-0{s}-10T10:00")
            for i in range(1, per_session + 1)
        ]
        sessions.append(Session(id=f"session_{s}", index=s, timestamp=f"2024-0{s}-10T10:00", utterances=utts))
    return Conversation(id="t1", sessions=sessions, speakers=["Ann", "Bob"])


class WordExtractor:
    name = "word"

    def __init__(self, fail_sessions: set[str] = frozenset()):
        self.fail_sessions = set(fail_sessions)
        self.seen: list[str] = []

    def extract_batch(self, batch: Batch) -> BatchAnchors:
        self.seen.append(batch.session_id)
        if batch.session_id in self.fail_sessions:
            raise RuntimeError(f"endpoint down for {batch.session_id}")
        ids = [u.id for u in batch.utterances]
        return BatchAnchors(
            entities=[Entity(id="l1", name="Bob", type="person", source_ids=ids,
                             attributes=[Attribute(key="likes", value="chess", source_ids=ids[:1])]),
                      Entity(id="l2", name="Paris", type="place", source_ids=ids[:1])],
            events=[Event(id="l1", what=f"Ann talked about Paris in {batch.session_id}", participants=["Ann"],
                          session_id=batch.session_id, session_date=batch.session_time, source_ids=ids[:1])],
            topics=[Topic(id="l1", label="Paris", keywords=["paris", "travel"], source_ids=ids,
                          sessions=[TopicSession(session_id=batch.session_id, state="Paris talk", source_ids=ids)])],
            stats={"calls": 1},
        )

    def finalize(self, conversation, anchors, new_session_ids):
        return anchors

    def describe(self):
        return {"backend": "word", "llm_model": None}


def test_make_batches_respects_sessions_and_size():
    conv = make_conversation(2, 5)
    batches = make_batches(conv, batch_size=2)
    assert [len(b.utterances) for b in batches] == [2, 2, 1, 2, 2, 1]
    assert {b.session_id for b in batches[:3]} == {"session_1"}
    assert batches[0].key() != batches[1].key()
    with pytest.raises(ValueError):
        make_batches(conv, batch_size=0)


def test_build_writes_store_and_round_trips(tmp_path, fake_embedder):
    conv = make_conversation()
    store = build_store(conv, tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder)
    assert store.anchors.counts() == {"entities": 2, "events": 3, "topics": 1}
    bob = next(e for e in store.anchors.entities if e.name == "Bob")
    assert bob.mentions == 15 and bob.attributes[0].source_ids == ["D1:1", "D2:1", "D3:1"]
    assert [s.session_id for s in store.anchors.topics[0].sessions] == ["session_1", "session_2", "session_3"]
    loaded = AnchorStore.load(tmp_path / "s")
    assert loaded.anchors == store.anchors
    assert loaded.matrix("events").shape == (3, fake_embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(loaded.matrix("entities"), axis=1), 1.0, rtol=1e-5)
    raw = json.loads((tmp_path / "s" / "anchors.json").read_text())
    assert {"entities", "events", "topics", "schema_version", "built_with"} <= raw.keys()
    assert all("id" in x and "source_ids" in x for m in ("entities", "events", "topics") for x in raw[m])
    assert loaded.conversation.n_utterances() == 15
    assert loaded.report["batches"]["total"] == 3


def test_failed_batches_are_reported_and_a_rerun_retries_only_them(tmp_path, fake_embedder):
    conv = make_conversation()
    first = WordExtractor(fail_sessions={"session_2"})
    store = build_store(conv, tmp_path / "s", extractor=first, embedder=fake_embedder)
    failed = store.report["batches"]["failed"]
    assert [f["session_id"] for f in failed] == ["session_2"] and "endpoint down" in failed[0]["error"]
    assert "session_2" not in store.anchors.built_with.sessions
    second = WordExtractor()
    store = build_store(conv, tmp_path / "s", extractor=second, embedder=fake_embedder)
    assert second.seen == ["session_2"]
    assert store.report["batches"]["from_checkpoint"] == 2 and not store.report["batches"]["failed"]
    assert store.anchors.counts()["events"] == 3


def test_cancel_keeps_finished_batches(tmp_path, fake_embedder):
    conv = make_conversation()
    cancel = threading.Event()
    stages = []

    def progress(p):
        stages.append((p.stage, p.done, p.total))
        if p.stage == "extract" and p.done == 1:
            cancel.set()

    with pytest.raises(BuildCancelled):
        build_store(conv, tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder, progress=progress,
                    cancel=cancel)
    assert not (tmp_path / "s" / "anchors.json").exists()
    resumed = WordExtractor()
    build_store(conv, tmp_path / "s", extractor=resumed, embedder=fake_embedder)
    assert resumed.seen == ["session_2", "session_3"]
    assert ("extract", 0, 3) in stages


def test_incremental_update_extracts_only_new_sessions(tmp_path, fake_embedder):
    full = make_conversation(3)
    short = full.model_copy(update={"sessions": full.sessions[:2]})
    build_store(short, tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder)
    later = WordExtractor()
    store = build_store(full, tmp_path / "s", extractor=later, embedder=fake_embedder, update=True)
    assert later.seen == ["session_3"]
    assert store.anchors.built_with.sessions == ["session_1", "session_2", "session_3"]
    assert store.anchors.counts()["events"] == 3
    assert [e.id for e in store.anchors.events] == ["evt-0001", "evt-0002", "evt-0003"]
    assert store.report["incremental"] is True


def test_update_refuses_a_different_conversation(tmp_path, fake_embedder):
    build_store(make_conversation(), tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder)
    other = make_conversation().model_copy(update={"id": "other"})
    with pytest.raises(StoreError, match="holds conversation 't1'"):
        build_store(other, tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder, update=True)
    with pytest.raises(StoreError, match="nothing to update"):
        build_store(other, tmp_path / "empty", extractor=WordExtractor(), embedder=fake_embedder, update=True)


def test_entities_merge_first_names_and_merges_can_be_undone():
    groups = [[Entity(id="a", name="Priya Raman", type="person", source_ids=["1"],
                      attributes=[Attribute(key="works at", value="Northwind", source_ids=["1"])])],
              [Entity(id="b", name="priya", type="person", source_ids=["2"], aliases=["P."], description="potter",
                      attributes=[Attribute(key="likes", value="pottery", source_ids=["2"])]),
               Entity(id="c", name="Mel", type="person", source_ids=["3"]),
               Entity(id="d", name="Melanie", type="person", source_ids=["4"],
                      relations=[Relation(predicate="friend of", target="Priya", source_ids=["4"])])]]
    entities = consolidate_entities(groups, speakers=["Melanie", "Priya Raman"])
    names = sorted(e.name for e in entities)
    assert names == ["Melanie", "Priya Raman"]
    priya = next(e for e in entities if e.name == "Priya Raman")
    assert priya.merges[0].alias == "priya" and priya.merges[0].reason == "first name of a full name"
    assert {a.value for a in priya.attributes} == {"Northwind", "pottery"}
    mel = next(e for e in entities if e.name == "Melanie")
    assert mel.merges[0].reason == "nickname of a speaker"
    assert mel.relations[0].target_id == priya.id
    anchors = AnchorSet(entities=entities)
    undone = unmerge(anchors, priya.id, "priya")
    back = next(e for e in undone.entities if e.name == "priya")
    restored_priya = next(e for e in undone.entities if e.name == "Priya Raman")
    assert [a.value for a in back.attributes] == ["pottery"]
    assert [a.value for a in restored_priya.attributes] == ["Northwind"] and not restored_priya.merges
    assert restored_priya.source_ids == ["1"]
    assert restored_priya.aliases == [] and restored_priya.description == ""  # what the merge brought is gone
    assert back.aliases == ["P."] and back.description == "potter"
    with pytest.raises(KeyError):
        unmerge(anchors, priya.id, "nobody")


def test_events_dedupe_within_a_session_and_links_become_global():
    g1 = [Event(id="x1", what="Ann ran a marathon", session_id="s1", source_ids=["1"]),
          Event(id="x2", what="Ann rested", session_id="s1", follows=["x1"], source_ids=["2"])]
    g2 = [Event(id="y1", what="Ann ran a marathon!", session_id="s1", source_ids=["3"])]
    events = consolidate_events([g1, g2])
    assert [e.id for e in events] == ["evt-0001", "evt-0002"]
    assert events[0].source_ids == ["1", "3"] and events[1].follows == ["evt-0001"]


def test_topics_join_by_label_or_keywords_into_time_ordered_arcs():
    t1 = Topic(id="a", label="MedLLM hallucinations", keywords=["medllm", "hallucination", "dosage"],
               sessions=[TopicSession(session_id="s2", date="2024-03-20", state="fixing", source_ids=["4"])],
               key_facts=[KeyFact(text="a dosage was invented", source_ids=["4"])])
    t2 = Topic(id="b", label="Grounding", keywords=["medllm", "hallucination", "dosage", "kg"],
               sessions=[TopicSession(session_id="s1", date="2024-03-12", state="noticed", source_ids=["1"])])
    t3 = Topic(id="c", label="Pottery", keywords=["clay"])
    topics = consolidate_topics([[t1], [t2, t3]])
    assert len(topics) == 2
    arc = topics[0]
    assert [s.session_id for s in arc.sessions] == ["s1", "s2"] and "kg" in arc.keywords
    assert topics[1].id == "top-pottery"


def test_verify_flags_unsupported_fields(fake_embedder):
    conv = Conversation(id="v", speakers=["Ann"], sessions=[Session(id="s1", index=1, timestamp="2023-05-08T13:56", utterances=[
        Utterance(id="u1", speaker="Ann", text="I adopted a dog named Rex yesterday.", session_id="s1", timestamp="2023-05-08T13:56"),
        Utterance(id="u2", speaker="Ann", text="I love hiking.", session_id="s1")])])
    anchors = AnchorSet(entities=[Entity(id="e1", name="Ann", type="person", source_ids=["u1", "u2"], attributes=[
        Attribute(key="likes", value="hiking", source_ids=["u2"]),
        Attribute(key="likes", value="opera singing", source_ids=["u2"]),
        Attribute(key="pet", value="Rex", source_ids=["nope"])])],
        events=[Event(id="v1", what="Ann adopted a dog named Rex", when_text="yesterday", date_start="2023-05-07",
                      session_date="2023-05-08T13:56", source_ids=["u1"]),
                Event(id="v2", what="Ann adopted a dog", when_text="last year", date_start="2022-01-01",
                      session_date="2023-05-08T13:56", source_ids=["u1"])])
    summary = verify_anchors(anchors, conv, fake_embedder)
    checks = {c.field: c for c in anchors.entities[0].checks}
    assert checks["name"].supported and checks["attributes[0]"].supported
    assert not checks["attributes[2]"].supported and checks["attributes[2]"].method == "missing-source"
    assert not checks["attributes[1]"].supported
    assert {c.field: c.supported for c in anchors.events[0].checks} == {"what": True, "date": True}
    assert {c.field: c.supported for c in anchors.events[1].checks} == {"what": True, "date": False}
    assert summary["fields"] == 8 and summary["supported"] == 5
    summary = verify_anchors(anchors, conv, fake_embedder, drop_unsupported=True)
    assert summary["supported"] == 5 and summary["fields"] == 8  # the share describes what was extracted
    assert summary["dropped"] == {"attributes": 2, "relations": 0, "key_facts": 0, "event_dates": 1, "events": 0}
    assert [a.value for a in anchors.entities[0].attributes] == ["hiking"]
    assert [c.field for c in anchors.entities[0].checks] == ["name", "attributes[0]"]  # renumbered
    assert anchors.events[1].date_start is None


def test_listeners_and_a_relation_said_to_the_listener_is_supported():
    group = Session(id="s1", index=1, utterances=[
        Utterance(id="g1", speaker="Ann", text="Morning all", session_id="s1"),
        Utterance(id="g2", speaker="Bob", text="Hi Ann", session_id="s1"),
        Utterance(id="g3", speaker="Cy", text="Hello", session_id="s1"),
        Utterance(id="g4", speaker="Cy", text="Anyone?", session_id="s1")])
    assert Conversation(id="g", sessions=[group], speakers=["Ann", "Bob", "Cy"]).listeners() == {
        "g2": "Ann", "g3": "Bob", "g4": "Bob"}
    pair = Session(id="s1", index=1, utterances=[
        Utterance(id="u1", speaker="Ines", text="Honestly, you have been such a good friend to me.",
                  session_id="s1"),
        Utterance(id="u2", speaker="Ines", text="Catch you later, hon.", session_id="s1"),
        Utterance(id="u3", speaker="Ines", text="The soup was lovely.", session_id="s1")])
    conv = Conversation(id="p", sessions=[pair], speakers=["Ines", "Tova"])
    assert conv.listeners() == {"u1": "Tova", "u2": "Tova", "u3": "Tova"}
    anchors = AnchorSet(conversation_id="p", entities=[
        Entity(id="e1", name="Ines", type="person", source_ids=["u1"], relations=[
            Relation(predicate="friend_of", target="Tova", source_ids=["u1"]),
            Relation(predicate="sister_of", target="Tova", source_ids=["u3"]),  # no "you": not said to her
            Relation(predicate="friend_of", target="Dana", source_ids=["u2"])])])  # said to Tova, not Dana
    verify_anchors(anchors, conv, None)
    checks = {c.field: c for c in anchors.entities[0].checks}
    assert checks["relations[0]"].supported and checks["relations[0]"].note == "said to Tova"
    assert not checks["relations[1]"].supported and not checks["relations[2]"].supported


def test_store_load_errors_are_clear(tmp_path):
    with pytest.raises(StoreError, match="no anchors.json"):
        AnchorStore.load(tmp_path)
    (tmp_path / "anchors.json").write_text("{broken")
    with pytest.raises(StoreError, match="not valid JSON"):
        AnchorStore.load(tmp_path)
    (tmp_path / "anchors.json").write_text(json.dumps({"schema_version": 99}))
    with pytest.raises(StoreError, match="schema_version 99"):
        AnchorStore.load(tmp_path)
    (tmp_path / "anchors.json").write_text(json.dumps({"schema_version": 1, "entities": [{"id": 3}]}))
    with pytest.raises(StoreError, match="entities/0"):
        AnchorStore.load(tmp_path)


def test_estimate_build_counts_calls_per_batch():
    conv = make_conversation(3, 5)
    assert estimate_build(conv, "classic")["calls"] == 0
    fused = estimate_build(conv, "llm", batch_size=2, fused=True)
    separate = estimate_build(conv, "llm", batch_size=2, fused=False)
    assert fused["calls"] == 9 and separate["calls"] == 27
    assert separate["prompt_tokens"] > fused["prompt_tokens"] > fused["transcript_tokens"]


def test_entity_type_is_the_majority_vote_across_batches():
    groups = [[Entity(id="a", name="Biscuit", type="organization", source_ids=["1"])],
              [Entity(id="b", name="Biscuit", type="pet", source_ids=["2", "3"])],
              [Entity(id="c", name="Biscuit", type="pet", source_ids=["4"])]]
    [biscuit] = consolidate_entities(groups, speakers=[])
    assert biscuit.type == "pet" and biscuit.mentions == 4


def test_store_files_are_readable_by_others(tmp_path, fake_embedder):
    import os
    import stat

    build_store(make_conversation(), tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder)
    mode = stat.S_IMODE(os.stat(tmp_path / "s" / "anchors.json").st_mode)
    assert mode & stat.S_IRGRP or os.umask(os.umask(0)) & 0o040


def test_damaged_store_files_give_store_errors(tmp_path, fake_embedder):
    build_store(make_conversation(), tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder)
    emb = tmp_path / "s" / "embeddings.npz"
    emb.write_bytes(emb.read_bytes()[:200])  # truncated zip
    with pytest.raises(StoreError, match="embeddings.npz: unreadable"):
        AnchorStore.load(tmp_path / "s")
    emb.unlink()
    (tmp_path / "s" / "build_report.json").write_text("[1, 2]")
    assert "not a JSON object" in AnchorStore.load(tmp_path / "s").report["error"]
    (tmp_path / "s" / "anchors.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(StoreError):
        AnchorStore.load(tmp_path / "s")


def test_a_partly_failed_session_is_left_out_whole_and_added_once_on_update(tmp_path, fake_embedder):
    conv = make_conversation(2, 5)

    class FailSecondBatch(WordExtractor):
        def extract_batch(self, batch):
            if batch.utterances[0].id == "D2:3":
                raise RuntimeError("timeout")
            return super().extract_batch(batch)

    store = build_store(conv, tmp_path / "s", extractor=FailSecondBatch(), embedder=fake_embedder, batch_size=2)
    assert store.anchors.built_with.sessions == ["session_1"]
    assert {e.session_id for e in store.anchors.events} == {"session_1"}
    bob_before = next(e for e in store.anchors.entities if e.name == "Bob").mentions
    store = build_store(conv, tmp_path / "s", extractor=WordExtractor(), embedder=fake_embedder, batch_size=2,
                        update=True)
    bob = next(e for e in store.anchors.entities if e.name == "Bob")
    assert store.anchors.built_with.sessions == ["session_1", "session_2"]
    assert bob.mentions == bob_before + 5  # session 2's five utterances, counted once


def test_update_keeps_the_established_entity_type():
    old = [Entity(id="ent-biscuit", name="Biscuit", type="pet", mentions=6, source_ids=["1"])]
    [biscuit] = consolidate_entities([[Entity(id="x", name="Biscuit", type="organization", source_ids=["9"])]],
                                     speakers=[], existing=old)
    assert biscuit.type == "pet"


def test_unmerge_command_splits_a_profile_in_a_store(tmp_path, fake_embedder, monkeypatch):
    from typer.testing import CliRunner

    from gravity_engine.cli import app
    from gravity_engine.build.consolidate import unmerge_store

    entities = consolidate_entities([[Entity(id="a", name="Priya Raman", type="person", source_ids=["D1:1"])],
                                     [Entity(id="b", name="Priya", type="person", source_ids=["D1:2"])]], speakers=[])
    anchors = AnchorSet(conversation_id="t1", entities=entities)
    from gravity_engine.store import embed_anchors

    AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, fake_embedder)).save(tmp_path / "s")
    store = AnchorStore.load(tmp_path / "s")
    edited = unmerge_store(store, "ent-priya-raman", "Priya", fake_embedder)
    assert sorted(e.name for e in edited.anchors.entities) == ["Priya", "Priya Raman"]
    assert edited.embeddings["entities"].shape[0] == 2 and edited.report["edits"]
    monkeypatch.setattr("gravity_engine.embed.get_embedder", lambda name="": fake_embedder)
    result = CliRunner().invoke(app, ["unmerge", str(tmp_path / "s"), "ent-priya-raman", "Nobody"])
    assert result.exit_code == 2 and "has no merge of 'Nobody'" in result.output
    result = CliRunner().invoke(app, ["unmerge", str(tmp_path / "s"), "ent-priya-raman", "Priya"])
    assert result.exit_code == 0, result.output
    assert len(AnchorStore.load(tmp_path / "s").anchors.entities) == 2


def test_a_first_name_mistyped_by_ner_still_joins_its_full_name():
    groups = [[Entity(id="a", name="Kenji Watanabe", type="person", source_ids=["1"]),
               Entity(id="b", name="Kenji", type="place", source_ids=["2", "3"]),
               Entity(id="c", name="Cedar", type="place", source_ids=["4"]),
               Entity(id="d", name="Cedar Valley Clinic", type="organization", source_ids=["5"]),
               Entity(id="e", name="Cedar Jones", type="person", source_ids=["6"])]]
    entities = consolidate_entities(groups, speakers=[])
    kenji = next(e for e in entities if e.name == "Kenji Watanabe")
    assert kenji.merges[0].alias == "Kenji" and kenji.type == "person"
    assert {e.name for e in entities} == {"Kenji Watanabe", "Cedar", "Cedar Valley Clinic", "Cedar Jones"}


def test_unknown_source_ids_are_dropped_everywhere_and_counted():
    from gravity_engine.build.consolidate import drop_unknown_sources

    conv = make_conversation(1, 2)
    anchors = AnchorSet(
        entities=[Entity(id="e", name="Bob", source_ids=["D1:1", "X"],
                         attributes=[Attribute(key="likes", value="chess", source_ids=["Y", "D1:2"])])],
        events=[Event(id="v", what="x", source_ids=["Z"])],
        topics=[Topic(id="t", label="t", key_facts=[KeyFact(text="f", source_ids=["D1:1", "W"])],
                      sessions=[TopicSession(session_id="session_1", source_ids=["V"])])])
    assert drop_unknown_sources(anchors, conv) == 5
    assert anchors.all_source_ids() == {"D1:1", "D1:2"}


def test_a_resumed_classic_build_labels_topics_as_a_fresh_one(tmp_path, fake_embedder):
    from pathlib import Path

    from gravity_engine.extract.classic import ClassicExtractor
    from gravity_engine.loaders import load_conversation

    conv = load_conversation(Path(__file__).resolve().parent.parent / "sample_data" / "medllm_project.jsonl")
    fresh = build_store(conv, tmp_path / "s", extractor=ClassicExtractor(embedder=fake_embedder),
                        embedder=fake_embedder)
    # a new process: the extractor has parsed nothing of the batches the checkpoints hold
    again = build_store(conv, tmp_path / "s", extractor=ClassicExtractor(embedder=fake_embedder),
                        embedder=fake_embedder)
    assert again.report["batches"]["from_checkpoint"] > 0
    assert [t.label for t in again.anchors.topics] == [t.label for t in fresh.anchors.topics]
    assert any(t.label[:1].isupper() for t in fresh.anchors.topics)  # proper nouns first, as said


def test_topic_keywords_break_ties_the_same_way_on_every_machine():
    from gravity_engine.extract.classic.topics import _keywords

    words = ["zebra", "yacht", "walrus", "violin", "umbrella", "tulip", "saddle", "raven", "quartz", "pepper",
             "orchid", "nutmeg", "mango", "lantern", "kettle", "juniper", "harbor", "garnet", "falcon", "ember"]
    docs = [" ".join(words), "pottery lesson bowl", "marathon berlin race"]
    # every term of a document scores alike (said once): the single words first, in the vocabulary's order,
    # whatever numpy's sort does with ties on this CPU (its AVX-512 sort ordered them otherwise)
    assert _keywords(docs, frozenset(), top=4) == [sorted(words)[:4], ["bowl", "lesson", "pottery"],
                                                   ["berlin", "marathon", "race"]]
