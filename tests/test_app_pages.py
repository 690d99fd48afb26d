"""AppTest for every page of Gravity Studio, on a small hand-made store (FakeEmbedder: no torch needed)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from studio_stores import make_store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


def open_page(page: str, store: Path | None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["store_path"] = str(store) if store else None
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    if page != "app_pages/home.py":
        at.switch_page(page)
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    parts = [e.value for e in at.title] + [e.value for e in at.subheader] + [e.value for e in at.markdown]
    parts += [e.value for e in at.caption] + [e.value for e in at.text] + [e.value for e in at.info]
    parts += [e.value for e in at.error] + [e.value for e in at.warning] + [e.value for e in at.success]
    return "\n".join(str(p) for p in parts)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


PAGES = [
    ("app_pages/home.py", "Gravity Studio", {"Entities": "5", "Events": "4", "Topics": "2", "Sessions": "3"}),
    ("app_pages/graph.py", "Entity graph", {"Entities shown": "5"}),
    ("app_pages/timeline.py", "Event timeline", {"Events": "4", "Unresolved dates": "1"}),
    ("app_pages/topics.py", "Topic arcs", {"Topics": "2", "Sessions": "3"}),
    ("app_pages/data.py", "Export & import", {}),
    ("app_pages/settings.py", "Settings", {}),
    ("app_pages/build.py", "Build anchors", {}),
    ("app_pages/playground.py", "Query playground", {}),
    ("app_pages/evaluation.py", "Evaluation", {}),
]


@pytest.mark.parametrize("page,heading,expected", PAGES, ids=[p[0].split("/")[1][:-3] for p in PAGES])
def test_page_renders_with_store(page, heading, expected, store_dir):
    at = open_page(page, store_dir)
    assert at.title[0].value == heading
    got = metrics(at)
    for label, value in expected.items():
        assert got.get(label) == value, (label, got)


@pytest.mark.parametrize("page", ["app_pages/home.py", "app_pages/graph.py", "app_pages/timeline.py",
                                  "app_pages/topics.py", "app_pages/playground.py"], ids=["home", "graph", "timeline", "topics", "playground"])
def test_page_without_store_says_what_to_do(page, monkeypatch):
    from app_services import studio

    monkeypatch.setattr(studio, "available_stores", lambda: [])
    at = open_page(page, None)
    assert "No anchor store is loaded" in texts(at)


def test_graph_chart_filters(store_dir):
    at = open_page("app_pages/graph.py", store_dir)
    assert at.get("bidi_component"), "the graph is a clickable component (tests/test_app_explore.py has the rest)"
    at.multiselect(key="graph_filter_type").set_value(["organization"]).run()
    assert metrics(at)["Entities shown"] == "1"
    at.multiselect(key="graph_filter_type").set_value(["person", "organization", "pet"]).run()
    at.text_input(key="graph_search").set_value("biscuit").run()
    assert metrics(at)["Entities shown"] == "2"  # Biscuit and its owner
    assert at.selectbox(key="graph_selected_entity").value == "ent_5"


def test_graph_profile_quotes_sources(store_dir):
    at = open_page("app_pages/graph.py", store_dir)
    assert at.selectbox(key="graph_selected_entity").value == "ent_1"  # most mentioned first
    frames = [df.value for df in at.dataframe]
    quoted = [f for f in frames if "speaker" in f.columns and "session" in f.columns]
    assert quoted, "attribute sources are quoted with speaker and session"
    assert "medical model hallucinated" in " ".join(quoted[0]["text"])
    assert "Unsupported fields" not in metrics(at)  # only the open tab is drawn
    at.session_state["graph_profile_tab"] = "Verification"
    at.run()
    assert metrics(at)["Unsupported fields"] == "1"


def test_timeline_chart_is_a_time_axis(store_dir):
    at = open_page("app_pages/timeline.py", store_dir)
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    encodings = [layer.get("encoding", {}) for layer in spec["layer"]]
    assert any(e.get("x", {}).get("type") == "temporal" for e in encodings)
    unresolved = [df.value for df in at.dataframe if "when_text" in df.value.columns and len(df.value) == 1]
    assert unresolved and unresolved[0]["when_text"].iloc[0] == "someday"


def test_topics_heatmap(store_dir):
    at = open_page("app_pages/topics.py", store_dir)
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["mark"]["type"] == "rect"
    assert at.selectbox(key="topics_selected").value in {"top_1", "top_2"}


def test_hostile_names_are_not_markup(tmp_path):
    path = tmp_path / "hostile"
    make_store(path, hostile=True)
    for page in ("app_pages/home.py", "app_pages/graph.py", "app_pages/timeline.py", "app_pages/topics.py"):
        at = open_page(page, path)
        for md in at.markdown:
            assert "<img" not in md.value, (page, md.value)


def test_export_downloads(store_dir):
    at = open_page("app_pages/data.py", store_dir)
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Anchor store (.zip)", "Entity graph (GraphML)", "Events (CSV)", "Report (Markdown)"]


def test_import_rejects_a_bad_zip_with_a_clear_message(store_dir, tmp_path):
    from gravity_engine.errors import InputError
    from gravity_engine.viz.export import import_store_zip

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil/anchors.json", "{}")
    with pytest.raises(InputError, match="outside the archive"):
        import_store_zip(buf.getvalue(), tmp_path / "x", filename="evil.zip")


def test_settings_key_is_masked_and_kept_in_session(store_dir):
    at = open_page("app_pages/settings.py", store_dir)
    key_box = at.text_input(key="settings_api_key")
    assert key_box.proto.type == key_box.proto.PASSWORD
    key_box.set_value("sk-test-secret").run()
    assert at.session_state["llm_settings"]["api_key"] == "sk-test-secret"
    at.button(key="settings_test").click().run()
    assert not at.exception
    assert "sk-test-secret" not in texts(at)


def test_settings_test_connection_reaches_a_local_endpoint(store_dir, scripted_openai):
    at = open_page("app_pages/settings.py", store_dir)
    at.text_input(key="settings_base_url").set_value(scripted_openai.base_url).run()
    at.text_input(key="settings_model").set_value("gravity-echo").run()
    at.text_input(key="settings_api_key").set_value("sk-local-secret").run()
    at.button(key="settings_test").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert [s.value for s in at.success] and not at.error, [e.value for e in at.error]
    assert "sk-local-secret" not in texts(at)
    assert any(r["path"].endswith("/models") for r in scripted_openai.requests)


def test_settings_query_overrides(store_dir):
    at = open_page("app_pages/settings.py", store_dir)
    at.number_input(key="settings_K_E").set_value(5).run()
    assert at.session_state["query_overrides"] == {"K_E": 5}
    at.slider(key="settings_line_lexical").set_value(0.0).run()
    assert at.session_state["query_overrides"] == {"K_E": 5, "line_lexical": 0.0}


def test_build_upload_error_shows_loader_message(store_dir):
    at = open_page("app_pages/build.py", store_dir)
    at.radio(key="build_source").set_value("Upload a file").run()
    uploader = at.get("file_uploader")
    assert uploader, "the build page offers an upload"
    # AppTest cannot drive st.file_uploader; call the cached loader the page uses on a broken file.
    from gravity_engine.errors import InputError
    from gravity_engine.loaders import load_bytes

    with pytest.raises(InputError) as err:
        load_bytes(b"\x00\x01\x02 not a conversation", "broken.json")
    assert "broken.json" in str(err.value)


def _sample_questions(monkeypatch):
    from app_services import studio

    qs = [{"id": "q1", "question": "When did Priya notice the hallucinated drug dose?", "answer": "7 May 2023",
           "evidence": ["D1:1"], "category": "temporal"},
          {"id": "q2", "question": "What is the name of Priya's dog?", "answer": "Biscuit", "evidence": ["D2:3"],
           "category": "single-hop"}]
    monkeypatch.setattr(studio, "questions_for", lambda store: qs)
    return qs


def test_playground_asks_without_llm(store_dir, monkeypatch):
    qs = _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    at.selectbox(key="playground_pick").set_value(qs[1]["question"]).run()
    assert at.text_input(key="playground_query").value == qs[1]["question"]
    at.button(key="playground_ask").click().run()
    assert not at.exception, [e.message for e in at.exception]
    trace = at.session_state["playground_result"]
    assert set(trace["modules"]) == {"entities", "events", "topics"}
    assert trace["blocks"] and trace["blocks"][0]["title"] in trace["prompt_with"]["text"]
    shown = texts(at)
    assert "Biscuit" in "".join(e.proto.body for e in at.get("html"))  # the gold answer
    assert "No model answer" in shown
    assert any(m.label == "Gravity query path" for m in at.metric)
    at.session_state["playground_details"] = "Injected anchor lines"  # the tab: only the open one is drawn
    at.run()
    lines = next(df.value for df in at.dataframe if "sources" in df.value.columns)  # what Gravity added, line by line
    assert len(lines) == sum(len(b["lines"]) for b in trace["blocks"]) and lines["sources"].str.len().gt(0).all()


def test_playground_block_switches(store_dir, monkeypatch):
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    at.text_input(key="playground_query").set_value("Who is Dr. Chen?").run()
    at.toggle(key="playground_use_events").set_value(False).run()
    at.toggle(key="playground_use_expansion").set_value(False).run()
    at.button(key="playground_ask").click().run()
    trace = at.session_state["playground_result"]
    assert "events" not in trace["modules"] and trace["expansions"] == []


def test_store_opened_elsewhere_is_not_overridden_by_the_picker(store_dir, tmp_path, monkeypatch):
    from app_services import studio

    other = tmp_path / "other"
    make_store(other, hostile=True)
    monkeypatch.setattr(studio, "available_stores", lambda: [store_dir, other])
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["store_path"] = str(store_dir)
    at.run()
    assert at.sidebar.selectbox[0].value == str(store_dir)
    at.session_state["store_path"] = str(other)  # what Build's "Open this store" does
    at.run()
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state["store_path"] == str(other)


def test_graph_split_off_without_snapshot_says_why(store_dir):
    at = open_page("app_pages/graph.py", store_dir, graph_profile_tab="Merges")
    assert at.selectbox(key="graph_unmerge_alias").value == "P."
    at.button(key="graph_unmerge").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("kept no snapshot" in e.value for e in at.error)
    assert at.session_state["store_path"] == str(store_dir)


def test_graph_split_off_copies_a_sample_store_to_the_workspace(tmp_path, monkeypatch, fake_embedder):
    from app_services import studio
    from gravity_engine.anchors import AnchorSet, Entity
    from gravity_engine.build.consolidate import consolidate_entities
    from gravity_engine.store import AnchorStore, embed_anchors

    samples = tmp_path / "samples"
    monkeypatch.setattr(studio, "SAMPLE_STORES", samples)
    monkeypatch.setenv("GRAVITY_HOME", str(tmp_path / "home"))
    entities = consolidate_entities([[Entity(id="a", name="Priya Raman", type="person", source_ids=["D1:1"])],
                                     [Entity(id="b", name="Priya", type="person", source_ids=["D1:2"])]], speakers=[])
    anchors = AnchorSet(conversation_id="demo", entities=entities)
    AnchorStore(anchors=anchors, embeddings=embed_anchors(anchors, fake_embedder)).save(samples / "demo")
    target = studio.unmerge_into_workspace(AnchorStore.load(samples / "demo"), "ent-priya-raman", "Priya",
                                           fake_embedder)
    assert target == tmp_path / "home" / "workspace" / "demo-edited"
    assert len(AnchorStore.load(target).anchors.entities) == 2
    assert len(AnchorStore.load(samples / "demo").anchors.entities) == 1  # the sample is untouched


def test_build_page_runs_an_llm_build_against_a_local_endpoint(store_dir, scripted_openai, embedder, tmp_path,
                                                               monkeypatch):
    import time

    monkeypatch.setenv("GRAVITY_HOME", str(tmp_path / "home"))
    at = open_page("app_pages/build.py", store_dir, llm_settings={"base_url": scripted_openai.base_url,
                                                              "api_key": "sk-local", "model": "gravity-echo"})
    at.selectbox(key="build_sample").set_value(next(o for o in at.selectbox(key="build_sample").options
                                                    if str(o).endswith("book_club.txt"))).run()
    at.radio(key="build_backend").set_value("llm").run()
    assert metrics(at)["LLM calls"] == "3"  # 41 turns in 3 sessions, one fused call per batch
    at.button(key="build_start").click().run()
    assert not at.exception, [e.message for e in at.exception]
    for _ in range(240):
        time.sleep(0.5)
        at.run()
        if at.get("button") and any(b.key == "build_open" for b in at.button):
            break
    assert any(b.key == "build_open" for b in at.button), [e.value for e in at.error]
    assert len(scripted_openai.chat_requests()) == 3
    assert metrics(at)["LLM calls"] == "3"
