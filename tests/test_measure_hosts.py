"""Cross-host measures: several hosts on the same anchors, per-host rows, the time ratio, CSVs, the CLI."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from test_measure import _locomo_file, _store_for
from typer.testing import CliRunner

from gravity_engine.errors import ConfigError
from gravity_engine.hosts import get_host
from gravity_engine.loaders import load_conversations
from gravity_engine.eval.measure import MeasureSettings, measure_conversation
from gravity_engine.eval.measure_hosts import (SCRIPTED_NOTE, CrossHostReport, HostResult, HostSpec, measure_hosts,
                                          measure_store_hosts, parse_hosts)
from gravity_engine.query.config import Budget, get_variant
from gravity_engine.testing import FakeEmbedder

ROOT = Path(__file__).resolve().parent.parent


def _settings():
    return MeasureSettings(k=3, config=get_variant("full").with_(host_k=3), budget=Budget(total=200, anchor_share=0.5))


@pytest.fixture
def toy(tmp_path):
    """The toy LoCoMo file and a runs folder holding its anchors (fake embedder: nothing to build)."""
    path = _locomo_file(tmp_path)
    conv = load_conversations(path)[0]
    runs = tmp_path / "runs"
    _store_for(conv, FakeEmbedder()).save(runs / conv.id)
    return path, runs, conv


def _read(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_dense_and_bm25_share_the_query_path_and_write_every_csv(toy):
    path, runs, conv = toy
    emb = FakeEmbedder()
    seen = []
    report = measure_hosts("locomo", path, "dense, bm25", runs, settings=_settings(), embedder=emb,
                           progress=lambda d, t: seen.append((d, t)))
    assert [r.name for r in report.results] == ["dense", "bm25"] and not report.failed
    assert seen[-1] == (8, 8) and [d for d, _ in seen] == sorted(d for d, _ in seen)

    # The shared Gravity pass gives each host the same rows as measuring it alone.
    alone = measure_conversation(_store_for(conv, emb), get_host("bm25"), conv.questions, "locomo", _settings(), emb)
    bm25 = report.results[1]
    for a, b in zip(alone, bm25.rows):
        assert (a.recall_host, a.recall_expanded, a.covered_host, a.covered_gravity, a.n_expansions) == \
               (b.recall_host, b.recall_expanded, b.covered_host, b.covered_gravity, b.n_expansions)
    assert [r.n_expansions for r in report.results[0].rows] == [r.n_expansions for r in bm25.rows]

    rows = {s["host"]: s for s in report.summary_rows()}
    for name, s in rows.items():
        assert s["n"] == 3 and s["llm_at_ingest"] == "none" and s["scripted"] is False
        assert s["host_search_ms_p50"] > 0 and s["gravity_ms_p50"] > 0
        assert s["ratio"] == pytest.approx(s["gravity_ms_p50"] / s["host_search_ms_p50"])
        assert s["gravity_no_embed_ms_p50"] <= s["gravity_ms_p50"]
    assert rows["dense"]["recall_host"] == 1.0  # every toy question's evidence is in its top 3

    for r in report.results:
        per_q = _read(r.csv_path)
        assert r.csv_path.name == f"measure_locomo_{r.name}_full.csv" and len(per_q) == 4
        assert all(float(q["host_search_ms"]) > 0 and float(q["query_path_ms"]) > 0 for q in per_q)
        assert r.summary_csv_path.is_file()
    combined = _read(report.summary_csv_path)
    assert [c["host"] for c in combined] == ["dense", "bm25"]
    assert float(combined[1]["ratio"]) == pytest.approx(rows["bm25"]["ratio"])
    cats = _read(report.categories_csv_path)
    assert {(c["host"], c["category"]) for c in cats} >= {("bm25", "2 temporal"), ("dense", "overall (excl. 5)")}

    text = report.text()
    assert "== dense ==" in text and "== bm25 ==" in text and "ratio" in report.table()
    assert "2 temporal" in text and "5 adversarial" in text and SCRIPTED_NOTE not in text


def test_store_level_run_for_the_app_writes_nothing(toy, tmp_path):
    _, runs, conv = toy
    store = _store_for(conv, FakeEmbedder())
    before = set(runs.rglob("*"))
    report = measure_store_hosts(store, conv.questions[:2], ["bm25"], settings=_settings())
    assert len(report.results[0].rows) == 2 and report.summary_csv_path is None
    assert set(runs.rglob("*")) == before


def test_host_names_all_and_clear_refusals(monkeypatch):
    specs, skipped = parse_hosts("all", llm_ok=False)
    names = [s.name for s in specs]
    assert names[:3] == ["dense", "bm25", "fullcontext"]
    assert "mcp" in skipped and "host-config" in skipped["mcp"]
    if "amem" not in skipped or "not installed" not in skipped["amem"]:
        assert "amem" not in names and "--scripted-llm" in skipped["amem"]
    specs, _ = parse_hosts("full-context,dense,dense")
    assert [s.name for s in specs] == ["fullcontext", "dense"]
    with pytest.raises(ConfigError, match="unknown host 'nosuch'.*dense"):
        parse_hosts("dense,nosuch")
    pytest.importorskip("mcp")
    with pytest.raises(ConfigError, match="--host-config"):
        parse_hosts("mcp")
    assert parse_hosts("mcp", host_config="m.json")[0][0].options == {"config": "m.json"}


def test_a_host_that_needs_an_llm_says_so_without_an_endpoint(toy):
    pytest.importorskip("agentic_memory")
    path, runs, _ = toy
    with pytest.raises(ConfigError, match="amem call an LLM while ingesting.*--scripted-llm"):
        measure_hosts("locomo", path, "bm25,amem", runs, settings=_settings(), embedder=FakeEmbedder())


def test_scripted_hosts_are_marked_in_every_table(toy):
    _, _, conv = toy
    store = _store_for(conv, FakeEmbedder())
    rows = measure_conversation(store, get_host("bm25"), conv.questions, "locomo", _settings(), FakeEmbedder())
    report = CrossHostReport(dataset="locomo", settings=_settings(), results=[
        HostResult(spec=HostSpec(name="bm25", host="bm25"), rows=rows, ingest_seconds=0.1),
        HostResult(spec=HostSpec(name="amem", host="amem", llm_at_ingest=True), rows=rows, ingest_seconds=2.0,
                   llm="scripted", llm_calls=11)])
    assert report.any_scripted and SCRIPTED_NOTE in report.table()
    assert "amem *" in report.table() and "scripted (11 calls)" in report.table()
    assert "SCRIPTED LLM" in report.host_tables()["amem"] and "*" not in report.host_tables()["bm25"].split("\n")[0]
    assert [r["scripted"] for r in report.summary_rows()] == [False, True]


def _cli():
    from gravity_engine.cli import app

    return app


def test_cli_measures_several_hosts_including_mcp_from_a_config_file(toy, tmp_path):
    pytest.importorskip("mcp")
    path, runs, _ = toy
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"command": [sys.executable, "-m", "gravity_engine.testing.mcp_memory_server",
                                           "--fake-embedder"], "cwd": str(ROOT), "timeout": 60}))
    res = CliRunner().invoke(_cli(), ["measure", "locomo", str(path), "--host", "bm25,mcp", "--host-config", str(cfg),
                                      "--runs", str(runs), "--budget", "200", "--k", "3"])
    assert res.exit_code == 0, res.output
    for text in ("== bm25 ==", "== mcp ==", "summary: one row per host", "host p50 ms", "ratio",
                 "1 multi-hop", "measure_locomo_hosts_full.csv"):
        assert text in res.output
    combined = _read(runs / "measure_locomo_hosts_full.csv")
    assert [c["host"] for c in combined] == ["bm25", "mcp"]
    assert float(combined[1]["recall_host"]) > 0  # ids came back through the server's metadata


def test_cli_hosts_lists_every_host_and_refuses_mcp_without_config(toy, tmp_path):
    _, runs, conv = toy
    res = CliRunner().invoke(_cli(), ["hosts"])
    assert res.exit_code == 0
    for name in ("dense", "bm25", "fullcontext", "mem0", "graphiti", "amem", "mcp", "graphiti-episodes"):
        assert name in res.output
    res = CliRunner().invoke(_cli(), ["ask", str(runs / conv.id), "Who?", "--host", "mcp"])
    assert res.exit_code == 2 and "--host-config" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(_cli(), ["measure", "locomo", str(tmp_path / "x.json"), "--host", "dense,nosuch"])
    assert res.exit_code == 2 and "unknown host 'nosuch'" in res.output


def test_cli_measure_asks_the_build_layer_for_missing_stores_first(toy, tmp_path):
    path, _, conv = toy
    runs = tmp_path / "empty_runs"
    res = CliRunner().invoke(_cli(), ["measure", "locomo", str(path), "--host", "bm25", "--runs", str(runs),
                                      "--budget", "200", "--k", "3"])
    assert res.exit_code == 0, res.output
    assert f"building anchors for {conv.id} (classic backend)" in res.output
    assert (runs / conv.id / "anchors.json").is_file() and (runs / "measure_locomo_bm25_full.csv").is_file()
    again = CliRunner().invoke(_cli(), ["measure", "locomo", str(path), "--host", "bm25", "--runs", str(runs)])
    assert again.exit_code == 0 and "building anchors" not in again.output
