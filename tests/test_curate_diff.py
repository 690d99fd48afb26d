"""Diff of two stores: two real builds, a build against itself, and before vs after edits (with the
effect on the measures and on a question's injected anchors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gravity_engine.conversation import Question
from gravity_engine.curate.diff import compare_measures, compare_prompts, diff_stores
from gravity_engine.curate.edits import find_ref, load_raw, make_edit, record_edit
from gravity_engine.store import AnchorStore
from gravity_engine.testing import FakeEmbedder

from studio_stores import make_store

ROOT = Path(__file__).resolve().parent.parent
CONV = ROOT / "sample_data" / "gold" / "robotics_team.jsonl"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The first two sessions, and all four, built by the classic extractor; and the full build again."""
    from gravity_engine.build import build_store
    from gravity_engine.loaders import load_conversation

    conv = load_conversation(CONV)
    root = tmp_path_factory.mktemp("builds")
    part = build_store(conv.model_copy(update={"sessions": conv.sessions[:2]}), root / "part", embedder=FakeEmbedder())
    full = build_store(conv, root / "full", embedder=FakeEmbedder())
    again = build_store(conv, root / "again", embedder=FakeEmbedder())
    return part, full, again


def test_diff_of_two_builds_lists_what_the_later_sessions_added(builds):
    part, full, _ = builds
    d = diff_stores(part, full, a_label="sessions 1-2", b_label="sessions 1-4")
    events = d.modules["events"]
    assert events.added and not events.removed
    assert all(all(s.startswith(("S3:", "S4:")) for s in side.source_ids) for side in events.added)
    assert events.unchanged + len(events.changed) == len(part.anchors.events)
    entities = d.modules["entities"]
    # names only the learned step proposed (ids ending "-p") may come and go as more context sharpens their type;
    # nothing the parser found disappears
    assert not [side for side in entities.removed if not side.id.endswith("-p")]
    assert all(any(s.startswith(("S3:", "S4:")) for s in side.source_ids) for side in entities.added)
    # a profile that gained mentions later shows the new fields, matched by its name
    changed = {c.a.name: c for c in entities.changed}
    assert changed and all(c.matched_by in ("key", "alias") for c in changed.values())
    assert [r["module"] for r in d.summary_rows()] == ["entities", "events", "topics"]


def test_a_build_compared_with_its_rebuild_has_no_differences(builds):
    _, full, again = builds
    d = diff_stores(full, again)
    for md in d.modules.values():
        assert (md.added, md.removed, md.changed) == ([], [], [])
        assert md.unchanged == len(full.anchors.module(md.module))


def test_before_and_after_edits(tmp_path):
    path = tmp_path / "store"
    make_store(path)
    store = AnchorStore.load(path)
    for kind, module, name, fields in [
        ("set_type", "entities", "St. Mary Hospital", {"type": "place"}),
        ("merge", "entities", "Dr. Chen", {"into": find_ref(store, "entities", "Marco").model_dump()}),
        ("set_date", "events", "present the work at a conference", {"date_start": "2023-09-01"}),
    ]:
        record_edit(path, make_edit(kind, find_ref(store, module, name), **fields), FakeEmbedder(dim=64))
    d = diff_stores(load_raw(path), AnchorStore.load(path))
    ents, events = d.modules["entities"], d.modules["events"]
    assert [s.name for s in ents.removed] == ["Dr. Chen"] and ents.added == []
    changes = {c.a.name: {f.field: (f.before, f.after) for f in c.changes} for c in ents.changed}
    assert changes["St. Mary Hospital"]["type"] == ("organization", "place")
    assert changes["Marco"]["aliases"] == ("", "Dr. Chen")
    [ev] = events.changed
    assert {f.field: (f.before, f.after) for f in ev.changes} == {"date": ("someday", "2023-09-01")}
    assert ev.b.source_ids == ["D3:2"] and ev.matched_by == "text+source"


def test_measures_and_prompts_show_the_effect_of_an_edit(tmp_path):
    path = tmp_path / "store"
    original = make_store(path)
    q = Question(id="q1", question="When will Priya present the work at a conference?", answer="September 2023",
                 category="2", evidence=["D3:2"], question_date="2023-06-06")
    original.conversation.questions = [q]
    original.save(path)
    record_edit(path, make_edit("set_date", find_ref(original, "events", "present the work at a conference"),
                                date_start="2023-09-01", date_end="2023-09-30", granularity="month"),
                FakeEmbedder(dim=64))
    before, after = load_raw(path), AnchorStore.load(path)
    [p] = compare_prompts(before, after, [q.question], embedder=FakeEmbedder(dim=64))
    assert not p["same"] and "September 2023" in p["b"] and "September 2023" not in p["a"]
    rows = {r["category"]: r for r in compare_measures(before, after, embedder=FakeEmbedder(dim=64))}
    overall = rows["overall (excl. 5)"]
    assert (overall["coverage_gravity_a"], overall["coverage_gravity_b"]) == (0.0, 1.0)
    assert overall["coverage_gravity_change"] == 1.0
