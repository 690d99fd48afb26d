"""The app on a real-sized conversation (issue 30), in a real browser: two LoCoMo conversations built in the test
from ../shared/data (read at run time, never copied into the repository), served by `streamlit run app.py`, driven
by Debian's chromium. Skipped with the reason when LoCoMo is absent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_browser import _open, _settle, _shot

from gravity_engine.testing.app_server import CHROMIUM, AppServer, launch_chromium
from gravity_engine.testing.page_checks import overlaps, playground_first_screen, timeline_labels

pytestmark = pytest.mark.e2e
playwright_api = pytest.importorskip("playwright.sync_api")
ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo10.json"
QUESTION = "When did Caroline go to the LGBTQ support group?"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo is not at {LOCOMO} (it is read at run time, never stored in the repository)")
    home = tmp_path_factory.mktemp("gravity_home_locomo")
    for conv in ("conv-26", "conv-43"):  # 419 and 680 turns
        done = subprocess.run([sys.executable, "-m", "gravity_engine", "build", str(LOCOMO), "--conversation", conv,
                               "--out", str(home / "workspace" / conv)], cwd=ROOT, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    with AppServer(home) as server:
        yield server.url, home / "workspace"
    assert "Traceback" not in server.log(), server.log()[-3000:]


@pytest.fixture(scope="module")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing")
    with playwright_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def tab(chromium):
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    yield ctx.new_page()
    ctx.close()


def test_warm_up(served, tab):
    _open(tab, served[0], "?store=workspace/conv-26", "Gravity Studio")


def test_the_playground_answers_what_gravity_changed_on_the_first_screen(served, tab):
    _open(tab, served[0], "playground?store=workspace/conv-26", "Query playground")
    tab.get_by_label("Question", exact=True).fill(QUESTION)  # a benchmark question: its gold answer is found
    tab.get_by_label("Question", exact=True).press("Enter")
    _settle(tab)
    tab.get_by_role("button", name="Ask").click()
    tab.get_by_role("heading", name="What Gravity changed", exact=False).wait_for(timeout=240_000)
    _settle(tab)
    _shot(tab, "locomo-playground")
    screen = playground_first_screen(tab)
    assert screen["verdicts"] == 2 and screen["verdicts_bottom"] <= screen["viewport"], screen
    assert screen["third_row_bottom"] is not None and screen["third_row_bottom"] <= screen["viewport"], screen
    assert screen["page_height"] <= 1600, screen  # the diff and the details are folded
    badges = " ".join(tab.locator(".gs-cover").all_inner_texts())
    assert "gold answer" in badges and "no gold answer to check" not in badges
    heading = tab.get_by_role("heading", name="What Gravity changed", exact=False).inner_text()
    assert int(heading.split(": ", 1)[1].split(" anchor lines")[0]) >= 3


def test_the_timeline_of_conv43_gives_people_the_height_and_labels_that_never_meet(served, tab):
    from gravity_engine.store import AnchorStore
    from gravity_engine.viz import timeline as tviz
    from gravity_engine.viz import topics as topviz

    store = AnchorStore.load(served[1] / "conv-43")
    events = tviz.events_frame(store.anchors, store.conversation.speakers)
    span = tviz.conversation_span(events)
    marks = tviz.lanes_frame(events, span)
    every_topic = tviz.topic_lanes_frame(store.anchors, topviz.topic_titles(store.anchors), span)
    layout, height = tviz.lane_layout(tviz.lane_order(marks, every_topic))
    people = sum(h for lane, (_, h) in layout.items() if not lane.startswith("Topic"))
    assert len(events) >= 150 and people >= height / 2

    _open(tab, served[0], "timeline?store=workspace/conv-43", "Event timeline")
    tab.get_by_text("one per topic", exact=True).click()  # every topic lane shown
    _settle(tab)
    tab.locator("[data-testid=stCheckbox]").filter(has_text="Labels").locator("label").click()
    _settle(tab)
    tab.locator("[data-testid=stVegaLiteChart] g.mark-text.role-mark text").first.wait_for(timeout=60_000)
    _shot(tab, "locomo-timeline")
    labels = timeline_labels(tab)
    assert len(labels) >= 20, [b["text"] for b in labels]
    assert overlaps(labels) == []


def test_the_graph_of_conv43_shows_speakers_and_co_mentions_and_cuts_no_name(served, tab):
    _open(tab, served[0], "graph?store=workspace/conv-43", "Entity graph")
    frame = tab.locator("[data-testid=stBidiComponentIsolated]").first
    frame.locator("circle.eg-node").first.wait_for(timeout=60_000)
    _shot(tab, "locomo-graph")
    names = frame.locator("text.eg-label").evaluate_all("els => els.map(e => e.textContent)")
    assert {"Tim", "John"} <= set(names), names  # the speakers
    assert not any(n.endswith("…") for n in names), names
    assert frame.locator("line.eg-co-mention").count() >= 3
    listed = tab.get_by_text("Entities without an edge", exact=False)
    assert listed.count() >= 1  # listed under the graph, not drawn as a grid


def test_a_one_question_evaluation_shows_no_headline_gain(served, tab):
    _open(tab, served[0], "evaluation?store=workspace/conv-26", "Evaluation")
    tab.get_by_label("Questions (of", exact=False).fill("1")
    tab.get_by_label("Questions (of", exact=False).press("Enter")
    _settle(tab)
    tab.get_by_role("button", name="Run on 1 question").click()
    tab.get_by_text("too few to quote a gain", exact=False).wait_for(timeout=240_000)
    _settle(tab)
    main = tab.locator("[data-testid=stMain]").inner_text()
    assert "Holds the gold answer" in main and "Gain, 95% interval" not in main
    assert tab.locator("[data-testid=stMetricDelta]").count() == 0  # no "-100 pts" beside one question
