"""Corpus scale: one store per conversation on local worker processes and on a local Ray instance,
resumable as a whole (complete stores skipped, checkpoints kept), one failed conversation reported
without stopping the others, and the build-all command's summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gravity_engine.build import CHECKPOINT_DIR
from gravity_engine.cli import app
from gravity_engine.conversation import Conversation
from gravity_engine.errors import ConfigError
from gravity_engine.scale import BuildOptions, JobResult, RunSummary, build_corpus, load_corpus, store_state
from gravity_engine.scale.run import SUMMARY_FILE
from gravity_engine.scale.workers import cpu_count


def write_corpus(folder: Path) -> Path:
    """Two small conversations of our own, one file each."""
    folder.mkdir(parents=True, exist_ok=True)
    talks = {
        "bakery": [("s1", "2024-02-03 09:00", "Lena", "Yesterday I opened my bakery on Elm Street with Karim."),
                   ("s1", "2024-02-03 09:01", "Karim", "Lena bakes rye bread; I run the till at Elm Bakery."),
                   ("s2", "2024-03-01 07:30", "Lena", "Last week we won the Riverside Bread Prize.")],
        "hiking": [("s1", "2024-07-14 20:00", "Omar", "Tomorrow Sofia and I hike to Lake Verde."),
                   ("s1", "2024-07-14 20:02", "Sofia", "Omar bought new boots in Granada for it."),
                   ("s2", "2024-08-02 19:00", "Omar", "Two weeks ago we reached the lake at sunrise.")],
    }
    for name, turns in talks.items():
        lines = [{"session": s, "timestamp": t, "speaker": who, "text": text} for s, t, who, text in turns]
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return folder


def test_two_workers_build_every_store_and_a_rerun_skips_the_finished_ones(tmp_path):
    from gravity_engine.scale.workers import start_forkserver

    assert start_forkserver(2)  # as build-all does before reading its corpus: the pool then uses that server
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    out = tmp_path / "runs"
    first = build_corpus(convs, out, workers=2)
    assert first.runner == "2 processes"
    assert sorted((r.conversation_id, r.status) for r in first.rows) == [("bakery", "built"), ("hiking", "built")]
    for r in first.rows:
        assert store_state(out / r.conversation_id) == "complete"
        assert r.counts["entities"] > 0 and r.seconds > 0 and r.peak_rss_mb > 100
        assert r.torch_threads == max(1, cpu_count() // 2)  # cores / workers, set at the worker's start
        # The worker had its models loaded and warmed before its first build; the build's own CPU is counted.
        assert first.started_at < r.ready_at <= r.started_at < r.finished_at and r.cpu_s > 0
    phases = first.phases()
    assert phases["start-up"] > 0 and phases["idle"] >= 0 and phases["build_cpu"] > 0
    assert "workers idle" in first.table() and json.loads(json.dumps(first.to_dict()))["phases"]["span"] > 0
    # One store lost (a crash before its save): the rerun skips the other and resumes this one.
    (out / "hiking" / "anchors.json").unlink()
    assert list((out / "hiking" / CHECKPOINT_DIR).rglob("batch-*.json"))
    second = build_corpus(convs, out, workers=2)
    assert sorted((r.conversation_id, r.status) for r in second.rows) == [("bakery", "skipped"), ("hiking", "resumed")]
    assert "1 resumed, 1 skipped" in second.table()


def test_phases_say_where_the_wall_time_went():
    # Two workers: A builds 10-40 and 40-50, B builds 12-45, then nothing is left; the run started at 0.
    rows = [JobResult("a1", "built", seconds=30, worker="h:1", started_at=10, finished_at=40, ready_at=9, cpu_s=28),
            JobResult("a2", "built", seconds=10, worker="h:1", started_at=40, finished_at=50, ready_at=9, cpu_s=9),
            JobResult("b1", "built", seconds=33, worker="h:2", started_at=12, finished_at=45, ready_at=11, cpu_s=30),
            JobResult("old", "skipped")]
    p = RunSummary(rows=rows, started_at=0.0, wall_s=51.0).phases()
    assert (p["start-up"], p["read"], p["ready"], p["builds"], p["tail"], p["exit"]) == (10, 0, 11, 35, 5, 1)
    p = RunSummary(rows=rows, started_at=2.0, wall_s=49.0).phases(launched=-1.0, exited=52.0)  # from the process
    assert (p["start-up"], p["read"], p["exit"]) == (11, 3, 2)
    assert (p["span"], p["busy"], p["idle"], p["build_cpu"]) == (40, 73, 7, 67)  # 2 x 40 core-s, 73 of them busy
    assert RunSummary(rows=rows[3:]).phases() == {}


def test_the_fork_server_starts_early_only_for_several_workers():
    from gravity_engine.scale.workers import preload_modules, start_forkserver

    assert start_forkserver(1) is False and start_forkserver(None) is False
    assert "gravity_engine.extract.llm" not in preload_modules("classic")
    assert "gravity_engine.extract.llm" in preload_modules("llm")


def test_a_failed_conversation_is_a_row_and_the_others_build(tmp_path):
    good = load_corpus(write_corpus(tmp_path / "corpus")).conversations[:1]
    empty = Conversation(id="empty", sessions=[], speakers=[])
    summary = build_corpus([empty, *good], tmp_path / "runs", workers=1)
    rows = {r.conversation_id: r for r in summary.rows}
    assert rows["bakery"].status == "built"
    assert rows["empty"].status == "failed" and "no utterances" in rows["empty"].error
    assert [r.conversation_id for r in summary.failed()] == ["empty"]


def test_conversation_ids_that_cannot_be_folders_are_refused(tmp_path):
    conv = load_corpus(write_corpus(tmp_path / "corpus")).conversations[0].model_copy(update={"id": "../escape"})
    with pytest.raises(ConfigError, match="cannot be a folder name"):
        build_corpus([conv], tmp_path / "runs")


def test_build_all_command_prints_the_summary_and_writes_it(tmp_path):
    corpus = write_corpus(tmp_path / "corpus")
    out = tmp_path / "runs"
    result = CliRunner().invoke(app, ["build-all", str(corpus), "--out", str(out), "-c", "hiking"])
    assert result.exit_code == 0, result.output
    assert "hiking" in result.output and "bakery" not in result.output.split("peak RSS")[0]
    assert "peak RSS MB" in result.output
    saved = json.loads((out / SUMMARY_FILE).read_text())
    assert [c["status"] for c in saved["conversations"]] == ["built"]
    # The whole folder: the unreadable file is named, the others build, the exit code says not all did.
    (corpus / "broken.json").write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(app, ["build-all", str(corpus), "--out", str(out)])
    assert result.exit_code == 1
    assert "broken.json" in result.output and "Traceback" not in result.output
    assert {c["conversation_id"]: c["status"] for c in json.loads((out / SUMMARY_FILE).read_text())["conversations"]} \
        == {"hiking": "skipped", "bakery": "built"}


@pytest.mark.slow
def test_local_ray_runs_one_task_per_conversation(tmp_path):
    pytest.importorskip("ray")
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    out = tmp_path / "runs"
    shutil.rmtree(out, ignore_errors=True)
    summary = build_corpus(convs, out, BuildOptions(), ray="local", workers=2)
    assert summary.runner == "ray local"
    assert sorted((r.conversation_id, r.status) for r in summary.rows) == [("bakery", "built"), ("hiking", "built")]
    assert all(r.torch_threads == 1 and r.peak_rss_mb > 100 and r.worker for r in summary.rows)
    assert all(store_state(out / c.id) == "complete" for c in convs)


def test_evaluate_workers_build_the_missing_stores_before_it_starts(tmp_path):
    from gravity_engine.eval.evaluate.runner import EvalSettings, plan_evaluation
    from gravity_engine.scale.run import build_stores_first

    corpus = write_corpus(tmp_path / "corpus")
    questions = corpus / "hiking.questions.json"
    questions.write_text(json.dumps([{"id": "q1", "question": "Where did Omar buy boots?", "answer": "Granada",
                                      "evidence": ["s1:2"], "category": "single-hop"}]), encoding="utf-8")
    stores = tmp_path / "runs"
    plan = plan_evaluation(EvalSettings(dataset="custom", path=corpus / "hiking.jsonl", out=tmp_path / "results",
                                        stores=stores, variants=["baseline", "full"]))
    assert plan.to_build == ["hiking"]
    said: list[str] = []
    built = build_stores_first(plan.conversations_to_build(), stores, workers=2, status=said.append)
    assert built == ["hiking"]
    assert store_state(stores / "hiking") == "complete" and said and said[0].startswith("built 1 anchor stores")
    again = plan_evaluation(EvalSettings(dataset="custom", path=corpus / "hiking.jsonl", out=tmp_path / "results",
                                         stores=stores, variants=["baseline", "full"]))
    assert again.to_build == []


def test_ray_tasks_carry_no_api_key_and_workers_read_theirs(monkeypatch):
    from gravity_engine.llm import LLMConfig

    config = LLMConfig(base_url="http://127.0.0.1:9/v1", api_key="sk-secret-1234")
    options = BuildOptions(backend="llm", llm_config=config)
    sent = options.without_key()
    assert "sk-secret-1234" not in repr(sent.llm_config.model_dump(mode="json"))
    assert sent.llm_config.api_key.get_secret_value() != "sk-secret-1234" and sent.key_from_env
    monkeypatch.setenv("GRAVITY_LLM_API_KEY", "sk-on-the-worker")
    assert sent.resolved_llm_config().api_key.get_secret_value() == "sk-on-the-worker"
    assert options.resolved_llm_config().api_key.get_secret_value() == "sk-secret-1234"  # local workers: as given


@pytest.mark.parametrize("address, message",
                         [("127.0.0.1:1", "cannot reach Ray"), ("nonsense", "expected local, auto")],
                         ids=["unreachable", "malformed"])
def test_a_ray_address_that_cannot_work_is_one_clear_error_at_once(tmp_path, address, message):
    pytest.importorskip("ray")
    convs = load_corpus(write_corpus(tmp_path / "corpus")).conversations
    with pytest.raises(ConfigError, match=message):
        build_corpus(convs, tmp_path / "runs", ray=address)
