"""The viz library without Streamlit: graph, timeline, topics, exports and the zip import."""

from __future__ import annotations

import io
import os
import json
import re
import zipfile

import networkx as nx
import pandas as pd
import pytest

from gravity_engine.anchors import AnchorSet, Entity, Event, Relation, Topic
from gravity_engine.conversation import Conversation, Session, Utterance
from gravity_engine.errors import InputError
from gravity_engine.store import AnchorStore
from gravity_engine.viz import export, graph, timeline, topics
from studio_stores import HOSTILE, demo_anchors, make_store


def layer_rows(spec: dict) -> list[list[dict]]:
    """Each layer's inline rows (the charts carry their data inline, converted once)."""
    return [layer["data"]["values"] for layer in spec.get("layer", [spec]) if "values" in layer.get("data", {})]


def test_graph_nodes_edges_and_filters():
    g = graph.build_graph(demo_anchors(), {})
    assert g.number_of_nodes() == 5
    assert {d["predicate"] for _, _, d in g.edges(data=True)} >= {"works with", "owns", "works at"}
    assert set(graph.filter_graph(g, types=["pet"]).nodes) == {"ent_5"}
    assert set(graph.filter_graph(g, search="chen").nodes) == {"ent_1", "ent_3", "ent_4"}
    assert all(graph.filter_graph(g, min_degree=2).degree(n) >= 2 for n in graph.filter_graph(g, min_degree=2))


def _kin_anchors() -> AnchorSet:
    """Anna and Priya state one kinship both ways ('sister_of' and 'sister'); Tom has no relation at all."""
    return AnchorSet(conversation_id="kin", entities=[
        Entity(id="anna", name="Anna", type="person", source_ids=["S1:1"], mentions=3,
               relations=[Relation(predicate="sister_of", target="Priya", target_id="priya", source_ids=["S1:1"]),
                          Relation(predicate="lives_in", target="Chicago", source_ids=["S1:2"])]),
        Entity(id="priya", name="Priya", type="person", source_ids=["S1:1", "S2:4"], mentions=9,
               relations=[Relation(predicate="sister", target="Anna", target_id="anna", source_ids=["S2:4"])]),
        Entity(id="chicago", name="Chicago", type="place", source_ids=["S1:2"], mentions=1),
        Entity(id="tom", name="Tom", type="person", source_ids=["S3:1"], mentions=5),
    ])


def test_inverse_relations_are_one_edge_with_both_statements_and_evidence():
    g = graph.build_graph(_kin_anchors())
    assert g.number_of_edges() == 3  # sister_of, sister, lives_in as extracted
    merged = graph.merge_relations(g)
    assert merged.number_of_edges() == 2
    (rel,) = merged.edges["anna", "priya"]["relations"].values()
    assert rel["statements"] == ["Anna sister of Priya", "Priya sister Anna"]
    assert rel["source_ids"] == ["S1:1", "S2:4"]
    assert graph.base_predicate("parent_of") == graph.base_predicate("child") == "parent"
    assert graph.base_predicate("works_at") != graph.base_predicate("works_on")


def test_layout_keeps_unconnected_entities_out_of_the_way():
    merged = graph.merge_relations(graph.build_graph(_kin_anchors()))
    pos = graph.layout(merged)
    assert set(pos) == {"anna", "priya", "chicago", "tom"}
    assert pos["tom"][1] < min(pos[n][1] for n in ("anna", "priya", "chicago"))  # below the connected part
    assert graph.layout(merged) == pos  # seeded: the same picture every time


def test_layout_scales_to_hundreds_of_entities():
    g = nx.Graph()
    for i in range(300):
        g.add_node(f"e{i}", type="person", mentions=1 + i % 7)
    for i in range(1, 200):
        g.add_edge(f"e{i}", f"e{(i * 7) % i}")  # one big tree-ish component, 100 unconnected
    pos = graph.layout(g)
    assert len(pos) == 300
    points = {(round(x, 3), round(y, 3)) for x, y in pos.values()}
    assert len(points) == 300, "no two entities drawn on the same spot"


def test_explore_data_hides_unconnected_and_keeps_filters():
    g, nodes, edges = graph.explore_data(_kin_anchors())
    assert set(nodes["id"]) == {"anna", "priya", "chicago", "tom"} and len(edges) == 2
    shown, shown_edges = graph.select_frames(nodes, edges, g.nodes, hide_unconnected=True)
    assert set(shown["id"]) == {"anna", "priya", "chicago"} and len(shown_edges) == 2
    people = graph.filter_graph(g, types=["person"])
    shown, shown_edges = graph.select_frames(nodes, edges, people.nodes, hide_unconnected=True)
    assert set(shown["id"]) == {"anna", "priya"} and list(shown_edges["label"]) == ["sister of"]


def test_graph_view_has_legend_labels_tooltips_and_positions():
    _, nodes, edges = graph.explore_data(demo_anchors(name_a=HOSTILE))
    view = graph.graph_view(nodes, edges, selected="ent_1")
    json.dumps(view)  # what the component receives is plain JSON
    assert [item["type"] for item in view["legend"]] == sorted(set(nodes["type"]))
    assert all(item["color"].startswith("#") for item in view["legend"])
    by_id = {n["id"]: n for n in view["nodes"]}
    assert by_id["ent_1"]["focus"] and not by_id["ent_2"]["focus"]
    assert by_id["ent_1"]["label"] == HOSTILE and ["entity", HOSTILE] in by_id["ent_1"]["tip"]  # data, not markup
    assert by_id["ent_1"]["r"] > by_id["ent_5"]["r"] > 0  # more mentions, a bigger node
    assert all({"x", "y", "side", "color"} <= set(n) for n in view["nodes"])
    assert {e["id"] for e in view["edges"]} == set(edges["edge_id"])
    edge = view["edges"][0]
    assert edge["tip"][0][0] == "relation" and {edge["source"], edge["target"]} <= set(by_id)
    assert view["edge_labels"] and view["height"] >= 520
    assert graph.graph_view(nodes, edges)["view_key"] == view["view_key"]  # same nodes: the zoom is kept
    assert graph.graph_view(nodes.iloc[:2], edges.iloc[:0])["view_key"] != view["view_key"]


def test_clicked_reads_a_node_or_an_edge():
    assert graph.clicked({"kind": "node", "id": "ent_1"}) == ("node", "ent_1")
    assert graph.clicked({"kind": "edge", "id": "a|b|0"}) == ("edge", "a|b|0")
    for value in (None, {}, {"kind": "node"}, {"kind": "script", "id": "x"}, {"kind": "node", "id": 3}, "ent_1"):
        assert graph.clicked(value) is None


def test_resolve_entity_by_id_name_or_alias():
    anchors = demo_anchors()
    assert graph.resolve_entity(anchors, "ent_3") == "ent_3"
    assert graph.resolve_entity(anchors, "biscuit") == "ent_5"
    assert graph.resolve_entity(anchors, "P.") == "ent_1"
    assert graph.resolve_entity(anchors, "nobody") is None


def test_timeline_frame_people_lanes_and_chart():
    frame = timeline.events_frame(demo_anchors(), speakers=["Priya", "Marco"])
    assert frame["resolved"].sum() == 3 and not frame.loc[frame["id"] == "evt_4", "resolved"].item()
    # evt_3's participants are Priya and St. Mary Hospital: only the person is a lane.
    assert frame.set_index("id").loc["evt_3", "people"] == "Priya"
    marks = timeline.lanes_frame(frame)
    assert set(marks["lane"]) == {"Priya"} and "St. Mary Hospital" not in set(marks["lane"])
    spec = timeline.timeline_chart(marks).to_dict()
    assert any(layer["encoding"]["x"]["type"] == "temporal" for layer in spec["layer"])


def test_each_person_has_a_distinct_colour():
    colours = timeline.person_colors(["Caroline", "Melanie", "Dr. Chen", timeline.NO_PERSON])
    assert len(set(colours.values())) == 4 and colours["Caroline"] != colours["Melanie"]


def _dated(*events: Event) -> AnchorSet:
    return AnchorSet(conversation_id="d", entities=[Entity(id="p", name="Ann", type="person")], events=list(events))


def test_suspicious_dates_are_flagged_and_pinned_to_the_range_edge():
    said = "2023-05-08T10:00:00"
    anchors = _dated(
        Event(id="ok", what="ran a race", participants=["Ann"], when_text="yesterday", date_start="2023-05-07",
              date_end="2023-05-07", granularity="day", session_date=said),
        Event(id="far", what="moved house", participants=["Ann"], when_text="a while ago", date_start="2019-03-01",
              date_end="2019-03-01", granularity="day", session_date=said),
        Event(id="year", what="went to Rome", participants=["Ann"], when_text="in September", date_start="2022-09-10",
              date_end="2022-09-10", granularity="day", session_date=said),
        Event(id="said", what="started school", participants=["Ann"], when_text="in 2019", date_start="2019-09-01",
              date_end="2019-09-01", granularity="day", session_date=said),
        Event(id="last", what="hiked", participants=["Ann"], when_text="last summer", date_start="2022-06-01",
              date_end="2022-08-31", granularity="season", session_date=said))
    frame = timeline.events_frame(anchors).set_index("id")
    assert "years from its session (before it)" in frame.loc["far", "suspicious"]
    assert "no year was said" in frame.loc["year", "suspicious"]
    assert frame.loc["ok", "suspicious"] == frame.loc["said", "suspicious"] == frame.loc["last", "suspicious"] == ""
    frame = frame.reset_index()
    span = timeline.conversation_span(frame)
    marks = timeline.lanes_frame(frame, span)
    assert len(marks) == 5, "nothing is hidden outside the default range"
    pinned = marks[marks["outside"] != ""]
    assert set(pinned["date"]) == {"2019-03-01", "2019-09-01", "2022-09-10", "2022-06-01"}
    assert (pinned["x"] == span[0]).all() and "2019-03-01" in " ".join(pinned["outside"])
    assert set(marks.loc[marks["flag"] != "", "date"]) == {"2019-03-01", "2022-09-10"}


def test_links_are_kept_only_with_evidence_in_the_utterances():
    conv = Conversation(id="c", speakers=["Ann"], sessions=[Session(id="s1", index=0, utterances=[
        Utterance(id="u1", speaker="Ann", text="My flight was cancelled, so I missed the wedding.", session_id="s1"),
        Utterance(id="u2", speaker="Ann", text="The weather is nice.", session_id="s1"),
        Utterance(id="u3", speaker="Ann", text="I bought a bike.", session_id="s1")])])
    anchors = _dated(
        Event(id="a", what="flight was cancelled", participants=["Ann"], source_ids=["u1"], causes=["b"]),
        Event(id="b", what="missed the wedding", participants=["Ann"], source_ids=["u1"], follows=["a"]),
        Event(id="c", what="bought a bike", participants=["Ann"], source_ids=["u3"], follows=["b"]))
    links = timeline.supported_links(anchors, conv)
    assert set(zip(links["kind"], links["from"], links["to"])) == {("causes", "a", "b"), ("follows", "b", "a")}
    assert (links["evidence_ids"] == "u1").all() and "so I missed" in links["evidence"].iloc[0]
    assert timeline.supported_links(anchors, None).empty


def test_timeline_search_and_entity_filter():
    frame = timeline.events_frame(demo_anchors())
    assert list(frame[timeline.search_mask(frame, "Drug INTERACTIONS")]["id"]) == ["evt_2"]
    assert timeline.search_mask(frame, "  ").all()
    assert list(frame[timeline.mentions_mask(frame, ["St. Mary Hospital"])]["id"]) == ["evt_3"]
    marks = timeline.lanes_frame(frame, match=timeline.search_mask(frame, "x-ray"))
    assert marks.set_index("ids").loc["evt_3", "match"] and not marks.set_index("ids").loc["evt_1", "match"]
    spec = timeline.timeline_chart(marks, searching=True).to_dict()
    assert "datum.match" in str(spec)
    assert {"zoom", "event"} <= {p["name"] for p in spec["params"]}  # zoom the axis, click a point
    assert timeline.clicked_events({"event": [{"ids": "evt_1, evt_9"}]}) == ["evt_1", "evt_9"]
    assert timeline.clicked_events({"event": {}}) == []


def test_topic_lanes_under_people():
    anchors = demo_anchors()
    frame = timeline.events_frame(anchors)
    topic_marks = timeline.topic_lanes_frame(anchors, {"top_1": "Knowledge graph"})
    assert "Topic: Knowledge graph" in set(topic_marks["lane"])
    marks = timeline.lanes_frame(frame)
    order = timeline.lane_order(marks, topic_marks)
    assert order[0] == "Priya" and order[-1].startswith("Topic: ")
    spec = timeline.timeline_chart(marks, topic_marks).to_dict()
    assert timeline.lane_names(spec) == order  # lane names label the axis


def test_a_busy_lane_stacks_close_days_in_sub_rows():
    anchors = _dated(*[Event(id=f"e{i}", what=f"thing {i}", participants=["Ann"], date_start=f"2023-05-{i:02d}",
                             date_end=f"2023-05-{i:02d}", granularity="day", session_date="2023-05-20T10:00:00")
                       for i in range(1, 5)])
    year = (pd.Timestamp("2023-01-01"), pd.Timestamp("2023-12-31"))  # four days in a year: too close to share a row
    marks = timeline.lanes_frame(timeline.events_frame(anchors), year)
    spec = timeline.timeline_chart(marks, domain=year).to_dict()
    rows = next(v for v in layer_rows(spec) if v and "ids" in v[0] and "y" in v[0])
    centre, height = timeline.lane_layout(["Ann"])[0]["Ann"]
    assert len({r["y"] for r in rows}) > 1 and all(abs(r["y"] - centre) < height / 2 for r in rows)  # one lane


def test_topic_arcs_heatmap_is_clickable():
    arcs = topics.arcs_frame(demo_anchors())
    assert list(arcs[arcs["topic_id"] == "top_1"]["session_id"]) == ["session_1", "session_2", "session_3"]
    spec = topics.heatmap_chart(arcs, ["session_1", "session_2", "session_3"], selected="top_1").to_dict()
    assert spec["mark"]["type"] == "rect"
    assert spec["params"][0]["name"] == "cell" and spec["params"][0]["select"]["fields"] == ["topic_id", "session_id"]
    assert topics.clicked_cell({"cell": [{"topic_id": "top_2", "session_id": "session_3"}]}) == ("top_2", "session_3")
    assert topics.clicked_cell({"cell": {}}) is None


def test_arc_chart_shows_every_session_with_zeros_between():
    topic = demo_anchors().topics[1]  # discussed in session_3 only
    spec = topics.arc_chart(topic, ["session_1", "session_2", "session_3"], focus_session="session_3").to_dict()
    rows = layer_rows(spec)[0]
    assert [r["mentions"] for r in rows] == [0, 0, 1]


def test_topic_titles_are_the_stored_labels_capitalised_with_keywords_beside():
    anchors = demo_anchors()
    titles = topics.topic_titles(anchors)
    assert set(titles) == {"top_1", "top_2"}
    for t in anchors.topics:
        assert titles[t.id] == t.label[:1].upper() + t.label[1:]
    subtitles = topics.topic_subtitles(anchors)
    assert all(set(k.lower().split()) - {w.lower() for w in t.label.split()}
               for t in anchors.topics for k in subtitles[t.id].split(", ") if k)


def test_exports_round_trip(tmp_path):
    store = make_store(tmp_path / "s")
    data = export.store_zip_bytes(tmp_path / "s")
    imported = export.import_store_zip(data, tmp_path / "ws" / "copy", filename="s.zip")
    assert imported.anchors == store.anchors
    g = nx.read_graphml(io.BytesIO(export.graphml_bytes(store)))
    assert g.number_of_nodes() == 5
    assert b"yesterday" in export.events_csv_bytes(store)
    md = export.markdown_report(make_store(tmp_path / "h", hostile=True))
    assert "<img" not in md


@pytest.mark.parametrize("entries,message", [
    ({"../x/anchors.json": "{}"}, "outside the archive"),
    ({"/abs/anchors.json": "{}"}, "outside the archive"),
    ({"notes.txt": "hi"}, "no anchors.json"),
    ({"anchors.json": "not json"}, "not valid JSON"),
], ids=["dotdot", "absolute", "no-anchors", "bad-json"])
def test_import_rejects_bad_archives(tmp_path, entries, message):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
    with pytest.raises(InputError, match=message):
        export.import_store_zip(buf.getvalue(), tmp_path / "dest", filename="bad.zip")
    assert not (tmp_path / "dest").exists()


def test_import_rejects_non_zip_and_oversize(tmp_path):
    with pytest.raises(InputError, match="not a zip"):
        export.import_store_zip(b"hello", tmp_path / "d", filename="x.zip")
    with pytest.raises(InputError, match="limit"):
        export.import_store_zip(b"x" * 100, tmp_path / "d", filename="x.zip", max_zip_bytes=10)


def test_loaded_store_matches(tmp_path):
    make_store(tmp_path / "s")
    assert AnchorStore.load(tmp_path / "s").anchors.counts() == {"entities": 5, "events": 4, "topics": 2}


def test_timeline_opens_on_the_conversations_own_months():
    frame = timeline.events_frame(demo_anchors())
    span = timeline.conversation_span(frame, margin_days=10)
    assert span is not None and span[0] < span[1]
    spec = timeline.timeline_chart(timeline.lanes_frame(frame, span), domain=span).to_dict()
    x = next(layer["encoding"]["x"] for layer in spec["layer"] if "scale" in layer.get("encoding", {}).get("x", {}))
    assert x["scale"]["domain"] == [span[0].isoformat(), span[1].isoformat()]
    unbounded = timeline.timeline_chart(timeline.lanes_frame(frame)).to_dict()
    assert "domain" not in str(unbounded["layer"][-1]["encoding"]["x"])


def test_layout_is_the_same_whatever_the_hash_seed():
    # A small component's subgraph view iterates a set of node names, whose order follows the hash seed.
    import subprocess
    import sys

    code = ("import networkx as nx; from gravity_engine.viz.graph import layout; g = nx.Graph(); "
            "g.add_nodes_from(f'iso{i}' for i in range(30)); "
            "g.add_edges_from([('anna', 'priya'), ('priya', 'chicago'), ('priya', 'medkg'), ('anna', 'biscuit')]); "
            "print(sorted((n, round(x, 6), round(y, 6)) for n, (x, y) in layout(g).items()))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(runs) == 1 and "priya" in runs.pop()


def _busy(n_days: int = 60, people: tuple[str, ...] = ("Ann", "Bo")):
    return _dated(*[Event(id=f"e{i}", what=f"a rather long description of happening number {i}",
                          participants=[people[i % len(people)]], date_start=f"2023-{1 + i // 28:02d}-{1 + i % 28:02d}",
                          granularity="day", session_date="2023-03-01T10:00:00",
                          source_ids=[f"D1:{k}" for k in range(1 + i % 5)]) for i in range(n_days)])


def test_person_lanes_get_at_least_half_the_height_beside_many_topic_lanes():
    lanes = ["Ann", "Bo"] + [f"Topic: t{i}" for i in range(16)]
    layout, height = timeline.lane_layout(lanes)
    person = sum(h for lane, (_, h) in layout.items() if not lane.startswith("Topic"))
    assert person >= height / 2 and layout["Ann"][1] > 4 * layout["Topic: t0"][1]
    centres = [c for c, _ in layout.values()]
    assert centres == sorted(centres) and len(set(centres)) == len(lanes)


def test_labels_are_placed_only_where_they_fit_most_cited_first():
    anchors = _busy()
    span = (pd.Timestamp("2022-12-15"), pd.Timestamp("2023-03-15"))
    marks = timeline.lanes_frame(timeline.events_frame(anchors, ["Ann", "Bo"]), span)
    layout, _ = timeline.lane_layout(timeline.lane_order(marks))
    marks = marks.assign(y=[layout[lane][0] for lane in marks["lane"]])
    placed = timeline.place_labels(marks, span)
    assert 0 < len(placed) < len(marks)  # sixty long labels in 760 px: only some fit
    boxes = list(zip(placed["bx0"], placed["by0"], placed["bx1"], placed["by1"]))
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= timeline.LABEL_PLOT_WIDTH and a[1] >= 0  # inside the plot
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    assert placed["weight"].max() == marks["weight"].max()  # the most-cited day is labelled
    spec = timeline.timeline_chart(marks.drop(columns=["y"]), domain=span, labels=True).to_dict()
    text_layers = [layer for layer in spec["layer"] if layer["mark"].get("type") == "text"]
    assert 1 <= len(text_layers) <= 3  # one per alignment, one dataset
    assert len(text_layers[0]["data"]["values"]) == len(placed) and spec["usermeta"]["embedOptions"]["renderer"] == "svg"


def test_a_person_named_once_shares_a_lane_and_many_topics_fold_into_one():
    anchors = _busy(6)
    anchors.entities.append(Entity(id="p9", name="Gryffindor", type="person"))
    anchors.events[0].participants = ["Gryffindor"]
    frame = timeline.events_frame(anchors, ["Ann", "Bo"])
    assert frame.loc[frame["id"] == "e0", "people"].iloc[0] == timeline.OTHER_PEOPLE
    topics_all = timeline.topic_lanes_frame(demo_anchors(), collapsed=True)
    assert set(topics_all["lane"]) == {"Topics (2)"}
    assert topics_all["mentions"].sum() == timeline.topic_lanes_frame(demo_anchors())["mentions"].sum()


def test_the_density_view_draws_a_strip_per_person_and_week():
    marks = timeline.lanes_frame(timeline.events_frame(_busy(), ["Ann", "Bo"]))
    spec = timeline.timeline_chart(marks, density=True, labels=False).to_dict()
    rects = [layer for layer in spec["layer"] if layer["mark"].get("type") == "rect" and "x2" in layer["encoding"]]
    rows = rects[0]["data"]["values"]
    assert sum(r["n"] for r in rows) == marks["n"].sum() and len(rows) < len(marks)
    assert not any(layer["mark"].get("type") == "point" for layer in spec["layer"])


def _talk() -> tuple[AnchorSet, Conversation]:
    utts = [Utterance(id=f"D1:{i}", session_id="s1", speaker=s, text=t) for i, (s, t) in enumerate([
        ("Ann", "My cat Oliver met Bo's dog Rex."), ("Bo", "Rex loves Oliver."), ("Ann", "Oliver sleeps."),
        ("Bo", "Rex and Oliver again."), ("Cy", "Hello there.")], start=1)]
    conv = Conversation(id="c", sessions=[Session(id="s1", index=1, utterances=utts)])
    anchors = AnchorSet(entities=[
        Entity(id="e_ann", name="Ann", type="person", source_ids=["D1:1"]),
        Entity(id="e_oli", name="Oliver", type="pet", source_ids=["D1:1", "D1:2", "D1:3", "D1:4"],
               relations=[Relation(predicate="pet_of", target="Ann", target_id="e_ann", source_ids=["D1:1"])]),
        Entity(id="e_rex", name="Rex", type="pet", source_ids=["D1:1", "D1:2", "D1:4"]),
        Entity(id="e_far", name="Faraway Place", type="place", source_ids=["D1:5"])])
    return anchors, conv


def test_co_mentions_count_utterances_said_together_and_speakers_are_mentioned_by_what_they_say():
    from gravity_engine.comentions import co_mentions

    anchors, conv = _talk()
    got = {(c.a, c.b): c for c in co_mentions(anchors, conv)}
    assert got[("e_oli", "e_rex")].weight == 3 and got[("e_oli", "e_rex")].utterance_ids == ("D1:1", "D1:2", "D1:4")
    assert ("e_ann", "e_oli") in got and got[("e_ann", "e_oli")].weight == 2  # Ann says D1:1 and D1:3
    assert ("e_oli", "speaker:Bo") in got  # Bo has no entity: a speaker node stands in
    assert not any("e_far" in pair for pair in got)  # said once, with nobody
    assert all(c.weight >= 2 for c in got.values())
    assert co_mentions(anchors, None) == [c for c in co_mentions(anchors, None)]  # no conversation: entities only


def test_the_graph_draws_speakers_always_and_lists_the_unconnected():
    anchors, conv = _talk()
    g, nodes, edges = graph.explore_data(anchors, co_mentions=True, conversation=conv)
    view = graph.graph_view(*graph.select_frames(nodes, edges, g.nodes, hide_unconnected=True))
    drawn = {n["id"] for n in view["nodes"]}
    assert {"e_ann", "speaker:Bo", "speaker:Cy"} <= drawn and "e_far" not in drawn  # Cy speaks, mentions no one
    assert list(graph.unconnected(nodes)["name"]) == ["Faraway Place"]
    weights = {(e["source"], e["target"]): e["width"] for e in view["edges"] if e["kind"] == "co-mention"}
    assert max(weights.values()) > min(weights.values())  # thicker when said together more often


def test_a_relation_confidence_is_shown_when_the_extractor_gives_one():
    anchors, conv = _talk()
    relation = anchors.entities[1].relations[0]
    object.__setattr__(relation, "confidence", 0.83)  # an optional float an extractor may add
    g, nodes, edges = graph.explore_data(anchors, conversation=conv)
    view = graph.graph_view(nodes, edges)
    tip = next(e["tip"] for e in view["edges"] if e["kind"] == "relation")
    assert ["confidence", "0.83"] in tip
    assert graph.entity_profile(anchors.entities[1])["relations"][0]["confidence"] == 0.83
    plain = graph.graph_view(*graph.explore_data(_talk()[0])[1:])
    assert not any(k == "confidence" for e in plain["edges"] for k, _ in e["tip"])


@pytest.mark.parametrize("when, flagged", [("yesterday", True), ("a while ago", True), ("three years ago", False),
                                           ("back in 2019", False), ("since 2018", False), ("a few years back", False)],
                         ids=["yesterday", "while-ago", "years-ago", "back-in", "since", "years-back"])
def test_review_and_the_timeline_flag_the_same_far_dates(tmp_path, when, flagged):
    from gravity_engine.curate.review import review

    store = make_store(tmp_path / "s")
    event = Event(id="evt_far", what="moved house", participants=["Priya"], when_text=when, date_start="2019-05-07",
                  date_end="2019-05-07", granularity="day", session_date="2023-05-08T10:00:00", source_ids=["D1:1"])
    store.anchors.events.append(event)
    on_timeline = timeline.events_frame(store.anchors).set_index("id").loc["evt_far", "suspicious"] != ""
    in_review = any(item.anchor_id == "evt_far" and any(r.kind == "far_date" for r in item.reasons)
                    for item in review(store).items)
    assert on_timeline == in_review == flagged


def test_a_search_opens_the_event_that_says_it_before_one_only_in_a_topic_of_that_name():
    anchors = _dated(
        Event(id="e1", what="lottery results came out", participants=["Ann"], date_start="2024-03-05",
              granularity="day", topic_id="t1"),
        Event(id="e2", what="ran the Berlin Marathon", participants=["Ann"], date_start="2024-09-29",
              granularity="day", topic_id="t1"))
    anchors.topics = [Topic(id="t1", label="Berlin Marathon")]
    frame = timeline.events_frame(anchors)
    assert timeline.search_mask(frame, "berlin marathon").all()  # the topic's title matches both
    assert timeline.best_match(frame, "Berlin Marathon") == "e2"
    assert timeline.best_match(frame, "nothing like this") is None


def test_charts_are_built_without_altairs_per_object_checks_which_come_back_after():
    from altair.utils import schemapi

    from gravity_engine.viz import unvalidated

    seen = []

    @unvalidated
    def build(fail: bool = False):
        seen.append(schemapi.DEBUG_MODE)
        if fail:
            raise ValueError("no chart")
        return "chart"

    assert build() == "chart" and seen == [False] and schemapi.DEBUG_MODE is True
    with pytest.raises(ValueError):
        build(fail=True)
    assert schemapi.DEBUG_MODE is True  # restored when a build fails too
