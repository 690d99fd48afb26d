"""AppTest of the Review and Compare pages: the queue, fixes recorded as edits, undo, gold upload, escaping,
a sample store copied before it is edited, and the diff of a store with itself as built."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gravity_engine.anchors import Entity
from gravity_engine.curate.edits import curation_of, read_log
from gravity_engine.store import AnchorStore, embed_anchors
from gravity_engine.testing import FakeEmbedder

from studio_stores import make_store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


@pytest.fixture
def store_dir(tmp_path):
    path = tmp_path / "demo_store"
    store = make_store(path)
    # one junk entity, so the queue has a one-click fix
    store.anchors.entities.append(Entity(id="ent_lol", name="Lol", type="other", source_ids=["D1:2"], mentions=1))
    store.set_embeddings(embed_anchors(store.anchors, FakeEmbedder(dim=64)))
    store.save(path)
    return path


def open_page(page: str, store: Path, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["store_path"] = str(store)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def click(at: AppTest, label: str) -> AppTest:
    button = next(b for b in at.button if b.label == label)
    button.click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_review_page_lists_the_queue_with_reasons_and_sources(store_dir):
    at = open_page("app_pages/review.py", store_dir)
    assert at.title[0].value == "Review anchors"
    assert metrics(at)["To review"] == "3"
    queue = next(df.value for df in at.dataframe if "reasons" in df.value.columns)
    assert queue["anchor"].iloc[0] == "entity: Lol"  # junk and seen once: the top
    at.selectbox(key="review_item").set_value("ent_lol").run()
    shown = " ".join(m.value for m in at.markdown)
    assert "junk" in shown and "seen once" in shown
    quotes = [df.value for df in at.dataframe if "speaker" in df.value.columns]
    assert quotes and "D1:2" in list(quotes[0]["id"])


def test_fix_a_type_then_undo_it(store_dir):
    at = open_page("app_pages/review.py", store_dir)
    at.selectbox(key="review_item").set_value("ent_1").run()
    at.selectbox(key="review_type").set_value("pet")
    at.text_input(key="review_why").set_value("testing the form")
    click(at, "Change type")
    assert metrics(at)["Edits applied"] == "1"
    assert any("type" in s.value and "pet" in s.value and "applied" in s.value for s in at.success)
    store = AnchorStore.load(store_dir)
    assert next(e for e in store.anchors.entities if e.id == "ent_1").type == "pet"
    [edit] = read_log(store_dir)
    assert (edit.kind, edit.why) == ("set_type", "testing the form")

    at.selectbox(key="review_undo_pick").set_value(edit.id)
    click(at, "Undo")
    assert metrics(at)["Undone"] == "1"
    assert next(e for e in AnchorStore.load(store_dir).anchors.entities if e.id == "ent_1").type == "person"


def test_suggested_fix_deletes_junk(store_dir):
    at = open_page("app_pages/review.py", store_dir)
    at.selectbox(key="review_item").set_value("ent_lol").run()
    click(at, "Suggested fix: Delete this entity")
    store = AnchorStore.load(store_dir)
    assert "Lol" not in [e.name for e in store.anchors.entities]
    assert [o.status for o in curation_of(store).outcomes] == ["applied"]
    assert metrics(at)["To review"] == "2"


def test_editing_a_sample_store_copies_it_to_the_workspace(store_dir, monkeypatch):
    from app_services import studio

    monkeypatch.setattr(studio, "SAMPLE_STORES", store_dir.parent)
    at = open_page("app_pages/review.py", store_dir)
    at.selectbox(key="review_item").set_value("ent_lol").run()
    click(at, "Suggested fix: Delete this entity")
    copy = Path(at.session_state["store_path"])
    assert copy.parent == studio.workspace_dir() and copy != store_dir
    assert not (store_dir / "edits.jsonl").exists()  # the sample itself is never edited
    assert "Lol" not in [e.name for e in AnchorStore.load(copy).anchors.entities]


def test_gold_upload_scores_the_store(store_dir):
    gold = {"gold_version": 1, "speakers": ["Priya", "Marco"],
            "entities": [{"name": "Priya", "type": "person"}, {"name": "Biscuit", "type": "pet"},
                         {"name": "Dr. Chen", "type": "person"}, {"name": "St. Mary Hospital", "type": "place"},
                         {"name": "Ana", "type": "person"}],
            "junk_names": ["Lol"]}
    at = open_page("app_pages/review.py", store_dir)
    at.file_uploader(key="review_gold_upload").upload("demo.gold.json", json.dumps(gold).encode(), "application/json").run()
    assert not at.exception
    got = metrics(at)
    assert got["Entity recall"] == "80%"  # Ana is missing
    assert got["Type accuracy"] == "75%"  # the hospital is an organization in the store
    misses = next(df.value for df in at.dataframe if "miss" in df.value.columns)
    assert "Ana" in list(misses["what"]) and "Lol" in list(misses["what"])
    queue = next(df.value for df in at.dataframe if "reasons" in df.value.columns)
    assert "gold says St. Mary Hospital is place" in " ".join(queue["reasons"])

    bad = dict(gold, entities=[{"name": "Priya", "type": "wizard"}])
    at.file_uploader(key="review_gold_upload").set_value(("bad.gold.json", json.dumps(bad).encode(), "application/json")).run()
    shown = [e.value.replace("\\", "") for e in at.error]  # messages are Markdown-escaped: drop the backslashes
    assert any("entities[0].type" in m and "wizard" in m for m in shown), shown


def test_review_escapes_conversation_text(tmp_path):
    path = tmp_path / "hostile"
    make_store(path, hostile=True)
    at = open_page("app_pages/review.py", path)
    for i in range(len(at.selectbox(key="review_item").options)):
        at.selectbox(key="review_item").select_index(i).run()
        assert not at.exception
        for md in at.markdown:
            assert "<img" not in md.value, md.value


def test_compare_shows_what_edits_changed(store_dir):
    at = open_page("app_pages/review.py", store_dir)
    at.selectbox(key="review_item").set_value("ent_1").run()
    at.selectbox(key="review_type").set_value("pet")
    click(at, "Change type")
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.title[0].value == "Compare builds"
    assert at.toggle(key="compare_a_raw").value  # the same store on both sides: A as built
    assert metrics(at)["Entities"] == "+0 −0 ~1"
    changed = next(df.value for df in at.dataframe if "field" in df.value.columns)
    row = changed[changed["field"] == "type"].iloc[0]
    assert (row["anchor"], row["A"], row["B"]) == ("Priya", "person", "pet")


def test_compare_measures_and_injected_anchors(store_dir):
    from gravity_engine.conversation import Question

    store = AnchorStore.load(store_dir)
    store.conversation.questions = [Question(id="q1", question="When will Priya present the work at a conference?",
                                             answer="September 2023", category="2", evidence=["D3:2"])]
    store.save(store_dir)
    at = open_page("app_pages/review.py", store_dir)
    at.selectbox(key="review_item").set_value("evt_4").run()
    at.date_input(key="review_date_start").set_value(date(2023, 9, 1))
    at.date_input(key="review_date_end").set_value(date(2023, 9, 30))
    at.selectbox(key="review_date_gran").set_value("month")
    click(at, "Set date")
    at.switch_page("app_pages/compare.py").run()
    at.text_area(key="compare_questions").set_value("When will Priya present the work at a conference?")
    click(at, "Show injected anchors")
    shown = [t.value for t in at.text]
    assert any("September 2023" in t for t in shown) and not all("September 2023" in t for t in shown)
    click(at, "Measure both on the conversation's 1 questions")
    table = next(df.value for df in at.dataframe if "coverage_gravity a" in df.value.columns)
    overall = table[table["category"] == "overall (excl. 5)"].iloc[0]
    assert (overall["coverage_gravity a"], overall["coverage_gravity b"]) == (0.0, 1.0)


def test_compare_opens_on_two_builds_of_one_conversation_and_its_toggle_follows_the_picks(tmp_path):
    from app_services.studio import workspace_dir

    older, newer = workspace_dir() / "build-1", workspace_dir() / "build-2"
    make_store(older)
    make_store(newer)
    at = open_page("app_pages/compare.py", newer)
    assert (at.selectbox(key="compare_a").value, at.selectbox(key="compare_b").value) == (str(older), str(newer))
    assert not at.toggle(key="compare_a_raw").value  # two builds: each as it is
    assert not any("different conversations" in w.value for w in at.warning)
    at.selectbox(key="compare_a").set_value(str(newer)).run()
    assert at.toggle(key="compare_a_raw").value  # the same store on both sides: A as built
    at.selectbox(key="compare_a").set_value(str(older)).run()
    assert not at.toggle(key="compare_a_raw").value


def test_compare_warns_when_the_two_stores_are_different_conversations(tmp_path):
    from app_services.studio import SAMPLE_STORES, workspace_dir

    mine = workspace_dir() / "mine"
    make_store(mine)
    at = open_page("app_pages/compare.py", mine)
    assert at.selectbox(key="compare_a").value == at.selectbox(key="compare_b").value == str(mine)
    assert any("No other build of this conversation" in c.value for c in at.caption)
    at.selectbox(key="compare_a").set_value(str(SAMPLE_STORES / "medllm_project")).run()
    assert any("different conversations" in w.value for w in at.warning)
