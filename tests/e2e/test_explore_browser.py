"""The explore pages in a real browser (Debian's chromium, Playwright) on the sample store: a node click
opens its profile, a diamond click the relation's evidence, a heat-map cell the topic's arc, and the
timeline search finds an event. The graph is the app's SVG component, the other charts Vega SVG: each node,
diamond or mark carries an aria-label with its fields.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

# The app server, the browser and the page are test_browser's fixtures (one server for this module).
from test_browser import _open, _settle, app_url, browser, page  # noqa: F401

pytestmark = pytest.mark.e2e

SHOTS = os.environ.get("GRAVITY_SCREENSHOTS")  # a folder: save this module's screenshots there


def _shot(page, name: str) -> None:  # noqa: F811
    if SHOTS:
        _settle(page)  # a chart that registers its selection may cause one more quick run: wait it out
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"))


def _marks(page, role: str, text: str):
    return page.locator(f"[data-testid=stVegaLiteChart] svg.marks path[aria-roledescription^='{role}']"
                        f"[aria-label*={text!r}]")


def _graph(page, kind: str, text: str = ""):
    """The graph component's nodes ("node") or relation diamonds ("diamond") whose label has ``text``."""
    return page.locator(f"[data-testid=stBidiComponentIsolated] .eg-{kind}" + (f"[aria-label*={text!r}]" if text
                                                                               else ""))


def _tall(page) -> None:
    page.set_viewport_size({"width": 1440, "height": 1500})


def test_warm_up(app_url, page):  # noqa: F811
    _open(page, app_url, "", "Gravity Studio")


def test_node_click_opens_its_profile(app_url, page):  # noqa: F811
    _tall(page)
    _open(page, app_url, "graph", "Entity graph")
    node = _graph(page, "node", "entity: Anna;").first
    node.wait_for(timeout=30_000)
    assert "person" in page.locator(".eg-legend").first.inner_text()  # the colour legend names the types
    node.hover()
    tip = page.locator(".eg-tip").first
    assert tip.is_visible() and "entity: Anna" in tip.inner_text()  # hovering names the entity
    _shot(page, "graph")
    node.wait_for(timeout=30_000)
    node.click()
    page.get_by_role("heading", name="Anna", exact=True).wait_for(timeout=60_000)
    _settle(page)
    assert "entity=" in page.url  # the profile can be linked to
    assert page.locator("[data-testid='stException']").count() == 0
    diamond = _graph(page, "diamond", "relation: Anna sister of Priya").first
    diamond.click()
    page.get_by_text("Relation evidence").wait_for(timeout=60_000)
    _settle(page)
    assert "my sister Anna" in page.locator("[data-testid=stMain]").inner_text() or \
        page.locator("[data-testid=stDataFrame]").count() > 0
    _shot(page, "graph-evidence")


def test_profile_opens_from_a_link(app_url, page):  # noqa: F811
    _open(page, app_url, "graph?entity=Biscuit", "Entity graph")
    page.get_by_role("heading", name="Biscuit", exact=True).wait_for(timeout=60_000)


def test_heatmap_cell_opens_the_arc(app_url, page):  # noqa: F811
    _tall(page)
    _open(page, app_url, "topics", "Topic arcs")
    _shot(page, "topics")
    cells = _marks(page, "rect", "topic: ")
    cells.first.wait_for(timeout=30_000)
    label = cells.last.get_attribute("aria-label")
    topic = next(part.split(": ", 1)[1] for part in label.split("; ") if part.startswith("topic: "))
    session = next(part.split(": ", 1)[1] for part in label.split("; ") if part.startswith("session: "))
    cells.last.click()
    page.get_by_role("heading", name=topic, exact=True).wait_for(timeout=60_000)
    # The clicked session's state opens under the arc (the heading alone may be the default topic's).
    page.wait_for_function("s => Array.from(document.querySelectorAll('[data-testid=stExpander] details[open] "
                           "summary')).some(e => e.innerText.includes(s + ' '))", arg=session, timeout=60_000)
    _settle(page)
    page.get_by_role("heading", name=topic, exact=True).scroll_into_view_if_needed()
    _shot(page, "topics-arc")


def test_timeline_search_finds_an_event(app_url, page):  # noqa: F811
    _tall(page)
    _open(page, app_url, "timeline", "Event timeline")
    _marks(page, "point", "person: Priya").first.wait_for(timeout=30_000)  # a lane per person
    _shot(page, "timeline")
    box = page.get_by_label("Search events")
    box.fill("Berlin Marathon")
    box.press("Enter")
    page.get_by_text("events match").first.wait_for(timeout=60_000)
    # the tab's label follows the search in the same run; on a loaded machine it can be drawn a moment later
    page.get_by_role("tab", name=re.compile(r"^Matching events")).first.wait_for(timeout=60_000)
    _settle(page)
    main = page.locator("[data-testid=stMain]").inner_text()
    assert "Berlin" in main.rsplit("Sources", 1)[1]  # the first match is opened with its sources
    _shot(page, "timeline-search")


def test_timeline_point_click_opens_its_sources(app_url, page):  # noqa: F811
    _tall(page)
    _open(page, app_url, "timeline", "Event timeline")
    point = _marks(page, "point", "Berlin Marathon").first
    point.wait_for(timeout=30_000)
    point.click()
    # The table lists every event already: wait for the Sources section itself to show the clicked one.
    page.wait_for_function("() => document.querySelector('[data-testid=stMain]').innerText"
                           ".split('Sources').pop().includes('Berlin Marathon')", timeout=60_000)
    _settle(page)


def test_hostile_names_are_text_in_charts_and_tooltips(app_url, page, tmp_path):  # noqa: F811
    from gravity_engine.viz.export import store_zip_bytes
    from studio_stores import make_store

    make_store(tmp_path / "hostile_explore", hostile=True)  # a speaker named <img src=x onerror=alert(1)>
    archive = tmp_path / "hostile_explore.zip"
    archive.write_bytes(store_zip_bytes(tmp_path / "hostile_explore"))
    _tall(page)
    _open(page, app_url, "data", "Export & import")
    page.locator("input[type='file']").set_input_files(str(archive))
    page.get_by_role("button", name="Import").click()
    page.get_by_text("It is now the loaded store").wait_for(timeout=60_000)
    for link, heading in (("graph", "Entity graph"), ("timeline", "Event timeline")):
        page.locator(f"[data-testid=stSidebar] a[href$='/{link}']").first.click()
        page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)
        _settle(page)
        if link == "graph":
            marks, tooltip = _graph(page, "node"), ".eg-tip"
        else:
            marks, tooltip = (page.locator("[data-testid=stVegaLiteChart] svg.marks path[aria-roledescription^='point']"),
                              "#vg-tooltip-element")
        marks.first.wait_for(timeout=30_000)
        shown = []
        for i in range(marks.count()):
            marks.nth(i).hover()
            page.wait_for_timeout(300)
            shown.append(page.locator(tooltip).first.inner_text())
        if link == "graph":  # the node labels are SVG text
            shown.append(page.locator("[data-testid=stBidiComponentIsolated] svg").first.text_content())
        assert any("<img src=x onerror=alert(1)>" in tip for tip in shown), (link, shown)  # shown as text
        assert page.locator("img[src='x']").count() == 0, link
    assert page.dialogs == []
