"""The playground, the evaluation page and the store in the URL, in a real browser (Debian's chromium driven by
Playwright against `streamlit run app.py`, with a workspace copy of the sample store beside the sample)."""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs, urlsplit

import pytest

from test_browser import SAMPLE_STORE, _open, _settle, _shot

from gravity_engine.testing.app_server import CHROMIUM, AppServer, launch_chromium

pytestmark = pytest.mark.e2e
playwright_api = pytest.importorskip("playwright.sync_api")
QUESTION = "When did MedLLM invent a drug dosage?"  # the README's example: gold "11 March 2024"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("gravity_home_playground")
    shutil.copytree(SAMPLE_STORE, home / "workspace" / "medllm-copy")
    # AppServer passes no --server.fileWatcherType flag: .streamlit/config.toml turns the watcher off, as
    # `make app` runs it, and this module's log check holds the app to that.
    with AppServer(home) as server:
        yield server.url
    text = server.log()
    assert "Traceback" not in text, text[-3000:]
    assert "Inotify" not in text and "watchdog" not in text.lower(), text[-2000:]


@pytest.fixture(scope="module")
def chromium():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing")
    with playwright_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def tab(chromium, served):
    """A new browser context (a new tab with no state) that records every request it makes."""
    ctx = chromium.new_context(viewport={"width": 1440, "height": 1000})
    pg = ctx.new_page()
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    ctx.close()


def _store_param(page) -> str | None:
    return (parse_qs(urlsplit(page.url).query).get("store") or [None])[0]


def _outside(page, url: str) -> list[str]:
    return [u for u in page.requests if not u.startswith((url, "data:", "blob:", "about:"))]


def test_warm_up(served, tab):
    _open(tab, served, "", "Gravity Studio")


def test_playground_diff_view_badges_and_evidence(served, tab):
    _open(tab, served, "playground", "Query playground")
    tab.get_by_label("Question", exact=True).fill(QUESTION)
    tab.get_by_label("Question", exact=True).press("Enter")
    tab.get_by_role("button", name="Ask").click()
    tab.get_by_role("heading", name="What Gravity changed", exact=False).wait_for(timeout=180_000)
    _settle(tab)
    tab.get_by_text("The prompt, line by line", exact=False).click()  # the full diff is folded under the summary
    tab.get_by_text("Details: evidence", exact=False).click()
    _settle(tab)
    diff = tab.locator(".gs-diff")
    assert diff.count() == 1
    anchors = tab.locator(".gs-diff-anchor")
    assert anchors.count() >= 1 and "line score" in anchors.first.inner_text()
    # wrapped, not a narrow box that scrolls sideways
    assert tab.evaluate("() => getComputedStyle(document.querySelector('.gs-diff-line')).whiteSpace") == "pre-wrap"
    width = tab.evaluate("() => document.querySelector('.gs-diff').getBoundingClientRect().width")
    assert width > 900
    assert tab.locator(".gs-cover").count() == 2 and tab.get_by_text("No model answer").count() >= 1
    assert tab.locator(".gs-evidence").count() == 2
    tab.locator(".gs-cover").first.scroll_into_view_if_needed()
    _shot(tab, "playground-badges")
    diff.scroll_into_view_if_needed()
    _shot(tab, "playground-diff")
    tab.set_viewport_size({"width": 1440, "height": 2600})
    _settle(tab)
    _shot(tab, "playground")
    assert _outside(tab, served) == [], _outside(tab, served)


def test_playground_benchmark_question_badge_reads_dates_by_meaning(served, tab):
    _open(tab, served, "playground", "Query playground")
    tab.get_by_label("Benchmark questions with gold answers (30)").click()
    tab.get_by_role("option", name=QUESTION).click()
    _settle(tab)
    tab.get_by_role("button", name="Ask").click()
    tab.get_by_role("heading", name="What Gravity changed", exact=False).wait_for(timeout=180_000)
    _settle(tab)
    assert "11 March 2024" in tab.locator("[data-testid='stMain']").inner_text()
    badges = [tab.locator(".gs-cover").nth(i).inner_text() for i in range(2)]
    assert any("gold answer in context" in b and "not" not in b for b in badges), badges


def test_evaluation_slice_and_intervals(served, tab):
    _open(tab, served, "evaluation", "Evaluation")
    tab.get_by_label("Questions (of 30)").fill("20")
    tab.get_by_label("Questions (of 30)").press("Enter")
    _settle(tab)
    tab.get_by_role("button", name="Run on 20 questions").click()
    tab.get_by_text("stratified slice of 20 of 30 questions, seed 0").wait_for(timeout=60_000)
    tab.get_by_text("Gain, 95% interval").wait_for(timeout=240_000)
    _settle(tab)
    grid = tab.locator("[data-testid=stDataFrame]").first
    grid.wait_for(timeout=30_000)
    assert tab.get_by_text("Few questions in").count() >= 1
    assert tab.locator("[data-testid=stVegaLiteChart]").count() >= 1
    assert "overall (excl. 5)" not in tab.locator("[data-testid='stMain']").inner_text()
    tab.set_viewport_size({"width": 1440, "height": 2300})  # the whole page in one picture
    _settle(tab)
    _shot(tab, "evaluation")
    assert _outside(tab, served) == [], _outside(tab, served)


def test_the_store_in_the_url_survives_a_new_tab(served, chromium):
    first = chromium.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    _open(first, served, "", "Gravity Studio")
    first.wait_for_function("() => location.search.includes('store=')", timeout=30_000)
    assert _store_param(first) == "sample/medllm_project"
    first.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").first.click()
    first.get_by_role("option", name="medllm-copy (workspace)").click()
    first.wait_for_function("() => location.search.includes('workspace')", timeout=30_000)
    assert _store_param(first) == "workspace/medllm-copy"
    first.get_by_text("medllm-copy", exact=False).first.wait_for(timeout=30_000)
    assert "medllm-copy" in first.locator("[data-testid=stMain]").inner_text()  # the home page's store folder
    second = chromium.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    second.goto(first.url)  # a new tab, no shared session: only the URL
    second.get_by_role("heading", name="Gravity Studio").first.wait_for(timeout=90_000)
    _settle(second)
    picker = second.get_by_role("combobox", name="Anchor store").input_value()
    assert "medllm-copy (workspace)" in picker and "medllm-copy" in second.locator("[data-testid=stMain]").inner_text()
    # the page icon is drawn locally (an emoji as an inline SVG), never fetched
    href = second.evaluate("() => (document.querySelector(\"link[rel='shortcut icon']\") || {}).href || ''")
    assert href.startswith("data:"), href
    first.context.close()
    second.context.close()


def test_after_an_import_the_sidebar_names_the_new_store_at_once(served, tab, tmp_path):
    from gravity_engine.viz.export import store_zip_bytes

    archive = tmp_path / "imported-sample.zip"
    archive.write_bytes(store_zip_bytes(SAMPLE_STORE))
    _open(tab, served, "data", "Export & import")
    tab.locator("input[type='file']").set_input_files(str(archive))
    tab.get_by_label("Store name").fill("imported-sample")
    tab.get_by_label("Store name").press("Enter")
    _settle(tab)
    tab.get_by_role("button", name="Import", exact=True).click()
    tab.get_by_text("It is now the loaded store").wait_for(timeout=60_000)
    _settle(tab)
    assert tab.get_by_role("combobox", name="Anchor store").input_value() == "imported-sample (workspace)"
    assert _store_param(tab) == "workspace/imported-sample"
