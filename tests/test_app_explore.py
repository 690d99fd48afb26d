"""AppTest for the explore pages' controls: graph, timeline, topics (small stores, FakeEmbedder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gravity_engine.anchors import Entity, Event
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder
from studio_stores import demo_anchors, demo_conversation

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


@pytest.fixture
def store_dir(tmp_path):
    """The demo store plus an entity without relations (Oslo, cited twice with Marco) and an event dated in
    the wrong year."""
    anchors = demo_anchors()
    anchors.entities.append(Entity(id="ent_6", name="Oslo", type="place", source_ids=["D1:2", "D2:2"], mentions=2))
    anchors.events.append(Event(id="evt_5", what="went to Oslo", participants=["Marco"], when_text="in September",
                                date_start="2022-09-10", date_end="2022-09-10", granularity="day",
                                session_id="session_1", session_date="2023-05-08T10:00:00", source_ids=["D1:2"]))
    path = tmp_path / "explore_store"
    AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, FakeEmbedder(dim=64)),
                conversation=demo_conversation(), report={}).save(path)
    return path


def open_page(page: str, store: Path, query: dict | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["store_path"] = str(store)
    at.run()
    for k, v in state.items():
        at.session_state[k] = v
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def chart_specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def lane_names(spec: dict) -> list[str]:
    """The timeline's lanes, as its y axis labels them."""
    from gravity_engine.viz.timeline import lane_names as names

    return names(spec)


def test_graph_lists_the_entities_without_an_edge_instead_of_a_grid(store_dir):
    at = open_page("app_pages/graph.py", store_dir)
    at.toggle(key="graph_co_mentions").set_value(False).run()
    assert metrics(at)["Entities shown"] == "5" and metrics(at)["Without an edge"] == "1"
    listed = next(df.value for df in at.dataframe if list(df.value.columns) == ["name", "type", "mentions"])
    assert list(listed["name"]) == ["Oslo"]
    assert not any(n["grid"] for n in graph_view(at)["nodes"])  # nothing drawn in a grid, so no name is cut


def graph_view(at: AppTest) -> dict:
    """What the page sent to its graph component (the component's script runs in a browser only)."""
    (component,) = at.get("bidi_component")
    assert component.proto.component_name == "gravity_entity_graph"
    assert "setTriggerValue(\"click\"" in component.proto.js_content  # it sends clicks back
    return json.loads(component.proto.json)


def test_graph_component_gets_nodes_edges_and_the_selection(store_dir):
    at = open_page("app_pages/graph.py", store_dir)
    view = graph_view(at)
    got = metrics(at)
    assert len(view["nodes"]) == int(got["Entities shown"])
    assert len(view["edges"]) == int(got["Typed relations"]) + int(got["Co-mention edges"])
    assert [n["id"] for n in view["nodes"] if n["focus"]] == [at.selectbox(key="graph_selected_entity").value]


def test_graph_co_mentions_are_on_by_default_dashed_weighted_and_toggled(store_dir):
    at = open_page("app_pages/graph.py", store_dir)
    assert int(metrics(at)["Co-mention edges"]) >= 1 and metrics(at)["Without an edge"] == "0"  # Oslo joins
    co = [e for e in graph_view(at)["edges"] if e["kind"] == "co-mention"]
    assert co and all(e["width"] >= 1 and e["tip"][1][0] == "utterances" for e in co)
    relations = int(metrics(at)["Typed relations"])
    at.toggle(key="graph_co_mentions").set_value(False).run()
    assert metrics(at)["Co-mention edges"] == "0" and int(metrics(at)["Typed relations"]) == relations


@pytest.mark.parametrize("how", ["query", "state"])
def test_graph_opens_the_profile_another_page_asks_for(store_dir, how):
    if how == "query":
        at = open_page("app_pages/graph.py", store_dir, query={"entity": "Biscuit"})
    else:
        at = open_page("app_pages/graph.py", store_dir, focus_entity="ent_3")
    expected = {"query": ("ent_5", "Biscuit"), "state": ("ent_3", "Dr. Chen")}[how]
    assert at.selectbox(key="graph_selected_entity").value == expected[0]
    assert any(md.value == f"#### {expected[1].replace('.', chr(92) + '.')}" for md in at.markdown)


def test_graph_says_when_the_asked_entity_is_unknown(store_dir):
    at = open_page("app_pages/graph.py", store_dir, query={"entity": "Nobody"})
    assert any("No entity called Nobody" in w.value for w in at.warning)


def test_timeline_lanes_are_people_and_topics(store_dir):
    at = open_page("app_pages/timeline.py", store_dir)
    lanes = lane_names(chart_specs(at)[0])
    assert {"Priya", "Marco"} <= set(lanes) and "St. Mary Hospital" not in lanes
    assert any(lane.startswith("Topic: ") for lane in lanes)
    at.segmented_control(key="timeline_topic_mode").set_value("one").run()
    assert [lane for lane in lane_names(chart_specs(at)[0]) if lane.startswith("Topic")] == ["Topics (2)"]
    at.segmented_control(key="timeline_topic_mode").set_value("off").run()
    assert not any(lane.startswith("Topic") for lane in lane_names(chart_specs(at)[0]))


def test_timeline_search_finds_and_opens_an_event(store_dir):
    at = open_page("app_pages/timeline.py", store_dir)
    at.text_input(key="timeline_search").set_value("drug interactions").run()
    assert any("1 of 5 events match" in c.value for c in at.caption)
    table = next(df.value for df in at.dataframe if "what" in df.value.columns)
    assert list(table["id"]) == ["evt_2"]
    assert at.selectbox(key="timeline_selected_event").value == "evt_2"


def test_timeline_filters_by_a_non_person_entity(store_dir):
    at = open_page("app_pages/timeline.py", store_dir)
    at.multiselect(key="timeline_entities").set_value(["ent_4"]).run()  # St. Mary Hospital
    table = next(df.value for df in at.dataframe if "what" in df.value.columns)
    assert list(table["id"]) == ["evt_3"]


def test_timeline_flags_a_wrong_year_and_keeps_it_on_the_chart(store_dir):
    at = open_page("app_pages/timeline.py", store_dir)
    assert metrics(at)["Suspicious dates"] == "1"
    flagged = next(df.value for df in at.dataframe if "suspicious" in df.value.columns and len(df.value) == 1)
    assert flagged["id"].iloc[0] == "evt_5" and "no year was said" in flagged["suspicious"].iloc[0]
    assert any("outside the range shown" in c.value for c in at.caption)
    at.selectbox(key="timeline_selected_event").set_value("evt_5").run()
    assert any("Check this date" in w.value for w in at.warning)


def test_topics_heatmap_cell_selection_and_arc(store_dir):
    at = open_page("app_pages/topics.py", store_dir)
    heat, arc = at.get("vega_lite_chart")
    assert list(heat.proto.selection_mode) == ["cell"]  # a click on a cell reruns the page with it
    first = [md.value for md in at.markdown if md.value.startswith("#### ")]
    at.selectbox(key="topics_selected").set_value("top_2").run()
    assert [md.value for md in at.markdown if md.value.startswith("#### ")] != first
    assert len(at.get("vega_lite_chart")) == 2 and not at.exception


def test_topics_show_titles_with_their_keywords_beside(store_dir):
    at = open_page("app_pages/topics.py", store_dir)
    table = next(df.value for df in at.dataframe if "keywords" in df.value.columns)
    assert list(table["topic"]) == ["Hallucination and knowledge graph", "X-ray module"]
    assert [md.value for md in at.markdown if md.value.startswith("#### ")] == ["#### Hallucination and knowledge graph"]
    # its keywords are all in the title: no secondary line repeats them (topic_subtitles, tests/test_viz.py)
    assert not any(c.value.startswith("Keywords: ") for c in at.caption)


def test_graph_focus_from_another_page_applies_every_time(store_dir):
    at = open_page("app_pages/graph.py", store_dir, focus_entity="ent_3")
    at.selectbox(key="graph_selected_entity").set_value("ent_1").run()
    at.session_state["focus_entity"] = "ent_3"  # the Review page sends the same entity again
    at.run()
    assert at.selectbox(key="graph_selected_entity").value == "ent_3"
    assert "ent_3" in at.query_params["entity"]  # the URL names the profile shown
