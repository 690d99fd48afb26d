"""The evaluation page (AppTest) and its background job: seeded slices, intervals, per-category n,
progress, cancel, resume, and a job that survives reruns and page switches."""

from __future__ import annotations

import threading
import time

import pytest

from test_app_pages import metrics, open_page, texts

from app_services import studio


pytestmark = pytest.mark.usefixtures("fresh_streamlit")  # tests/conftest.py


QUESTIONS = [
    ("When did Priya notice the hallucinated drug dose?", "7 May 2023", "D1:1", "temporal"),
    ("What is the name of Priya's dog?", "Biscuit", "D2:3", "single-hop"),
    ("Who reviewed the hallucinated dose?", "Dr. Chen", "D1:3", "single-hop"),
    ("Where does Dr. Chen work?", "St. Mary Hospital", "D1:3", "single-hop"),
    ("What did the team add in May 2023?", "a knowledge graph of drug interactions", "D2:1", "multi-hop"),
    ("How much did the hallucinations drop?", "by half", "D2:3", "single-hop"),
    ("What module starts next month?", "X-ray module", "D3:1", "multi-hop"),
    ("When did the team add the knowledge graph?", "the week before 22 May 2023", "D2:1", "temporal"),
]


@pytest.fixture
def questions(monkeypatch):
    qs = [{"id": f"q{i}", "question": q, "answer": a, "evidence": [e], "category": c}
          for i, (q, a, e, c) in enumerate(QUESTIONS)]
    monkeypatch.setattr(studio, "questions_for", lambda store: qs)
    return qs


def _wait(at, job_done, seconds: float = 60):
    for _ in range(int(seconds / 0.2)):
        if job_done():
            break
        time.sleep(0.2)
    at.run()
    assert not at.exception, [e.message for e in at.exception]


def _job(at) -> studio.EvaluationJob:
    return at.session_state["evaluation_job"]


def test_evaluation_runs_in_the_background_with_intervals_and_plain_labels(store_dir, questions):
    at = open_page("app_pages/evaluation.py", store_dir)
    at.button(key="evaluation_run").click().run()
    assert not at.exception, [e.message for e in at.exception]
    job = _job(at)
    _wait(at, lambda: not job.running)
    assert job.complete and metrics(at)["Questions in the total"] == "8"
    summary = next(df.value for df in at.dataframe if "gain (points)" in df.value.columns)
    assert list(summary["category"]) == ["Multi hop", "Single hop", "Temporal", "All questions"]
    assert list(summary["questions"]) == [2, 4, 2, 8]
    assert all("(" in cell and " to " in cell for cell in summary["gold in context, + Gravity"])  # intervals
    assert "overall (excl. 5)" not in texts(at)
    assert any("Few questions" in w.value for w in at.warning)  # n < 10 everywhere here
    assert [b.label for b in at.get("download_button")] == ["Download all rows (CSV)"]


def test_evaluation_slice_is_seeded_and_stratified(store_dir, questions):
    at = open_page("app_pages/evaluation.py", store_dir)
    at.number_input(key="evaluation_limit").set_value(4).run()
    at.selectbox(key="evaluation_slice").set_value("stratified").run()
    at.number_input(key="evaluation_seed").set_value(3).run()
    at.button(key="evaluation_run").click().run()
    job = _job(at)
    ids = [q.id for q in job.questions]
    assert len(ids) == 4 and ids != ["q0", "q1", "q2", "q3"]
    assert {q.category for q in job.questions} == {"temporal", "single-hop", "multi-hop"}
    assert any("stratified slice of 4 of 8 questions, seed 3" in c.value for c in at.caption)
    _wait(at, lambda: not job.running)
    assert metrics(at)["Questions in the total"] == "4"


def test_evaluation_job_survives_page_switches(store_dir, questions):
    at = open_page("app_pages/evaluation.py", store_dir)
    at.button(key="evaluation_run").click().run()
    job = _job(at)
    at.switch_page("app_pages/home.py").run()
    at.switch_page("app_pages/evaluation.py").run()
    assert _job(at) is job
    _wait(at, lambda: not job.running)
    assert metrics(at)["Questions in the total"] == "8"


def test_evaluation_compares_hosts_side_by_side(store_dir, questions):
    at = open_page("app_pages/evaluation.py", store_dir)
    assert {"dense", "bm25"} <= set(at.multiselect(key="evaluation_hosts").options)
    at.multiselect(key="evaluation_hosts").set_value(["dense", "bm25"]).run()
    at.button(key="evaluation_run").click().run()
    job = _job(at)
    _wait(at, lambda: not job.running)
    side = next(df.value for df in at.dataframe if "host" in df.value.columns)
    assert list(side["host"]) == ["dense", "bm25"] and (side["questions"] == 8).all()
    at.selectbox(key="evaluation_detail_host").set_value("bm25").run()
    assert metrics(at)["Questions in the total"] == "8"


def test_cancel_stops_after_the_current_questions_and_resume_measures_only_the_rest(store_dir, questions,
                                                                                   monkeypatch):
    """The host's search waits on a gate, so the test decides when the first chunk of questions ends."""
    gate = threading.Event()
    searched: list[str] = []
    real = studio.ingested_host

    def gated(store, name, embedder, llm_config=None):
        host = real(store, name, embedder, llm_config)
        search = host.search_vectors

        def slow(vectors, k=10):
            searched.append("q")
            gate.wait(30)
            return search(vectors, k)

        host.search_vectors = slow
        return host

    monkeypatch.setattr(studio, "ingested_host", gated)
    at = open_page("app_pages/evaluation.py", store_dir)
    at.button(key="evaluation_run").click().run()
    job = _job(at)
    for _ in range(300):
        if searched:
            break
        time.sleep(0.1)
    at.run()
    assert job.running and any(p.proto.text.endswith(job.status) for p in at.get("progress"))
    at.button(key="evaluation_cancel").click().run()
    gate.set()
    job.join(30)
    assert job.cancelled and 0 < job.done < job.total == 8
    first = [r.question_id for r in job.rows["dense"]]
    at.run()
    assert any("the results below are partial" in i.value for i in at.info)
    at.button(key="evaluation_resume").click().run()
    job.join(60)
    at.run()
    assert job.complete and not job.cancelled
    ids = [r.question_id for r in job.rows["dense"]]
    assert ids[:len(first)] == first and sorted(ids) == sorted(f"q{i}" for i in range(8))  # none measured twice
    assert metrics(at)["Questions in the total"] == "8"


def test_a_small_slice_shows_no_headline_gain_and_says_why(store_dir, questions):
    at = open_page("app_pages/evaluation.py", store_dir)
    at.number_input(key="evaluation_limit").set_value(1).run()
    assert at.button(key="evaluation_run").label == "Run on 1 question"
    at.button(key="evaluation_run").click().run()
    _wait(at, lambda: not _job(at).running)
    got = metrics(at)
    assert got["Questions in the total"] == "1" and got["Gain"] == "too few questions"
    assert not any(m.proto.delta for m in at.metric)  # no "+100 pts" beside a single question
    assert any("too few to quote a gain" in w.value for w in at.warning)
    assert "Holds the gold answer" in [h.value for h in at.subheader]


def test_headline_states_n_and_the_adversarial_questions_left_out():
    from gravity_engine.viz import evaluation as eviz

    cats = ["1"] * 30 + ["2"] * 8 + ["5"] * 12
    summary = [{"n": 38}]
    head = eviz.headline(summary, cats, "locomo")
    assert head["show_gain"] and not head["warning"]
    assert head["counts"].startswith("n = 38 of 50 measured; 12 adversarial")
    assert eviz.run_label(cats, "locomo") == "Run on 50 questions (38 in the total, 12 adversarial shown apart)"
    small = eviz.headline([{"n": 19}], ["1"] * 19, "sample")
    assert not small["show_gain"] and "19 questions" in small["warning"] and small["counts"] == "n = 19"
