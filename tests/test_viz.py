"""The viz library without Streamlit: graph, timeline, topics, exports and the zip import."""

from __future__ import annotations

import io
import re
import zipfile

import networkx as nx
import pytest

from gravity_engine.errors import InputError
from gravity_engine.store import AnchorStore
from gravity_engine.viz import export, graph, timeline, topics
from studio_stores import HOSTILE, demo_anchors, make_store


def test_graph_nodes_edges_and_filters():
    g = graph.build_graph(demo_anchors(), {})
    assert g.number_of_nodes() == 5
    assert {d["predicate"] for _, _, d in g.edges(data=True)} >= {"works with", "owns", "works at"}
    assert set(graph.filter_graph(g, types=["pet"]).nodes) == {"ent_5"}
    assert set(graph.filter_graph(g, search="chen").nodes) == {"ent_1", "ent_3", "ent_4"}
    assert all(graph.filter_graph(g, min_degree=2).degree(n) >= 2 for n in graph.filter_graph(g, min_degree=2))


def test_graph_html_is_offline_and_escaped():
    g = graph.build_graph(demo_anchors(name_a=HOSTILE), {})
    doc = graph.graph_html(g)
    assert HOSTILE not in doc
    assert not re.search(r"""(src|href)\s*=\s*["']https?:""", doc)
    assert "gsText" in doc  # escaped strings are decoded only into text sinks


def test_esc_defuses_href_switch():
    assert "href" not in graph.esc('<a href="javascript:x">')
    assert "&lt;a" in graph.esc("<a>")


def test_timeline_frame_and_chart():
    frame = timeline.events_frame(demo_anchors())
    assert frame["resolved"].sum() == 3 and not frame.loc[frame["id"] == "evt_4", "resolved"].item()
    spec = timeline.timeline_chart(frame).to_dict()
    assert any(layer["encoding"]["x"]["type"] == "temporal" for layer in spec["layer"])
    assert len(timeline.links_frame(frame)) == 2  # evt_1 causes evt_2, evt_2 follows evt_1


def test_topic_arcs_heatmap():
    arcs = topics.arcs_frame(demo_anchors())
    assert list(arcs[arcs["topic_id"] == "top_1"]["session_id"]) == ["session_1", "session_2", "session_3"]
    spec = topics.heatmap_chart(arcs, ["session_1", "session_2", "session_3"]).to_dict()
    assert spec["mark"]["type"] == "rect"


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
    spec = timeline.timeline_chart(frame, domain=span).to_dict()
    x = next(layer["encoding"]["x"] for layer in spec["layer"] if "scale" in layer.get("encoding", {}).get("x", {}))
    assert x["scale"]["domain"] == [span[0].isoformat(), span[1].isoformat()]
    assert "scale" not in str(timeline.timeline_chart(frame).to_dict()["layer"][-1]["encoding"]["x"])
