"""The `evaluate` and `report` commands, against the scripted server on 127.0.0.1."""

from __future__ import annotations

import pytest
from evaluate_fixtures import router, write_conversation, write_store
from typer.testing import CliRunner

import gravity_engine.cli.eval_cmds  # noqa: F401  (registers evaluate and report until cli/__init__ imports it)
from gravity_engine.cli import app
from gravity_engine.testing import FakeEmbedder
from gravity_engine.testing.openai_server import ScriptedOpenAIServer

runner = CliRunner()


@pytest.fixture
def toy(tmp_path):
    conv, _ = write_conversation(tmp_path / "data")
    write_store(tmp_path / "stores", conv, FakeEmbedder())
    return conv, tmp_path


def test_evaluate_then_report(toy, allow_local_llm, monkeypatch):
    conv, root = toy
    out = root / "results" / "custom-dense"
    with ScriptedOpenAIServer(router=router) as srv:
        monkeypatch.setenv("GRAVITY_LLM_BASE_URL", srv.base_url)
        monkeypatch.setenv("GRAVITY_LLM_MODEL", "gravity-echo")
        args = ["evaluate", "custom", str(conv), "--stores", str(root / "stores"), "--out", str(out),
                "--variants", "baseline,full", "--no-cache", "--judge-model", "judge-echo"]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert "12 to do" in result.output and "LLM calls: 12 answers + 12 judgements = 24" in result.output
        assert "answer model: gravity-echo; judge model: judge-echo" in result.output
        assert "| dense | baseline | 50.0 (6) |" in result.output and "only meaningful with a real" in result.output
        judge_models = {r["model"] for r in srv.chat_requests() if r.get("response_format")}
        assert judge_models == {"judge-echo"}
        again = runner.invoke(app, args)
        assert again.exit_code == 0 and "nothing to do" in again.output and "12 already in" in again.output
    rep = runner.invoke(app, ["report", str(out)])
    assert rep.exit_code == 0, rep.output
    report_md = root / "results" / "report" / "report.md"
    assert report_md.is_file() and f"Report written to {report_md}" in rep.output.replace("\n", "")
    assert "| dense | full | 60.0 (5) | +10.0 |" in rep.output


def test_dry_run_without_an_endpoint_prints_the_plan(toy):
    conv, root = toy
    result = runner.invoke(app, ["evaluate", "custom", str(conv), "--stores", str(root / "stores"), "--out",
                                 str(root / "out"), "--variants", "baseline,full,-rrk,-exp,+Sum,+E,+V,+T", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "48 to do" in result.output and "estimated tokens" in result.output
    assert "no endpoint configured" in result.output
    assert not (root / "out" / "results.jsonl").exists()


@pytest.mark.parametrize("args, message", [
    (["evaluate", "movies", "{conv}"], "unknown dataset 'movies'"),
    (["evaluate", "custom", "{conv}", "--variants", "baseline,+X"], "unknown variant '+X'"),
    (["evaluate", "locomo", "{conv}", "--dry-run"], "not locomo"),
    (["evaluate", "custom", "{conv}"], "no LLM endpoint configured"),
    (["report", "{root}/nowhere"], "no results.jsonl here"),
], ids=["dataset", "variant", "wrong-format", "no-endpoint", "no-results"])
def test_clear_errors(toy, args, message):
    conv, root = toy
    argv = [a.format(conv=conv, root=root) for a in args] + (
        ["--stores", str(root / "stores"), "--out", str(root / "o")] if args[0] == "evaluate" else [])
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
