"""The query playground (AppTest): hosts kept per browser session, the prompt's diff view, honest badges,
the offline evidence preview and which model answered."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from test_app_pages import APP, _sample_questions, open_page, texts

from gravity_engine.hosts.dense import DenseHost
from gravity_engine.testing import FakeEmbedder


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


class _RecordingHost(DenseHost):
    """Stands in for A-Mem's network-free parts: a real dense host that remembers the endpoint it was given."""

    name = "amem"
    built: list = []

    def __init__(self, embedder=None, llm=None):
        super().__init__(embedder=embedder or FakeEmbedder(), use_cache=False)
        self.llm = llm
        _RecordingHost.built.append(llm)


def _session(store_dir, base_url: str, key: str, model: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["store_path"] = str(store_dir)
    at.session_state["llm_settings"] = {"base_url": base_url, "api_key": key, "model": model}
    at.run()
    at.switch_page("app_pages/playground.py")
    at.run()
    return at


def test_llm_hosts_live_in_the_browser_session_keyed_by_endpoint_model_and_key(store_dir, scripted_openai,
                                                                               monkeypatch):
    from app_services import studio

    _RecordingHost.built = []
    real = studio.get_host
    monkeypatch.setattr(studio, "get_host", lambda name, embedder=None, **o: _RecordingHost(embedder, o.get("llm"))
                        if name == "amem" else real(name, embedder, **o))
    alice = _session(store_dir, scripted_openai.base_url, "sk-alice-secret", "gravity-echo")
    bob = _session(store_dir, scripted_openai.base_url, "sk-bob-secret", "gravity-echo")
    for at in (alice, bob):
        assert "amem" in at.selectbox(key="playground_host").options
        at.selectbox(key="playground_host").set_value("amem").run()
        at.text_input(key="playground_query").set_value("Who is Dr. Chen?").run()
        at.button(key="playground_ask").click().run()
        assert not at.exception, [e.message for e in at.exception]
    # Bob's session built its own host with its own key: nothing of Alice's is reused across sessions.
    assert [c.api_key.get_secret_value() for c in _RecordingHost.built] == ["sk-alice-secret", "sk-bob-secret"]
    # Asking again in Alice's session reuses her host; a new model in her Settings builds a new one.
    alice.button(key="playground_ask").click().run()
    assert len(_RecordingHost.built) == 2
    alice.session_state["llm_settings"] = {"base_url": scripted_openai.base_url, "api_key": "sk-alice-secret",
                                           "model": "gravity-echo-2"}
    alice.run()
    alice.button(key="playground_ask").click().run()
    assert [c.model for c in _RecordingHost.built] == ["gravity-echo", "gravity-echo", "gravity-echo-2"]
    assert "sk-alice-secret" not in texts(alice)


def _html(at: AppTest) -> str:
    return "\n".join(e.proto.body for e in at.get("html"))


def _ask(at: AppTest, question: str) -> dict:
    at.text_input(key="playground_query").set_value(question).run()
    at.button(key="playground_ask").click().run()
    assert not at.exception, [e.message for e in at.exception]
    return at.session_state["playground_result"]


def test_offline_the_diff_view_badges_and_evidence_preview(store_dir, monkeypatch):
    qs = _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    at.selectbox(key="playground_pick").set_value(qs[0]["question"]).run()
    assert at.text_input(key="playground_gold_input").value == qs[0]["answer"]
    trace = _ask(at, qs[0]["question"])
    page = _html(at)
    # the injected anchor lines are highlighted in the wrapped diff view, each with the anchor it came from
    assert 'class="gs-diff"' in page and page.count("gs-diff-line gs-diff-anchor") == sum(
        len(b["lines"]) for b in trace["blocks"])
    assert "noticed the model hallucinated a drug dose (what)" in page
    # large badges by the shared coverage rule: the gold "7 May 2023" is in Gravity's event line
    assert page.count("gs-cover gs-cover-") == 2 and "gs-cover-yes" in page
    # offline: an evidence preview per context, labelled as no model answer
    assert "No model answer" in texts(at) and page.count('class="gs-evidence"') == 2
    assert "<mark>" in page
    # the compact list: every anchor line with its anchor, kind, a named score and a date, then what was pushed out
    changes = next(df.value for df in at.dataframe if "change" in df.value.columns)
    lines = changes[changes["change"].str.startswith("+ anchor")]
    assert len(lines) == sum(len(b["lines"]) for b in trace["blocks"]) and "line score" in changes.columns
    assert lines["date"].str.match(r"\d{4}-\d{2}-\d{2}|on or").all() and lines["from"].str.contains(" · ").all()
    assert list(changes["change"]).count("− pushed out") == len(trace["pushed_out"])


def test_without_a_gold_answer_the_verdict_says_what_differs_and_a_typed_one_is_checked(store_dir, monkeypatch):
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    _ask(at, "When did Priya notice the hallucinated dose?")
    page = _html(at)
    assert "no gold answer to check" not in page and "gs-cover-diff" in page and "new context line" in page
    at.text_input(key="playground_gold_input").set_value("7 May 2023").run()  # no new question asked
    page = _html(at)
    assert "gs-cover-yes" in page and "Gold:" in page


def test_a_failing_endpoint_still_shows_everything_computed_offline(store_dir, monkeypatch):
    import socket

    with socket.socket() as sock:  # a port nothing listens on: the connection is refused at once
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir,
                   llm_settings={"base_url": f"http://127.0.0.1:{port}/v1", "api_key": "sk-x", "model": "m"})
    trace = _ask(at, "When did Priya notice the hallucinated dose?")
    assert trace["blocks"] and any("model endpoint failed" in e.value for e in at.error)
    assert 'class="gs-diff"' in _html(at) and any("change" in df.value.columns for df in at.dataframe)


def test_an_anchor_line_holding_a_less_than_sign_is_counted_as_shown_in_the_prompt():
    from gravity_engine.prompts.base import escape_text
    from gravity_engine.viz import prompt as pview

    line = "dose <5 mg was wrong"
    trace = {"prompt_without": {"text": "[user]\n<memories>\n- a (D1:1)\n</memories>"},
             "prompt_with": {"text": "[user]\n<memories>\n- a (D1:1)\n</memories>\n<anchors>\n## Events\n- "
                                     + escape_text(line) + "\n</anchors>"},
             "merged": [], "host_results": [], "modules": {},
             "blocks": [{"module": "events", "title": "## Events", "lines": [
                 {"anchor_id": "v1", "field": "what", "text": line, "score": 1.26, "source_ids": ["D1:1"]}]}]}
    assert pview.diff_counts(pview.classify_prompt(trace))["anchor"] == 1
    assert "line score 1.26" in pview.prompt_diff_html(pview.classify_prompt(trace))


def test_the_diff_view_escapes_conversation_text():
    from gravity_engine.viz import prompt as pview

    trace = {"prompt_without": {"text": "[user]\n<memories>\n- <b>x</b> (D1:1)\n</memories>"},
             "prompt_with": {"text": "[user]\n<memories>\n- <img src=x onerror=alert(1)> (D2:1)\n</memories>"},
             "merged": [{"text": "<img src=x onerror=alert(1)>", "utterance_ids": ["D2:1"], "from_lists": [1],
                         "rank": 1}],
             "host_results": [{"query": "q", "source": "original", "memories": []},
                              {"query": "<script>", "source": "expansion", "module": "entities", "anchor_id": "e1",
                               "memories": []}],
             "blocks": [], "modules": {}}
    rows = pview.classify_prompt(trace)
    assert [r["kind"] for r in rows if r["kind"] not in ("same", "heading")] == ["expansion", "removed"]
    out = pview.prompt_diff_html(rows)
    assert "<img" not in out and "<script>" not in out and "<b>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out


def test_the_diff_view_says_where_a_full_name_comes_from():
    from gravity_engine.viz import prompt as pview

    trace = {"prompt_without": {"text": "[user]\n<memories>\n- Lena and Marco are co-authors (S7:5)\n</memories>"},
             "prompt_with": {"text": "[user]\n<memories>\n- Lena and Marco are co-authors (S7:5)\n</memories>\n"
                                     "<anchors>\n## Full Names\n- Lena: Lena Ortiz\n- Marco: Marco Silva\n</anchors>"},
             "merged": [], "host_results": [], "blocks": [], "modules": {}}
    rows = {r["text"]: r for r in pview.classify_prompt(trace)}
    assert rows["- Lena: Lena Ortiz"]["kind"] == rows["- Marco: Marco Silva"]["kind"] == "anchor"
    assert "Full Names" in rows["- Lena: Lena Ortiz"]["why"] and rows["## Full Names"]["kind"] == "heading"


def test_a_warning_when_fusion_demotes_the_hosts_top_hit(store_dir, monkeypatch):
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    trace = _ask(at, "Who is Dr. Chen?")
    assert not any("top hit" in e.value for e in at.error)
    top = trace["host_results"][0]["memories"][0]
    trace["pushed_out"] = [top]
    at.session_state["playground_result"] = trace
    at.run()
    assert any("demoted the host's top hit" in e.value for e in at.error), [e.value for e in at.error]


def test_answers_name_the_model_that_gave_them(store_dir, scripted_openai, monkeypatch):
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir,
                   llm_settings={"base_url": scripted_openai.base_url, "api_key": "sk-x", "model": "gravity-echo"})
    trace = _ask(at, "Who is Dr. Chen?")
    assert trace["answers"]["status"] == "answered"
    assert any("Answered by **gravity-echo**" in c.value for c in at.caption)
    assert "No model answer" not in texts(at)


def test_a_host_that_needs_a_model_is_unavailable_offline_with_a_link_to_settings(store_dir, monkeypatch):
    _sample_questions(monkeypatch)
    at = open_page("app_pages/playground.py", store_dir)
    box = at.selectbox(key="playground_host")
    assert "amem (needs a model endpoint)" in box.options
    box.set_value("amem").run()
    assert any("no model endpoint is set" in w.value for w in at.warning)
    assert at.button(key="playground_ask").disabled
    assert any(link.proto.page.endswith("settings.py") or "Settings" in link.proto.label
               for link in at.get("page_link"))
