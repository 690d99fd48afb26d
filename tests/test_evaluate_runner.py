"""The benchmark runner end to end against the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading

import pytest
from evaluate_fixtures import (CONVERSATION_ID, EXPECTED_BASELINE, EXPECTED_FULL, EXPECTED_GAINS, EXPECTED_LOSSES,
                               QUESTIONS, answer_of, prompt_name, router, write_conversation, write_store)

from gravity_engine.eval.evaluate import EvalSettings, ResultsFile, build_report, plan_evaluation, run_evaluation
from gravity_engine.eval.evaluate.stats import gain_loss, score_table
from gravity_engine.llm import OpenAIClient
from gravity_engine.prompts import judge
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.openai_server import ScriptedOpenAIServer
from gravity_engine.testing.pytest_plugin import local_llm_config


@pytest.fixture
def toy(tmp_path):
    conv, qfile = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    return conv, tmp_path


@pytest.fixture
def server(allow_local_llm):
    with ScriptedOpenAIServer(router=router) as srv:
        yield srv


def clients(srv, **overrides):
    cfg = local_llm_config(srv, cache=False, **overrides)
    return OpenAIClient(cfg), OpenAIClient(cfg)


def settings(toy, **kw) -> EvalSettings:
    conv, root = toy
    values = dict(dataset="custom", path=conv, out=root / "results", stores=root / "stores",
                  variants=["baseline", "full"], concurrency=3)
    values.update(kw)
    return EvalSettings(**values)


def test_every_full_prompt_of_the_toy_carries_anchors(toy):
    # The router tells the variants apart by the <anchors> section: the table below relies on it.
    from gravity_engine.hosts import get_host
    from gravity_engine.query import ask
    from gravity_engine.store import AnchorStore

    store = AnchorStore.load(toy[1] / "stores" / CONVERSATION_ID)
    host = get_host("dense", embedder=FakeEmbedder(), use_cache=False)
    for q, *_ in QUESTIONS.values():
        assert "<anchors>" in ask(store, host, q, "full").messages_with[-1]["content"], q


def test_runner_end_to_end_gives_the_scripted_table(toy, server):
    answer_llm, judge_llm = clients(server)
    summary = run_evaluation(settings(toy), answer_llm, judge_llm)
    assert server.errors == []
    assert summary.rows_written == 12 and summary.answer_errors == 0 and summary.judge_errors == 1
    rows = ResultsFile(summary.results_path).rows()
    assert len(rows) == 12 and len({r.key for r in rows}) == 12
    lines = {ln.variant: ln for ln in score_table(rows)}
    assert (lines["baseline"].overall.correct, lines["baseline"].overall.n) == EXPECTED_BASELINE
    assert (lines["full"].overall.correct, lines["full"].overall.n) == EXPECTED_FULL
    assert lines["full"].overall.errors == 1
    assert lines["baseline"].by_category["temporal"].value == 0.0 and lines["full"].by_category["temporal"].value == 1.0
    gl = gain_loss([r for r in rows if r.variant == "baseline"], [r for r in rows if r.variant == "full"])
    assert gl["overall"].gains == EXPECTED_GAINS and gl["overall"].losses == EXPECTED_LOSSES
    assert gl["overall"].net == 1 and gl["overall"].ratio == 2.0
    bad = next(r for r in rows if r.question_id == "q6" and r.variant == "full")
    assert bad.judge_correct is None and "invalid" in bad.judge_error and bad.answer == "a bean trellis"
    # Each row carries the LLM-free measures and what was injected.
    full_q2 = next(r for r in rows if r.question_id == "q2" and r.variant == "full")
    assert full_q2.injected_tokens > 0 and full_q2.injected_context and full_q2.injected_anchor_ids
    assert full_q2.f1 == 1.0 and full_q2.judge_model == "gravity-echo"
    assert full_q2.judge_prompt == f"judge@{judge.VERSION}"
    base_q2 = next(r for r in rows if r.question_id == "q2" and r.variant == "baseline")
    assert base_q2.injected_tokens == 0 and base_q2.evidence_recall is not None
    # One answer and one judge call per row, plus a repair round for the malformed verdict.
    reqs = server.chat_requests()
    assert sum(1 for r in reqs if answer_of(r)) == 12
    assert sum(1 for r in reqs if prompt_name(r) == "judge") == 13
    assert all(r["temperature"] == 0 for r in reqs)


def test_rerun_skips_done_rows_and_asks_nothing(toy, server):
    answer_llm, judge_llm = clients(server)
    run_evaluation(settings(toy), answer_llm, judge_llm)
    before = len(server.chat_requests())
    again = run_evaluation(settings(toy), *clients(server))
    assert again.rows_written == 0 and again.plan.n_done == 12 and len(server.chat_requests()) == before
    # --retry-errors redoes only the row whose judge failed.
    retry = run_evaluation(settings(toy, retry_errors=True), *clients(server))
    assert retry.rows_written == 1
    assert len(ResultsFile(retry.results_path).rows()) == 12


def test_resume_after_a_killed_run_loses_nothing_and_repeats_nothing(toy, server):
    cancel = threading.Event()
    stop_after = 5

    def progress(done, total):
        if done >= stop_after:
            cancel.set()

    first = run_evaluation(settings(toy, concurrency=1), *clients(server), progress=progress, cancel=cancel)
    assert first.cancelled and first.rows_written == stop_after
    first_asked = [answer_of(r) for r in server.chat_requests() if answer_of(r)]
    assert len(first_asked) == stop_after
    # A process killed in the middle of a write leaves a torn last line.
    path = first.results_path
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"dataset": "custom", "question_id": "q9", "varia')
    n_before = len(server.chat_requests())
    second = run_evaluation(settings(toy, concurrency=2), *clients(server))
    assert second.rows_written == 12 - stop_after
    rows = ResultsFile(path).rows()
    assert len(rows) == 12 and len({r.key for r in rows}) == 12
    assert all(line.strip() and json.loads(line) for line in path.read_text().splitlines())
    second_asked = [answer_of(r) for r in server.chat_requests()[n_before:] if answer_of(r)]
    assert len(second_asked) == 12 - stop_after
    assert not set(first_asked) & set(second_asked)  # no question was asked again with the same variant


def test_judge_failures_are_recorded_never_raised(toy, allow_local_llm):
    def broken_judge(request):
        if prompt_name(request) == "judge":
            return {"verdict": "maybe"}  # valid JSON, wrong shape, both times
        return router(request)

    with ScriptedOpenAIServer(router=broken_judge) as srv:
        summary = run_evaluation(settings(toy, variants=["baseline"]), *clients(srv))
    rows = ResultsFile(summary.results_path).rows()
    assert summary.judge_errors == 6 and all(r.judge_correct is None and r.judge_error for r in rows)
    assert all(r.answer for r in rows)  # the answers themselves are kept


def test_judge_repair_round_recovers(toy, allow_local_llm):
    def flaky_judge(request):
        if prompt_name(request) == "judge":
            if len(request["messages"]) <= 2:  # the first reply of every verdict is prose; the repair round gets JSON
                return "CORRECT, I think"
        return router(request)

    with ScriptedOpenAIServer(router=flaky_judge) as srv:
        summary = run_evaluation(settings(toy, variants=["baseline"]), *clients(srv))
    rows = ResultsFile(summary.results_path).rows()
    assert summary.judge_errors == 0 and sum(bool(r.judge_correct) for r in rows) == EXPECTED_BASELINE[0]


def test_answer_endpoint_down_stops_the_run_with_a_clear_error(toy, allow_local_llm):
    from gravity_engine.errors import LLMError
    from gravity_engine.testing.openai_server import Reply

    with ScriptedOpenAIServer(router=lambda r: Reply.error(503, "down for maintenance")) as srv:
        with pytest.raises(LLMError, match="failed 3 times in a row"):
            run_evaluation(settings(toy, concurrency=1, max_consecutive_errors=3), *clients(srv, max_retries=0))
    rows = ResultsFile(toy[1] / "results" / "results.jsonl").rows()
    assert len(rows) == 3 and all(r.answer_error and not r.done for r in rows)
    plan = plan_evaluation(settings(toy))
    assert len(plan.todo) == 12  # errored rows are redone by the next run


def test_plan_counts_rows_calls_and_tokens(toy):
    plan = plan_evaluation(settings(toy, variants=["baseline", "+EVT", "full", "-rrk"], limit=4))
    assert plan.variants == ["baseline", "full", "-rrk"]  # '+EVT' is the method's name for full
    assert len(plan.todo) == 12 and plan.calls == 24 and plan.to_build == []
    assert plan.prompt_tokens > 12 * 200 and plan.completion_tokens > 0
    text = plan.describe()
    assert "12 to do" in text and "24" in text
    sampled = plan_evaluation(settings(toy, sample=3, seed=1))
    assert len(sampled.items) == 3
    assert [it.question.id for it in sampled.items] == sorted(it.question.id for it in sampled.items)


def test_report_from_the_scripted_run(toy, server, tmp_path):
    summary = run_evaluation(settings(toy, variants=["baseline", "full", "+Sum"]), *clients(server))
    rep = build_report([summary.results_path.parent], tmp_path / "report", cases=2)
    md = rep.path.read_text()
    assert "need a real" in md or "only meaningful with a real answer model" in md
    assert "scripted server" in md
    table = rep.main_tables["custom"]
    assert "| dense | baseline | 50.0 (6) |" in table and "| dense | full | 60.0 (5) | +10.0 |" in table
    assert "wrong→right" in md and "Case studies" in md and "When did Felix plant tomatoes?" in md
    assert all(p.is_file() and p.stat().st_size > 1000 for p in rep.plots)
