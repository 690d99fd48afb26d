"""The gold scorer (gravity_engine.eval.gold) on small hand-made stores, gold-file errors, and the shipped gold files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gravity_engine.anchors import AnchorSet, Attribute, Entity, Event, KeyFact, Relation, Topic
from gravity_engine.errors import InputError
from gravity_engine.eval.gold import (
    check_against_conversation,
    find_gold_files,
    gold_from_dict,
    load_gold,
    norm_name,
    normalize_type,
    predicate_readings,
    score_store,
)
from gravity_engine.loaders import load_conversation
from gravity_engine.testing import FakeEmbedder

GOLD_DIR = Path(__file__).resolve().parent.parent / "sample_data" / "gold"

GOLD = {
    "gold_version": 1,
    "speakers": ["Ana", "Ben"],
    "entities": [
        {"name": "Ana", "type": "person"},
        {"name": "Ben", "type": "person"},
        {"name": "Luna", "type": "person", "aliases": ["Lu"]},
        {"name": "Rex", "type": "pet"},
        {"name": "Acme Corp", "type": "organization", "aliases": ["Acme"]},
        {"name": "Porto", "type": "place"},
        {"name": "Lisbon", "type": "place", "optional": True},
    ],
    "junk_names": ["Wow", "Monday"],
    "relations": [
        {"subject": "Ana", "predicate": "works_at", "object": "Acme Corp", "evidence": ["D1:1"]},
        {"subject": "Ana", "predicate": "sister_of", "object": "Luna", "evidence": ["D1:2"]},
        {"subject": "Ben", "predicate": "owns_pet", "object": "Rex", "evidence": ["D1:3"]},
        {"subject": "Ana", "predicate": "lives_in", "object": "Porto", "evidence": ["D1:1"]},
        {"subject": "Ana", "predicate": "likes", "object": "jazz", "evidence": ["D1:4"]},
        {"subject": "Ben", "predicate": "friend_of", "object": "Ana", "evidence": ["D1:5"], "optional": True},
    ],
    "facts": [
        {"subject": "Ana", "text": "Ana is a nurse.", "evidence": ["D1:1"]},
        {"subject": "Ben", "text": "Ben has a dog called Rex.", "evidence": ["D1:3"]},
    ],
    "events": [
        {"what": "Ana started at Acme", "date_start": "2024-05-07", "evidence": ["D1:1"], "relative": True},
        {"what": "Trip to Porto", "date_start": "2024-06-01", "date_end": "2024-06-30", "evidence": ["D1:6"],
         "relative": True},
        {"what": "Ben's exam", "date_start": "2024-01-15", "evidence": ["D1:7"], "relative": False},
    ],
}


def gold():
    return gold_from_dict(json.loads(json.dumps(GOLD)))


def perfect() -> AnchorSet:
    return AnchorSet(conversation_id="t", entities=[
        Entity(id="e1", name="Ana", type="person", mentions=5,
               attributes=[Attribute(key="occupation", value="nurse", source_ids=["D1:1"])],
               relations=[Relation(predicate="works_at", target="Acme", target_id="e4", source_ids=["D1:1"]),
                          Relation(predicate="sister", target="Luna", target_id="e5", source_ids=["D1:2"]),
                          Relation(predicate="lives_in", target="Porto", source_ids=["D1:1"]),
                          Relation(predicate="loves", target="jazz music", source_ids=["D1:4"])]),
        Entity(id="e2", name="Ben", type="person",
               relations=[Relation(predicate="has_pet", target="Rex", target_id="e3", source_ids=["D1:3"])]),
        Entity(id="e3", name="Rex", type="animal",
               relations=[Relation(predicate="pet_of", target="Ben", target_id="e2", source_ids=["D1:3"])]),
        Entity(id="e4", name="Acme", type="organisation"),
        Entity(id="e5", name="Luna", type="person",
               relations=[Relation(predicate="sister_of", target="Ana", target_id="e1", source_ids=["D1:2"])]),
        Entity(id="e6", name="Porto", type="GPE"),
    ], events=[
        Event(id="v1", what="started at Acme", date_start="2024-05-07", date_end="2024-05-07", source_ids=["D1:1"]),
        Event(id="v2", what="trip", date_start="2024-06-01", date_end="2024-06-30", source_ids=["D1:6"]),
        Event(id="v3", what="exam", date_start="2024-01-15", source_ids=["D1:7"]),
    ])


def entity(anchors: AnchorSet, name: str) -> Entity:
    return next(e for e in anchors.entities if e.name == name)


def test_perfect_store_scores_one():
    s = score_store(perfect(), gold())
    assert s.entity_recall.value == 1.0 and s.entity_recall.n == 6  # the optional entity is not required
    assert s.type_accuracy.value == 1.0  # organisation, GPE, animal are synonyms
    assert s.junk_share.value == 0.0
    assert s.relation_recall.value == 1.0 and s.relation_recall.n == 5
    assert s.relation_precision.value == 1.0 and s.relation_precision.n == 6  # "loves jazz music" has no gold object
    assert s.store_relations == 7
    assert s.fact_recall.value == 1.0
    assert s.events_dated.value == 1.0
    assert s.event_recall.value == 1.0
    assert (s.relative_date_accuracy.hit, s.relative_date_accuracy.n, s.relative_date_matched) == (2, 2, 2)
    assert not any(vars(s.misses).values())


def test_wrong_type_moves_type_accuracy_only():
    a = perfect()
    entity(a, "Rex").type = "person"
    s = score_store(a, gold())
    assert (s.type_accuracy.hit, s.type_accuracy.n) == (5, 6)
    assert s.entity_recall.value == 1.0
    assert s.misses.wrong_types == ["Rex: pet, store says person"]


def test_alt_types_are_accepted():
    g = json.loads(json.dumps(GOLD))
    g["entities"][4]["alt_types"] = ["place"]
    a = perfect()
    entity(a, "Acme").type = "location"
    assert score_store(a, gold_from_dict(g)).type_accuracy.value == 1.0


def test_junk_entities_count_listed_and_unlisted_but_not_speakers_or_optional():
    a = perfect()
    a.entities += [Entity(id="j1", name="Wow", type="other"), Entity(id="j2", name="Nice Weather", type="other"),
                   Entity(id="j3", name="Lisbon", type="place")]
    s = score_store(a, gold())
    assert (s.junk_share.hit, s.junk_share.n) == (2, 9)
    assert s.misses.junk_listed == ["Wow"] and s.misses.junk_unlisted == ["Nice Weather"]
    # a speaker never annotated as an entity is not junk either
    s = score_store(a, gold(), speakers=["Ana", "Ben", "Nice Weather"])
    assert s.junk_share.hit == 1


def test_missed_relation_and_missed_entity():
    a = perfect()
    entity(a, "Ana").relations = [r for r in entity(a, "Ana").relations if r.predicate != "lives_in"]
    a.entities = [e for e in a.entities if e.name != "Rex"]
    entity(a, "Ben").relations[0].target_id = None
    s = score_store(a, gold())
    # Ben's relation to "Rex" still counts: its target names a gold entity, with or without a profile
    assert (s.relation_recall.hit, s.relation_recall.n) == (4, 5)
    assert s.misses.missed_relations == ["Ana lives_in Porto [D1:1]"]
    assert (s.entity_recall.hit, s.entity_recall.n) == (5, 6) and s.misses.missed_entities == ["Rex"]
    entity(a, "Ben").relations = []
    s = score_store(a, gold())
    assert s.misses.missed_relations == ["Ben owns_pet Rex [D1:3]", "Ana lives_in Porto [D1:1]"]


def test_symmetric_relation_counts_in_either_direction_but_directed_ones_do_not():
    a = perfect()
    entity(a, "Ana").relations = [r for r in entity(a, "Ana").relations if r.predicate != "sister"]
    entity(a, "Luna").relations = [Relation(predicate="sibling_of", target="Ana", source_ids=["D1:2"])]
    assert score_store(a, gold()).relation_recall.value == 1.0  # Luna sibling_of Ana == Ana sister_of Luna
    # the pet the wrong way round: Rex owns Ben
    entity(a, "Ben").relations = []
    entity(a, "Rex").relations = [Relation(predicate="owns", target="Ben", source_ids=["D1:3"])]
    s = score_store(a, gold())
    assert (s.relation_recall.hit, s.relation_recall.n) == (4, 5)
    assert s.misses.wrong_relations == ["Rex owns Ben [D1:3]"]
    assert (s.relation_precision.hit, s.relation_precision.n) == (3, 4)


def test_optional_gold_relation_is_not_wrong_and_not_required():
    a = perfect()
    entity(a, "Ben").relations.append(Relation(predicate="friend", target="Ana", source_ids=["D1:5"]))
    s = score_store(a, gold())
    assert s.relation_precision.value == 1.0 and s.relation_recall.n == 5


def test_predicate_readings():
    assert predicate_readings("owns") == [("owns_pet", False)]
    assert predicate_readings("Has pet") == [("owns_pet", False)]
    assert predicate_readings("mother") == [("parent_of", True)]  # "X mother Y": Y is X's mother
    assert predicate_readings("mother_of") == [("parent_of", False)]
    assert predicate_readings("boss") == [("manager_of", True)]
    assert predicate_readings("moved_to") == [("lives_in", False)]
    assert predicate_readings("uncle") == [("uncle", False), ("uncle_of", True)]


def test_wrong_and_missing_dates():
    a = perfect()
    a.events[0].date_start = a.events[0].date_end = "2024-05-06"
    s = score_store(a, gold())
    assert (s.relative_date_accuracy.hit, s.relative_date_accuracy.n) == (1, 2)
    assert "2024-05-07" in s.misses.wrong_dates[0] and "2024-05-06" in s.misses.wrong_dates[0]
    # a week containing the day is too wide; one extra day is allowed
    a.events[0].date_start, a.events[0].date_end = "2024-05-06", "2024-05-12"
    assert score_store(a, gold()).relative_date_accuracy.hit == 1
    a.events[0].date_start, a.events[0].date_end = "2024-05-07", "2024-05-08"
    assert score_store(a, gold()).relative_date_accuracy.hit == 2
    # month: equal, or one day wider, is right; two days wider is not
    a.events[1].date_end = "2024-07-01"
    assert score_store(a, gold()).relative_date_accuracy.hit == 2
    a.events[1].date_start = "2024-05-31"
    assert score_store(a, gold()).relative_date_accuracy.hit == 1
    # no date at all, and no event citing the evidence
    a.events[0].date_start = a.events[0].date_end = None
    a.events = [e for e in a.events if e.id != "v2"]
    s = score_store(a, gold())
    assert (s.relative_date_accuracy.hit, s.relative_date_matched) == (0, 1)
    assert (s.events_dated.hit, s.events_dated.n) == (1, 2)
    assert (s.event_recall.hit, s.event_recall.n) == (2, 3)
    assert any("no store event cites D1:6" in m for m in s.misses.wrong_dates)
    assert len(s.misses.undated_events) == 1


def test_another_event_citing_the_same_utterance_with_the_right_date_counts():
    a = perfect()
    a.events[0].date_start = a.events[0].date_end = "2024-05-01"
    a.events.append(Event(id="v4", what="other clause", date_start="2024-05-07", source_ids=["D1:1"]))
    assert score_store(a, gold()).relative_date_accuracy.hit == 2


def test_facts_by_citation_key_fact_or_similarity():
    a = perfect()
    entity(a, "Ana").attributes = []
    entity(a, "Ana").relations = [r for r in entity(a, "Ana").relations if "D1:1" not in r.source_ids]
    s = score_store(a, gold())
    assert (s.fact_recall.hit, s.fact_recall.n) == (1, 2)
    assert s.misses.missed_facts == ["Ana: Ana is a nurse. [D1:1]"]
    # a topic key fact naming the subject and citing the evidence
    a.topics = [Topic(id="t1", label="work", key_facts=[KeyFact(text="Ana works as a nurse", source_ids=["D1:1"])])]
    assert score_store(a, gold()).fact_recall.hit == 2
    # similar text without the citation: found only with an embedder
    a.topics = []
    entity(a, "Ana").attributes = [Attribute(key="is", value="a nurse", source_ids=["D1:9"])]
    assert score_store(a, gold()).fact_recall.hit == 1
    assert score_store(a, gold(), embedder=FakeEmbedder(dim=256)).fact_recall.hit == 2


def test_names_match_through_aliases_titles_and_case():
    a = perfect()
    entity(a, "Luna").name = "Dr. Lu"
    entity(a, "Acme").name = "the ACME corp"
    s = score_store(a, gold())
    assert s.entity_recall.value == 1.0 and s.junk_share.hit == 0
    assert norm_name("The Boulder Yard's") == "boulder yard"
    assert norm_name("Belém") == norm_name("belem")
    assert normalize_type("Organisation") == "organization" and normalize_type("WORK_OF_ART") == "artifact"


def test_duplicate_profiles_are_listed():
    a = perfect()
    a.entities.append(Entity(id="e7", name="Acme Corp", type="organization"))
    s = score_store(a, gold())
    assert s.entity_recall.value == 1.0 and s.junk_share.hit == 0
    assert s.misses.duplicate_entities == ["Acme Corp: 'Acme', 'Acme Corp'"]
    a.entities[-1].type = "person"  # each profile a reader sees must have the right type
    s = score_store(a, gold())
    assert (s.type_accuracy.hit, s.type_accuracy.n) == (5, 6)
    assert s.misses.wrong_types == ["Acme Corp: organization, store says person ('Acme Corp')"]


# -- gold files -------------------------------------------------------------------------------------


def _broken(**changes) -> dict:
    g = json.loads(json.dumps(GOLD))
    for key, value in changes.items():
        g[key] = value
    return g


@pytest.mark.parametrize("data, where, text", [
    (_broken(entities=[{"name": "Ana", "type": "spaceship"}]), "entities[0].type", "unknown entity type"),
    (_broken(relations=[{"subject": "Zed", "predicate": "likes", "object": "tea", "evidence": ["D1:1"]}]),
     "relations[0].subject", "not a gold entity"),
    (_broken(relations=[{"subject": "Ana", "predicate": "works_at", "object": "Globex", "evidence": ["D1:1"]}]),
     "relations[0].object", "not a gold entity"),
    (_broken(relations=[{"subject": "Ana", "predicate": "likes", "object": "tea", "evidence": []}]),
     "relations[0].evidence", "at least 1"),
    (_broken(events=[{"what": "x", "date_start": "2024-05-07", "date_end": "2024-05-01", "evidence": ["D1:1"]}]),
     "events[0]", "before date_start"),
    (_broken(events=[{"what": "x", "date_start": "May 7", "evidence": ["D1:1"]}]), "events[0].date_start", "date"),
    (_broken(facts=[{"subject": "Ana", "text": "x", "evidence": ["D1:1"], "evidense": 1}]), "facts[0].evidense",
     "Extra inputs"),
    (_broken(facts=[{"subject": "Zed", "text": "x", "evidence": ["D1:1"]}]), "facts[0].subject",
     "subject 'Zed' is not a gold entity"),
    (_broken(mentions=[{"utterance": "D1:1", "text": "she", "entity": "Zed"}]), "mentions[0].entity",
     "entity 'Zed' is not a gold entity"),
    (_broken(junk_names=["Ana"]), "junk_names[0]", "also a gold entity"),
    (_broken(entities=[{"name": "Ana", "type": "person"}, {"name": "Anna", "type": "person", "aliases": ["ana"]}]),
     "entities[1]", "names both"),
    (_broken(gold_version=2), "gold_version", "not supported"),
])
def test_gold_errors_name_the_place(data, where, text):
    with pytest.raises(InputError) as err:
        gold_from_dict(data, source="x.gold.json")
    assert err.value.where == where and text in str(err.value) and str(err.value).startswith("x.gold.json (")


def test_gold_file_errors(tmp_path):
    with pytest.raises(InputError, match="no such gold file"):
        load_gold(tmp_path / "missing.gold.json")
    bad = tmp_path / "bad.gold.json"
    bad.write_text('{"entities": [\n  {"name": "Ana",}\n]}')
    with pytest.raises(InputError) as err:
        load_gold(bad)
    assert "not valid JSON" in str(err.value) and err.value.where.startswith("line 2")
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected a JSON object"):
        load_gold(bad)


@pytest.mark.parametrize("folder", [GOLD_DIR, GOLD_DIR / "dev"], ids=["test", "dev"])
def test_shipped_gold_files_load_and_cite_existing_utterances(folder):
    files = find_gold_files(folder)
    assert len(files) >= 3
    for path in files:
        g = load_gold(path)
        conv = load_conversation(g.conversation_path())
        assert check_against_conversation(g, conv) == [], path.name
        assert 40 <= conv.n_utterances() <= 80 and 3 <= len(conv.sessions) <= 5, path.name
        text = " ".join(u.text for u in conv.utterances()).casefold()
        for ent in g.entities:  # every gold entity is named in the text (or is a speaker)
            assert ent.name in conv.speakers or any(n.casefold() in text for n in [ent.name, *ent.aliases]), ent.name
        assert g.relations and g.facts and any(e.relative for e in g.events)
    # every conversation in the folder has its gold file
    assert {p.name.removesuffix(".gold.json") for p in files} == {p.stem for p in folder.glob("*.jsonl")}


def test_dev_and_test_sets_are_different_conversations():
    def texts(folder: Path) -> set[str]:
        return {u.text for p in find_gold_files(folder) for u in load_conversation(load_gold(p).conversation_path()).utterances()}

    assert len(find_gold_files(GOLD_DIR / "dev")) >= 3
    assert not texts(GOLD_DIR / "dev") & texts(GOLD_DIR)
