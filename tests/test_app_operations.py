"""Operations of the app: the store in the URL, loader errors for people, no file watcher, no page icon
fetched from the internet, build progress that moves."""

from __future__ import annotations

import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from studio_stores import make_store
from test_app_pages import APP, ROOT, open_page

from app_services import studio


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


@pytest.fixture
def two_workspace_stores():
    ws = studio.workspace_dir()  # under the test's GRAVITY_HOME
    make_store(ws / "alpha")
    make_store(ws / "beta", hostile=True)
    return ws / "alpha", ws / "beta"


def test_the_store_is_in_the_url_and_a_new_session_opens_it(two_workspace_stores):
    """AppTest runs app.py (where the URL is read and written) on a session's first run only; the browser test
    changes the store in the picker and opens the URL in a new tab."""
    alpha, beta = two_workspace_stores
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert at.query_params["store"] == studio.store_ref(at.session_state["store_path"]) == "sample/medllm_project"
    for store in (alpha, beta):
        tab = AppTest.from_file(APP, default_timeout=60)  # a new tab: a new session with only the URL
        tab.query_params["store"] = studio.store_ref(store)
        tab.run()
        assert not tab.exception, [e.message for e in tab.exception]
        assert tab.session_state["store_path"] == str(store) and tab.sidebar.selectbox[0].value == str(store)
        assert tab.query_params["store"] == f"workspace/{store.name}"


def test_a_url_never_opens_a_folder_the_app_does_not_offer(two_workspace_stores, tmp_path):
    make_store(tmp_path / "elsewhere")
    for ref in (str(tmp_path / "elsewhere"), "workspace/../../elsewhere", "sample/nope"):
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params["store"] = ref
        at.run()
        assert at.session_state["store_path"] != str(tmp_path / "elsewhere")
        assert studio.store_from_ref(ref) is None


@pytest.mark.parametrize("data, name, code", [
    (b"[" * 300 + b"]" * 300, "deep.json", "LoadLimits"),
    (b"who,said\nAna,hello\n", "chat.csv", "ColumnMap"),
], ids=["too-deep", "missing-column"])
def test_loader_errors_are_phrased_for_people_in_the_app(data, name, code):
    from gravity_engine.errors import InputError
    from gravity_engine.loaders import load_bytes

    with pytest.raises(InputError) as err:
        load_bytes(data, name)
    assert code in str(err.value)  # the CLI keeps the detail
    shown = studio.message_for_people(err.value)
    assert code not in shown and name in shown


def test_no_file_watcher_and_no_icon_from_the_internet():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    assert config["browser"]["gatherUsageStats"] is False
    # Streamlit turns a ":material/...:" favicon into a fonts.gstatic.com URL; an emoji is drawn locally
    # (the browser test checks every request the page makes).
    assert 'page_icon=":material' not in (ROOT / "app.py").read_text()


def test_build_progress_says_which_step_runs_and_for_how_long(tmp_path):
    from gravity_engine.build import BuildProgress

    job = studio.BuildJob(out_dir=tmp_path, conversation_id="c", options={}, started=100.0)
    assert job.describe(now=104.0) == (0.0, "Starting: loading the language and embedding models · 4 s")
    job._on_progress(BuildProgress("extract", 5, 20))
    frac, text = job.describe(now=job.stage_started + 3)
    assert 0 < frac < 0.55 and "batch 5 of 20" in text and "Step 1 of" in text
    job._on_progress(BuildProgress("embed", 0, 1))
    frac, text = job.describe(now=job.stage_started + 21)
    # a step without a count of its own still moves: its time is shown, never "0 of 1"
    assert "embedding every anchor" in text and "· 21 s" in text and "0 of 1" not in text


@pytest.mark.parametrize("seconds, text", [(12, "12 s"), (277, "4 min 37 s"), (4477, "1 h 14 min"), (7200, "2 h"),
                                           (900, "15 min")], ids=["s", "min-s", "h-min", "h", "min"])
def test_build_estimates_read_in_hours_and_minutes(seconds, text):
    assert studio.duration_text(seconds) == text


def test_an_upload_above_the_limit_is_refused_with_the_limit_named(monkeypatch):
    monkeypatch.delenv("GRAVITY_MAX_UPLOAD_MB", raising=False)
    assert studio.upload_problem(3_000_000) is None
    problem = studio.upload_problem(50_200_000)
    assert "50.2 MB" in problem and "up to 20 MB" in problem and "GRAVITY_MAX_UPLOAD_MB" in problem
    monkeypatch.setenv("GRAVITY_MAX_UPLOAD_MB", "60")
    assert studio.upload_problem(50_200_000) is None


def test_a_long_build_asks_to_be_confirmed(monkeypatch):
    monkeypatch.setattr(studio, "LONG_BUILD_SECONDS", 0)  # the sample's few seconds count as long here
    at = open_page("app_pages/build.py", None)
    assert at.button(key="build_start").disabled
    at.checkbox(key="build_confirm_long").check().run()
    assert not at.button(key="build_start").disabled
