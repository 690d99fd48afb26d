"""End to end in a real browser: Debian's chromium driven by Playwright against `streamlit run app.py`.

Never runs `playwright install`: it uses /usr/bin/chromium and skips with the reason when it is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gravity_engine.testing.app_server import CHROMIUM, AppServer, launch_chromium, server_env

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_FILE = ROOT / "tests" / "fixtures" / "hostile" / "hostile_names.jsonl"
SAMPLE_STORE = ROOT / "sample_data" / "stores" / "medllm_project"
SHOTS = os.environ.get("GRAVITY_SCREENSHOTS")  # a folder: save a screenshot of every page there
PAGES = [  # url path, heading, a text the page shows with the sample store
    ("", "Gravity Studio", "Built with"),
    ("build", "Build anchors", "Options"),
    ("data", "Export & import", "Import a store built elsewhere"),
    ("graph", "Entity graph", "Profile"),
    ("timeline", "Event timeline", "Sources"),
    ("topics", "Topic arcs", "Arc"),
    ("playground", "Query playground", "Ask a question"),
    ("evaluation", "Evaluation", "LLM-free measures"),
    ("settings", "Settings", "LLM endpoint"),
]

if not CHROMIUM.exists():
    pytest.skip("/usr/bin/chromium is missing (apt-get install -y chromium)", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    home = tmp_path_factory.mktemp("gravity_home_e2e")
    if not SAMPLE_STORE.is_dir():
        # Until the prebuilt sample store ships, build it the way a user would (classic backend, offline).
        out = home / "workspace" / "medllm_project"
        subprocess.run([sys.executable, "-m", "gravity_engine", "build", str(ROOT / "sample_data/medllm_project.jsonl"),
                        "--backend", "classic", "--out", str(out)], cwd=ROOT, env=server_env(home), check=True,
                       capture_output=True, timeout=600)
    with AppServer(home) as server:
        yield server.url
    text = server.log()
    if SHOTS:
        (Path(SHOTS) / "streamlit.log").write_text(text)
    assert "Traceback" not in text, text[-3000:]
    deprecations = [line for line in text.splitlines() if "deprecat" in line.lower()]
    assert not deprecations, deprecations


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = ctx.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    ctx.close()


def _open(page, url: str, path: str, heading: str, timeout: float = 90_000) -> None:
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=timeout)
    _settle(page, timeout)


def _settle(page, timeout: float = 90_000) -> None:
    # Streamlit keeps drawing after the heading: wait until the run is over and no placeholder is left.
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
        "!document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=timeout)
    page.wait_for_timeout(1200)


def _shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def test_first_visit_to_a_fresh_server_is_the_app(app_url, page):
    # The module's first visit. A folder named pages/ beside app.py made Streamlit run this visit as a v1
    # multipage app: the page script without app.py (no store loaded) under a raw list of file names.
    _open(page, app_url, "playground?store=sample/medllm_project", "Query playground")
    page.get_by_label("Question", exact=True).wait_for(timeout=30_000)
    nav = page.locator("[data-testid=stSidebarNav]").inner_text()
    assert "Query playground" in nav and "Entity graph" in nav, nav  # the v1 list named files: "playground"
    assert "No anchor store is loaded" not in page.locator("[data-testid=stMain]").inner_text()


@pytest.mark.parametrize("path,heading,text", PAGES, ids=[p[0] or "home" for p in PAGES])
def test_page_shows_its_content(app_url, page, path, heading, text):
    _open(page, app_url, path, heading)
    page.get_by_text(text, exact=False).first.wait_for(timeout=60_000)
    assert page.locator("[data-testid='stException']").count() == 0
    if path == "graph":
        page.locator("[data-testid=stBidiComponentIsolated] circle.eg-node").first.wait_for(timeout=30_000)
        # both speakers carry their names inside their nodes (a five-letter name in a smaller font)
        inside = page.locator("[data-testid=stBidiComponentIsolated] text.eg-inside").all_text_contents()
        assert {"Priya", "Tom"} <= set(inside), inside
    _shot(page, path or "home")
    assert page.dialogs == []


def test_playground_answers_one_question(app_url, page):
    _open(page, app_url, "playground", "Query playground")
    box = page.get_by_label("Question", exact=True)
    box.fill("When did MedLLM invent a drug dosage?")
    box.press("Enter")
    page.get_by_role("button", name="Ask").click()
    # the first screen answers "what did Gravity change?" under a heading that counts the changes
    page.get_by_role("heading", name="What Gravity changed", exact=False).wait_for(timeout=120_000)
    assert page.get_by_text("No model answer").count() >= 1
    # the details are folded under the first screen, in tabs: only the open one is drawn, a click draws another
    _settle(page)
    page.get_by_text("Details: evidence", exact=False).click()
    page.get_by_role("tab", name="Injected anchor lines").click()
    page.locator("[data-testid=stMetric]").filter(has_text="tokens").first.wait_for(timeout=60_000)
    _settle(page)
    _shot(page, "playground-answer")


@pytest.mark.timeout(900)
def test_hostile_conversation_shows_payloads_as_text(app_url, page):
    _open(page, app_url, "build", "Build anchors")
    page.get_by_text("Upload a file").click()
    page.locator("input[type='file']").set_input_files(str(HOSTILE_FILE))
    page.get_by_text("Utterances").first.wait_for(timeout=60_000)
    page.get_by_label("Store name").fill("hostile")
    page.get_by_label("Store name").press("Enter")
    page.get_by_role("button", name="Build").click()
    done = page.get_by_role("button", name="Open this store").or_(page.locator("[data-testid=stAlertContentError]"))
    done.first.wait_for(timeout=480_000)  # a classic build of 25 turns; slow only on a loaded machine
    assert page.locator("[data-testid=stAlertContentError]").count() == 0, page.locator(
        "[data-testid=stAlertContentError]").first.inner_text()
    page.get_by_role("button", name="Open this store").click()
    page.wait_for_timeout(1500)
    # Navigate inside the app (a fresh page load would start a new session on the default store).
    for link, heading in (("", "Gravity Studio"), ("graph", "Entity graph"),
                          ("timeline", "Event timeline"), ("topics", "Topic arcs")):
        page.locator(f"[data-testid=stSidebar] a[href$='/{link}']").first.click()
        page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)
        _settle(page)
        assert page.locator("img[src='x']").count() == 0, link
        assert page.locator("svg[onload]").count() == 0, link
        if link == "graph":
            _shot(page, "hostile-graph")
    page.locator("[data-testid=stSidebar] a[href$='/playground']").first.click()
    page.get_by_role("heading", name="Query playground").first.wait_for(timeout=60_000)
    page.get_by_label("Question", exact=True).fill("What did Alice Moreau do in Paris?")
    page.get_by_label("Question", exact=True).press("Enter")
    page.get_by_role("button", name="Ask").click()
    page.get_by_role("heading", name="What Gravity changed", exact=False).wait_for(timeout=120_000)
    _settle(page)
    page.get_by_text("The prompt, line by line", exact=False).click()  # folded below the first screen
    _settle(page)
    shown = page.locator("[data-testid='stMain']").inner_text()
    # The payload is on screen as text (in the prompt its '<' is shown as '‹', as the model receives it).
    assert "img src=x onerror=alert(1)>" in shown
    assert page.locator("img[src='x']").count() == 0
    assert page.dialogs == [], page.dialogs
    _shot(page, "hostile-playground")


@pytest.mark.parametrize("name,content,expected", [
    ("truncated.json", b'[{"speaker": "Ann", "text": "hi"', "truncated.json"),
    ("picture.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "is a PNG image"),
    ("latin1.txt", "Ann: caf\xe9 au lait\n".encode("latin-1"), "latin1.txt"),
], ids=["truncated-json", "binary", "mis-encoded"])
def test_bad_upload_shows_the_loaders_message(app_url, page, tmp_path, name, content, expected):
    bad = tmp_path / name
    bad.write_bytes(content)
    _open(page, app_url, "build", "Build anchors")
    page.get_by_text("Upload a file").click()
    page.locator("input[type='file']").set_input_files(str(bad))
    error = page.locator("[data-testid=stAlertContentError]").first
    error.wait_for(timeout=60_000)
    message = error.inner_text()
    assert expected in message and "Traceback" not in message
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_role("button", name="Build").count() == 0  # nothing to build from a bad file
